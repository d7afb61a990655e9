//! Files sent from a source the caller provides ([`super::Tox::send_file_from`]).
//!
//! The node's file layer reads synchronously on the node's thread when a chunk is due. A
//! caller's source is async (a download being relayed, a database, a generator), so a task on
//! the caller's runtime reads it ahead into a bounded buffer ([`SOURCE_BUFFER`]) and the node
//! reads from that. When the buffer holds less than a chunk the node's read answers
//! `WouldBlock`: the file layer holds the file (no busy retries), and the task wakes the node
//! once a chunk's worth has arrived.

use std::collections::VecDeque;
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::{Arc, Mutex};

use rustox_file_transfer::packet::MAX_FILE_DATA_SIZE;
use tokio::sync::Notify;

/// Where a sent file's bytes come from when the caller provides them: read in order from
/// the file's start, never asked to seek.
#[async_trait::async_trait]
pub trait FileSource: Send + 'static {
    /// Reads the file's next bytes into `buf`; 0 at its end.
    async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize>;
}

/// Bytes read ahead of the node: 256 KiB covers the BDP of a 100 Mbit/s, 20 ms path, so the
/// source's latency hides behind the transfer's.
pub const SOURCE_BUFFER: usize = 256 << 10;

/// Size of one read from the caller's source.
const READ_SIZE: usize = 64 << 10;

/// What the task and the node share.
#[derive(Default)]
struct Ahead {
    bytes: VecDeque<u8>,
    eof: bool,
    error: Option<io::Error>,
    /// The node found less than a chunk and waits to be told.
    starved: bool,
}

/// The node's side: a `Read + Seek` source over the bytes read ahead.
pub(super) struct AheadReader {
    ahead: Arc<Mutex<Ahead>>,
    room: Arc<Notify>,
    position: u64,
}

impl Read for AheadReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let mut ahead = self
            .ahead
            .lock()
            .map_err(|_| io::Error::other("the file's source task panicked"))?;
        if let Some(e) = ahead.error.take() {
            return Err(e);
        }
        if ahead.bytes.len() < out.len() && !ahead.eof {
            ahead.starved = true;
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = out.len().min(ahead.bytes.len());
        for (slot, byte) in out.iter_mut().zip(ahead.bytes.drain(..n)) {
            *slot = byte;
        }
        drop(ahead);
        self.position += n as u64;
        self.room.notify_one();
        Ok(n)
    }
}

impl Seek for AheadReader {
    /// Only where it is: the caller's source is read in order.
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        seek_in_place(
            pos,
            self.position,
            "a caller's file source is read in order",
        )
    }
}

/// A seek for a stream that goes only in order (the caller's source or sink): to where it
/// is, `position`, and nowhere else (`refusal` says why).
pub(super) fn seek_in_place(
    pos: SeekFrom,
    position: u64,
    refusal: &'static str,
) -> io::Result<u64> {
    match pos {
        SeekFrom::Start(p) if p == position => Ok(p),
        SeekFrom::Current(0) => Ok(position),
        _ => Err(io::Error::new(io::ErrorKind::Unsupported, refusal)),
    }
}

/// The task that reads a source ahead of the node.
pub(super) type ReadAhead =
    std::pin::Pin<Box<dyn std::future::Future<Output = io::Result<u64>> + Send>>;

/// How the node is told that a starved file can go on.
pub(super) type Ready = Box<dyn Fn() + Send + Sync>;

/// A reader for the node and the future that fills it from `source` (to be spawned on the
/// caller's runtime once the file has its number). `ready` tells the node that a starved file
/// can go on. The future ends with the bytes read, or the source's error (which the node's
/// next read also gets, failing the transfer).
pub(super) fn read_ahead(
    mut source: Box<dyn FileSource>,
) -> (AheadReader, impl FnOnce(Ready) -> ReadAhead) {
    let ahead = Arc::new(Mutex::new(Ahead::default()));
    let room = Arc::new(Notify::new());
    let reader = AheadReader {
        ahead: ahead.clone(),
        room: room.clone(),
        position: 0,
    };
    let start = move |ready: Ready| {
        Box::pin(async move {
            let mut chunk = vec![0u8; READ_SIZE];
            let mut total = 0u64;
            loop {
                let free = loop {
                    let held = ahead.lock().map_or(SOURCE_BUFFER, |a| a.bytes.len());
                    if held < SOURCE_BUFFER {
                        break SOURCE_BUFFER - held;
                    }
                    room.notified().await;
                };
                let want = free.min(READ_SIZE);
                let read = source.read(&mut chunk[..want]).await;
                let (wake, outcome) = {
                    let Ok(mut a) = ahead.lock() else {
                        return Err(io::Error::other("the node's side panicked"));
                    };
                    let outcome = match &read {
                        Ok(0) => {
                            a.eof = true;
                            Some(Ok(total))
                        }
                        Ok(n) => {
                            a.bytes.extend(&chunk[..*n]);
                            total += *n as u64;
                            None
                        }
                        Err(e) => {
                            a.error = Some(io::Error::new(e.kind(), e.to_string()));
                            None
                        }
                    };
                    let wake = a.starved
                        && (a.bytes.len() >= MAX_FILE_DATA_SIZE || a.eof || a.error.is_some());
                    if wake {
                        a.starved = false;
                    }
                    (wake, outcome)
                };
                if wake {
                    ready();
                }
                read?;
                if let Some(outcome) = outcome {
                    return outcome;
                }
            }
        }) as ReadAhead
    };
    (reader, start)
}
