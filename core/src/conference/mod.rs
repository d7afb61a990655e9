//! Conferences: the old group chats of c-toxcore 0.2.18 (`toxcore/group.c`, docs/protocol.md
//! "Conferences"), sans-IO.
//!
//! A conference rides on friend connections: to friends, and to peers that are not friends
//! (the node keeps a hidden link for those). [`Conferences`] never sees a socket or a
//! session. The node feeds it what happens on the links ([`Conferences::handle_link_status`],
//! [`Conferences::handle_packet`]) and the user's commands, and pulls out
//! [`LinkAction`]s (open or release a link to a real key, send a packet on it) with
//! [`Conferences::poll_action`] and [`ConferenceEvent`]s with [`Conferences::poll_event`].
//!
//! Peer numbers given to the application are indices into the conference's list of online
//! (or offline) peers, as tox.h's are; they change when a peer leaves. The 16-bit peer ids of
//! the wire never leave this module.

use rustox_net_crypto::crypto::{CryptoRng, PublicKey};
use rustox_net_crypto::Timestamp;

use crate::savedata::SavedConference;
use crate::types::MessageKind;

/// `GROUP_ID_LENGTH`: a conference's id, random, chosen by its founder.
pub const CONFERENCE_ID_LEN: usize = 32;
/// The invite cookie handed to the application and back to [`Conferences::join`]: the
/// inviter's conference number (u16 big-endian), the type byte, the id.
pub const INVITE_COOKIE_LEN: usize = 2 + 1 + CONFERENCE_ID_LEN;
/// `MAX_NAME_LENGTH`: the longest title and the longest peer name.
pub const MAX_TITLE_LEN: usize = crate::types::MAX_NAME_LEN;
/// `TOX_MAX_MESSAGE_LENGTH`: the longest message `tox_conference_send_message` takes.
pub const MAX_CONFERENCE_MESSAGE_LEN: usize = 1372;
/// `MAX_FROZEN_DEFAULT`: offline peers kept per conference until the user sets another bound.
pub const DEFAULT_MAX_OFFLINE: u32 = 128;

/// A conference's number, as the application sees it (the lowest free slot is reused, as
/// c-toxcore's `create_group_chat` does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConferenceNumber(pub u32);

/// A conference's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConferenceId(pub [u8; CONFERENCE_ID_LEN]);

/// `Tox_Conference_Type`, the type byte of invites and the save file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConferenceType {
    /// Text only (0).
    Text,
    /// Text and audio (1): audio rides on lossy packet 199.
    Av,
}

impl ConferenceType {
    /// The wire byte.
    pub fn to_byte(self) -> u8 {
        match self {
            ConferenceType::Text => 0,
            ConferenceType::Av => 1,
        }
    }
    /// From the wire byte; other values are not a type c-toxcore 0.2.18 knows.
    pub fn from_byte(b: u8) -> Option<Self> {
        match b {
            0 => Some(ConferenceType::Text),
            1 => Some(ConferenceType::Av),
            _ => None,
        }
    }
}

/// Which of a conference's two peer lists a peer number indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerList {
    /// Peers we hear from (tox.h's "peer" functions).
    Online,
    /// Frozen peers: gone quiet, remembered until they return (tox.h's "offline_peer").
    Offline,
}

/// What the engine asks the node to do with its links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkAction {
    /// Keep a friend connection to `pk` (a friend's, or a hidden one for a stranger) and
    /// report its status with [`Conferences::handle_link_status`]. `dht_pk` is the peer's DHT
    /// key as the conference knows it, a hint to dial before the onion finds it. Each
    /// `Open` is matched by one [`LinkAction::Release`].
    Open {
        /// The peer's real key.
        pk: PublicKey,
        /// Its DHT key, when known.
        dht_pk: Option<PublicKey>,
    },
    /// One reason to keep the link to `pk` is gone.
    Release {
        /// The peer's real key.
        pk: PublicKey,
    },
    /// Send `data` (its first byte is the packet id: 96–100 lossless, 199 lossy) on the link
    /// to `pk`, if it is connected. A packet to a link that is down is dropped.
    Send {
        /// The peer's real key.
        pk: PublicKey,
        /// The packet, id first.
        data: Vec<u8>,
        /// A lossy packet (199) rather than a lossless one.
        lossy: bool,
    },
}

