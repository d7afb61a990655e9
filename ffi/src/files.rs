//! tox.h's file transfers over the node's file layer (docs/protocol.md §3.2).
//!
//! tox.h moves file bytes through the client: a sender is asked for each chunk
//! (`tox_file_chunk_request_cb`) and answers with `tox_file_send_chunk`; a receiver gets
//! each chunk in `tox_file_recv_chunk_cb`. The node's file layer instead reads a source and
//! writes a sink when the session's send budget allows. The bridge between them:
//! * a file we send reads from a [`ChunkBuffer`] that the client fills; the bridge asks
//!   the client for chunks up to [`READ_AHEAD`] bytes ahead of what the node has taken, and
//!   a node that finds less than a chunk waits (`WouldBlock`, the file layer holds the
//!   file) until the client's chunk arrives;
//! * a file we receive is written into a [`ChunkSink`] that turns each write into a
//!   `tox_file_recv_chunk_cb` event, handed to the client after the step that wrote it.
//!
//! As in c-toxcore, an incoming file waits paused until the client resumes it
//! (`tox_file_control` RESUME, which is the node's accept), a seek is only allowed before
//! that, the last chunk request has length 0 (the file is sent) and the last received chunk
//! has length 0 (the file is complete).

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex};

use rustox_core::node::{FileOffer, FriendNumber, NodeError, PreparedFile};
use rustox_file_transfer::number::UNKNOWN_FILE_SIZE;
use rustox_file_transfer::packet::MAX_FILE_DATA_SIZE;
use rustox_file_transfer::stream::StreamError;
use rustox_file_transfer::{FileControlError, FileKind, FileSendError};

use crate::event::Event;
use crate::guard;
use crate::handle::{tox_ref, Tox};
use crate::types::{
    Tox_Err_File_Control, Tox_Err_File_Get, Tox_Err_File_Seek, Tox_Err_File_Send,
    Tox_Err_File_Send_Chunk, Tox_File_Control,
};

/// Bytes asked of the client ahead of what the node has sent, per file: 256 KiB is ~190
/// chunk requests, enough for the node to keep a 100 Mbit/s, 20 ms path busy between two
/// iterations of a client that answers requests from its callback.
pub const READ_AHEAD: u64 = 256 << 10;

/// `TOX_FILE_ID_LENGTH`.
const FILE_ID_LENGTH: usize = 32;

/// `TOX_MAX_FILENAME_LENGTH`.
const MAX_FILENAME_LENGTH: usize = 255;

/// A chunk's size: `MAX_FILE_DATA_SIZE` (1371), what c-toxcore asks for and accepts.
const CHUNK: u64 = MAX_FILE_DATA_SIZE as u64;

/// The bytes of a file we send that the client has given and the node not yet taken.
#[derive(Debug)]
pub struct ChunkBuffer {
    /// The announced size.
    size: u64,
    /// Position of the first byte in `bytes`: what the node reads next.
    start: u64,
    bytes: VecDeque<u8>,
    /// The next position to ask the client for.
    requested: u64,
    /// The node has read: the friend accepted and the transfer runs. Chunks are asked for
    /// only then, so a seek by the receiver (before it accepts) moves where they start.
    reading: bool,
    /// The node found less than a chunk and waits to be told ([`rustox_core::node::Node::file_source_ready`]).
    starved: bool,
    /// A file of unknown size (`UINT64_MAX`, streaming) got its last chunk: one shorter than
    /// 1371 bytes (docs/protocol.md §3.2).
    ended: bool,
}

impl ChunkBuffer {
    fn new(size: u64) -> Self {
        ChunkBuffer {
            size,
            start: 0,
            bytes: VecDeque::new(),
            requested: 0,
            reading: false,
            starved: false,
            ended: false,
        }
    }

    /// Where the file ends, as far as is known: its size, or for a streamed file the end of
    /// its last chunk.
    fn known_end(&self) -> u64 {
        if self.ended {
            self.end()
        } else {
            self.size
        }
    }

    /// Where the client's next chunk must start.
    fn end(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }

