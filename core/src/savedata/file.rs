//! Save files on disk (cargo feature `io`): written atomically, read with a size bound.
//!
//! [`save_atomic`] writes a temporary file in the target's directory (mode 0600: a profile
//! holds the secret key), syncs it, renames it over the target and syncs the directory, so a
//! crash or a failed write leaves either the old file or the new one, never a mix; on any
//! error the temporary file is removed and the target is untouched. Nothing here knows the
//! format: [`super::Profile`] and [`super::crypt`] turn bytes into a profile and back.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::crypt::ENCRYPTION_EXTRA_LENGTH;
use super::MAX_SAVEDATA_SIZE;

/// Largest file [`load`] reads: the largest plaintext plus the encryption overhead.
pub const MAX_FILE_SIZE: usize = MAX_SAVEDATA_SIZE + ENCRYPTION_EXTRA_LENGTH;

/// Why a save file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The operating system refused.
    #[error("save file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_FILE_SIZE`].
    #[error("save file {path}: larger than {max} bytes")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit.
        max: usize,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> FileError + '_ {
    move |source| FileError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Reads a save file, refusing one larger than [`MAX_FILE_SIZE`] without reading it whole.
pub fn load(path: &Path) -> Result<Vec<u8>, FileError> {
    let file = fs::File::open(path).map_err(io(path))?;
    let mut bytes = Vec::new();
    // One byte more than allowed, to tell a file of the largest size from a larger one.
    file.take((MAX_FILE_SIZE as u64).saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io(path))?;
    if bytes.len() > MAX_FILE_SIZE {
        return Err(FileError::TooLarge {
            path: path.to_path_buf(),
            max: MAX_FILE_SIZE,
        });
    }
    Ok(bytes)
}

/// Replaces `path` with `bytes` atomically: temporary file in the same directory, `fsync`,
/// `rename` over the target, `fsync` of the directory.
pub fn save_atomic(path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    save_with(path, bytes, |file, bytes| file.write_all(bytes))
}

/// [`save_atomic`] with the write itself injectable, so tests can make it fail halfway.
fn save_with(
    path: &Path,
    bytes: &[u8],
    write: impl FnOnce(&mut fs::File, &[u8]) -> std::io::Result<()>,
) -> Result<(), FileError> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp.{}", unique_suffix()));
    let result = (|| -> std::io::Result<()> {
        let mut opts = fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        let mut file = opts.open(&tmp)?;
        write(&mut file, bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, path)?;
        // The rename is durable once the directory entry is; some file systems refuse to
        // open or sync a directory, and the data itself is already safe then.
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io(path)(e)
    })
}

/// A temporary-name suffix no other thread or process saving at the same time picks.
fn unique_suffix() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}.{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    fn temp_dir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("rustox-savedata-{tag}-{}", unique_suffix()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn savedata_file_save_replaces_and_load_reads_back() {
        let dir = temp_dir("save");
        let path = dir.join("profile.tox");
        save_atomic(&path, b"first").unwrap();
        assert_eq!(load(&path).unwrap(), b"first");
        save_atomic(&path, b"second, longer").unwrap();
        assert_eq!(load(&path).unwrap(), b"second, longer");
        assert_eq!(entries(&dir), ["profile.tox"], "no temporary file left");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn savedata_file_failed_write_leaves_the_old_file_untouched() {
        let dir = temp_dir("fail");
        let path = dir.join("profile.tox");
        save_atomic(&path, b"old contents").unwrap();
        let err = save_with(&path, b"new contents", |file, bytes| {
            file.write_all(&bytes[..3])?;
            Err(std::io::Error::other("disk full halfway"))
        })
        .unwrap_err();
        assert!(err.to_string().contains("disk full halfway"), "{err}");
        assert_eq!(load(&path).unwrap(), b"old contents");
        assert_eq!(entries(&dir), ["profile.tox"], "temporary file removed");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn savedata_file_failed_rename_leaves_the_target_untouched() {
        let dir = temp_dir("rename");
        // A non-empty directory where the file should go: the rename fails.
        let path = dir.join("profile.tox");
        fs::create_dir(&path).unwrap();
        fs::write(path.join("inside"), b"x").unwrap();
        assert!(save_atomic(&path, b"data").is_err());
        assert!(path.is_dir());
        assert_eq!(entries(&dir), ["profile.tox"], "temporary file removed");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn savedata_file_missing_file_is_an_io_error() {
        let dir = temp_dir("missing");
        let err = load(&dir.join("nope")).unwrap_err();
        assert!(
            matches!(err, FileError::Io { ref source, .. } if source.kind() == std::io::ErrorKind::NotFound)
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
