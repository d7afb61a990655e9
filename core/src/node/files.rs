//! File transfers with one friend: the file layer's streams plus what the node adds on top —
//! the file id of each pending offer and, for each file being received, where the sink
//! leaves the SHA-256 it computed and the file id to compare it with. Senders on this core
//! set the file id to the content's SHA-256, so a receiver can verify their files; other
//! clients' ids are opaque (c-toxcore draws a random one), so a file whose SHA-256 is not
//! its id is kept and reported as unverified ([`FileVerification`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rustox_file_transfer::stream::{FileStreams, Sink, Source, StreamError, StreamEvent};
use rustox_file_transfer::{FileControl, FileKind};
use rustox_net_crypto::{ConnectionId, ConnectionStatus, Timestamp};

use super::event::{FileOffer, FileVerification, NodeEvent};
use super::friends::FriendNumber;
use super::{Node, NodeError};

/// Where a sink that hashes what it writes leaves the SHA-256 of the whole file once it
/// is flushed (`None` while unknown, or when the writes were not sequential). The driver's
/// writer thread fills it; the node only reads it.
pub type DigestSlot = Arc<Mutex<Option<[u8; 32]>>>;

/// A file ready to offer: its content, size and SHA-256 (the file id receivers verify).
/// Hashing happens before the offer, outside the node (a driver does it off its event
/// loop).
pub struct PreparedFile {
    /// The content, read as chunks are requested.
    pub source: Box<dyn Source>,
    /// Its size in bytes.
    pub size: u64,
    /// Its SHA-256.
    pub sha256: [u8; 32],
}

/// One friend's transfers.
#[derive(Default)]
pub struct FriendFiles {
    /// The file layer.
    pub streams: FileStreams,
    /// The file id of each offer not yet accepted or refused (at most 256: one per slot).
    pub offered: HashMap<u32, [u8; 32]>,
    /// Each file being received: its sink's digest slot (when it hashes) and the file id.
    pub receiving: HashMap<u32, (Option<DigestSlot>, [u8; 32])>,
}

impl FriendFiles {
    /// Turns the file layer's events into node events.
    pub fn drain_into(&mut self, friend: FriendNumber, events: &mut impl Extend<NodeEvent>) {
        while let Some(event) = self.streams.poll_event() {
            if let Some(e) = self.translate(friend, event) {
                events.extend(std::iter::once(e));
            }
        }
    }

    fn translate(&mut self, friend: FriendNumber, event: StreamEvent) -> Option<NodeEvent> {
        Some(match event {
            StreamEvent::Offered {
                file,
                kind,
                size,
                file_id,
                name,
            } => {
                self.offered.insert(file, file_id);
                NodeEvent::FileOffered(FileOffer {
                    friend,
                    file,
                    kind,
                    size,
                    name,
                    file_id,
                })
            }
            StreamEvent::Sent { file, bytes } => NodeEvent::FileSent {
                friend,
                file,
                bytes,
            },
            StreamEvent::Received {
                file,
                bytes,
                verified: checked_by_stream,
                sha256: stream_sha256,
            } => {
                // The stream layer flushed the sink, which left the digest of the file as
                // written (or, resuming with `verify`, hashed it itself and found it equal
                // to the file id: `checked_by_stream`). A file whose SHA-256 is not its
                // file id is kept: the id is opaque unless the sender hashes its content.
                let (sha256, verification) = match self.receiving.remove(&file) {
                    _ if checked_by_stream => (stream_sha256, FileVerification::Sha256FileId),
                    Some((Some(slot), expected)) => {
                        let digest = *slot.lock().unwrap_or_else(|e| e.into_inner());
                        (digest, FileVerification::of(digest, &expected))
                    }
                    _ => (stream_sha256, FileVerification::NotHashed),
                };
                NodeEvent::FileReceived {
                    friend,
                    file,
                    bytes,
                    sha256,
                    verification,
                }
            }
            StreamEvent::PeerControl {
                file,
                control: FileControl::Cancel,
            } => {
                self.offered.remove(&file);
                self.receiving.remove(&file);
                NodeEvent::FileFailed {
                    friend,
                    file,
                    reason: "the peer cancelled the transfer".into(),
                    by_peer: true,
                }
            }
            StreamEvent::Failed { file, error } => {
                self.receiving.remove(&file);
                NodeEvent::FileFailed {
                    friend,
                    file,
                    reason: error.to_string(),
                    by_peer: false,
                }
            }
            StreamEvent::PeerControl { file, control } => NodeEvent::FileControl {
                friend,
                file,
                control,
            },
            StreamEvent::Other(_) => return None,
        })
    }

