//! Scratch directories of one test process.

use std::path::{Path, PathBuf};

/// `<system temp>/<prefix>-<pid>-<name>`, emptied and created; removed on drop when the
/// thread is not panicking (a failed test's files stay for inspection).
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A fresh directory named for this process, `prefix` and `name`.
    pub fn new(prefix: &str, name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("{prefix}-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// A path inside it.
    pub fn join(&self, p: impl AsRef<Path>) -> PathBuf {
        self.0.join(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
