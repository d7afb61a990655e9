//! All file transfers with one friend: the sans-IO state machine (docs/protocol.md §3).
//!
//! Inputs: [`FileTransfers::handle_packet`] for every lossless payload with id 80/81/82,
//! the tox.h-shaped calls (`file_send`, `control`, `seek`, `send_chunk`), and
//! [`FileTransfers::poll_send`], which the driver calls whenever the session may have
//! budget. Outputs: packets go straight into the [`Session`] passed to the call, events
//! come out of [`FileTransfers::poll_event`].
//!
//! Sending pulls (docs/transport.md §3.9): `poll_send` raises chunk requests only for as many
//! packets as `session.send_budget(now)` allows, minus the chunks already requested and
//! not yet sent, shared across transfers by deficit round-robin. Nothing is read from a
//! file before the pacer can send it, and no file data queues behind the session.

use std::collections::VecDeque;

use rustox_net_crypto::Timestamp;

use crate::error::{
    FileControlError, FileError, FileGetError, FileSeekError, FileSendChunkError, FileSendError,
};
use crate::event::{FileControl, FileEvent};
use crate::number::{FileKind, FileNumber, MAX_CONCURRENT_FILE_PIPES};
use crate::packet::{
    ControlKind, ControlPacket, DataPacket, Direction, FilePacket, SendRequestPacket,
    FILE_ID_LENGTH, MAX_FILENAME_LENGTH, MAX_FILE_DATA_SIZE,
};
use crate::scheduler::DeficitRoundRobin;
use crate::session::Session;
use crate::slots::SlotTable;
use crate::transfer::{FileInfo, Incoming, IncomingStatus, Outgoing, OutgoingStatus};

/// Events allowed to wait in the queue. Packets that would add more are refused with
/// [`FileError::EventQueueFull`] and chunk requests stop, so an application that does not
/// poll cannot make the layer grow without bound (docs/design.md principle 5). 4096 events hold
/// at most ~5.6 MB of received data.
pub const MAX_PENDING_EVENTS: usize = 4096;

/// KILL answers to controls for unknown transfers waiting for the next `poll_send`. More
/// are dropped and counted: one per slot and direction is all an honest peer can cause.
pub const MAX_PENDING_REPLIES: usize = 2 * MAX_CONCURRENT_FILE_PIPES;

/// A snapshot of one transfer, for progress displays and the streaming layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransferInfo {
    /// The request's fields.
    pub info: FileInfo,
    /// Bytes sent (outgoing) or received (incoming), counting a seek offset.
    pub transferred: u64,
    /// Accepted and not finished.
    pub transferring: bool,
    /// Paused by us.
    pub paused_by_us: bool,
    /// Paused by the peer.
    pub paused_by_peer: bool,
}

/// Counters, for tests and diagnostics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileStats {
    /// Packets from the peer rejected with a [`FileError`].
    pub packets_rejected: u64,
    /// KILLs sent from the reply queue (answers to controls for unknown transfers, and
    /// transfers killed on event-queue overflow).
    pub kills_answered: u64,
    /// KILL answers dropped because the reply queue was full or the session refused.
    pub replies_dropped: u64,
    /// Chunk requests raised.
    pub chunks_requested: u64,
    /// FILE_DATA packets queued into the session.
    pub chunks_sent: u64,
    /// Incoming transfers killed because data arrived while the event queue was full.
    pub transfers_killed_on_overflow: u64,
}

/// All transfers with one friend. See the module docs.
#[derive(Debug)]
pub struct FileTransfers {
    /// Occupied slots are tracked, so the per-chunk paths cost the transfers that exist.
    outgoing: SlotTable<Outgoing>,
    incoming: SlotTable<Incoming>,
    drr: DeficitRoundRobin,
    events: VecDeque<FileEvent>,
    replies: VecDeque<ControlPacket>,
    stats: FileStats,
}

impl Default for FileTransfers {
    fn default() -> Self {
        Self::new()
    }
}

impl FileTransfers {
    /// No transfers.
    pub fn new() -> Self {
        FileTransfers {
            outgoing: SlotTable::default(),
            incoming: SlotTable::default(),
            drr: DeficitRoundRobin::default(),
            events: VecDeque::new(),
            replies: VecDeque::new(),
            stats: FileStats::default(),
        }
    }

    // ---------------------------------------------------------------- API calls