    /// The session ended: unfinished transfers fail (c-toxcore resets them silently,
    /// `break_files`; the application here hears why).
    pub fn friend_offline(&mut self, friend: FriendNumber, events: &mut impl Extend<NodeEvent>) {
        self.streams.friend_offline();
        self.drain_into(friend, events);
        self.offered.clear();
        self.receiving.clear();
    }
}

impl Node {
    /// Offers a file whose SHA-256 the caller computed beforehand — before the session,
    /// ideally: hashing a large file inside the event loop stalls every session for as
    /// long as it takes (≈ 1 s per GiB), which the transport then reads as a huge RTT.
    pub fn send_file(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        file: PreparedFile,
        name: &[u8],
    ) -> Result<u32, NodeError> {
        self.send_file_kind(now, friend, FileKind::Data, file, name)
    }

    /// Accepts an offered file into `sink`. When the sink hashes what it writes (the
    /// drivers' writer thread does, off the event loop), `digest` is where it leaves the
    /// SHA-256, which [`NodeEvent::FileReceived`] reports and compares with the file id.
    pub fn accept_file(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        file: u32,
        sink: Box<dyn Sink>,
        digest: Option<DigestSlot>,
    ) -> Result<(), NodeError> {
        let (conn, f) = self.online_session(friend)?;
        let expected = *f
            .files
            .offered
            .get(&file)
            .ok_or(StreamError::NotOffered(file))?;
        f.files.streams.accept(now, conn, file, sink, false)?;
        f.files.offered.remove(&file);
        f.files.receiving.insert(file, (digest, expected));
        Ok(())
    }

    /// Offers a file of a given kind (`tox_file_send`): an avatar's id is the SHA-256 of
    /// the image (`tox_hash`), and an avatar of size 0 says "no avatar" (docs/protocol.md §3.2).
    pub fn send_file_kind(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        kind: FileKind,
        file: PreparedFile,
        name: &[u8],
    ) -> Result<u32, NodeError> {
        let (conn, f) = self.online_session(friend)?;
        let number = f.files.streams.send_with_id(
            now,
            conn,
            kind,
            file.size,
            file.sha256,
            file.source,
            name,
        )?;
        self.after_input(now);
        Ok(number)
    }

