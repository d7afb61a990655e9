//! Tox profiles (save files, docs/protocol.md §8) on the command line: `rustox profile new|show`,
//! and the `--profile FILE` that `recv` and `send` load and save.
//!
//! A profile is c-toxcore 0.2.18's format, so the same file opens in a client built on it
//! (qTox, toxic, uTox). An encrypted one (toxencryptsave) needs a passphrase: from
//! `RUSTOX_PASSWORD`, else asked on the terminal. Writes are atomic (a temporary file,
//! fsync, rename): a crash never leaves half a profile, and a failed write leaves the old
//! one as it was.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use rand::rngs::OsRng;
use rustox_core::crypto::KeyPair;
use rustox_core::friend::NoSpam;
use rustox_core::savedata::{self, crypt, Profile};
use serde::Serialize;

/// The environment variable a passphrase is read from before asking.
pub const PASSWORD_ENV: &str = "RUSTOX_PASSWORD";

/// `rustox profile`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Create a new profile: a fresh identity (refuses to overwrite an existing file).
    New {
        /// The profile file.
        file: PathBuf,
        /// Our name.
        #[arg(long, default_value = "")]
        name: String,
        /// Encrypt it (passphrase from RUSTOX_PASSWORD or asked).
        #[arg(long)]
        password: bool,
    },
    /// Print a profile's Tox ID, name and friends as JSON.
    Show {
        /// The profile file.
        file: PathBuf,
    },
}

/// What `profile show` prints.
#[derive(Serialize)]
struct Shown {
    tox_id: String,
    public_key: String,
    name: String,
    status_message: String,
    encrypted: bool,
    friends: Vec<ShownFriend>,
    dht_nodes: usize,
}

#[derive(Serialize)]
struct ShownFriend {
    public_key: String,
    name: String,
    status_message: String,
    request_pending: bool,
    last_seen: u64,
}

/// Runs `rustox profile`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        Command::New {
            file,
            name,
            password,
        } => {
            if file.exists() {
                bail!("{} exists; not overwriting a profile", file.display());
            }
            let keys = KeyPair::generate(&mut OsRng);
            let mut profile = Profile::new(keys.secret, NoSpam::random(&mut OsRng));
            profile.name = name.into_bytes();
            profile.check().context("cannot make that profile")?;
            let pass = if password {
                Some(passphrase(&file, true)?)
            } else {
                None
            };
            save(&file, &profile, pass.as_deref())?;
            println!("tox id {}", profile.tox_id());
            Ok(())
        }
        Command::Show { file } => {
            let (profile, pass) = load(&file)?;
            let shown = Shown {
                tox_id: profile.tox_id().to_string(),
                public_key: profile.public_key().to_hex(),
                name: String::from_utf8_lossy(&profile.name).into_owned(),
                status_message: String::from_utf8_lossy(&profile.status_message).into_owned(),
                encrypted: pass.is_some(),
                friends: profile
                    .friends
                    .iter()
                    .map(|f| ShownFriend {
                        public_key: f.pk.to_hex(),
                        name: String::from_utf8_lossy(&f.name).into_owned(),
                        status_message: String::from_utf8_lossy(&f.status_message).into_owned(),
                        request_pending: f.status.is_pending_request(),
                        last_seen: f.last_seen,
                    })
                    .collect(),
                dht_nodes: profile.dht_nodes.len(),
            };
            println!("{}", serde_json::to_string_pretty(&shown)?);
            Ok(())
        }
    }
}

/// Reads a profile, decrypting it when needed; returns the passphrase used, so a save
/// can encrypt the same way.
pub fn load(file: &Path) -> anyhow::Result<(Profile, Option<Vec<u8>>)> {
    let bytes =
        savedata::file::load(file).with_context(|| format!("cannot read {}", file.display()))?;
    let (plain, pass) = if crypt::is_encrypted(&bytes) {
        let pass = passphrase(file, false)?;
        let plain = crypt::decrypt(&pass, &bytes)
            .with_context(|| format!("cannot decrypt {}", file.display()))?;
        (plain, Some(pass))
    } else {
        (bytes, None)
    };
    let profile = Profile::parse(&plain)
        .with_context(|| format!("{} is not a valid Tox profile", file.display()))?;
    Ok((profile, pass))
}

/// Writes a profile atomically, encrypted when a passphrase is given.
pub fn save(file: &Path, profile: &Profile, pass: Option<&[u8]>) -> anyhow::Result<()> {
    let plain = profile.to_bytes();
    let bytes = match pass {
        Some(p) => crypt::encrypt(p, &plain, &mut OsRng).context("cannot encrypt the profile")?,
        None => plain,
    };
    savedata::file::save_atomic(file, &bytes)
        .with_context(|| format!("cannot write {}", file.display()))
}

/// The passphrase: `RUSTOX_PASSWORD`, else asked on the terminal (twice for a new one).
fn passphrase(file: &Path, new: bool) -> anyhow::Result<Vec<u8>> {
    if let Some(p) = std::env::var_os(PASSWORD_ENV) {
        let p = p.into_encoded_bytes();
        if p.is_empty() {
            bail!("{PASSWORD_ENV} is empty");
        }
        return Ok(p);
    }
    let prompt = format!("passphrase for {}: ", file.display());
    let p = rpassword::prompt_password(&prompt)
        .with_context(|| format!("cannot read a passphrase (set {PASSWORD_ENV})"))?;
    if p.is_empty() {
        bail!("an empty passphrase");
    }
    if new {
        let again = rpassword::prompt_password("again: ").context("cannot read a passphrase")?;
        if again != p {
            bail!("the passphrases differ");
        }
    }
    Ok(p.into_bytes())
}