    /// The chunk requests due now, appended to `out`.
    fn request(&mut self, friend_number: u32, file_number: u32, out: &mut Vec<Event>) {
        if !self.reading {
            return;
        }
        while self.wants_chunks() {
            let length = CHUNK.min(self.size - self.requested);
            out.push(Event::FileChunkRequest {
                friend_number,
                file_number,
                position: self.requested,
                // At most 1371: fits.
                length: length as u16,
            });
            self.requested += length;
        }
    }

    fn wants_chunks(&self) -> bool {
        self.reading
            && !self.ended
            && self.requested < self.size
            && self.requested - self.start < READ_AHEAD
    }
}

/// The node's side of a file we send: reads what the client gave.
struct ChunkReader(Arc<Mutex<ChunkBuffer>>);

impl Read for ChunkReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let mut b = self.0.lock().unwrap_or_else(|e| e.into_inner());
        b.reading = true;
        let end = b.known_end();
        if b.start >= end {
            return Ok(0);
        }
        let held = b.bytes.len();
        let to_end = end - b.start;
        if held < out.len() && (held as u64) < to_end {
            b.starved = true;
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = out.len().min(held);
        for (slot, byte) in out.iter_mut().zip(b.bytes.drain(..n)) {
            *slot = byte;
        }
        b.start += n as u64;
        Ok(n)
    }
}

impl Seek for ChunkReader {
    /// The receiver's seek (`FILE_SEEK` before it accepts): chunks are asked for from there.
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let mut b = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let target = match pos {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::Current(d) => b.start.checked_add_signed(d),
            SeekFrom::End(d) => b.size.checked_add_signed(d),
        };
        let Some(target) = target.filter(|&p| p <= b.size) else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek outside the file",
            ));
        };
        if target != b.start {
            b.bytes.clear();
            b.start = target;
            b.requested = target;
        }
        Ok(target)
    }
}

/// The node's side of a file we receive: every write becomes a chunk for the client.
struct ChunkSink {
    friend_number: u32,
    file_number: u32,
    position: u64,
    received: Arc<Mutex<VecDeque<Event>>>,
}

impl Write for ChunkSink {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if data.is_empty() {
            return Ok(0);
        }
        self.received
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back(Event::FileRecvChunk {
                friend_number: self.friend_number,
                file_number: self.file_number,
                position: self.position,
                data: data.to_vec(),
            });
        self.position += data.len() as u64;
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for ChunkSink {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.position = match pos {
            SeekFrom::Start(p) => p,
            SeekFrom::Current(d) => self
                .position
                .checked_add_signed(d)
                .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?,
            SeekFrom::End(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "the client holds the file",
                ))
            }
        };
        Ok(self.position)
    }
}

impl Read for ChunkSink {
    /// The client holds the bytes, not us: a resumed transfer is accepted without
    /// re-reading its prefix (no verification of it), so this is never asked for more.
    fn read(&mut self, _out: &mut [u8]) -> io::Result<usize> {
        Ok(0)
    }
}

/// A file we send: the buffer the client fills, and its file id.
type Outgoing = (Arc<Mutex<ChunkBuffer>>, [u8; FILE_ID_LENGTH]);

/// An offer from a friend, until it is accepted or ends.
#[derive(Debug, Clone, Copy)]
struct Incoming {
    file_id: [u8; FILE_ID_LENGTH],
    size: u64,
    /// Where `tox_file_seek` asked the transfer to start.
    seek: u64,
    accepted: bool,
}

/// Files between the node and the client (handle.rs holds it under the instance's lock).
#[derive(Default)]
pub struct FileBridge {
    outgoing: HashMap<(u32, u32), Outgoing>,
    incoming: HashMap<(u32, u32), Incoming>,
    received: Arc<Mutex<VecDeque<Event>>>,
}