    /// `tox_file_send`: offer a file; returns its API number (the outgoing slot, 0..=255).
    ///
    /// `file_id` is the caller's: tox.h draws 32 random bytes when it is NULL, which the
    /// layer above does with its injected RNG; for avatars (and the streaming helper) it is
    /// the SHA-256 of the content. `size` may be [`crate::UNKNOWN_FILE_SIZE`].
    pub fn file_send<S: Session>(
        &mut self,
        now: Timestamp,
        session: &mut S,
        kind: FileKind,
        size: u64,
        file_id: [u8; FILE_ID_LENGTH],
        name: &[u8],
    ) -> Result<u32, FileSendError> {
        if name.len() > MAX_FILENAME_LENGTH {
            return Err(FileSendError::NameTooLong);
        }
        let slot = self.outgoing.first_free().ok_or(FileSendError::TooMany)?;
        let request = SendRequestPacket {
            file_number: slot,
            kind: kind.to_u32(),
            file_size: size,
            file_id,
            filename: name.to_vec(),
        };
        let payload = request.encode().map_err(|_| FileSendError::NameTooLong)?;
        session
            .send_lossless(now, &payload)
            .map_err(|_| FileSendError::FriendNotConnected)?;
        self.drr.reset_slot(slot);
        self.outgoing.insert(
            slot,
            Outgoing::new(FileInfo {
                kind,
                size,
                file_id,
                name: request.filename,
            }),
        );
        Ok(FileNumber::Outgoing(slot).to_u32())
    }

    /// `tox_file_control`: resume (= accept an offer), pause, or cancel a transfer, with
    /// c-toxcore's `file_control` rules (docs/protocol.md §3.4, §9).
    pub fn control<S: Session>(
        &mut self,
        now: Timestamp,
        session: &mut S,
        file: u32,
        control: FileControl,
    ) -> Result<(), FileControlError> {
        let number = FileNumber::from_u32(file).ok_or(FileControlError::NotFound)?;
        let (transferring, not_accepted, paused) = match number {
            FileNumber::Outgoing(s) => {
                let t = self.outgoing.get(s).ok_or(FileControlError::NotFound)?;
                (
                    t.status == OutgoingStatus::Transferring,
                    t.status == OutgoingStatus::NotAccepted,
                    t.paused,
                )
            }
            FileNumber::Incoming(s) => {
                let t = self.incoming.get(s).ok_or(FileControlError::NotFound)?;
                (
                    t.status == IncomingStatus::Transferring,
                    t.status == IncomingStatus::NotAccepted,
                    t.paused,
                )
            }
        };
        let kind = match control {
            FileControl::Pause => {
                if paused.us || !transferring {
                    return Err(FileControlError::AlreadyPaused);
                }
                ControlKind::Pause
            }
            FileControl::Resume => {
                if transferring {
                    if !paused.us {
                        return Err(if paused.other {
                            FileControlError::Denied
                        } else {
                            FileControlError::NotPaused
                        });
                    }
                } else if !not_accepted {
                    return Err(FileControlError::NotPaused);
                } else if matches!(number, FileNumber::Outgoing(_)) {
                    // Only the receiver accepts.
                    return Err(FileControlError::Denied);
                }
                ControlKind::Accept
            }
            FileControl::Cancel => ControlKind::Kill,
        };
        let packet = ControlPacket {
            direction: our_direction(number),
            file_number: number.slot(),
            control: kind,
        };
        session
            .send_lossless(now, &packet.encode())
            .map_err(|_| FileControlError::SendQ)?;
        match (number, control) {
            (_, FileControl::Cancel) => {
                self.free(number);
                self.drop_requests(file);
            }
            (FileNumber::Outgoing(s), FileControl::Pause) => {
                if let Some(t) = self.outgoing.get_mut(s) {
                    t.paused.us = true;
                }
            }
            (FileNumber::Incoming(s), FileControl::Pause) => {
                if let Some(t) = self.incoming.get_mut(s) {
                    t.paused.us = true;
                }
            }
            (FileNumber::Outgoing(s), FileControl::Resume) => {
                if let Some(t) = self.outgoing.get_mut(s) {
                    t.paused.us = false;
                }
            }
            (FileNumber::Incoming(s), FileControl::Resume) => {
                if let Some(t) = self.incoming.get_mut(s) {
                    t.paused.us = false;
                    t.status = IncomingStatus::Transferring;
                }
            }
        }
        Ok(())
    }

