//! What all conferences of a node share: the view of the friend connections (c-toxcore's
//! `Friend_Connections` as group.c sees it), the queues of link actions and events, the
//! clock in seconds, our keys and name, and the counters of dropped input.

use std::collections::{HashMap, HashSet, VecDeque};

use rustox_net_crypto::crypto::PublicKey;

use super::{ConferenceEvent, LinkAction};

/// Link actions queued before the node polls; beyond, actions are dropped and counted. A
/// message is forwarded to at most 16 connections, so this holds hundreds of messages.
pub const MAX_QUEUED_ACTIONS: usize = 16_384;
/// Events queued before the application polls; beyond, events are dropped and counted.
pub const MAX_QUEUED_EVENTS: usize = 4_096;
/// Keys whose link status or DHT key we remember beyond the friends and our own opens.
const MAX_LINK_KEYS: usize = 65_536;

/// Counters of input dropped and of output the queues could not hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConferenceStats {
    /// Packets that did not parse or had no conference or connection to go to.
    pub packets_dropped: u64,
    /// Messages refused as already seen (de-duplication).
    pub duplicates: u64,
    /// Peers not added because the conference's online list is full.
    pub peers_refused: u64,
    /// Link actions dropped because the queue was full.
    pub actions_dropped: u64,
    /// Events dropped because the queue was full.
    pub events_dropped: u64,
}

/// The shared state every conference's handlers work with.
pub struct Io {
    /// Our real key.
    pub self_pk: PublicKey,
    /// Our DHT key.
    pub self_dht_pk: PublicKey,
    /// Our name.
    pub self_name: Vec<u8>,
    /// Now, in seconds (`mono_time_get`): the driver's clock plus [`Io::unix_offset`].
    pub now: u64,
    /// Added to the driver's seconds to get Unix time.
    pub unix_offset: u64,
    /// Friends (their links exist whatever the conferences do).
    friends: HashSet<PublicKey>,
    /// How many conference connections hold each link open.
    opens: HashMap<PublicKey, u32>,
    /// Links that are up.
    online: HashSet<PublicKey>,
    /// The DHT key of each link, as the node told us.
    dht_keys: HashMap<PublicKey, PublicKey>,
    actions: VecDeque<LinkAction>,
    events: VecDeque<ConferenceEvent>,
    /// Counters.
    pub stats: ConferenceStats,
    rng: u64,
}

impl Io {
    /// Nothing open, nothing queued.
    pub fn new(self_pk: PublicKey, self_dht_pk: PublicKey, self_name: &[u8]) -> Self {
        let mut seed = [0u8; 8];
        for (d, s) in seed.iter_mut().zip(self_pk.0.iter()) {
            *d = *s;
        }
        Io {
            self_pk,
            self_dht_pk,
            self_name: self_name.to_vec(),
            now: 0,
            unix_offset: 0,
            friends: HashSet::new(),
            opens: HashMap::new(),
            online: HashSet::new(),
            dht_keys: HashMap::new(),
            actions: VecDeque::new(),
            events: VecDeque::new(),
            stats: ConferenceStats::default(),
            rng: u64::from_le_bytes(seed),
        }
    }

    /// Mixes fresh randomness into the peer-id generator.
    pub fn reseed(&mut self, seed: u64) {
        self.rng ^= seed;
        self.next_u64();
    }