/// What the engine tells the application (tox.h's six conference callbacks, and the lossy
/// packets group audio rides on).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConferenceEvent {
    /// A friend invites us (`tox_conference_invite_cb`); pass the cookie to
    /// [`Conferences::join`].
    Invite {
        /// The inviting friend's real key (the node maps it to a friend number).
        friend_pk: PublicKey,
        /// The conference's type.
        kind: ConferenceType,
        /// [`INVITE_COOKIE_LEN`] bytes.
        cookie: Vec<u8>,
    },
    /// We are connected to a conference we joined (`tox_conference_connected_cb`).
    Connected {
        /// Which conference.
        conference: ConferenceNumber,
    },
    /// A message or action (`tox_conference_message_cb`), ours included as c-toxcore
    /// reports them.
    Message {
        /// Which conference.
        conference: ConferenceNumber,
        /// The sender's peer number (online list).
        peer: u32,
        /// Message or action.
        kind: MessageKind,
        /// The text (bytes, not necessarily UTF-8).
        text: Vec<u8>,
    },
    /// The title changed (`tox_conference_title_cb`).
    Title {
        /// Which conference.
        conference: ConferenceNumber,
        /// Who set it; `u32::MAX` when it came with the peer list on joining.
        peer: u32,
        /// The new title.
        title: Vec<u8>,
    },
    /// A peer's name changed (`tox_conference_peer_name_cb`).
    PeerName {
        /// Which conference.
        conference: ConferenceNumber,
        /// The peer (online list).
        peer: u32,
        /// Its name.
        name: Vec<u8>,
    },
    /// Peers joined, left, froze or thawed (`tox_conference_peer_list_changed_cb`).
    PeerListChanged {
        /// Which conference.
        conference: ConferenceNumber,
    },
    /// A lossy packet from a peer (group audio, packet 199), deduplicated, its header
    /// removed: the first byte is the handler's id (192 for audio).
    Lossy {
        /// Which conference.
        conference: ConferenceNumber,
        /// The sender's peer number (online list).
        peer: u32,
        /// The payload.
        data: Vec<u8>,
    },
}

/// Why a conference command failed. Each maps onto one tox.h error code; the node and the
/// C API pick the code by the function that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ConferenceError {
    /// No conference has that number (`CONFERENCE_NOT_FOUND`).
    #[error("no such conference")]
    NotFound,
    /// No peer has that number in the list asked for (`PEER_NOT_FOUND`).
    #[error("no such peer")]
    PeerNotFound,
    /// We are not connected to the conference yet (`NO_CONNECTION`).
    #[error("not connected to the conference")]
    NoConnection,
    /// A packet could not be sent (`FAIL_SEND`).
    #[error("the packet could not be sent")]
    FailSend,
    /// A message, title or cookie of the wrong length (`TOO_LONG`, `INVALID_LENGTH`).
    #[error("wrong length")]
    InvalidLength,
    /// No friend has that number (`FRIEND_NOT_FOUND` of `tox_conference_join`).
    #[error("no such friend")]
    FriendNotFound,
    /// The invite's type byte is not one we know (`WRONG_TYPE`).
    #[error("unknown conference type")]
    WrongType,
    /// We are already in that conference (`DUPLICATE`).
    #[error("already in that conference")]
    Duplicate,
    /// The conference table is full, or the join could not start (`INIT`, `INIT_FAIL`).
    #[error("could not create the conference")]
    Init,
}

/// All conferences of one node.
pub struct Conferences {
    // The engine's state; see the files of this module.
}

