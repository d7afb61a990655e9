//! Files received into a sink the caller provides ([`super::Tox::accept_file_into`]).
//!
//! The node's file layer writes synchronously on the node's thread, chunk by chunk as the
//! session delivers them. A caller's sink is async (a network upload, a database, an
//! encrypted store), so the node hands each chunk to a channel and a task on the caller's
//! runtime writes it: a slow sink never holds up the node's sessions. What waits in the
//! channel is bounded ([`MAX_SINK_BACKLOG`]); a sink that falls that far behind fails the
//! transfer (the friend sees it cancelled) instead of growing memory without bound.

use std::io::{self, Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc;

use super::file_source::seek_in_place;

/// Where a received file goes when the caller provides it. Bytes arrive in order from the
/// file's start; a sink is never asked to seek.
#[async_trait::async_trait]
pub trait FileSink: Send + 'static {
    /// Appends the file's next bytes.
    async fn write_all(&mut self, data: &[u8]) -> io::Result<()>;
    /// The file is complete: make what was written durable.
    async fn finish(&mut self) -> io::Result<()>;
}

/// Most bytes of one file that may wait for the caller's sink: a 16 MiB backlog is ~1.3 s
/// of a 100 Mbit/s transfer.
pub const MAX_SINK_BACKLOG: usize = 16 << 20;

/// What the node's side sends to the writing task.
enum Chunk {
    Data(Vec<u8>),
    Finish,
}

/// The node's side: a `Write + Seek` sink that queues chunks for the task.
pub(super) struct ChannelWriter {
    tx: mpsc::UnboundedSender<Chunk>,
    position: u64,
    backlog: Arc<AtomicUsize>,
}

impl Write for ChannelWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.backlog.load(Ordering::Relaxed) + buf.len() > MAX_SINK_BACKLOG {
            return Err(io::Error::other("the file's sink fell 16 MiB behind"));
        }
        self.backlog.fetch_add(buf.len(), Ordering::Relaxed);
        self.tx
            .send(Chunk::Data(buf.to_vec()))
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the file's sink failed"))?;
        self.position += buf.len() as u64;
        Ok(buf.len())
    }

    /// The file layer flushes once, when the file is complete.
    fn flush(&mut self) -> io::Result<()> {
        self.tx
            .send(Chunk::Finish)
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the file's sink failed"))
    }
}

impl Seek for ChannelWriter {
    /// Only where it is: the caller's sink is written in order (a transfer into it cannot
    /// resume at an offset).
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        seek_in_place(
            pos,
            self.position,
            "a caller's file sink is written in order",
        )
    }
}

/// A writer for the node and the future that feeds `sink` from it (to be spawned on the
/// caller's runtime). The future ends with the bytes written once the file is finished, or
/// the sink's first error (after which the node's next write fails the transfer), or an
/// `UnexpectedEof` error if the transfer ended before the file was complete.
pub(super) fn channel_sink(
    mut sink: Box<dyn FileSink>,
) -> (
    ChannelWriter,
    impl std::future::Future<Output = io::Result<u64>> + Send + 'static,
) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let backlog = Arc::new(AtomicUsize::new(0));
    let writer = ChannelWriter {
        tx,
        position: 0,
        backlog: backlog.clone(),
    };
    let task = async move {
        let mut written = 0u64;
        while let Some(chunk) = rx.recv().await {
            match chunk {
                Chunk::Data(data) => {
                    let result = sink.write_all(&data).await;
                    backlog.fetch_sub(data.len(), Ordering::Relaxed);
                    result?;
                    written += data.len() as u64;
                }
                Chunk::Finish => {
                    sink.finish().await?;
                    return Ok(written);
                }
            }
        }
        Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the transfer ended before the file was complete",
        ))
    };
    (writer, task)
}