    /// `tox_file_seek`: before accepting an offer, ask the sender to start at `position`
    /// (resuming a broken transfer). Receiver only; `position < size` (docs/protocol.md §3.4).
    pub fn seek<S: Session>(
        &mut self,
        now: Timestamp,
        session: &mut S,
        file: u32,
        position: u64,
    ) -> Result<(), FileSeekError> {
        let number = FileNumber::from_u32(file).ok_or(FileSeekError::NotFound)?;
        let slot = match number {
            FileNumber::Outgoing(s) => {
                return Err(if self.outgoing.contains(s) {
                    FileSeekError::Denied
                } else {
                    FileSeekError::NotFound
                });
            }
            FileNumber::Incoming(s) => s,
        };
        let t = self.incoming.get_mut(slot).ok_or(FileSeekError::NotFound)?;
        if t.status != IncomingStatus::NotAccepted {
            return Err(FileSeekError::Denied);
        }
        if position >= t.info.size {
            return Err(FileSeekError::InvalidPosition);
        }
        let packet = ControlPacket {
            direction: our_direction(number),
            file_number: slot,
            control: ControlKind::Seek(position),
        };
        session
            .send_lossless(now, &packet.encode())
            .map_err(|_| FileSeekError::SendQ)?;
        t.transferred = position;
        Ok(())
    }

    /// `tox_file_send_chunk`: send the chunk a [`FileEvent::ChunkRequest`] asked for, with
    /// c-toxcore's `send_file_data` rules (docs/protocol.md §3.5). A chunk shorter than 1371
    /// bytes, or one that reaches the size, finishes the transfer; the slot frees (and a
    /// `ChunkRequest` with length 0 is raised) once its packet is acknowledged.
    pub fn send_chunk<S: Session>(
        &mut self,
        now: Timestamp,
        session: &mut S,
        file: u32,
        position: u64,
        data: &[u8],
    ) -> Result<(), FileSendChunkError> {
        let slot = match FileNumber::from_u32(file) {
            Some(FileNumber::Outgoing(s)) => s,
            _ => return Err(FileSendChunkError::NotFound),
        };
        let t = self
            .outgoing
            .get_mut(slot)
            .ok_or(FileSendChunkError::NotFound)?;
        if t.status != OutgoingStatus::Transferring {
            return Err(FileSendChunkError::NotTransferring);
        }
        let length = data.len();
        let left = t.info.size.saturating_sub(t.transferred);
        if length > MAX_FILE_DATA_SIZE
            || (length as u64) > left
            || (!t.info.is_streaming()
                && length != MAX_FILE_DATA_SIZE
                && t.transferred + length as u64 != t.info.size)
        {
            return Err(FileSendChunkError::InvalidLength);
        }
        if position != t.transferred || (t.requested <= position && t.info.size != 0) {
            return Err(FileSendChunkError::WrongPosition);
        }
        let payload = DataPacket {
            file_number: slot,
            data,
        }
        .encode()
        .map_err(|_| FileSendChunkError::InvalidLength)?;
        match session.send_bulk(now, &payload) {
            Ok(packet_number) => {
                self.stats.chunks_sent += 1;
                t.transferred += length as u64;
                if length != MAX_FILE_DATA_SIZE || t.transferred == t.info.size {
                    t.status = OutgoingStatus::Finished {
                        last_packet: packet_number,
                    };
                    self.drr.reset_slot(slot);
                    self.drop_requests(file);
                }
                Ok(())
            }
            Err(_) => {
                // Ask for this chunk again rather than leave a hole the application
                // would have to remember (c-toxcore leaves that to the client).
                t.requested = t.transferred;
                Err(FileSendChunkError::SendQ)
            }
        }
    }

    /// The application cannot answer a chunk request of outgoing `file` yet (its source is
    /// waiting for data): the requests not yet answered are taken back, and none is raised
    /// for the file until [`Self::source_ready`]. Not part of tox.h, where a client that has
    /// no data simply does not call `tox_file_send_chunk` and the request is lost.
    pub fn source_starved(&mut self, file: u32) {
        if let Some(FileNumber::Outgoing(slot)) = FileNumber::from_u32(file) {
            if let Some(t) = self.outgoing.get_mut(slot) {
                t.starved = true;
                t.requested = t.transferred;
            }
        }
    }