impl FileBridge {
    /// Chunks or chunk requests wait to be handed over (none for a file that `paused`
    /// holds).
    pub fn has_work(&self, paused: impl Fn(u32, u32) -> bool) -> bool {
        !self
            .received
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
            || self.outgoing.iter().any(|(&(friend, file), (b, _))| {
                !paused(friend, file) && b.lock().unwrap_or_else(|e| e.into_inner()).wants_chunks()
            })
    }

    /// A transfer is running: a file we send has been accepted, or a file we receive has
    /// been. Its acknowledgements and data must be read as they come, not after a blind
    /// sleep of the client's.
    pub fn transferring(&self) -> bool {
        self.incoming.values().any(|i| i.accepted)
            || self.outgoing.values().any(|(b, _)| {
                let b = b.lock().unwrap_or_else(|e| e.into_inner());
                b.reading && b.start < b.known_end()
            })
    }

    /// The chunks received since the last call, in order.
    pub fn drain_received(&mut self, out: &mut Vec<Event>) {
        out.extend(
            self.received
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .drain(..),
        );
    }

    /// The chunk requests due now, for every file that `paused` (by either side) does not
    /// hold: c-toxcore asks for nothing while a transfer is paused.
    pub fn request_chunks(&mut self, out: &mut Vec<Event>, paused: impl Fn(u32, u32) -> bool) {
        for (&(friend, file), (buffer, _)) in &self.outgoing {
            if paused(friend, file) {
                continue;
            }
            buffer
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .request(friend, file, out);
        }
    }

    /// A friend offered a file.
    pub fn offered(&mut self, offer: &FileOffer) {
        self.incoming.insert(
            (offer.friend.0, offer.file),
            Incoming {
                file_id: offer.file_id,
                size: offer.size,
                seek: 0,
                accepted: false,
            },
        );
    }

    /// A transfer ended (sent, received, failed or cancelled).
    pub fn finished(&mut self, friend: u32, file: u32) {
        self.outgoing.remove(&(friend, file));
        self.incoming.remove(&(friend, file));
    }

    /// A friend went offline: its transfers are gone (c-toxcore `break_files`).
    pub fn friend_offline(&mut self, friend: u32) {
        self.outgoing.retain(|&(f, _), _| f != friend);
        self.incoming.retain(|&(f, _), _| f != friend);
    }

    /// Whether a chunk request collected before this iteration's callbacks ran is still
    /// one c-toxcore would make when its turn comes: c-toxcore raises a request only while
    /// its transfer is `FILESTATUS_TRANSFERRING` (Messenger.c, `do_all_filetransfers`), so a
    /// stream the client ended with a short chunk, or a file it cancelled, is asked for
    /// nothing more; the next request such a client sees is the zero-length one at the end.
    pub fn still_requested(&self, friend: u32, file: u32, position: u64) -> bool {
        self.outgoing.get(&(friend, file)).is_some_and(|(b, _)| {
            let b = b.lock().unwrap_or_else(|e| e.into_inner());
            !b.ended && position >= b.end()
        })
    }

    /// A request at `position` collected for a file that was paused before it could be
    /// delivered: it is asked for again, from there, once the file resumes (requests of one
    /// file are delivered in order, so the first one taken back is the lowest).
    pub fn take_back(&self, friend: u32, file: u32, position: u64) {
        if let Some((b, _)) = self.outgoing.get(&(friend, file)) {
            let mut b = b.lock().unwrap_or_else(|e| e.into_inner());
            if position >= b.end() && position < b.requested {
                b.requested = position;
            }
        }
    }

    fn file_id(&self, friend: u32, file: u32) -> Option<[u8; FILE_ID_LENGTH]> {
        self.outgoing
            .get(&(friend, file))
            .map(|(_, id)| *id)
            .or_else(|| self.incoming.get(&(friend, file)).map(|i| i.file_id))
    }
}