    /// SplitMix64: peer ids need only be distinct, not secret (c-toxcore's `random_u16`).
    fn next_u64(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A random 16-bit peer id.
    pub fn random_u16(&mut self) -> u16 {
        (self.next_u64() >> 48) as u16
    }

    // --- links ---

    /// `getfriend_conn_id_pk(pk) != -1`: a friend connection to `pk` exists.
    pub fn link_exists(&self, pk: &PublicKey) -> bool {
        self.friends.contains(pk) || self.opens.get(pk).is_some_and(|&n| n > 0)
    }

    /// `friend_con_connected(..) == FRIENDCONN_STATUS_CONNECTED`.
    pub fn link_up(&self, pk: &PublicKey) -> bool {
        self.link_exists(pk) && self.online.contains(pk)
    }

    /// Whether `pk` is a friend (`getfriend_id(..) != -1`).
    pub fn is_friend(&self, pk: &PublicKey) -> bool {
        self.friends.contains(pk)
    }

    /// The DHT key of the link to `pk` (`get_friendcon_public_keys`' temp key), when the
    /// node told us one.
    pub fn link_dht_pk(&self, pk: &PublicKey) -> Option<PublicKey> {
        self.dht_keys.get(pk).copied()
    }

    /// The node says `pk`'s DHT key is `dht_pk`.
    pub fn set_link_dht_pk(&mut self, pk: PublicKey, dht_pk: PublicKey) {
        if self.dht_keys.len() < MAX_LINK_KEYS || self.dht_keys.contains_key(&pk) {
            self.dht_keys.insert(pk, dht_pk);
        }
    }

    /// `pk` is (no longer) a friend.
    pub fn set_friend(&mut self, pk: PublicKey, is_friend: bool) {
        if is_friend {
            self.friends.insert(pk);
        } else {
            self.friends.remove(&pk);
            self.forget_if_gone(&pk);
        }
    }

    /// The node reports the link's status; `false` when it went up for a key we hold no
    /// link to (ignored).
    pub fn set_link_status(&mut self, pk: PublicKey, up: bool) -> bool {
        if up {
            if !self.link_exists(&pk) && self.online.len() >= MAX_LINK_KEYS {
                return false;
            }
            self.online.insert(pk);
        } else {
            self.online.remove(&pk);
        }
        true
    }

    /// `new_friend_connection` / `friend_connection_lock`: one more reason to hold the link.
    pub fn open(&mut self, pk: PublicKey, dht_pk: Option<PublicKey>) {
        let n = self.opens.entry(pk).or_insert(0);
        *n = n.saturating_add(1);
        self.push_action(LinkAction::Open { pk, dht_pk });
    }

    /// `kill_friend_connection`: one reason fewer.
    pub fn release(&mut self, pk: PublicKey) {
        if let Some(n) = self.opens.get_mut(&pk) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.opens.remove(&pk);
            }
        }
        self.forget_if_gone(&pk);
        self.push_action(LinkAction::Release { pk });
    }

    /// A link nobody holds is gone (c-toxcore frees the friend connection): when it is
    /// opened again it starts down.
    fn forget_if_gone(&mut self, pk: &PublicKey) {
        if !self.link_exists(pk) {
            self.online.remove(pk);
        }
    }

    /// `write_cryptpacket` on the link to `pk`: queued when the link is up.
    pub fn send(&mut self, pk: PublicKey, data: Vec<u8>) -> bool {
        if !self.link_up(&pk) {
            return false;
        }
        self.push_action(LinkAction::Send {
            pk,
            data,
            lossy: false,
        })
    }

    /// `send_lossy_cryptpacket`.
    pub fn send_lossy(&mut self, pk: PublicKey, data: Vec<u8>) -> bool {
        if !self.link_up(&pk) {
            return false;
        }
        self.push_action(LinkAction::Send {
            pk,
            data,
            lossy: true,
        })
    }

    /// Messenger's `send_conference_invite_packet`: the node sends it only to a friend that
    /// is online, so it is queued whatever we know of the link.
    pub fn send_invite(&mut self, pk: PublicKey, data: Vec<u8>) -> bool {
        self.push_action(LinkAction::Send {
            pk,
            data,
            lossy: false,
        })
    }

    fn push_action(&mut self, action: LinkAction) -> bool {
        if self.actions.len() >= MAX_QUEUED_ACTIONS {
            self.stats.actions_dropped = self.stats.actions_dropped.saturating_add(1);
            return false;
        }
        self.actions.push_back(action);
        true
    }

    /// Queues an event for the application.
    pub fn event(&mut self, event: ConferenceEvent) {
        if self.events.len() >= MAX_QUEUED_EVENTS {
            self.stats.events_dropped = self.stats.events_dropped.saturating_add(1);
            return;
        }
        self.events.push_back(event);
    }

    /// The next link action.
    pub fn poll_action(&mut self) -> Option<LinkAction> {
        self.actions.pop_front()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<ConferenceEvent> {
        self.events.pop_front()
    }

    /// Counts a dropped packet.
    pub fn drop_packet(&mut self) {
        self.stats.packets_dropped = self.stats.packets_dropped.saturating_add(1);
    }

    /// Bytes held by the link tables and queues, roughly.
    pub fn memory_estimate(&self) -> usize {
        let key = std::mem::size_of::<PublicKey>();
        let queued: usize = self
            .actions
            .iter()
            .map(|a| match a {
                LinkAction::Send { data, .. } => data.len() + 64,
                _ => 64,
            })
            .sum();
        (self.friends.len() + self.online.len()) * key
            + self.opens.len() * (key + 4)
            + self.dht_keys.len() * key * 2
            + queued
            + self.events.len() * 96
    }
}
