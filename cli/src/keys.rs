//! Keys as a person handles them: the hex public key on the command line, and the key file
//! `rustox recv` keeps so that its public key survives a restart.
//!
//! The key file holds the 32-byte secret key as 64 hex digits and a newline; it is created
//! with mode 0600 because whoever reads it can impersonate the node.

use std::io::Write;
use std::path::Path;

use rustox_core::crypto::{KeyPair, PublicKey, SecretKey};

/// Why a key could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// `--key` is not a public key.
    #[error("--key must be 64 hex digits (the public key `rustox recv` printed), got {0:?}")]
    BadPublicKey(String),
    /// The key file exists but holds something else.
    #[error("key file {0} is not a rustox key file (expected 64 hex digits)")]
    BadKeyFile(String),
    /// The key file could not be read or created.
    #[error("key file {path}")]
    Io {
        /// The file.
        path: String,
        /// What the OS said.
        source: std::io::Error,
    },
}

/// Parses a public key given in hex.
pub fn parse_public_key(text: &str) -> Result<PublicKey, KeyError> {
    let text = text.trim();
    if text.len() != 64 {
        return Err(KeyError::BadPublicKey(text.to_owned()));
    }
    PublicKey::from_hex(text).ok_or_else(|| KeyError::BadPublicKey(text.to_owned()))
}

/// Loads the key pair from `path`, or creates the file with a fresh one. Returns the pair
/// and whether it was created.
pub fn load_or_create(path: &Path, fresh: KeyPair) -> Result<(KeyPair, bool), KeyError> {
    let io = |source| KeyError::Io {
        path: path.display().to_string(),
        source,
    };
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let bytes = hex::decode(text.trim())
                .ok()
                .and_then(|b| <[u8; 32]>::try_from(b).ok())
                .ok_or_else(|| KeyError::BadKeyFile(path.display().to_string()))?;
            Ok((KeyPair::from_secret(SecretKey::from_bytes(bytes)), false))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            let mut file = options.open(path).map_err(io)?;
            writeln!(file, "{}", hex::encode(fresh.secret.to_bytes())).map_err(io)?;
            Ok((fresh, true))
        }
        Err(e) => Err(io(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_key_must_be_64_hex_digits() {
        let good = "AB".repeat(32);
        assert!(parse_public_key(&good).is_ok());
        assert!(parse_public_key(&good[..62]).is_err());
        assert!(parse_public_key(&"ZZ".repeat(32)).is_err());
    }

    #[test]
    fn key_file_round_trips() {
        let dir = std::env::temp_dir().join(format!("rustox-keys-test-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("k");
        let _ = std::fs::remove_file(&path);
        let fresh = KeyPair::from_secret(SecretKey::from_bytes([7; 32]));
        let (a, created) = load_or_create(&path, fresh.clone()).unwrap();
        assert!(created);
        let other = KeyPair::from_secret(SecretKey::from_bytes([9; 32]));
        let (b, created) = load_or_create(&path, other).unwrap();
        assert!(!created);
        assert_eq!(a.public, b.public);
        assert_eq!(b.public, fresh.public);
        std::fs::write(&path, "not a key").unwrap();
        assert!(matches!(
            load_or_create(&path, fresh),
            Err(KeyError::BadKeyFile(_))
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
