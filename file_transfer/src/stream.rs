//! Streaming files: any `Read + Seek` source into any `Write + Seek` sink, over
//! [`FileTransfers`] (what `rustox send/recv` and the demo use).
//!
//! The source is read only when a chunk request arrives, and chunk requests arrive only as
//! the session's send budget allows (docs/transport.md §3.9): [`FileStreams::pump`] reads at most
//! one pacing quantum ahead of the wire. The receiver writes each chunk at its offset and,
//! when asked to, checks that the SHA-256 of the whole file equals the file id — the
//! sender side of this helper sets the file id to the content's SHA-256 (like avatars,
//! docs/protocol.md §3.2), so a receiver can verify it and a resumed transfer can be matched to
//! its partial file. Other senders' file ids are opaque (tox.h: a unique identifier;
//! c-toxcore's `tox_file_send` draws a random one for a NULL id): a receiver asks for the
//! check only when it knows the sender hashes its content.

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Seek, SeekFrom, Write};

use rustox_net_crypto::Timestamp;
use sha2::{Digest, Sha256};

use crate::error::{FileControlError, FileSeekError, FileSendError};
use crate::event::{FileControl, FileEvent};
use crate::number::{FileKind, FileNumber, UNKNOWN_FILE_SIZE};
use crate::packet::{FILE_ID_LENGTH, MAX_FILE_DATA_SIZE};
use crate::session::Session;
use crate::transfers::FileTransfers;

/// A readable, seekable source of file bytes. `Send`, so a node holding transfers can move
/// to the thread that drives it (the C API's `tox_iterate` runs on the client's thread).
/// A read may fail with `WouldBlock` when no whole chunk is ready yet: the file then waits
/// for [`FileStreams::source_ready`].
pub trait Source: Read + Seek + Send {}
impl<T: Read + Seek + Send> Source for T {}

/// A writable, seekable sink for received bytes (`Send` for the same reason).
pub trait Sink: Write + Seek + Send {}
impl<T: Write + Seek + Send> Sink for T {}

/// A sink that can also be read back: needed to resume a verified transfer, whose hash
/// must cover the bytes already on disk.
pub trait ResumableSink: Read + Write + Seek + Send {}
impl<T: Read + Write + Seek + Send> ResumableSink for T {}

/// Buffer size for hashing a whole source or a sink's prefix.
const HASH_BUFFER: usize = 64 * 1024;