/// Offers a file to a friend (`tox_file_send`): returns its file number, or `UINT32_MAX`.
/// A NULL `file_id` gets a random one, as in c-toxcore; for an avatar the client passes
/// the image's hash (`tox_hash`).
#[no_mangle]
pub unsafe extern "C" fn tox_file_send(
    tox: *mut Tox,
    friend_number: u32,
    kind: u32,
    file_size: u64,
    file_id: *const u8,
    filename: *const u8,
    filename_length: usize,
    error: *mut Tox_Err_File_Send,
) -> u32 {
    guard::call(u32::MAX, || {
        // SAFETY: tox.h's contract for `tox`.
        let Some(tox) = (unsafe { tox_ref(tox) }) else {
            return guard::fail(error, Tox_Err_File_Send::NULL, u32::MAX);
        };
        // SAFETY: `filename_length` bytes at `filename`, per tox.h.
        let Some(name) = (unsafe { guard::bytes(filename, filename_length) }) else {
            return guard::fail(error, Tox_Err_File_Send::NULL, u32::MAX);
        };
        if name.len() > MAX_FILENAME_LENGTH {
            return guard::fail(error, Tox_Err_File_Send::NAME_TOO_LONG, u32::MAX);
        }
        // Kinds other than data and avatar pass through as c-toxcore passes them.
        let kind = FileKind::from_u32(kind);
        // SAFETY: a non-NULL file id is TOX_FILE_ID_LENGTH bytes, per tox.h.
        let id = unsafe { guard::array::<FILE_ID_LENGTH>(file_id) }.unwrap_or_else(rand::random);
        let mut state = tox.lock();
        let state = &mut *state;
        let buffer = Arc::new(Mutex::new(ChunkBuffer::new(file_size)));
        let file = PreparedFile {
            source: Box::new(ChunkReader(buffer.clone())),
            size: file_size,
            sha256: id,
        };
        let now = state.now();
        match state
            .node
            .send_file_kind(now, FriendNumber(friend_number), kind, file, name)
        {
            Ok(number) => {
                state
                    .files
                    .outgoing
                    .insert((friend_number, number), (buffer, id));
                state.flush();
                guard::fail(error, Tox_Err_File_Send::OK, number)
            }
            Err(e) => guard::fail(error, send_error(&e), u32::MAX),
        }
    })
}

fn send_error(e: &NodeError) -> Tox_Err_File_Send {
    match e {
        NodeError::UnknownFriend => Tox_Err_File_Send::FRIEND_NOT_FOUND,
        NodeError::Stream(StreamError::Send(FileSendError::NameTooLong)) => {
            Tox_Err_File_Send::NAME_TOO_LONG
        }
        NodeError::Stream(StreamError::Send(FileSendError::TooMany)) => Tox_Err_File_Send::TOO_MANY,
        _ => Tox_Err_File_Send::FRIEND_NOT_CONNECTED,
    }
}

