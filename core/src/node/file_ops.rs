//! The node's file-transfer calls (`tox_file_*`, docs/protocol.md §3.2–§3.5) and the file
//! packets of a friend's session: each goes to the friend's [`FriendFiles`](super::files::FriendFiles).

use rustox_file_transfer::stream::{Sink, StreamError};
use rustox_file_transfer::{FileControl, FileKind};
use rustox_net_crypto::{ConnectionId, ConnectionStatus, Timestamp};

use super::files::{DigestSlot, PreparedFile};
use super::friends::FriendNumber;
use super::{Node, NodeError};

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
        self.sent_since_pump = false;
        self.stats.file_pumps += 1;
        let mut queued = 0;
        let mut events = Vec::new();
        for (number, f) in self.friends.iter_mut() {
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