/// Why a streamed transfer failed or a streaming call was refused.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// Reading the source or writing the sink failed.
    #[error("i/o error: {0}")]
    Io(#[from] io::Error),
    /// The source ended before the size it announced.
    #[error("source ended at {0} bytes, before the announced size")]
    SourceEnded(u64),
    /// The received file's SHA-256 differs from the file id.
    #[error("received file does not match its SHA-256 file id")]
    HashMismatch,
    /// `file_send` refused.
    #[error(transparent)]
    Send(#[from] FileSendError),
    /// `file_control` refused.
    #[error(transparent)]
    Control(#[from] FileControlError),
    /// `file_seek` refused.
    #[error(transparent)]
    Seek(#[from] FileSeekError),
    /// No offer with that number waits to be accepted.
    #[error("no pending offer {0}")]
    NotOffered(u32),
}

/// What happened to streamed transfers.
#[derive(Debug)]
pub enum StreamEvent {
    /// The peer offers a file: accept it with [`FileStreams::accept`] or
    /// [`FileStreams::accept_from`], or refuse it with a `Cancel` control.
    Offered {
        /// API number of the incoming transfer.
        file: u32,
        /// The kind.
        kind: FileKind,
        /// The size, or `u64::MAX` when unknown.
        size: u64,
        /// The file id (the content's SHA-256 when the peer used this helper).
        file_id: [u8; FILE_ID_LENGTH],
        /// The name.
        name: Vec<u8>,
    },
    /// An outgoing file was fully acknowledged by the peer.
    Sent {
        /// API number.
        file: u32,
        /// Bytes sent (counting a seek offset).
        bytes: u64,
    },
    /// An incoming file is complete and flushed.
    Received {
        /// API number.
        file: u32,
        /// Final size.
        bytes: u64,
        /// True when the SHA-256 was checked (and matched); false when not asked to check.
        verified: bool,
        /// The SHA-256 of the whole file, when this helper hashed it (asked to verify).
        sha256: Option<[u8; FILE_ID_LENGTH]>,
    },
    /// The peer paused, resumed, accepted or cancelled a transfer.
    PeerControl {
        /// API number.
        file: u32,
        /// What the peer did.
        control: FileControl,
    },
    /// A streamed transfer failed; it has been cancelled on both sides.
    Failed {
        /// API number.
        file: u32,
        /// Why.
        error: StreamError,
    },
    /// An event about a transfer this helper does not manage.
    Other(FileEvent),
}

struct OutgoingStream {
    source: Box<dyn Source>,
    /// Where the source's cursor is, to skip redundant seeks.
    cursor: Option<u64>,
}

struct IncomingStream {
    sink: Box<dyn Sink>,
    cursor: Option<u64>,
    /// Present when the SHA-256 must be checked against `file_id`.
    hasher: Option<Sha256>,
    file_id: [u8; FILE_ID_LENGTH],
}

/// Streams files over one friend's [`FileTransfers`]. See the module docs.
pub struct FileStreams {
    transfers: FileTransfers,
    outgoing: HashMap<u32, OutgoingStream>,
    incoming: HashMap<u32, IncomingStream>,
    events: VecDeque<StreamEvent>,
    buffer: Vec<u8>,
}

impl Default for FileStreams {
    fn default() -> Self {
        Self::new()
    }
}

impl FileStreams {
    /// No transfers.
    pub fn new() -> Self {
        FileStreams {
            transfers: FileTransfers::new(),
            outgoing: HashMap::new(),
            incoming: HashMap::new(),
            events: VecDeque::new(),
            // Allocated by the first chunk sent: most friends never send a file.
            buffer: Vec::new(),
        }
    }

    /// Outgoing `file`'s source has data again after answering a read with `WouldBlock`:
    /// its chunk requests resume at the next [`Self::pump`].
    pub fn source_ready(&mut self, file: u32) {
        self.transfers.source_ready(file);
    }

    /// The underlying transfers, for pause/resume/cancel and progress.
    pub fn transfers(&mut self) -> &mut FileTransfers {
        &mut self.transfers
    }

    /// A snapshot of a transfer (see [`FileTransfers::transfer`]).
    pub fn transfer(&self, file: u32) -> Option<crate::TransferInfo> {
        self.transfers.transfer(file)
    }

    /// The underlying transfers' counters.
    pub fn stats(&self) -> crate::FileStats {
        self.transfers.stats()
    }

    /// Offer a file of known size whose file id is the SHA-256 of its content. Reads the
    /// source once to hash it (64 KiB at a time), then rewinds it.
    pub fn send_file<S: Session>(
        &mut self,
        now: Timestamp,
        session: &mut S,
        kind: FileKind,
        mut source: Box<dyn Source>,
        name: &[u8],
    ) -> Result<u32, StreamError> {
        source.seek(SeekFrom::Start(0))?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0; HASH_BUFFER];
        let mut size = 0u64;
        loop {
            let n = match source.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            hasher.update(&buf[..n]);
            size += n as u64;
        }
        let file_id: [u8; FILE_ID_LENGTH] = hasher.finalize().into();
        self.send_with_id(now, session, kind, size, file_id, source, name)
    }

    /// Offer a source with a given size (or [`UNKNOWN_FILE_SIZE`] to stream until the
    /// source ends) and file id.
    #[allow(clippy::too_many_arguments)]
    pub fn send_with_id<S: Session>(
        &mut self,
        now: Timestamp,
        session: &mut S,
        kind: FileKind,
        size: u64,
        file_id: [u8; FILE_ID_LENGTH],
        source: Box<dyn Source>,
        name: &[u8],
    ) -> Result<u32, StreamError> {
        let file = self
            .transfers
            .file_send(now, session, kind, size, file_id, name)?;
        self.outgoing.insert(
            file,
            OutgoingStream {
                source,
                cursor: None,
            },
        );
        Ok(file)
    }

    /// Accept an offer from the start, writing into `sink`; with `verify`, the complete
    /// file's SHA-256 must equal the file id or the transfer ends in
    /// [`StreamError::HashMismatch`]. Ask for that only when the sender is known to set the
    /// file id to the content's SHA-256 (this helper's [`Self::send_file`] does): to tox.h
    /// the file id is an opaque identifier, and c-toxcore's clients draw it at random.
    pub fn accept<S: Session>(
        &mut self,
        now: Timestamp,
        session: &mut S,
        file: u32,
        sink: Box<dyn Sink>,
        verify: bool,
    ) -> Result<(), StreamError> {
        let file_id = self.pending_offer(file)?;
        self.transfers
            .control(now, session, file, FileControl::Resume)?;
        self.incoming.insert(
            file,
            IncomingStream {
                sink,
                cursor: None,
                hasher: verify.then(Sha256::new),
                file_id,
            },
        );
        Ok(())
    }

    /// Resume an offer from `offset` bytes already in `sink` (a transfer broken earlier):
    /// seek, then accept. With `verify`, the first `offset` bytes of the sink are read back
    /// into the hash so the check still covers the whole file.
    #[allow(clippy::too_many_arguments)]
    pub fn accept_from<S: Session, K: ResumableSink + 'static>(
        &mut self,
        now: Timestamp,
        session: &mut S,
        file: u32,
        mut sink: K,
        offset: u64,
        verify: bool,
    ) -> Result<(), StreamError> {
        let file_id = self.pending_offer(file)?;
        let hasher = if verify {
            let mut hasher = Sha256::new();
            sink.seek(SeekFrom::Start(0))?;
            let mut prefix = (&mut sink).take(offset);
            let mut buf = vec![0; HASH_BUFFER];
            let mut read = 0u64;
            loop {
                let n = prefix.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                hasher.update(&buf[..n]);
                read += n as u64;
            }
            if read != offset {
                return Err(StreamError::SourceEnded(read));
            }
            Some(hasher)
        } else {
            None
        };
        if offset > 0 {
            self.transfers.seek(now, session, file, offset)?;
        }
        self.transfers
            .control(now, session, file, FileControl::Resume)?;
        self.incoming.insert(
            file,
            IncomingStream {
                sink: Box::new(sink),
                cursor: None,
                hasher,
                file_id,
            },
        );
        Ok(())
    }

    /// Cancel a transfer and forget its source or sink.
    pub fn cancel<S: Session>(
        &mut self,
        now: Timestamp,
        session: &mut S,
        file: u32,
    ) -> Result<(), StreamError> {
        self.outgoing.remove(&file);
        self.incoming.remove(&file);
        self.transfers
            .control(now, session, file, FileControl::Cancel)?;
        Ok(())
    }

    /// A lossless payload with id 80/81/82 from the peer (see
    /// [`FileTransfers::handle_packet`]). Sinks are written here, so call
    /// [`FileStreams::poll_event`] afterwards.
    pub fn handle_packet<S: Session>(
        &mut self,
        now: Timestamp,
        session: &mut S,
        payload: &[u8],
    ) -> Result<(), crate::FileError> {
        let result = self.transfers.handle_packet(now, payload);
        self.process_events(now, session);
        result
    }

    /// Send as much as the session's budget allows now, reading each chunk from its source
    /// only when it can be sent. Returns the file bytes queued into the session.
    pub fn pump<S: Session>(&mut self, now: Timestamp, session: &mut S) -> u64 {
        let mut sent = 0;
        // Each round answers every request it raises, so the next round sees the budget
        // that is left; bounded in case a session reports budget it then refuses.
        for _ in 0..64 {
            let raised = self.transfers.poll_send(now, session);
            sent += self.process_events(now, session);
            if raised == 0 {
                break;
            }
        }
        sent
    }

    /// The friend went offline: every transfer is reset (docs/protocol.md §3.2) and each
    /// streamed one reported as failed, its sink left as written so it can be resumed.
    pub fn friend_offline(&mut self) {
        self.transfers.friend_offline();
        let mut files: Vec<u32> = self
            .outgoing
            .keys()
            .chain(self.incoming.keys())
            .copied()
            .collect();
        files.sort_unstable();
        self.outgoing.clear();
        for (_, mut s) in self.incoming.drain() {
            let _ = s.sink.flush();
        }
        for file in files {
            self.events.push_back(StreamEvent::Failed {
                file,
                error: StreamError::Io(io::Error::new(
                    io::ErrorKind::ConnectionReset,
                    "friend went offline",
                )),
            });
        }
    }

    /// The next event.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<StreamEvent> {
        self.events.pop_front()
    }

    fn pending_offer(&self, file: u32) -> Result<[u8; FILE_ID_LENGTH], StreamError> {
        match (FileNumber::from_u32(file), self.transfers.transfer(file)) {
            (Some(FileNumber::Incoming(_)), Some(t)) if !t.transferring => Ok(t.info.file_id),
            _ => Err(StreamError::NotOffered(file)),
        }
    }

    /// Handle every event of the transfers; returns file bytes sent.
    fn process_events<S: Session>(&mut self, now: Timestamp, session: &mut S) -> u64 {
        let mut sent = 0;
        while let Some(event) = self.transfers.poll_event() {
            match event {
                FileEvent::FileRecv {
                    file,
                    kind,
                    size,
                    file_id,
                    name,
                } => self.events.push_back(StreamEvent::Offered {
                    file,
                    kind,
                    size,
                    file_id,
                    name,
                }),
                FileEvent::ChunkRequest {
                    file,
                    position,
                    length,
                } if self.outgoing.contains_key(&file) => {
                    if length == 0 {
                        self.outgoing.remove(&file);
                        self.events.push_back(StreamEvent::Sent {
                            file,
                            bytes: position,
                        });
                    } else {
                        match self.answer_request(now, session, file, position, length) {
                            Ok(n) => sent += n,
                            Err(error) => self.fail(now, session, file, error),
                        }
                    }
                }
                FileEvent::RecvChunk {
                    file,
                    position,
                    data,
                } if self.incoming.contains_key(&file) => {
                    if let Err(error) = self.write_chunk(file, position, &data) {
                        self.fail(now, session, file, error);
                    }
                }
                FileEvent::RecvControl { file, control }
                    if self.outgoing.contains_key(&file) || self.incoming.contains_key(&file) =>
                {
                    if control == FileControl::Cancel {
                        self.outgoing.remove(&file);
                        self.incoming.remove(&file);
                    }
                    self.events
                        .push_back(StreamEvent::PeerControl { file, control });
                }
                // A request raised before its transfer failed or was cancelled: stale.
                FileEvent::ChunkRequest { file, length, .. }
                    if length > 0 && self.transfers.transfer(file).is_none() => {}
                other => self.events.push_back(StreamEvent::Other(other)),
            }
        }
        sent
    }

    fn answer_request<S: Session>(
        &mut self,
        now: Timestamp,
        session: &mut S,
        file: u32,
        position: u64,
        length: usize,
    ) -> Result<u64, StreamError> {
        // Requests raised before the source ran dry are taken back with it.
        if self.transfers.is_starved(file) {
            return Ok(0);
        }
        let Some(stream) = self.outgoing.get_mut(&file) else {
            return Ok(0);
        };
        if stream.cursor != Some(position) {
            stream.source.seek(SeekFrom::Start(position))?;
        }
        if self.buffer.is_empty() {
            self.buffer = vec![0; MAX_FILE_DATA_SIZE];
        }
        let length = length.min(self.buffer.len());
        let buf = &mut self.buffer[..length];
        let mut filled = 0;
        while filled < length {
            match stream.source.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // A source that fills from elsewhere (the Rust API's async sources) has no
                // whole chunk yet: nothing was taken, the request goes back, and the file
                // waits for `source_ready`.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && filled == 0 => {
                    self.transfers.source_starved(file);
                    return Ok(0);
                }
                Err(e) => {
                    stream.cursor = None;
                    return Err(e.into());
                }
            }
        }
        stream.cursor = Some(position + filled as u64);
        let streaming = self
            .transfers
            .transfer(file)
            .is_some_and(|t| t.info.size == UNKNOWN_FILE_SIZE);
        if filled < length && !streaming {
            return Err(StreamError::SourceEnded(position + filled as u64));
        }
        match self
            .transfers
            .send_chunk(now, session, file, position, &buf[..filled])
        {
            Ok(()) => Ok(filled as u64),
            Err(_) => {
                // SENDQ or a stale request: the transfer re-requests what it still needs.
                stream.cursor = None;
                Ok(0)
            }
        }
    }

    fn write_chunk(&mut self, file: u32, position: u64, data: &[u8]) -> Result<(), StreamError> {
        let Some(stream) = self.incoming.get_mut(&file) else {
            return Ok(());
        };
        if data.is_empty() {
            // The file is complete.
            let stream = self
                .incoming
                .remove(&file)
                .ok_or(StreamError::NotOffered(file))?;
            let IncomingStream {
                mut sink,
                hasher,
                file_id,
                ..
            } = stream;
            sink.flush()?;
            let sha256: Option<[u8; FILE_ID_LENGTH]> = hasher.map(|h| h.finalize().into());
            if sha256.is_some_and(|digest| digest != file_id) {
                self.events.push_back(StreamEvent::Failed {
                    file,
                    error: StreamError::HashMismatch,
                });
                return Ok(());
            }
            self.events.push_back(StreamEvent::Received {
                file,
                bytes: position,
                verified: sha256.is_some(),
                sha256,
            });
            return Ok(());
        }
        if stream.cursor != Some(position) {
            stream.sink.seek(SeekFrom::Start(position))?;
        }
        if let Err(e) = stream.sink.write_all(data) {
            stream.cursor = None;
            return Err(e.into());
        }
        stream.cursor = Some(position + data.len() as u64);
        if let Some(h) = stream.hasher.as_mut() {
            h.update(data);
        }
        Ok(())
    }

    fn fail<S: Session>(&mut self, now: Timestamp, session: &mut S, file: u32, error: StreamError) {
        self.outgoing.remove(&file);
        self.incoming.remove(&file);
        // The transfer may already be gone (completed or killed); then there is nothing
        // to cancel.
        let _ = self
            .transfers
            .control(now, session, file, FileControl::Cancel);
        self.events.push_back(StreamEvent::Failed { file, error });
    }
}