/// Sends a chunk the client was asked for (`tox_file_send_chunk`). c-toxcore's rules: the
/// chunk starts where the last one ended and was requested, is 1371 bytes unless it is the
/// file's last, and the transfer is running.
#[no_mangle]
pub unsafe extern "C" fn tox_file_send_chunk(
    tox: *mut Tox,
    friend_number: u32,
    file_number: u32,
    position: u64,
    data: *const u8,
    length: usize,
    error: *mut Tox_Err_File_Send_Chunk,
) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`.
        let Some(tox) = (unsafe { tox_ref(tox) }) else {
            return guard::fail(error, Tox_Err_File_Send_Chunk::NULL, false);
        };
        // SAFETY: `length` bytes at `data`, per tox.h.
        let Some(data) = (unsafe { guard::bytes(data, length) }) else {
            return guard::fail(error, Tox_Err_File_Send_Chunk::NULL, false);
        };
        let mut state = tox.lock();
        let state = &mut *state;
        let friend = FriendNumber(friend_number);
        if state.node.friend_public_key(friend).is_none() {
            return guard::fail(error, Tox_Err_File_Send_Chunk::FRIEND_NOT_FOUND, false);
        }
        if !state.node.is_friend_online(friend) {
            return guard::fail(error, Tox_Err_File_Send_Chunk::FRIEND_NOT_CONNECTED, false);
        }
        let Some((buffer, _)) = state.files.outgoing.get(&(friend_number, file_number)) else {
            return guard::fail(error, Tox_Err_File_Send_Chunk::NOT_FOUND, false);
        };
        let wake = {
            let mut b = buffer.lock().unwrap_or_else(|e| e.into_inner());
            if !b.reading {
                return guard::fail(error, Tox_Err_File_Send_Chunk::NOT_TRANSFERRING, false);
            }
            let length = data.len() as u64;
            let streamed = b.size == UNKNOWN_FILE_SIZE;
            let fits = b
                .size
                .checked_sub(position)
                .is_some_and(|left| length <= left);
            let last = streamed || position + length == b.size;
            if length > CHUNK || !fits || (length != CHUNK && !last) || b.ended {
                return guard::fail(error, Tox_Err_File_Send_Chunk::INVALID_LENGTH, false);
            }
            if position != b.end() || (position >= b.requested && length > 0) {
                return guard::fail(error, Tox_Err_File_Send_Chunk::WRONG_POSITION, false);
            }
            b.bytes.extend(data);
            // A streamed file ends with its first chunk shorter than 1371 bytes.
            b.ended = streamed && length < CHUNK;
            let wake = b.starved && (b.bytes.len() as u64 >= CHUNK || b.end() == b.known_end());
            if wake {
                b.starved = false;
            }
            wake
        };
        if wake {
            let now = state.now();
            state.node.file_source_ready(now, friend, file_number);
            state.flush();
        }
        guard::fail(error, Tox_Err_File_Send_Chunk::OK, true)
    })
}

/// Resumes (or accepts), pauses or cancels a transfer (`tox_file_control`). RESUME of a
/// file a friend offers accepts it, from where `tox_file_seek` said.
#[no_mangle]
pub unsafe extern "C" fn tox_file_control(
    tox: *mut Tox,
    friend_number: u32,
    file_number: u32,
    control: crate::types::Tox_File_Control_Value,
    error: *mut Tox_Err_File_Control,
) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`.
        let Some(tox) = (unsafe { tox_ref(tox) }) else {
            // tox.h has no NULL code here: a NULL instance has no such friend.
            return guard::fail(error, Tox_Err_File_Control::FRIEND_NOT_FOUND, false);
        };
        let Some(control) = Tox_File_Control::from_raw(control) else {
            return guard::fail(error, Tox_Err_File_Control::NOT_FOUND, false);
        };
        let mut state = tox.lock();
        let state = &mut *state;
        let friend = FriendNumber(friend_number);
        let now = state.now();
        let key = (friend_number, file_number);
        let result = match control {
            Tox_File_Control::RESUME => match state.files.incoming.get(&key).copied() {
                Some(offer) if !offer.accepted => {
                    let sink = ChunkSink {
                        friend_number,
                        file_number,
                        position: offer.seek,
                        received: state.files.received.clone(),
                    };
                    let accepted = if offer.seek > 0 {
                        state.node.accept_file_from(
                            now,
                            friend,
                            file_number,
                            sink,
                            offer.seek,
                            false,
                        )
                    } else {
                        state
                            .node
                            .accept_file(now, friend, file_number, Box::new(sink), None)
                    };
                    if accepted.is_ok() {
                        if let Some(i) = state.files.incoming.get_mut(&key) {
                            i.accepted = true;
                        }
                    }
                    accepted
                }
                _ => state.node.resume_file(now, friend, file_number),
            },
            Tox_File_Control::PAUSE => state.node.pause_file(now, friend, file_number),
            Tox_File_Control::CANCEL => {
                let cancelled = state.node.cancel_file(now, friend, file_number);
                if cancelled.is_ok() {
                    state.files.finished(friend_number, file_number);
                }
                cancelled
            }
        };
        state.flush();
        match result {
            Ok(()) => guard::fail(error, Tox_Err_File_Control::OK, true),
            Err(e) => guard::fail(error, control_error(&e), false),
        }
    })
}

