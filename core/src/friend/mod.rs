//! Friends below Messenger (docs/protocol.md §4, §6.4, §6.5), sans-IO: the Tox ID, friend
//! requests, the DHT public key announcement, and friend_connection — the per-friend state
//! that turns "we know this friend's DHT key and address" into a live net_crypto session
//! and keeps it alive.
//!
//! Data flows: the onion and DHT hand in DHT-PK announcements ([`dht_pk`]) and friend
//! requests ([`request`]); a [`connection::FriendConnection`] per friend takes the DHT key,
//! addresses and session events with the time, and hands out [`connection::FriendAction`]s
//! (connect, ALIVE, SHARE_RELAYS, kill) for the Node to carry out on the net_crypto
//! endpoint. [`packets`] holds friend_connection's own packets (ids 16–18).

pub(crate) mod add;
pub mod connection;
pub mod dht_pk;
pub mod packets;
pub mod request;
pub mod tox_id;

pub use add::{validate_friend_add, FriendAddError};
pub use connection::{
    FriendAction, FriendConnStats, FriendConnStatus, FriendConnection, KillReason, Received,
};
pub use dht_pk::{DhtPkAnnounce, DhtPkError, DhtPkRoute, NoReplay};
pub use packets::{FriendConnPacket, PacketError};
pub use request::{
    FilterStats, FriendRequest, Refusal, RequestError, RequestFilter, RequestSchedule, RequestState,
};
pub use tox_id::{NoSpam, ToxId, ToxIdError};
