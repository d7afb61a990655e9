//! The bridge between the node's file layer and tox.h's chunks: what the client gives for a
//! file we send ([`ChunkBuffer`]), what the node writes of a file we receive ([`ChunkSink`]),
//! and each transfer's state between the two ([`FileBridge`], held under the instance's
//! lock).

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex};

use rustox_core::node::FileOffer;
use rustox_file_transfer::packet::MAX_FILE_DATA_SIZE;

use crate::event::Event;

/// Bytes asked of the client ahead of what the node has sent, per file: 256 KiB is ~190
/// chunk requests, enough for the node to keep a 100 Mbit/s, 20 ms path busy between two
/// iterations of a client that answers requests from its callback.
pub const READ_AHEAD: u64 = 256 << 10;

/// Read-ahead below which refilling it is urgent: `tox_iteration_interval` answers 0 only
/// then (or when the node waits for the client). Above it the next regular iteration tops
/// it up: answering 0 whenever the node had taken a chunk since the last request kept a
/// client sending to c-toxcore in a busy loop (55 % of its intervals at 0 ms, 26.7 CPU
/// s/GiB against c-toxcore's 7.6; ffi-bench on a quiet machine).
pub const REFILL_BELOW: u64 = READ_AHEAD / 2;

/// Bytes a starved file must hold before one of the client's chunks wakes the node, unless
/// the client has answered every request or given the file's end: each wake tops up the
/// file layer, which raises chunk requests for its whole send budget and takes back those
/// the buffer cannot fill, so waking per chunk made a burst of the window (tens of packets)
/// cost tens of requests per chunk. 64 KiB is ~48 chunks, about one top-up's budget toward
/// c-toxcore on loopback.
pub const WAKE_BATCH: u64 = 64 << 10;

/// `TOX_FILE_ID_LENGTH`.
pub(super) const FILE_ID_LENGTH: usize = 32;

/// `TOX_MAX_FILENAME_LENGTH`.
pub(super) const MAX_FILENAME_LENGTH: usize = 255;

/// A chunk's size: `MAX_FILE_DATA_SIZE` (1371), what c-toxcore asks for and accepts.
pub(super) const CHUNK: u64 = MAX_FILE_DATA_SIZE as u64;

/// The bytes of a file we send that the client has given and the node not yet taken.
#[derive(Debug)]
pub struct ChunkBuffer {
    /// The announced size.
    pub(super) size: u64,
    /// Position of the first byte in `bytes`: what the node reads next.
    pub(super) start: u64,
    pub(super) bytes: VecDeque<u8>,
    /// The next position to ask the client for.
    pub(super) requested: u64,
    /// The node has read: the friend accepted and the transfer runs. Chunks are asked for
    /// only then, so a seek by the receiver (before it accepts) moves where they start.
    pub(super) reading: bool,
    /// The node found less than a chunk and waits to be told ([`rustox_core::node::Node::file_source_ready`]).
    pub(super) starved: bool,
    /// A file of unknown size (`UINT64_MAX`, streaming) got its last chunk: one shorter than
    /// 1371 bytes (docs/protocol.md §3.2).
    pub(super) ended: bool,
}

impl ChunkBuffer {
    pub(super) fn new(size: u64) -> Self {
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
    pub(super) fn known_end(&self) -> u64 {
        if self.ended {
            self.end()
        } else {
            self.size
        }
    }

    /// Where the client's next chunk must start.
    pub(super) fn end(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }

    /// The chunk requests due now, appended to `out`.
    pub(super) fn request(&mut self, friend_number: u32, file_number: u32, out: &mut Vec<Event>) {
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

    pub(super) fn wants_chunks(&self) -> bool {
        self.reading
            && !self.ended
            && self.requested < self.size
            && self.requested - self.start < READ_AHEAD
    }

    /// Whether the client should be asked for chunks at once rather than at its next
    /// regular iteration: the node waits for them, or the read-ahead ran low.
    pub(super) fn refill_urgent(&self) -> bool {
        self.wants_chunks() && (self.starved || self.requested - self.start < REFILL_BELOW)
    }

    /// Whether the node, which found less than a chunk, should be told now that the client
    /// gave more: the buffer holds a batch, or all the client was asked for, or the file's
    /// end. Clears the mark when it says so.
    pub(super) fn take_wake(&mut self) -> bool {
        let held = self.bytes.len() as u64;
        self.take_wake_if(held >= WAKE_BATCH || (held >= CHUNK && self.end() >= self.requested))
    }

    /// Like [`Self::take_wake`] for a client that answers requests over several
    /// iterations: at the start of an iteration, a whole chunk is enough.
    pub(super) fn take_wake_at_step(&mut self) -> bool {
        self.take_wake_if(self.bytes.len() as u64 >= CHUNK)
    }

    /// Whether a starved node is to be woken, when the buffer holds `enough` or the file's
    /// end: clears the mark when it says so.
    fn take_wake_if(&mut self, enough: bool) -> bool {
        let wake = self.starved && (enough || self.end() == self.known_end());
        if wake {
            self.starved = false;
        }
        wake
    }
}

/// The node's side of a file we send: reads what the client gave.
pub(super) struct ChunkReader(pub(super) Arc<Mutex<ChunkBuffer>>);

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
        // VecDeque's own `Read` copies its two slices whole (a byte-by-byte drain was
        // 14 % of a sending client's CPU).
        let n = b.bytes.read(&mut out[..n])?;
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
pub(super) struct ChunkSink {
    pub(super) friend_number: u32,
    pub(super) file_number: u32,
    pub(super) position: u64,
    pub(super) received: Arc<Mutex<VecDeque<Event>>>,
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
pub(super) type Outgoing = (Arc<Mutex<ChunkBuffer>>, [u8; FILE_ID_LENGTH]);

/// An offer from a friend, until it is accepted or ends.
#[derive(Debug, Clone, Copy)]
pub(super) struct Incoming {
    pub(super) file_id: [u8; FILE_ID_LENGTH],
    pub(super) size: u64,
    /// Where `tox_file_seek` asked the transfer to start.
    pub(super) seek: u64,
    pub(super) accepted: bool,
}

/// Files between the node and the client (handle/mod.rs holds it under the instance's lock).
#[derive(Default)]
pub struct FileBridge {
    pub(super) outgoing: HashMap<(u32, u32), Outgoing>,
    pub(super) incoming: HashMap<(u32, u32), Incoming>,
    pub(super) received: Arc<Mutex<VecDeque<Event>>>,
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
                !paused(friend, file) && b.lock().unwrap_or_else(|e| e.into_inner()).refill_urgent()
            })
    }

    /// The files whose node waits for chunks the client has given since (answered over
    /// several iterations, so no single chunk woke it): `(friend, file)` pairs to hand to
    /// [`rustox_core::node::Node::file_source_ready`].
    pub fn starved_with_data(&self) -> Vec<(u32, u32)> {
        self.outgoing
            .iter()
            .filter(|(_, (b, _))| {
                b.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take_wake_at_step()
            })
            .map(|(&key, _)| key)
            .collect()
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

    pub(super) fn file_id(&self, friend: u32, file: u32) -> Option<[u8; FILE_ID_LENGTH]> {
        self.outgoing
            .get(&(friend, file))
            .map(|(_, id)| *id)
            .or_else(|| self.incoming.get(&(friend, file)).map(|i| i.file_id))
    }
}
