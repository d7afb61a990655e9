//! What the file layer tells the application (tox.h's file callbacks, docs/protocol.md §9).

use crate::number::FileKind;
use crate::packet::FILE_ID_LENGTH;

/// `Tox_File_Control`: the values equal the wire control bytes 0, 1, 2 (docs/protocol.md §9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileControl {
    /// RESUME: accept an offer, or resume after our own pause.
    Resume,
    /// PAUSE.
    Pause,
    /// CANCEL: kill the transfer (either side).
    Cancel,
}

/// One event, polled with [`crate::FileTransfers::poll_event`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileEvent {
    /// `tox_file_recv_cb`: the peer offers a file; it waits, paused, until we RESUME it.
    FileRecv {
        /// API number of the incoming transfer (`(slot + 1) << 16`).
        file: u32,
        /// The kind.
        kind: FileKind,
        /// The size, or `u64::MAX` when unknown.
        size: u64,
        /// The file id.
        file_id: [u8; FILE_ID_LENGTH],
        /// The name, ≤ 255 bytes.
        name: Vec<u8>,
    },
    /// `tox_file_chunk_request_cb`: answer with `send_chunk(file, position, ≤ length bytes)`.
    /// Raised only as the session's send budget allows. `length == 0` means the transfer
    /// is complete: its last packet was acknowledged and the slot is free again.
    ChunkRequest {
        /// API number of the outgoing transfer.
        file: u32,
        /// First byte wanted.
        position: u64,
        /// Bytes wanted (1371 except the last chunk), or 0 for "done".
        length: usize,
    },
    /// `tox_file_recv_chunk_cb`: bytes of an incoming file, in order. An empty `data` means
    /// the file is complete and the slot is free again.
    RecvChunk {
        /// API number of the incoming transfer.
        file: u32,
        /// Offset of `data` in the file.
        position: u64,
        /// The bytes, ≤ 1371.
        data: Vec<u8>,
    },
    /// `tox_file_recv_control_cb`: the peer accepted/resumed, paused or cancelled.
    RecvControl {
        /// API number of the transfer.
        file: u32,
        /// What the peer did.
        control: FileControl,
    },
}