    /// Accepts an offer into a sink that already holds the first `offset` bytes of it (a
    /// transfer broken earlier): asks the sender to seek there, then accepts
    /// (`tox_file_seek` + RESUME). With `verify`, the prefix is read back into the hash so
    /// the SHA-256 check still covers the whole file.
    #[allow(clippy::too_many_arguments)]
    pub fn accept_file_from<K: rustox_file_transfer::stream::ResumableSink + 'static>(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        file: u32,
        sink: K,
        offset: u64,
        verify: bool,
    ) -> Result<(), NodeError> {
        let (conn, f) = self.online_session(friend)?;
        f.files
            .streams
            .accept_from(now, conn, file, sink, offset, verify)?;
        f.files.offered.remove(&file);
        Ok(())
    }

    /// Pauses a transfer (`tox_file_control` PAUSE): our side stops sending or asks the
    /// sender to stop.
    pub fn pause_file(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        file: u32,
    ) -> Result<(), NodeError> {
        self.file_control(now, friend, file, FileControl::Pause)
    }

    /// Resumes a transfer we paused (`tox_file_control` RESUME). An offer is accepted with
    /// [`Node::accept_file`], which also says where the data goes.
    pub fn resume_file(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        file: u32,
    ) -> Result<(), NodeError> {
        self.file_control(now, friend, file, FileControl::Resume)
    }

    fn file_control(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        file: u32,
        control: FileControl,
    ) -> Result<(), NodeError> {
        let (conn, f) = self.online_session(friend)?;
        if control == FileControl::Resume && f.files.offered.contains_key(&file) {
            return Err(NodeError::FileControl(
                rustox_file_transfer::FileControlError::NotPaused,
            ));
        }
        f.files
            .streams
            .transfers()
            .control(now, conn, file, control)?;
        Ok(())
    }

    /// Refuses an offer or stops a transfer.
    pub fn cancel_file(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        file: u32,
    ) -> Result<(), NodeError> {
        let (conn, f) = self.online_session(friend)?;
        f.files.offered.remove(&file);
        f.files.receiving.remove(&file);
        f.files.streams.cancel(now, conn, file)?;
        Ok(())
    }

    /// Whether a transfer is paused, by us or by the friend: c-toxcore raises no chunk
    /// request for it then (Messenger.c, `do_all_filetransfers`).
    pub fn file_paused(&self, friend: FriendNumber, file: u32) -> bool {
        self.friends
            .get(friend)
            .and_then(|f| f.files.streams.transfer(file))
            .is_some_and(|t| t.paused_by_us || t.paused_by_peer)
    }

    /// Bytes of a transfer done so far (sent and acknowledged, or received).
    pub fn file_progress(&mut self, friend: FriendNumber, file: u32) -> Option<u64> {
        let f = self.friends.get_mut(friend)?;
        f.files
            .streams
            .transfers()
            .transfer(file)
            .map(|t| t.transferred)
    }

    /// A file packet (80–82) on an online friend's session.
    pub(super) fn on_file_packet(
        &mut self,
        now: Timestamp,
        number: FriendNumber,
        id: ConnectionId,
        p: &[u8],
    ) {
        let (Some(conn), Some(f)) = (
            self.endpoint.connection_mut(id),
            self.friends.get_mut(number),
        ) else {
            return;
        };
        // A malformed or out-of-place file packet is the file layer's to refuse and count;
        // the session goes on.
        let _ = f.files.streams.handle_packet(now, conn, p);
        let mut events = Vec::new();
        f.files.drain_into(number, &mut events);
        for e in events {
            self.push_event(e);
        }
    }

    /// Outgoing `file` to `friend` has data again after its source answered a read with
    /// `WouldBlock` (a source filled from elsewhere, like the Rust API's async sources): its
    /// chunks flow again.
    pub fn file_source_ready(&mut self, now: Timestamp, friend: FriendNumber, file: u32) {
        if let Some(f) = self.friends.get_mut(friend) {
            f.files.streams.source_ready(file);
        }
        self.pump_files(now);
    }

    /// Tops up every online friend's file layer; returns file bytes queued.
    pub(super) fn pump_files(&mut self, now: Timestamp) -> u64 {
        let mut queued = 0;
        let mut events = Vec::new();
        for number in self.friends.numbers() {
            let Some(f) = self.friends.get_mut(number) else {
                continue;
            };
            let Some(id) = f.session.filter(|_| f.online) else {
                continue;
            };
            let Some(conn) = self.endpoint.connection_mut(id) else {
                continue;
            };
            if conn.status() != ConnectionStatus::Established {
                continue;
            }
            queued += f.files.streams.pump(now, conn);
            f.files.drain_into(number, &mut events);
        }
        for e in events {
            self.push_event(e);
        }
        queued
    }
}
