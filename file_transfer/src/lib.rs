//! Tox file transfers (protocol.md §3), sans-IO, over a net_crypto session.
//!
//! Data flow, per friend:
//! - in: the layer above hands every lossless payload with id 80/81/82 to
//!   [`FileTransfers::handle_packet`]; the application calls the tox.h-shaped methods
//!   (`file_send`, `control`, `seek`, `send_chunk`);
//! - out: packets go into the [`Session`] passed to each call; events
//!   ([`FileEvent`]) are polled. [`FileTransfers::poll_send`] raises chunk requests only as
//!   the session's send budget allows (transport.md §3.9), so file data never queues
//!   ahead of chat messages by more than one pacing quantum.
//!
//! [`stream::FileStreams`] is the convenience layer on top: it answers chunk requests from
//! any `Read + Seek` source and writes received chunks into any `Write + Seek` sink,
//! verifying a SHA-256 file id.

pub mod error;
pub mod event;
pub mod number;
pub mod packet;
mod scheduler;
pub mod session;
pub mod stream;
pub mod testing;
pub mod transfer;
pub mod transfers;

pub use error::{
    FileControlError, FileError, FileGetError, FileSeekError, FileSendChunkError, FileSendError,
};
pub use event::{FileControl, FileEvent};
pub use number::{FileKind, FileNumber, MAX_CONCURRENT_FILE_PIPES, UNKNOWN_FILE_SIZE};
pub use session::{Session, SessionRefused};
pub use transfers::{FileStats, FileTransfers, TransferInfo};
