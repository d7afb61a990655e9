//! A file sink that writes and hashes on a thread of its own.
//!
//! Writing every chunk and feeding it to SHA-256 on the receiving event loop would cost a
//! fifth of the receiver's CPU on loopback at ~250 MiB/s (SHA-256 20 %, page-cache writes
//! ~4 %; perf), on the same thread that must decrypt and acknowledge every packet. Here
//! the loop only copies chunks into a buffer; full buffers go over a
//! bounded channel to a worker that writes them and hashes them in order, so the network
//! loop and the disk run on different cores, and a slow disk delays acknowledgements only
//! once the channel is full (then the loop blocks, which is the backpressure a file sink
//! must have).
//!
//! The digest covers the file only while writes are sequential from offset 0 (the way a
//! transfer arrives); after a seek elsewhere it is unknown, and the caller must not claim a
//! verified file.

use std::io::{self, Seek, SeekFrom, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use sha2::{Digest, Sha256};

/// Bytes gathered before a buffer goes to the worker: large enough that the channel costs
/// nothing per chunk (one hand-over per ~190 chunks of 1371 bytes).
const BUFFER_BYTES: usize = 256 * 1024;
/// Buffers in flight to the worker: at most 4 MiB of received data waits for the disk.
const QUEUED_BUFFERS: usize = 16;

enum Command {
    Write(Vec<u8>),
    Seek(u64),
    /// Flush the file; answer with the outcome and, when the writes so far were
    /// sequential from 0, their SHA-256.
    Flush(SyncSender<io::Result<Option<[u8; 32]>>>),
}

pub use crate::node::DigestSlot;

/// A `Write + Seek` sink whose writes happen on a worker thread (see the module docs).
pub struct HashingWriter {
    digest: DigestSlot,
    buffer: Vec<u8>,
    /// Where the next byte goes.
    position: u64,
    commands: Option<SyncSender<Command>>,
    /// The first error the worker met, reported by the next call.
    errors: Receiver<io::Error>,
    worker: Option<JoinHandle<()>>,
}

impl HashingWriter {
    /// Starts the worker that writes into `inner` (positioned at offset 0).
    pub fn new<W: Write + Seek + Send + 'static>(inner: W) -> io::Result<Self> {
        let (commands, inbox) = sync_channel(QUEUED_BUFFERS);
        let (error_tx, errors) = sync_channel(1);
        let worker = std::thread::Builder::new()
            .name("rustox-file-writer".into())
            .spawn(move || work(inner, inbox, error_tx))?;
        Ok(HashingWriter {
            digest: DigestSlot::default(),
            buffer: Vec::with_capacity(BUFFER_BYTES),
            position: 0,
            commands: Some(commands),
            errors,
            worker: Some(worker),
        })
    }

    /// The slot every flush updates with [`Self::finish`]'s digest.
    pub fn digest_slot(&self) -> DigestSlot {
        Arc::clone(&self.digest)
    }

    /// Flushes everything to the file and returns the SHA-256 of what was written, if the
    /// writes were sequential from offset 0 (also left in [`Self::digest_slot`]).
    pub fn finish(&mut self) -> io::Result<Option<[u8; 32]>> {
        self.hand_over()?;
        let (reply, answer) = sync_channel(1);
        self.send(Command::Flush(reply))?;
        let digest = answer.recv().map_err(|_| self.worker_gone())??;
        *self.digest.lock().unwrap_or_else(|e| e.into_inner()) = digest;
        Ok(digest)
    }

    fn send(&mut self, command: Command) -> io::Result<()> {
        if let Ok(e) = self.errors.try_recv() {
            return Err(e);
        }
        let sent = self
            .commands
            .as_ref()
            .is_some_and(|c| c.send(command).is_ok());
        if sent {
            Ok(())
        } else {
            Err(self.worker_gone())
        }
    }

    /// The worker stopped: its error if it left one.
    fn worker_gone(&self) -> io::Error {
        self.errors
            .try_recv()
            .unwrap_or_else(|_| io::Error::other("the file writer thread stopped"))
    }

    fn hand_over(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let full = std::mem::replace(&mut self.buffer, Vec::with_capacity(BUFFER_BYTES));
        self.send(Command::Write(full))
    }
}

