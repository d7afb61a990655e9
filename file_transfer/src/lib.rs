//! Tox file transfers (docs/protocol.md §3), sans-IO, over a net_crypto session.
//!
//! Data flow, per friend:
//! - in: the layer above hands every lossless payload with id 80/81/82 to
//!   [`FileTransfers::handle_packet`]; the application calls the tox.h-shaped methods
//!   (`file_send`, `control`, `seek`, `send_chunk`);
//! - out: packets go into the [`Session`] passed to each call; events
//!   ([`FileEvent`]) are polled. [`FileTransfers::poll_send`] raises chunk requests only as
//!   the session's send budget allows (docs/transport.md §3.9), so file data never queues
//!   ahead of chat messages by more than one pacing quantum.
//!
//! [`stream::FileStreams`] is the convenience layer on top: it answers chunk requests from
//! any `Read + Seek` source and writes received chunks into any `Write + Seek` sink,
//! verifying a SHA-256 file id.
//!
//! The driver loop, per friend (here with the in-memory `testing::MockSession` of the
//! `testing` feature; core passes its `rustox_net_crypto::Connection`):
//!
//! ```
//! use rustox_file_transfer::{testing::MockSession, FileEvent, FileKind, FileTransfers};
//! use rustox_net_crypto::Timestamp;
//!
//! let (mut ft, mut session, now) = (FileTransfers::new(), MockSession::new(), Timestamp::ZERO);
//! let content = vec![7u8; 3000];
//! let file = ft.file_send(now, &mut session, FileKind::Data, 3000, [0; 32], b"a.txt").unwrap();
//! // The peer accepts: FILE_CONTROL [81, direction 1 = "a file I receive", slot, ACCEPT].
//! ft.handle_packet(now, &[81, 1, file as u8, 0]).unwrap();
//! // After every session input: send within the budget, then answer the events.
//! session.grant(2);
//! ft.poll_send(now, &mut session);
//! while let Some(event) = ft.poll_event() {
//!     if let FileEvent::ChunkRequest { file, position, length } = event {
//!         let chunk = &content[position as usize..position as usize + length];
//!         ft.send_chunk(now, &mut session, file, position, chunk).unwrap();
//!     }
//! }
//! assert_eq!(session.bulk_bytes_sent, 2 * (2 + 1371), "two chunks, as the budget allowed");
//! ```

mod error;
mod event;
pub mod number;
pub mod packet;
mod scheduler;
mod session;
mod slots;
pub mod stream;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod transfer;
mod transfers;

pub use error::{
    FileControlError, FileError, FileGetError, FileSeekError, FileSendChunkError, FileSendError,
};
pub use event::{FileControl, FileEvent};
pub use number::{FileKind, FileNumber, MAX_CONCURRENT_FILE_PIPES, UNKNOWN_FILE_SIZE};
pub use session::{Session, SessionRefused};
pub use transfer::FileInfo;
pub use transfers::{
    FileStats, FileTransfers, TransferInfo, MAX_PENDING_EVENTS, MAX_PENDING_REPLIES,
};