    /// Outgoing `file`'s source has data again: its requests resume.
    pub fn source_ready(&mut self, file: u32) {
        if let Some(FileNumber::Outgoing(slot)) = FileNumber::from_u32(file) {
            if let Some(t) = self.outgoing.get_mut(slot) {
                t.starved = false;
            }
        }
    }

    /// Whether outgoing `file` waits for its source ([`Self::source_starved`]).
    pub fn is_starved(&self, file: u32) -> bool {
        match FileNumber::from_u32(file) {
            Some(FileNumber::Outgoing(slot)) => self.outgoing.get(slot).is_some_and(|t| t.starved),
            _ => false,
        }
    }

    /// `tox_file_get_file_id`.
    pub fn file_id(&self, file: u32) -> Result<[u8; FILE_ID_LENGTH], FileGetError> {
        self.transfer(file)
            .map(|t| t.info.file_id)
            .ok_or(FileGetError::NotFound)
    }

    /// A snapshot of a transfer, or `None` when the number is free or out of range.
    pub fn transfer(&self, file: u32) -> Option<TransferInfo> {
        match FileNumber::from_u32(file)? {
            FileNumber::Outgoing(s) => self.outgoing.get(s).map(|t| TransferInfo {
                info: t.info.clone(),
                transferred: t.transferred,
                transferring: t.status == OutgoingStatus::Transferring,
                paused_by_us: t.paused.us,
                paused_by_peer: t.paused.other,
            }),
            FileNumber::Incoming(s) => self.incoming.get(s).map(|t| TransferInfo {
                info: t.info.clone(),
                transferred: t.transferred,
                transferring: t.status == IncomingStatus::Transferring,
                paused_by_us: t.paused.us,
                paused_by_peer: t.paused.other,
            }),
        }
    }

    /// Number of transfers in progress in each direction (outgoing, incoming).
    pub fn active(&self) -> (usize, usize) {
        (self.outgoing.len(), self.incoming.len())
    }

    /// Counters.
    pub fn stats(&self) -> FileStats {
        self.stats
    }

    /// The friend went offline: every transfer is silently reset, as c-toxcore's
    /// `break_files` does (docs/protocol.md §3.2). Queued KILL answers belong to the old session
    /// and are dropped too; events already raised stay to be polled.
    pub fn friend_offline(&mut self) {
        self.outgoing.clear();
        self.incoming.clear();
        self.drr = DeficitRoundRobin::default();
        self.replies.clear();
    }

    // ---------------------------------------------------------------- outputs

