//! The CONFERENCES section (type 20): old-style conferences as c-toxcore 0.2.18 saves them
//! (`conferences_save` / `load_conferences` in `toxcore/group.c`).
//!
//! Records only; the codec (parse and encode, with every length checked) lives here too.

use rustox_net_crypto::crypto::PublicKey;

/// One saved conference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedConference {
    /// `Tox_Conference_Type` byte (0 text, 1 AV); kept as saved.
    pub kind: u8,
    /// The conference id.
    pub id: [u8; 32],
    /// Our last message number in it.
    pub message_number: u32,
    /// Our last lossy message number.
    pub lossy_message_number: u16,
    /// Our 16-bit peer id in it.
    pub peer_number: u16,
    /// The title (≤ 128 bytes).
    pub title: Vec<u8>,
    /// The peers, all saved frozen (ourselves excluded).
    pub peers: Vec<SavedConferencePeer>,
}

/// One peer of a saved conference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedConferencePeer {
    /// Its real key.
    pub real_pk: PublicKey,
    /// Its DHT ("temp") key as last known.
    pub temp_pk: PublicKey,
    /// Its 16-bit peer id.
    pub peer_number: u16,
    /// When it was last active, Unix seconds.
    pub last_active: u64,
    /// Its name (≤ 128 bytes).
    pub name: Vec<u8>,
}