fn control_error(e: &NodeError) -> Tox_Err_File_Control {
    match e {
        NodeError::UnknownFriend => Tox_Err_File_Control::FRIEND_NOT_FOUND,
        NodeError::FriendOffline => Tox_Err_File_Control::FRIEND_NOT_CONNECTED,
        NodeError::FileControl(c) | NodeError::Stream(StreamError::Control(c)) => match c {
            FileControlError::NotFound => Tox_Err_File_Control::NOT_FOUND,
            FileControlError::NotPaused => Tox_Err_File_Control::NOT_PAUSED,
            FileControlError::Denied => Tox_Err_File_Control::DENIED,
            FileControlError::AlreadyPaused => Tox_Err_File_Control::ALREADY_PAUSED,
            FileControlError::SendQ => Tox_Err_File_Control::SENDQ,
        },
        NodeError::Send(_) => Tox_Err_File_Control::SENDQ,
        _ => Tox_Err_File_Control::NOT_FOUND,
    }
}

/// Asks the sender of an offered file to start at `position` (`tox_file_seek`): only
/// before the file is accepted, and only inside it.
#[no_mangle]
pub unsafe extern "C" fn tox_file_seek(
    tox: *mut Tox,
    friend_number: u32,
    file_number: u32,
    position: u64,
    error: *mut Tox_Err_File_Seek,
) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`.
        let Some(tox) = (unsafe { tox_ref(tox) }) else {
            return guard::fail(error, Tox_Err_File_Seek::FRIEND_NOT_FOUND, false);
        };
        let mut state = tox.lock();
        let friend = FriendNumber(friend_number);
        if state.node.friend_public_key(friend).is_none() {
            return guard::fail(error, Tox_Err_File_Seek::FRIEND_NOT_FOUND, false);
        }
        if !state.node.is_friend_online(friend) {
            return guard::fail(error, Tox_Err_File_Seek::FRIEND_NOT_CONNECTED, false);
        }
        let Some(offer) = state.files.incoming.get_mut(&(friend_number, file_number)) else {
            return guard::fail(error, Tox_Err_File_Seek::NOT_FOUND, false);
        };
        if offer.accepted {
            return guard::fail(error, Tox_Err_File_Seek::DENIED, false);
        }
        if position >= offer.size {
            return guard::fail(error, Tox_Err_File_Seek::INVALID_POSITION, false);
        }
        offer.seek = position;
        guard::fail(error, Tox_Err_File_Seek::OK, true)
    })
}

/// The file id of a transfer (`tox_file_get_file_id`): 32 bytes into `file_id`.
#[no_mangle]
pub unsafe extern "C" fn tox_file_get_file_id(
    tox: *const Tox,
    friend_number: u32,
    file_number: u32,
    file_id: *mut u8,
    error: *mut Tox_Err_File_Get,
) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`.
        let Some(tox) = (unsafe { tox_ref(tox) }) else {
            return guard::fail(error, Tox_Err_File_Get::NULL, false);
        };
        if file_id.is_null() {
            return guard::fail(error, Tox_Err_File_Get::NULL, false);
        }
        let state = tox.lock();
        if state
            .node
            .friend_public_key(FriendNumber(friend_number))
            .is_none()
        {
            return guard::fail(error, Tox_Err_File_Get::FRIEND_NOT_FOUND, false);
        }
        let Some(id) = state.files.file_id(friend_number, file_number) else {
            return guard::fail(error, Tox_Err_File_Get::NOT_FOUND, false);
        };
        // SAFETY: tox.h: `file_id` has room for TOX_FILE_ID_LENGTH bytes; checked non-NULL.
        unsafe { guard::copy_out(&id, file_id) };
        guard::fail(error, Tox_Err_File_Get::OK, true)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The node reads only whole chunks (or the file's tail), waits while the client has
    /// not answered, and asks for chunks only once it has read, up to READ_AHEAD ahead.
    #[test]
    fn a_sent_file_is_asked_for_in_chunks_and_read_whole() {
        let size = 3 * CHUNK + 10;
        let buffer = Arc::new(Mutex::new(ChunkBuffer::new(size)));
        let mut reader = ChunkReader(buffer.clone());
        let mut out = Vec::new();
        buffer.lock().unwrap().request(0, 0, &mut out);
        assert!(out.is_empty(), "no request before the node reads");
        let mut chunk = vec![0u8; CHUNK as usize];
        let e = reader.read(&mut chunk).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        buffer.lock().unwrap().request(0, 0, &mut out);
        let asked: Vec<(u64, u16)> = out
            .iter()
            .map(|e| match e {
                Event::FileChunkRequest {
                    position, length, ..
                } => (*position, *length),
                _ => panic!("{e:?}"),
            })
            .collect();
        assert_eq!(
            asked,
            vec![(0, 1371), (1371, 1371), (2742, 1371), (4113, 10)]
        );
        {
            let mut b = buffer.lock().unwrap();
            b.bytes.extend(std::iter::repeat_n(7u8, 1371 * 3 + 10));
        }
        let mut total = 0;
        loop {
            match reader.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => total += n,
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(total as u64, size);
    }

    /// A seek before the transfer runs moves where the chunk requests start.
    #[test]
    fn a_seek_moves_the_requests() {
        let buffer = Arc::new(Mutex::new(ChunkBuffer::new(10 * CHUNK)));
        let mut reader = ChunkReader(buffer.clone());
        reader.seek(SeekFrom::Start(5 * CHUNK)).unwrap();
        let mut chunk = vec![0u8; CHUNK as usize];
        assert!(reader.read(&mut chunk).is_err());
        let mut out = Vec::new();
        buffer.lock().unwrap().request(0, 0, &mut out);
        assert!(
            matches!(out[0], Event::FileChunkRequest { position, .. } if position == 5 * CHUNK)
        );
        assert_eq!(out.len(), 5);
        assert!(reader.seek(SeekFrom::Start(11 * CHUNK)).is_err());
    }

    /// A streamed file (unknown size) is asked for until its short last chunk arrives, and
    /// read to that chunk's end.
    #[test]
    fn a_streamed_file_ends_with_its_short_chunk() {
        let buffer = Arc::new(Mutex::new(ChunkBuffer::new(UNKNOWN_FILE_SIZE)));
        let mut reader = ChunkReader(buffer.clone());
        let mut chunk = vec![0u8; CHUNK as usize];
        assert!(reader.read(&mut chunk).is_err());
        let mut out = Vec::new();
        buffer.lock().unwrap().request(0, 0, &mut out);
        assert_eq!(out.len() as u64, READ_AHEAD.div_ceil(CHUNK));
        {
            let mut b = buffer.lock().unwrap();
            b.bytes
                .extend(std::iter::repeat_n(1u8, CHUNK as usize + 10));
            b.ended = true;
        }
        assert_eq!(reader.read(&mut chunk).unwrap(), CHUNK as usize);
        assert_eq!(reader.read(&mut chunk).unwrap(), 10);
        assert_eq!(reader.read(&mut chunk).unwrap(), 0);
        out.clear();
        buffer.lock().unwrap().request(0, 0, &mut out);
        assert!(out.is_empty(), "no request after the last chunk");
    }

    /// Every write of the node becomes one chunk event at its position.
    #[test]
    fn received_writes_become_chunks_in_order() {
        let received = Arc::new(Mutex::new(VecDeque::new()));
        let mut sink = ChunkSink {
            friend_number: 3,
            file_number: 1 << 16,
            position: 0,
            received: received.clone(),
        };
        sink.write_all(b"hello").unwrap();
        sink.seek(SeekFrom::Start(100)).unwrap();
        sink.write_all(b"world").unwrap();
        let got: Vec<Event> = received.lock().unwrap().drain(..).collect();
        assert_eq!(
            got,
            vec![
                Event::FileRecvChunk {
                    friend_number: 3,
                    file_number: 1 << 16,
                    position: 0,
                    data: b"hello".to_vec()
                },
                Event::FileRecvChunk {
                    friend_number: 3,
                    file_number: 1 << 16,
                    position: 100,
                    data: b"world".to_vec()
                },
            ]
        );
    }
}
