//! A sink for received files in tests and benchmarks that keeps nothing but the SHA-256 of
//! what it is given: what the drivers' writer thread leaves for a file on disk
//! (`rustox_core::driver::hashing_sink`), without the disk.

use std::io::{Seek, SeekFrom, Write};

use rustox_core::node::DigestSlot;
use sha2::{Digest, Sha256};

/// A sink that hashes what it is given, in order, and leaves the digest when flushed.
pub struct HashingSink {
    hasher: Sha256,
    digest: DigestSlot,
}

impl HashingSink {
    /// A sink that leaves its digest in `digest` when flushed.
    pub fn new(digest: DigestSlot) -> Self {
        HashingSink {
            hasher: Sha256::new(),
            digest,
        }
    }
}

impl Write for HashingSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.hasher.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let digest: [u8; 32] = self.hasher.clone().finalize().into();
        *self.digest.lock().unwrap_or_else(|p| p.into_inner()) = Some(digest);
        Ok(())
    }
}

impl Seek for HashingSink {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        match pos {
            SeekFrom::Start(0) | SeekFrom::Current(0) => Ok(0),
            _ => Err(std::io::Error::other(
                "the hashing sink only writes in order",
            )),
        }
    }
}
