//! A bootstrap node's key pair on disk, kept across restarts (docs/protocol.md §5.8: bootstrap
//! nodes keep a stable DHT key, since clients ship it in their node lists).
//!
//! Format: `[public key 32][secret key 32]`, the layout of tox-bootstrapd's `keys` file, so
//! either daemon can take over the other's identity. Written atomically: a temporary file in
//! the same directory, flushed and synced, then renamed over the target — a crash leaves
//! either the old file or the new one, never half of one.

use std::fs;
use std::path::{Path, PathBuf};

use rustox_net_crypto::crypto::{CryptoRng, KeyPair, SecretKey};

/// Size of the key file.
pub const KEY_FILE_SIZE: usize = 64;

/// Why the key file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    /// Reading or writing failed.
    #[error("key file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file is not 64 bytes.
    #[error("key file {0}: expected 64 bytes")]
    BadSize(PathBuf),
    /// The public key does not belong to the secret key.
    #[error("key file {0}: public key does not match the secret key")]
    Mismatch(PathBuf),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> KeyFileError + '_ {
    move |source| KeyFileError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Loads the key pair, or creates and saves a new one if the file does not exist.
pub fn load_or_create(
    path: &Path,
    rng: &mut dyn CryptoRng,
) -> Result<(KeyPair, bool), KeyFileError> {
    match fs::read(path) {
        Ok(bytes) => Ok((parse(path, &bytes)?, false)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let keys = KeyPair::generate(rng);
            save(path, &keys)?;
            Ok((keys, true))
        }
        Err(e) => Err(io(path)(e)),
    }
}

fn parse(path: &Path, bytes: &[u8]) -> Result<KeyPair, KeyFileError> {
    if bytes.len() != KEY_FILE_SIZE {
        return Err(KeyFileError::BadSize(path.to_path_buf()));
    }
    let mut sk = [0u8; 32];
    sk.copy_from_slice(&bytes[32..]);
    let keys = KeyPair::from_secret(SecretKey::from_bytes(sk));
    if keys.public.as_bytes()[..] != bytes[..32] {
        return Err(KeyFileError::Mismatch(path.to_path_buf()));
    }
    Ok(keys)
}

/// Writes the key pair atomically with mode 0600 (the save files' writer:
/// [`crate::savedata::file::save_atomic`]).
pub fn save(path: &Path, keys: &KeyPair) -> Result<(), KeyFileError> {
    let mut bytes = Vec::with_capacity(KEY_FILE_SIZE);
    bytes.extend_from_slice(keys.public.as_bytes());
    bytes.extend_from_slice(&keys.secret.to_bytes());
    crate::savedata::file::save_atomic(path, &bytes).map_err(|e| match e {
        crate::savedata::file::FileError::Io { source, .. } => io(path)(source),
        other => io(path)(std::io::Error::other(other.to_string())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn keys_survive_a_restart_and_bad_files_are_refused() {
        let dir = std::env::temp_dir().join(format!("rustox-keyfile-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("keys");
        let _ = fs::remove_file(&path);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let (a, created) = load_or_create(&path, &mut rng).unwrap();
        assert!(created);
        let (b, created) = load_or_create(&path, &mut rng).unwrap();
        assert!(!created);
        assert_eq!(a.public, b.public);
        assert_eq!(fs::read(&path).unwrap().len(), 64);
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            1,
            "no temporary file left behind"
        );
        let mut bytes = fs::read(&path).unwrap();
        bytes[0] ^= 1;
        fs::write(&path, &bytes).unwrap();
        assert!(matches!(
            load_or_create(&path, &mut rng),
            Err(KeyFileError::Mismatch(_))
        ));
        fs::write(&path, &bytes[..63]).unwrap();
        assert!(matches!(
            load_or_create(&path, &mut rng),
            Err(KeyFileError::BadSize(_))
        ));
        fs::remove_dir_all(&dir).unwrap();
    }
}