impl Conferences {
    /// An empty set for the node whose real key is `self_pk`, whose DHT key is `self_dht_pk`
    /// (it goes into peer lists as our "temp" key) and whose name is `self_name`.
    pub fn new(self_pk: PublicKey, self_dht_pk: PublicKey, self_name: &[u8]) -> Self {
        let _ = (self_pk, self_dht_pk, self_name);
        todo!("conference engine")
    }

    /// Restores conferences saved in a profile (c-toxcore's `load_conferences`): each
    /// comes back with its peers frozen, and rejoins as they come online.
    pub fn load(&mut self, now: Timestamp, saved: &[SavedConference]) {
        let _ = (now, saved);
        todo!("conference engine")
    }

    /// What goes into the profile (c-toxcore's `conferences_save`).
    pub fn save(&self) -> Vec<SavedConference> {
        todo!("conference engine")
    }

    // --- commands (tox.h) ---

    /// `tox_conference_new`: a conference with us as its only peer.
    pub fn create(
        &mut self,
        now: Timestamp,
        rng: &mut dyn CryptoRng,
        kind: ConferenceType,
    ) -> Result<ConferenceNumber, ConferenceError> {
        let _ = (now, rng, kind);
        todo!("conference engine")
    }

    /// `tox_conference_delete`: leave (telling the peers) and forget.
    pub fn delete(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
    ) -> Result<(), ConferenceError> {
        let _ = (now, conference);
        todo!("conference engine")
    }

    /// `tox_conference_invite`: queue the invite to the friend whose real key is
    /// `friend_pk`. The node checks the friend is online first (else `FAIL_SEND`).
    pub fn invite(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
        friend_pk: PublicKey,
    ) -> Result<(), ConferenceError> {
        let _ = (now, conference, friend_pk);
        todo!("conference engine")
    }

    /// `tox_conference_join`: answer the invite of the friend `friend_pk` (online; the node
    /// checks) with its `cookie`.
    pub fn join(
        &mut self,
        now: Timestamp,
        friend_pk: PublicKey,
        cookie: &[u8],
    ) -> Result<ConferenceNumber, ConferenceError> {
        let _ = (now, friend_pk, cookie);
        todo!("conference engine")
    }

    /// `tox_conference_send_message`.
    pub fn send_message(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
        kind: MessageKind,
        text: &[u8],
    ) -> Result<(), ConferenceError> {
        let _ = (now, conference, kind, text);
        todo!("conference engine")
    }

    /// `tox_conference_set_title`.
    pub fn set_title(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
        title: &[u8],
    ) -> Result<(), ConferenceError> {
        let _ = (now, conference, title);
        todo!("conference engine")
    }

    /// `tox_conference_set_max_offline`.
    pub fn set_max_offline(
        &mut self,
        conference: ConferenceNumber,
        max: u32,
    ) -> Result<(), ConferenceError> {
        let _ = (conference, max);
        todo!("conference engine")
    }

    /// `send_group_lossy_packet`: group audio (first byte the handler id, 192).
    pub fn send_lossy(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
        data: &[u8],
    ) -> Result<(), ConferenceError> {
        let _ = (now, conference, data);
        todo!("conference engine")
    }

    /// Our name changed (`send_name_all_groups`).
    pub fn set_self_name(&mut self, now: Timestamp, name: &[u8]) {
        let _ = (now, name);
        todo!("conference engine")
    }

    /// Whether `pk` is a friend of ours (c-toxcore keeps friends first among frozen peers).
    pub fn set_friend(&mut self, pk: PublicKey, is_friend: bool) {
        let _ = (pk, is_friend);
        todo!("conference engine")
    }

    // --- queries (tox.h) ---