    /// The next event, oldest first.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<FileEvent> {
        self.events.pop_front()
    }

    /// Drive the sending side; call it whenever the session may have budget (after every
    /// input and timer of the session). It
    /// 1. sends queued KILL answers,
    /// 2. frees finished transfers whose last packet is acknowledged (raising a
    ///    `ChunkRequest` with length 0),
    /// 3. sends the one empty FILE_DATA a size-0 file owes,
    /// 4. raises chunk requests for `send_budget(now)` minus the chunks already requested,
    ///    shared by deficit round-robin.
    ///
    /// Returns the number of chunk requests raised.
    pub fn poll_send<S: Session>(&mut self, now: Timestamp, session: &mut S) -> usize {
        // The receiving side calls this as often as the sending side; keep it cheap.
        if self.replies.is_empty() && self.outgoing.is_empty() {
            return 0;
        }
        while let Some(reply) = self.replies.pop_front() {
            if session.send_lossless(now, &reply.encode()).is_ok() {
                self.stats.kills_answered += 1;
            } else {
                self.stats.replies_dropped += 1;
            }
        }
        // A snapshot of the occupied slots: this loop frees some of them.
        for slot in self.outgoing.occupied().iter() {
            if let Some(&Outgoing {
                status: OutgoingStatus::Finished { last_packet },
                transferred,
                ..
            }) = self.outgoing.get(slot)
            {
                if session.is_delivered(last_packet) {
                    self.free(FileNumber::Outgoing(slot));
                    let file = FileNumber::Outgoing(slot).to_u32();
                    self.events.push_back(FileEvent::ChunkRequest {
                        file,
                        position: transferred,
                        length: 0,
                    });
                }
            }
        }
        let mut budget = session.send_budget(now);
        for slot in self.outgoing.occupied().iter() {
            if budget == 0 {
                break;
            }
            let Some(t) = self.outgoing.get_mut(slot) else {
                continue;
            };
            if t.owes_empty_chunk && t.status == OutgoingStatus::Transferring && !t.paused.any() {
                let payload = [crate::packet::PACKET_ID_FILE_DATA, slot];
                if let Ok(packet_number) = session.send_bulk(now, &payload) {
                    self.stats.chunks_sent += 1;
                    t.owes_empty_chunk = false;
                    t.status = OutgoingStatus::Finished {
                        last_packet: packet_number,
                    };
                    budget -= 1;
                }
            }
        }
        let outstanding: usize = self
            .outgoing
            .iter()
            .map(|(_, t)| t.outstanding_chunks())
            .sum();
        budget = budget.saturating_sub(outstanding);
        let mut raised = 0;
        while budget > 0 && self.events.len() < MAX_PENDING_EVENTS {
            let outgoing = &self.outgoing;
            let Some(slot) = self.drr.next_among(outgoing.occupied(), |s| {
                outgoing.get(s).and_then(Outgoing::next_request_length)
            }) else {
                break;
            };
            let Some(t) = self.outgoing.get_mut(slot) else {
                break;
            };
            let Some(length) = t.next_request_length() else {
                break;
            };
            self.events.push_back(FileEvent::ChunkRequest {
                file: FileNumber::Outgoing(slot).to_u32(),
                position: t.requested,
                length,
            });
            t.requested += length as u64;
            budget -= 1;
            raised += 1;
        }
        self.stats.chunks_requested += raised as u64;
        raised
    }

    // ---------------------------------------------------------------- inputs

    /// A lossless payload with id 80, 81 or 82 from the peer (id byte first). A rejected
    /// packet changes no transfer (a control for an unknown transfer queues a KILL answer).
    pub fn handle_packet(&mut self, _now: Timestamp, payload: &[u8]) -> Result<(), FileError> {
        let result = self.handle_packet_inner(payload);
        if result.is_err() {
            self.stats.packets_rejected += 1;
        }
        result
    }

    fn handle_packet_inner(&mut self, payload: &[u8]) -> Result<(), FileError> {
        // Each packet raises at most two events.
        if self.events.len() + 2 > MAX_PENDING_EVENTS {
            self.on_event_overflow(payload);
            return Err(FileError::EventQueueFull);
        }
        match FilePacket::parse(payload)? {
            FilePacket::SendRequest(p) => self.on_send_request(p),
            FilePacket::Control(p) => self.on_control(p),
            FilePacket::Data(p) => self.on_data(p),
        }
    }

    /// A packet arrived while the event queue was full. Dropping a FILE_DATA would leave a
    /// hole that the next chunk silently fills at the wrong offset, so its transfer is
    /// killed instead (KILL to the peer, one `Cancel` event allowed past the cap — at most
    /// one per slot, so the queue stays bounded).
    fn on_event_overflow(&mut self, payload: &[u8]) {
        let Ok(FilePacket::Data(p)) = FilePacket::parse(payload) else {
            return;
        };
        let number = FileNumber::Incoming(p.file_number);
        if self.incoming.remove(p.file_number).is_none() {
            return;
        }
        self.stats.transfers_killed_on_overflow += 1;
        if self.replies.len() < MAX_PENDING_REPLIES {
            self.replies.push_back(ControlPacket {
                direction: our_direction(number),
                file_number: p.file_number,
                control: ControlKind::Kill,
            });
        } else {
            self.stats.replies_dropped += 1;
        }
        self.events.push_back(FileEvent::RecvControl {
            file: number.to_u32(),
            control: FileControl::Cancel,
        });
    }

    fn on_send_request(&mut self, p: SendRequestPacket) -> Result<(), FileError> {
        if self.incoming.contains(p.file_number) {
            return Err(FileError::SlotInUse(p.file_number));
        }
        let info = FileInfo {
            kind: FileKind::from_u32(p.kind),
            size: p.file_size,
            file_id: p.file_id,
            name: p.filename,
        };
        self.events.push_back(FileEvent::FileRecv {
            file: FileNumber::Incoming(p.file_number).to_u32(),
            kind: info.kind,
            size: info.size,
            file_id: info.file_id,
            name: info.name.clone(),
        });
        self.incoming.insert(p.file_number, Incoming::new(info));
        Ok(())
    }

    fn on_control(&mut self, p: ControlPacket) -> Result<(), FileError> {
        let number = match p.direction {
            Direction::SenderIsSending => FileNumber::Incoming(p.file_number),
            Direction::SenderIsReceiving => FileNumber::Outgoing(p.file_number),
        };
        let file = number.to_u32();
        let exists = match number {
            FileNumber::Outgoing(s) => self.outgoing.contains(s),
            FileNumber::Incoming(s) => self.incoming.contains(s),
        };
        if !exists {
            // docs/protocol.md §3.4: answer with KILL, direction flipped, so the peer frees it.
            // Not a KILL, though: c-toxcore answers those too, so two peers that both
            // forgot a transfer (one cancelled as the other finished) would bounce KILLs
            // forever; the peer that sent a KILL has already freed its slot.
            if p.control == ControlKind::Kill {
                return Err(FileError::UnknownTransfer(number));
            }
            if self.replies.len() < MAX_PENDING_REPLIES {
                self.replies.push_back(ControlPacket {
                    direction: p.direction.flipped(),
                    file_number: p.file_number,
                    control: ControlKind::Kill,
                });
            } else {
                self.stats.replies_dropped += 1;
            }
            return Err(FileError::UnknownTransfer(number));
        }
        match p.control {
            ControlKind::Kill => {
                self.free(number);
                self.events.push_back(FileEvent::RecvControl {
                    file,
                    control: FileControl::Cancel,
                });
            }
            ControlKind::Accept => {
                match number {
                    FileNumber::Outgoing(s) => {
                        let t = self
                            .outgoing
                            .get_mut(s)
                            .ok_or(FileError::UnknownTransfer(number))?;
                        if t.status == OutgoingStatus::NotAccepted {
                            t.status = OutgoingStatus::Transferring;
                        } else if t.paused.other {
                            t.paused.other = false;
                        } else {
                            return Err(FileError::WrongState(number));
                        }
                    }
                    FileNumber::Incoming(s) => {
                        let t = self
                            .incoming
                            .get_mut(s)
                            .ok_or(FileError::UnknownTransfer(number))?;
                        if !t.paused.other {
                            return Err(FileError::WrongState(number));
                        }
                        t.paused.other = false;
                    }
                }
                self.events.push_back(FileEvent::RecvControl {
                    file,
                    control: FileControl::Resume,
                });
            }
            ControlKind::Pause => {
                let paused = match number {
                    FileNumber::Outgoing(s) => self
                        .outgoing
                        .get_mut(s)
                        .filter(|t| t.status == OutgoingStatus::Transferring)
                        .map(|t| &mut t.paused),
                    FileNumber::Incoming(s) => self
                        .incoming
                        .get_mut(s)
                        .filter(|t| t.status == IncomingStatus::Transferring)
                        .map(|t| &mut t.paused),
                };
                match paused {
                    Some(paused) if !paused.other => paused.other = true,
                    _ => return Err(FileError::WrongState(number)),
                }
                self.events.push_back(FileEvent::RecvControl {
                    file,
                    control: FileControl::Pause,
                });
            }
            ControlKind::Seek(position) => {
                // Only the receiver seeks, only before accepting (no event, as in c-toxcore).
                let FileNumber::Outgoing(s) = number else {
                    return Err(FileError::WrongState(number));
                };
                let t = self
                    .outgoing
                    .get_mut(s)
                    .ok_or(FileError::UnknownTransfer(number))?;
                if t.status != OutgoingStatus::NotAccepted {
                    return Err(FileError::WrongState(number));
                }
                if position >= t.info.size {
                    return Err(FileError::InvalidPosition(number));
                }
                t.requested = position;
                t.transferred = position;
            }
        }
        Ok(())
    }

    fn on_data(&mut self, p: DataPacket<'_>) -> Result<(), FileError> {
        let number = FileNumber::Incoming(p.file_number);
        let file = number.to_u32();
        let slot = p.file_number;
        let t = self
            .incoming
            .get_mut(slot)
            .ok_or(FileError::UnknownTransfer(number))?;
        if t.status != IncomingStatus::Transferring {
            return Err(FileError::WrongState(number));
        }
        let length = p.data.len() as u64;
        if length > t.info.size.saturating_sub(t.transferred) {
            return Err(FileError::BeyondSize(number));
        }
        let position = t.transferred;
        t.transferred += length;
        let done =
            length == 0 || t.transferred >= t.info.size || p.data.len() != MAX_FILE_DATA_SIZE;
        let end = t.transferred;
        if length > 0 {
            self.events.push_back(FileEvent::RecvChunk {
                file,
                position,
                data: p.data.to_vec(),
            });
        }
        if done {
            self.events.push_back(FileEvent::RecvChunk {
                file,
                position: end,
                data: Vec::new(),
            });
            self.incoming.remove(slot);
        }
        Ok(())
    }

    /// Takes back the chunk requests of outgoing `file` still waiting to be polled: its
    /// data has ended (a short chunk, or the last byte of its size) or it was cancelled.
    /// c-toxcore raises a request only while its transfer is `FILESTATUS_TRANSFERRING`
    /// (Messenger.c, `do_all_filetransfers`), so after the end of a stream its client's
    /// next request is the zero-length one at the end; a queue polled after the end must
    /// not say otherwise. The queue is bounded by `MAX_PENDING_EVENTS`.
    fn drop_requests(&mut self, file: u32) {
        self.events.retain(|e| {
            !matches!(e, FileEvent::ChunkRequest { file: f, length, .. } if *f == file && *length > 0)
        });
    }

    fn free(&mut self, number: FileNumber) {
        match number {
            FileNumber::Outgoing(s) => {
                self.outgoing.remove(s);
                self.drr.reset_slot(s);
            }
            FileNumber::Incoming(s) => {
                self.incoming.remove(s);
            }
        }
    }
}

