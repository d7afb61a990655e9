//! The state of one transfer in each direction (docs/protocol.md §3.2).
//!
//! Mirrors c-toxcore's `struct File_Transfers` (status, size, transferred, requested,
//! paused, last packet number) with the states as an enum, so that "finished but not yet
//! acknowledged" cannot be confused with "transferring".

use crate::number::{FileKind, UNKNOWN_FILE_SIZE};
use crate::packet::{FILE_ID_LENGTH, MAX_FILE_DATA_SIZE};

/// Pause bits (docs/protocol.md §3.2: US = 1, OTHER = 2, BOTH = 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PauseFlags {
    /// We paused it (`FILE_PAUSE_US`).
    pub us: bool,
    /// The peer paused it (`FILE_PAUSE_OTHER`).
    pub other: bool,
}

impl PauseFlags {
    /// Paused by either side.
    pub fn any(self) -> bool {
        self.us || self.other
    }
}

/// Where an outgoing transfer is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutgoingStatus {
    /// Request sent, waiting for the receiver's ACCEPT (`FILESTATUS_NOT_ACCEPTED`).
    NotAccepted,
    /// Accepted; chunks flow (`FILESTATUS_TRANSFERRING`).
    Transferring,
    /// The last chunk was queued as this packet number; the slot frees once it is
    /// acknowledged (`FILESTATUS_FINISHED`).
    Finished {
        /// Packet number of the last FILE_DATA.
        last_packet: u32,
    },
}

/// Where an incoming transfer is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncomingStatus {
    /// Offered, not yet accepted by us; starts here (incoming transfers start paused).
    NotAccepted,
    /// We accepted; data flows.
    Transferring,
}

/// What both directions share: the request's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    /// The kind from the request.
    pub kind: FileKind,
    /// The size, or [`UNKNOWN_FILE_SIZE`].
    pub size: u64,
    /// The file id.
    pub file_id: [u8; FILE_ID_LENGTH],
    /// The name, ≤ 255 bytes.
    pub name: Vec<u8>,
}

impl FileInfo {
    /// True when the size is unknown (streaming).
    pub fn is_streaming(&self) -> bool {
        self.size == UNKNOWN_FILE_SIZE
    }
}

/// One file we send.
#[derive(Debug, Clone)]
pub(crate) struct Outgoing {
    pub info: FileInfo,
    pub status: OutgoingStatus,
    pub paused: PauseFlags,
    /// Bytes handed to the session (`transferred`).
    pub transferred: u64,
    /// Bytes asked of the application via chunk requests (`requested`), ≥ `transferred`.
    pub requested: u64,
    /// A size-0 file still owes its one empty FILE_DATA.
    pub owes_empty_chunk: bool,
    /// The application's source had no data for a request: none is raised until it says
    /// it has ([`crate::FileTransfers::source_ready`]).
    pub starved: bool,
}

impl Outgoing {
    pub fn new(info: FileInfo) -> Self {
        Outgoing {
            owes_empty_chunk: info.size == 0,
            info,
            status: OutgoingStatus::NotAccepted,
            paused: PauseFlags::default(),
            transferred: 0,
            requested: 0,
            starved: false,
        }
    }

    /// Length of the next chunk to request, if this transfer may be asked for one now.
    pub fn next_request_length(&self) -> Option<usize> {
        if self.status != OutgoingStatus::Transferring || self.paused.any() || self.starved {
            return None;
        }
        let left = self.info.size.saturating_sub(self.requested);
        let length = left.min(MAX_FILE_DATA_SIZE as u64) as usize;
        (length > 0).then_some(length)
    }

    /// Chunks requested from the application and not yet sent.
    pub fn outstanding_chunks(&self) -> usize {
        if self.status != OutgoingStatus::Transferring {
            return 0;
        }
        let bytes = self.requested.saturating_sub(self.transferred);
        usize::try_from(bytes.div_ceil(MAX_FILE_DATA_SIZE as u64)).unwrap_or(usize::MAX)
    }
}

/// One file we receive.
#[derive(Debug, Clone)]
pub(crate) struct Incoming {
    pub info: FileInfo,
    pub status: IncomingStatus,
    pub paused: PauseFlags,
    /// Bytes received (or the seek position before accepting).
    pub transferred: u64,
}

impl Incoming {
    pub fn new(info: FileInfo) -> Self {
        Incoming {
            info,
            status: IncomingStatus::NotAccepted,
            paused: PauseFlags::default(),
            transferred: 0,
        }
    }
}