    /// `tox_conference_get_chatlist`: the numbers in use, ascending.
    pub fn list(&self) -> Vec<ConferenceNumber> {
        todo!("conference engine")
    }
    /// `tox_conference_get_type`.
    pub fn kind(&self, conference: ConferenceNumber) -> Result<ConferenceType, ConferenceError> {
        let _ = conference;
        todo!("conference engine")
    }
    /// `tox_conference_get_id`.
    pub fn id(&self, conference: ConferenceNumber) -> Result<ConferenceId, ConferenceError> {
        let _ = conference;
        todo!("conference engine")
    }
    /// `tox_conference_by_id`.
    pub fn by_id(&self, id: &ConferenceId) -> Option<ConferenceNumber> {
        let _ = id;
        todo!("conference engine")
    }
    /// `tox_conference_get_title`: `Ok(empty)` while no title is set? No: c-toxcore answers
    /// `INVALID_LENGTH` for a conference without a title; so does this.
    pub fn title(&self, conference: ConferenceNumber) -> Result<&[u8], ConferenceError> {
        let _ = conference;
        todo!("conference engine")
    }
    /// `tox_conference_peer_count` / `tox_conference_offline_peer_count`.
    pub fn peer_count(
        &self,
        conference: ConferenceNumber,
        list: PeerList,
    ) -> Result<u32, ConferenceError> {
        let _ = (conference, list);
        todo!("conference engine")
    }
    /// `tox_conference_peer_get_name` / `..._offline_peer_get_name`.
    pub fn peer_name(
        &self,
        conference: ConferenceNumber,
        list: PeerList,
        peer: u32,
    ) -> Result<&[u8], ConferenceError> {
        let _ = (conference, list, peer);
        todo!("conference engine")
    }
    /// `tox_conference_peer_get_public_key` / `..._offline_peer_get_public_key`.
    pub fn peer_public_key(
        &self,
        conference: ConferenceNumber,
        list: PeerList,
        peer: u32,
    ) -> Result<PublicKey, ConferenceError> {
        let _ = (conference, list, peer);
        todo!("conference engine")
    }
    /// `tox_conference_peer_number_is_ours` (`NO_CONNECTION` before we are connected).
    pub fn peer_number_is_ours(
        &self,
        conference: ConferenceNumber,
        peer: u32,
    ) -> Result<bool, ConferenceError> {
        let _ = (conference, peer);
        todo!("conference engine")
    }
    /// `tox_conference_offline_peer_get_last_active`: Unix seconds.
    pub fn offline_peer_last_active(
        &self,
        conference: ConferenceNumber,
        peer: u32,
    ) -> Result<u64, ConferenceError> {
        let _ = (conference, peer);
        todo!("conference engine")
    }
    /// Whether we are connected to the conference (c-toxcore's `GROUPCHAT_STATUS_CONNECTED`).
    pub fn is_connected(&self, conference: ConferenceNumber) -> Result<bool, ConferenceError> {
        let _ = conference;
        todo!("conference engine")
    }

    // --- links ---

    /// The friend connection to `pk` came up (`online`) or went down.
    pub fn handle_link_status(&mut self, now: Timestamp, pk: PublicKey, online: bool) {
        let _ = (now, pk, online);
        todo!("conference engine")
    }

    /// A packet on the link to `pk` whose first byte is 96–100 (lossless) or 199 (lossy).
    /// Packet 96 (invites) is accepted only from friends that are online for Messenger: the
    /// node passes it only then. Bad packets are dropped and counted; nothing panics.
    pub fn handle_packet(&mut self, now: Timestamp, pk: PublicKey, data: &[u8]) {
        let _ = (now, pk, data);
        todo!("conference engine")
    }

    /// Timers: pings, peer timeouts, reconnecting to the closest peers.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        let _ = now;
        todo!("conference engine")
    }

    /// When [`Conferences::handle_timeout`] wants to run next.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        todo!("conference engine")
    }

    /// The next thing to do on a link.
    pub fn poll_action(&mut self) -> Option<LinkAction> {
        todo!("conference engine")
    }

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<ConferenceEvent> {
        todo!("conference engine")
    }
}