/// The direction byte for a control we send about our own transfer `number`.
fn our_direction(number: FileNumber) -> Direction {
    match number {
        FileNumber::Outgoing(_) => Direction::SenderIsSending,
        FileNumber::Incoming(_) => Direction::SenderIsReceiving,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::MockSession;

    /// Both tables' occupied sets equal their `Some` slots, and hold exactly these.
    fn assert_slots(ft: &FileTransfers, outgoing: &[u8], incoming: &[u8]) {
        assert!(ft.outgoing.is_consistent(), "outgoing set drifted");
        assert!(ft.incoming.is_consistent(), "incoming set drifted");
        assert_eq!(ft.outgoing.occupied().iter().collect::<Vec<_>>(), outgoing);
        assert_eq!(ft.incoming.occupied().iter().collect::<Vec<_>>(), incoming);
        assert_eq!(ft.active(), (outgoing.len(), incoming.len()));
    }

    fn offer(slot: u8, size: u64) -> Vec<u8> {
        SendRequestPacket {
            file_number: slot,
            kind: FileKind::Data.to_u32(),
            file_size: size,
            file_id: [0; FILE_ID_LENGTH],
            filename: b"f".to_vec(),
        }
        .encode()
        .unwrap()
    }

    fn send(ft: &mut FileTransfers, session: &mut MockSession, size: u64) -> u32 {
        ft.file_send(
            Timestamp::ZERO,
            session,
            FileKind::Data,
            size,
            [0; 32],
            b"x",
        )
        .unwrap()
    }

    #[test]
    fn occupied_sets_follow_every_fill_and_free() {
        let (mut ft, mut session, now) =
            (FileTransfers::new(), MockSession::new(), Timestamp::ZERO);
        for _ in 0..3 {
            send(&mut ft, &mut session, 100);
        }
        ft.handle_packet(now, &offer(5, 10)).unwrap();
        ft.handle_packet(now, &offer(250, 10)).unwrap();
        assert_slots(&ft, &[0, 1, 2], &[5, 250]);

        // Slot 0 is accepted, sent in one short chunk, acknowledged: freed by poll_send.
        ft.handle_packet(now, &[81, 1, 0, 0]).unwrap();
        session.grant(4);
        assert_eq!(ft.poll_send(now, &mut session), 1);
        while ft.poll_event().is_some() {}
        ft.send_chunk(now, &mut session, 0, 0, &[1; 100]).unwrap();
        assert_slots(&ft, &[0, 1, 2], &[5, 250]);
        session.drain();
        ft.poll_send(now, &mut session);
        assert_slots(&ft, &[1, 2], &[5, 250]);

        // The peer kills slot 1; we cancel slot 2.
        ft.handle_packet(now, &[81, 1, 1, 2]).unwrap();
        assert_slots(&ft, &[2], &[5, 250]);
        ft.control(now, &mut session, 2, FileControl::Cancel)
            .unwrap();
        assert_slots(&ft, &[], &[5, 250]);

        // A size-0 file reuses the lowest free slot and frees through its empty chunk.
        assert_eq!(send(&mut ft, &mut session, 0), 0);
        assert_slots(&ft, &[0], &[5, 250]);
        ft.handle_packet(now, &[81, 1, 0, 0]).unwrap();
        session.grant(1);
        ft.poll_send(now, &mut session);
        session.drain();
        ft.poll_send(now, &mut session);
        assert_slots(&ft, &[], &[5, 250]);

        // Incoming 5 is accepted and completed by a short chunk; the peer kills 250.
        let five = FileNumber::Incoming(5).to_u32();
        ft.control(now, &mut session, five, FileControl::Resume)
            .unwrap();
        ft.handle_packet(now, &[82, 5, 1, 2, 3]).unwrap();
        assert_slots(&ft, &[], &[250]);
        ft.handle_packet(now, &[81, 0, 250, 2]).unwrap();
        assert_slots(&ft, &[], &[]);

        // The friend goes offline with transfers in both directions.
        send(&mut ft, &mut session, 100);
        send(&mut ft, &mut session, 100);
        ft.handle_packet(now, &offer(7, 10)).unwrap();
        assert_slots(&ft, &[0, 1], &[7]);
        ft.friend_offline();
        assert_slots(&ft, &[], &[]);
        assert_eq!(
            send(&mut ft, &mut session, 100),
            0,
            "slot numbers restart from 0"
        );
    }

    /// The chunk requests an application reads, as c-toxcore's client would see them
    /// (Messenger.c, `do_all_filetransfers` and `send_file_data`): a stream the receiver
    /// seeked into starts at the seek; once a short chunk ends it, the requests raised
    /// ahead are gone and the next one is the zero-length request at the end.
    #[test]
    fn a_stream_ended_by_a_short_chunk_is_asked_for_nothing_past_its_end() {
        let (mut ft, mut session, now) =
            (FileTransfers::new(), MockSession::new(), Timestamp::ZERO);
        let file = send(&mut ft, &mut session, crate::UNKNOWN_FILE_SIZE);
        // FILE_CONTROL SEEK to 1337 (control 3, big-endian u64), then ACCEPT.
        let mut seek = vec![81, 1, 0, 3];
        seek.extend_from_slice(&1337u64.to_be_bytes());
        ft.handle_packet(now, &seek).unwrap();
        ft.handle_packet(now, &[81, 1, 0, 0]).unwrap();
        assert!(matches!(
            ft.poll_event(),
            Some(FileEvent::RecvControl { .. })
        ));
        session.grant(100);
        assert_eq!(ft.poll_send(now, &mut session), 100);
        let mut asked = Vec::new();
        let mut position = 1337u64;
        let end = 102_400u64;
        while let Some(event) = ft.poll_event() {
            let FileEvent::ChunkRequest {
                position: p,
                length,
                ..
            } = event
            else {
                panic!("{event:?}");
            };
            asked.push((p, length));
            assert_eq!(p, position, "requests come in order, without holes");
            let length = (length as u64).min(end - p) as usize;
            ft.send_chunk(now, &mut session, file, p, &vec![1; length])
                .unwrap();
            position += length as u64;
        }
        assert_eq!(position, end);
        assert_eq!(
            asked.len(),
            (end - 1337).div_ceil(MAX_FILE_DATA_SIZE as u64) as usize
        );
        assert!(asked.iter().all(|&(_, l)| l == MAX_FILE_DATA_SIZE));
        session.drain();
        session.grant(100);
        ft.poll_send(now, &mut session);
        assert_eq!(
            ft.poll_event(),
            Some(FileEvent::ChunkRequest {
                file,
                position: end,
                length: 0
            })
        );
        assert_eq!(ft.poll_event(), None);
    }

    /// A cancelled file's queued requests are taken back with it.
    #[test]
    fn a_cancelled_file_is_asked_for_nothing_more() {
        let (mut ft, mut session, now) =
            (FileTransfers::new(), MockSession::new(), Timestamp::ZERO);
        let file = send(&mut ft, &mut session, 100_000);
        ft.handle_packet(now, &[81, 1, 0, 0]).unwrap();
        assert!(matches!(
            ft.poll_event(),
            Some(FileEvent::RecvControl { .. })
        ));
        session.grant(10);
        assert_eq!(ft.poll_send(now, &mut session), 10);
        ft.control(now, &mut session, file, FileControl::Cancel)
            .unwrap();
        assert_eq!(ft.poll_event(), None);
    }
}