impl Write for HashingWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buffer.extend_from_slice(data);
        self.position += data.len() as u64;
        if self.buffer.len() >= BUFFER_BYTES {
            self.hand_over()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.finish().map(drop)
    }
}

impl Seek for HashingWriter {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(p) => p,
            SeekFrom::Current(0) => return Ok(self.position),
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "only absolute seeks are supported",
                ))
            }
        };
        if target != self.position {
            self.hand_over()?;
            self.send(Command::Seek(target))?;
            self.position = target;
        }
        Ok(target)
    }
}

impl Drop for HashingWriter {
    fn drop(&mut self) {
        let _ = self.hand_over();
        // Closing the channel ends the worker once it has written what it holds.
        self.commands = None;
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

/// The worker: writes and hashes in order until the channel closes or a write fails.
fn work<W: Write + Seek>(mut inner: W, inbox: Receiver<Command>, errors: SyncSender<io::Error>) {
    let mut hasher = Some(Sha256::new());
    let mut position = 0u64;
    let mut hashed = 0u64;
    for command in inbox {
        let result = match command {
            Command::Write(data) => {
                if position == hashed {
                    if let Some(h) = hasher.as_mut() {
                        h.update(&data);
                        hashed += data.len() as u64;
                    }
                } else {
                    hasher = None;
                }
                position += data.len() as u64;
                inner.write_all(&data)
            }
            Command::Seek(to) => {
                position = to;
                inner.seek(SeekFrom::Start(to)).map(drop)
            }
            Command::Flush(reply) => {
                let outcome = inner.flush().map(|()| {
                    hasher
                        .as_ref()
                        .filter(|_| position == hashed)
                        .map(|h| h.clone().finalize().into())
                });
                let failed = outcome.is_err();
                let _ = reply.send(outcome);
                if failed {
                    return;
                }
                Ok(())
            }
        };
        if let Err(e) = result {
            let _ = errors.try_send(e);
            return;
        }
    }
    let _ = inner.flush();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;
    use std::sync::{Arc, Mutex};

    /// A cursor the test can read back after the writer owned it.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Cursor<Vec<u8>>>>);

    impl Write for Shared {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().write(data)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Seek for Shared {
        fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
            self.0.lock().unwrap().seek(to)
        }
    }

    fn content(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
    }

    #[test]
    fn sequential_chunks_arrive_whole_with_their_sha256() {
        let file = Shared::default();
        let mut writer = HashingWriter::new(file.clone()).unwrap();
        let data = content(3 * BUFFER_BYTES + 12_345);
        for chunk in data.chunks(1371) {
            writer.write_all(chunk).unwrap();
        }
        let slot = writer.digest_slot();
        writer.flush().unwrap();
        assert_eq!(*slot.lock().unwrap(), Some(Sha256::digest(&data).into()));
        drop(writer);
        assert_eq!(file.0.lock().unwrap().get_ref(), &data);
    }

    #[test]
    fn a_seek_elsewhere_writes_in_place_but_leaves_no_digest() {
        let file = Shared::default();
        let mut writer = HashingWriter::new(file.clone()).unwrap();
        writer.write_all(&[1; 100]).unwrap();
        writer.seek(SeekFrom::Start(10)).unwrap();
        writer.write_all(&[2; 5]).unwrap();
        assert_eq!(writer.finish().unwrap(), None);
        drop(writer);
        let mut expected = vec![1u8; 100];
        expected[10..15].fill(2);
        assert_eq!(file.0.lock().unwrap().get_ref(), &expected);
    }

    struct FailingDisk;

    impl Write for FailingDisk {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Seek for FailingDisk {
        fn seek(&mut self, _: SeekFrom) -> io::Result<u64> {
            Ok(0)
        }
    }

    #[test]
    fn a_write_error_on_the_worker_reaches_the_caller() {
        let mut writer = HashingWriter::new(FailingDisk).unwrap();
        let mut failed = None;
        for _ in 0..4 * QUEUED_BUFFERS {
            if let Err(e) = writer.write_all(&[0; BUFFER_BYTES]) {
                failed = Some(e);
                break;
            }
        }
        let error = failed.or_else(|| writer.finish().err()).expect("an error");
        assert_eq!(error.kind(), io::ErrorKind::StorageFull, "{error}");
    }
}
