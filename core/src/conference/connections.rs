//! One conference's connections (`Groupchat_Connection connections[MAX_GROUP_CONNECTIONS]`
//! in `toxcore/group.c`): which links carry this conference, why each is kept, and the
//! remote side's conference number on each.

use rustox_net_crypto::crypto::PublicKey;

/// `MAX_GROUP_CONNECTIONS`.
pub const MAX_GROUP_CONNECTIONS: usize = 16;
/// `MIN_EMPTY_CONNECTIONS` = 1 + 16 / 10: free slots `clean_connections` keeps.
pub const MIN_EMPTY_CONNECTIONS: usize = 1 + MAX_GROUP_CONNECTIONS / 10;

/// `GROUPCHAT_CONNECTION_REASON_CLOSEST`: one of the closest peers.
pub const REASON_CLOSEST: u8 = 1 << 0;
/// `GROUPCHAT_CONNECTION_REASON_INTRODUCING`: we introduce this peer to the conference.
pub const REASON_INTRODUCING: u8 = 1 << 1;
/// `GROUPCHAT_CONNECTION_REASON_INTRODUCER`: this peer introduces us.
pub const REASON_INTRODUCER: u8 = 1 << 2;

/// `Groupchat_Connection_Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConnState {
    /// An empty slot.
    #[default]
    None,
    /// Held, waiting for the other side's online packet (97).
    Connecting,
    /// Both sides hold it: messages flow on it.
    Online,
}

/// One slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Connection {
    /// `type`.
    pub state: ConnState,
    /// `reasons`: a set of `REASON_*` bits.
    pub reasons: u8,
    /// The link's real key (c-toxcore's friend connection number).
    pub pk: PublicKey,
    /// `group_number`: the other side's conference number, for the packets we send.
    pub group_number: u16,
    /// The second (engine clock) of the last peer lists sent on it, and how many then.
    pub queries: (u64, u8),
}

/// Peer lists answered per connection per second (rustox's bound; c-toxcore answers every
/// PEER_QUERY). A join asks once or twice; a list of 1024 peers is about 75 packets.
pub const MAX_QUERIES_PER_SECOND: u8 = 4;

impl Connection {
    /// Whether a PEER_QUERY arriving at second `now` may be answered; counts it.
    pub fn take_query(&mut self, now: u64) -> bool {
        if self.queries.0 != now {
            self.queries = (now, 0);
        }
        if self.queries.1 >= MAX_QUERIES_PER_SECOND {
            return false;
        }
        self.queries.1 += 1;
        true
    }
}

impl Default for Connection {
    fn default() -> Self {
        Connection {
            state: ConnState::None,
            reasons: 0,
            pk: PublicKey([0; 32]),
            group_number: 0,
            queries: (0, 0),
        }
    }
}

/// The table.
#[derive(Debug, Clone, Default)]
pub struct Connections {
    /// The slots, in c-toxcore's order (it matters to `clean_connections`).
    pub slots: [Connection; MAX_GROUP_CONNECTIONS],
    /// `num_introducer_connections`.
    pub num_introducer: u32,
}

impl Connections {
    /// `friend_in_connections`: the slot holding the link to `pk`.
    pub fn find(&self, pk: &PublicKey) -> Option<usize> {
        self.slots
            .iter()
            .position(|c| c.state != ConnState::None && c.pk == *pk)
    }

    /// `count_connected`.
    pub fn count_online(&self) -> usize {
        self.slots
            .iter()
            .filter(|c| c.state == ConnState::Online)
            .count()
    }

    /// The slot `i`, if in range.
    pub fn get(&self, i: usize) -> Option<&Connection> {
        self.slots.get(i)
    }

    /// The slot `i`, if in range.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut Connection> {
        self.slots.get_mut(i)
    }

    /// `empty_connection_count`: how many slots `clean_connections` must free.
    pub fn to_clear(&self) -> usize {
        let empty = self
            .slots
            .iter()
            .filter(|c| c.state == ConnState::None)
            .count();
        MIN_EMPTY_CONNECTIONS.saturating_sub(empty)
    }

    /// `squash_connections`: used slots first, order kept.
    pub fn squash(&mut self) {
        let mut used: Vec<Connection> = self
            .slots
            .iter()
            .filter(|c| c.state != ConnState::None)
            .copied()
            .collect();
        used.resize(MAX_GROUP_CONNECTIONS, Connection::default());
        for (slot, c) in self.slots.iter_mut().zip(used) {
            *slot = c;
        }
    }

    /// The (index, key, conference number) of every online slot but `except`.
    pub fn online_except(&self, except: Option<usize>) -> Vec<(usize, PublicKey, u16)> {
        self.slots
            .iter()
            .enumerate()
            .filter(|&(i, c)| c.state == ConnState::Online && Some(i) != except)
            .map(|(i, c)| (i, c.pk, c.group_number))
            .collect()
    }
}
