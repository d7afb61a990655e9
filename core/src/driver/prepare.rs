//! Files on disk, readied for the node: hashed before they are offered, and sinks that hash
//! what they write on a thread of their own. Both keep disk and SHA-256 work off the event
//! loop, which the transport would otherwise read as a huge RTT.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

use rustox_file_transfer::stream::Sink;
use sha2::{Digest, Sha256};

use super::hashing_writer::HashingWriter;
use crate::node::{DigestSlot, PreparedFile};

/// A file on disk, hashed from its start (see [`sha256_of_file`]) and rewound.
pub fn prepare_file(file: File) -> io::Result<PreparedFile> {
    let (size, sha256) = sha256_of_file(&file)?;
    let mut source = file;
    source.seek(SeekFrom::Start(0))?;
    Ok(PreparedFile {
        source: Box::new(io::BufReader::with_capacity(256 * 1024, source)),
        size,
        sha256,
    })
}

/// A sink that writes into `inner` and hashes on a worker thread (hashing_writer.rs), with
/// the slot where it leaves the SHA-256: what [`crate::node::Node::accept_file`] takes.
pub fn hashing_sink<W: Write + Seek + Send + 'static>(
    inner: W,
) -> io::Result<(Box<dyn Sink>, DigestSlot)> {
    let writer = HashingWriter::new(inner)?;
    let digest = writer.digest_slot();
    Ok((Box::new(writer), digest))
}

/// The size and SHA-256 of a file from its start, reading and hashing overlapped: a thread
/// reads 1 MiB blocks while this one hashes the previous ones. A sender cannot offer a file
/// before its SHA-256 (the file id) is known, so this pass is all of the wait before the
/// first byte leaves; on one core's worth of SHA-256 (~1.9 GB/s here) the page-cache copies
/// of the reads are what the overlap hides. The file's cursor is left wherever it ends.
pub fn sha256_of_file(file: &File) -> io::Result<(u64, [u8; 32])> {
    const BLOCK: usize = 1 << 20;
    const BLOCKS_IN_FLIGHT: usize = 4;
    let mut reader = file.try_clone()?;
    reader.seek(SeekFrom::Start(0))?;
    let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(BLOCKS_IN_FLIGHT);
    let (empty_tx, empty_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(BLOCKS_IN_FLIGHT);
    for _ in 0..BLOCKS_IN_FLIGHT {
        empty_tx.send(vec![0; BLOCK]).expect("room for every block");
    }
    let read = std::thread::Builder::new()
        .name("rustox-hash-reader".into())
        .spawn(move || -> io::Result<()> {
            while let Ok(mut block) = empty_rx.recv() {
                block.resize(BLOCK, 0);
                let mut filled = 0;
                while filled < BLOCK {
                    match reader.read(&mut block[filled..]) {
                        Ok(0) => break,
                        Ok(n) => filled += n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                }
                block.truncate(filled);
                let last = filled < BLOCK;
                if full_tx.send(block).is_err() || last {
                    return Ok(());
                }
            }
            Ok(())
        })?;
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    for block in full_rx {
        hasher.update(&block);
        size += block.len() as u64;
        // The reader may already be done; then the block is simply dropped.
        let _ = empty_tx.send(block);
    }
    read.join()
        .map_err(|_| io::Error::other("the hash reader thread panicked"))??;
    Ok((size, hasher.finalize().into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepare_file_covers_every_block_and_rewinds() {
        let dir = std::env::temp_dir().join(format!("rustox-hash-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for len in [0usize, 1, 1 << 20, 2 << 20, (3 << 20) + 12_345] {
            let content: Vec<u8> = (0..len).map(|i| (i * 31 + i / 977) as u8).collect();
            let path = dir.join(format!("f{len}"));
            std::fs::write(&path, &content).unwrap();
            let mut prepared = prepare_file(File::open(&path).unwrap()).unwrap();
            assert_eq!(prepared.size, len as u64, "length {len}");
            assert_eq!(prepared.sha256, <[u8; 32]>::from(Sha256::digest(&content)));
            let mut back = Vec::new();
            prepared.source.read_to_end(&mut back).unwrap();
            assert!(
                back == content,
                "length {len}: the source does not read back from 0"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
