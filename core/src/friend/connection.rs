//! One friend's friend_connection state (docs/protocol.md §4; c-toxcore 0.2.18
//! `friend_connection.c`), sans-IO.
//!
//! friend_connection sits between the ways of finding a friend (onion and DHT yield the
//! friend's DHT key and addresses, §6.4; the DHT yields a direct address, §5) and the
//! net_crypto session that carries Messenger. It decides when to open a session, keeps it
//! alive with ALIVE packets, declares it dead when the friend's ALIVEs stop, and trades TCP
//! relays with the friend.
//!
//! Inputs carry the time: [`FriendConnection::set_dht_pk`], [`FriendConnection::set_direct_addr`],
//! [`FriendConnection::on_incoming`], [`FriendConnection::on_established`],
//! [`FriendConnection::on_packet`], [`FriendConnection::on_closed`],
//! [`FriendConnection::handle_timeout`]. Outputs are pulled: [`FriendConnection::poll_action`]
//! until `None`, then [`FriendConnection::poll_timeout`]. Nothing here knows net_crypto's
//! `Endpoint`; the Node turns [`FriendAction`]s into endpoint calls.
//!
//! Status, and how it maps onto c-toxcore's (which has only CONNECTING and CONNECTED for a
//! live friend, plus a `crypt_connection_id` that is -1 or not):
//!
//! | ours           | c-toxcore                                  |
//! |----------------|--------------------------------------------|
//! | `NotConnected` | CONNECTING, `crypt_connection_id == -1`    |
//! | `Connecting`   | CONNECTING, a session being set up         |
//! | `Connected`    | CONNECTED                                  |
//!
//! Timing differs from 0.2.18 only in resolution: c-toxcore compares whole seconds with a
//! strict `<` (`ping_lastsent + 8 < now`), so it sends ALIVE about every 9 s and times out
//! after 32–33 s; we use the exact durations (8 s, 32 s, 120 s, 122 s).
//!
//! Deliberate differences, each harmless on the wire:
//! - a DHT key announced again refreshes its age (c-toxcore ignores a repeat, so it forgets
//!   a key 122 s after first learning it even while the friend keeps announcing it, and
//!   learns it again at the next announcement);
//! - a session that ends refreshes the stored addresses' age (they were in use until then);
//!   c-toxcore relies on the DHT having refreshed them;
//! - a session that fails is reopened at most once per [`CONNECT_RETRY_INTERVAL`]
//!   (c-toxcore reopens on the next `tox_iterate`);
//! - a new DHT key replacing a known one drops the stored addresses: they were learned for
//!   the old key
//!   (c-toxcore keeps them but does not hand them to the session it opens for the new key).
//! - the "friend hosts a TCP relay on a LAN address" rewrite of `friend_add_tcp_relay` is
//!   not done here; it belongs with the TCP relay client.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::Timestamp;

use crate::dht::timers::BAD_NODE_TIMEOUT;
use crate::dht::wire::packed_node::{canonical, PackedNode};

use super::packets::{FriendConnPacket, PacketError};
use super::request::FriendRequest;

/// `FRIEND_PING_INTERVAL`: ALIVE is sent this often while connected.
pub const FRIEND_PING_INTERVAL: Duration = Duration::from_secs(8);
/// `FRIEND_CONNECTION_TIMEOUT` = `FRIEND_PING_INTERVAL * 4`: without an ALIVE from the
/// friend for this long, the session is killed. Only ALIVE refreshes it.
pub const FRIEND_CONNECTION_TIMEOUT: Duration = Duration::from_secs(32);
/// `SHARE_RELAYS_INTERVAL` (60 × 2 s): SHARE_RELAYS while connected, and once at connect.
pub const SHARE_RELAYS_INTERVAL: Duration = Duration::from_secs(120);
/// `FRIEND_DHT_TIMEOUT` = `BAD_NODE_TIMEOUT` (122 s): while not connected, a DHT key or
/// direct address older than this is forgotten.
pub const FRIEND_DHT_TIMEOUT: Duration = BAD_NODE_TIMEOUT;
/// `FRIEND_MAX_STORED_TCP_RELAYS` = `MAX_FRIEND_TCP_CONNECTIONS` (6) × 4.
pub const FRIEND_MAX_STORED_TCP_RELAYS: usize = 24;
/// Ours: the least time between two [`FriendAction::Connect`]s for the same DHT key, so a
/// session that fails at once cannot spin. A new DHT key connects at once.
pub const CONNECT_RETRY_INTERVAL: Duration = Duration::from_secs(1);
/// Ours: the action queue's bound. Every input queues at most five actions and the Node
/// drains the queue after each; an action beyond the bound is dropped and counted.
pub const MAX_QUEUED_ACTIONS: usize = 32;

/// Where the friend's session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FriendConnStatus {
    /// No session, none being set up.
    NotConnected,
    /// A session is being set up (we asked for it, or accepted the friend's handshake).
    Connecting,
    /// The session is up.
    Connected,
}

/// Why we ask the Node to kill the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillReason {
    /// No ALIVE for [`FRIEND_CONNECTION_TIMEOUT`].
    Timeout,
    /// The friend's DHT key changed: the session belongs to its previous run.
    DhtPkChanged,
}

/// What the Node should do, pulled with [`FriendConnection::poll_action`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FriendAction {
    /// Open a net_crypto session (`new_crypto_connection(real pk, dht_pk)`) and give it
    /// `addr` as its direct address if there is one (`set_direct_ip_port`). The Node should
    /// also attach up to 3 of [`FriendConnection::tcp_relays`] (half of
    /// `MAX_FRIEND_TCP_CONNECTIONS`, `connect_to_saved_tcp_relays`).
    Connect {
        /// The friend's DHT key.
        dht_pk: PublicKey,
        /// The freshest known direct address.
        addr: Option<SocketAddr>,
    },
    /// A new direct address for the session under way (`set_direct_ip_port`).
    SetDirectAddr(SocketAddr),
    /// Send ALIVE (`[16]`, lossless, no congestion control).
    SendAlive,
    /// Send SHARE_RELAYS with up to 3 of our connected TCP relays, rotating through them,
    /// and add those to this friend too ([`FriendConnection::add_tcp_relay`]) so both ends
    /// meet on them (`send_relays`). With no relay connected, send nothing.
    SendShareRelays,
    /// Kill the session (`crypto_kill`). Its closing must not be reported back through
    /// [`FriendConnection::on_closed`]; a `Connect` may follow in the same drain.
    Kill {
        /// Why.
        reason: KillReason,
    },
    /// The friend's DHT key changed or was forgotten: stop searching the DHT for `old`, search
    /// for `new` (`dht_delfriend` / `dht_addfriend`), and tell the onion client
    /// (`onion_set_friend_DHT_pubkey`).
    DhtPkChanged {
        /// The key before, if one was known.
        old: Option<PublicKey>,
        /// The key now, if one is known.
        new: Option<PublicKey>,
    },
    /// The session came up or went down (the status callbacks: Messenger sends ONLINE or
    /// marks the friend offline; the onion client stops or resumes searching and resets the
    /// friend's [`super::dht_pk::NoReplay`]).
    StatusChanged {
        /// True when it came up.
        connected: bool,
    },
}

/// What [`FriendConnection::on_packet`] made of a packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    /// ALIVE: the timeout was refreshed.
    Alive,
    /// SHARE_RELAYS: this many relays were stored.
    Relays(usize),
    /// FRIEND_REQUESTS: pass it through the `RequestFilter` with this friend's real key.
    FriendRequest(FriendRequest),
    /// Not a friend_connection packet (id ∉ 16..=18): Messenger's.
    ForMessenger,
}

/// The friend's TCP relays, newest last: a ring of [`FRIEND_MAX_STORED_TCP_RELAYS`] in which
/// a relay already stored (same key) is moved to the newest slot (`friend_add_tcp_relay`).
#[derive(Debug, Clone, Default)]
struct TcpRelays {
    slots: VecDeque<PackedNode>,
}

impl TcpRelays {
    fn add(&mut self, node: PackedNode) {
        self.slots.retain(|n| n.pk != node.pk);
        if self.slots.len() == FRIEND_MAX_STORED_TCP_RELAYS {
            self.slots.pop_front();
        }
        self.slots.push_back(node);
    }
}

/// A direct address and when it was last reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Addr {
    addr: SocketAddr,
    seen: Timestamp,
}

/// Counters for one friend.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FriendConnStats {
    /// Sessions asked for.
    pub connects: u64,
    /// Sessions that came up.
    pub established: u64,
    /// Sessions killed for want of ALIVE.
    pub timeouts: u64,
    /// ALIVE packets received.
    pub alives_received: u64,
    /// Packets on the session that failed to parse.
    pub bad_packets: u64,
    /// Actions dropped because the queue was full (a Node that does not drain).
    pub dropped_actions: u64,
}

/// One friend's friend_connection.
#[derive(Debug, Clone)]
pub struct FriendConnection {
    real_pk: PublicKey,
    status: FriendConnStatus,
    /// The friend's DHT key and when it was last learned or refreshed.
    dht_pk: Option<(PublicKey, Timestamp)>,
    /// One direct address per family (index 0: IPv4, 1: IPv6).
    addrs: [Option<Addr>; 2],
    relays: TcpRelays,
    alive_sent: Option<Timestamp>,
    /// Where the interval to our next ALIVE counts from: our last ALIVE, or the friend's
    /// ALIVE that came less than half an interval after it (see [`Self::on_packet`]).
    alive_timed_from: Option<Timestamp>,
    alive_received: Timestamp,
    share_relays_sent: Option<Timestamp>,
    last_connect: Option<Timestamp>,
    actions: VecDeque<FriendAction>,
    stats: FriendConnStats,
}

impl FriendConnection {
    /// A friend known by its real key, with nothing else known yet.
    pub fn new(real_pk: PublicKey) -> Self {
        FriendConnection {
            real_pk,
            status: FriendConnStatus::NotConnected,
            dht_pk: None,
            addrs: [None, None],
            relays: TcpRelays::default(),
            alive_sent: None,
            alive_timed_from: None,
            alive_received: Timestamp::ZERO,
            share_relays_sent: None,
            last_connect: None,
            actions: VecDeque::new(),
            stats: FriendConnStats::default(),
        }
    }

    /// The friend's real (long-term) key.
    pub fn real_pk(&self) -> &PublicKey {
        &self.real_pk
    }

    /// Where the session stands.
    pub fn status(&self) -> FriendConnStatus {
        self.status
    }

    /// The friend's DHT key, if known.
    pub fn dht_pk(&self) -> Option<PublicKey> {
        self.dht_pk.map(|(pk, _)| pk)
    }

    /// When the DHT key was last learned or refreshed.
    pub fn dht_pk_learned(&self) -> Option<Timestamp> {
        self.dht_pk.map(|(_, t)| t)
    }

    /// The known direct addresses with the time each was last reported.
    pub fn direct_addrs(&self) -> impl Iterator<Item = (SocketAddr, Timestamp)> + '_ {
        self.addrs.iter().flatten().map(|a| (a.addr, a.seen))
    }

    /// The freshest direct address.
    pub fn direct_addr(&self) -> Option<SocketAddr> {
        self.addrs
            .iter()
            .flatten()
            .max_by_key(|a| a.seen)
            .map(|a| a.addr)
    }

    /// The friend's TCP relays, newest first (the order `connect_to_saved_tcp_relays` and
    /// the save file use).
    pub fn tcp_relays(&self) -> impl Iterator<Item = &PackedNode> + '_ {
        self.relays.slots.iter().rev()
    }

    /// Counters.
    pub fn stats(&self) -> FriendConnStats {
        self.stats
    }

    /// The next action for the Node.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<FriendAction> {
        self.actions.pop_front()
    }

    /// The friend's DHT key, from a DHT-PK announcement (onion or DHT route), a handshake,
    /// or the save file (`dht_pk_callback`). A new key kills any session (it belongs to the
    /// friend's previous run), forgets the old addresses and connects with the new key.
    pub fn set_dht_pk(&mut self, now: Timestamp, pk: PublicKey) {
        let old = self.dht_pk();
        if old == Some(pk) {
            self.dht_pk = Some((pk, now));
            return;
        }
        self.dht_pk = Some((pk, now));
        if old.is_some() {
            self.addrs = [None, None];
        }
        self.push(FriendAction::DhtPkChanged { old, new: Some(pk) });
        if self.status != FriendConnStatus::NotConnected {
            self.push(FriendAction::Kill {
                reason: KillReason::DhtPkChanged,
            });
            self.go_offline(now);
        }
        self.last_connect = None;
        self.maybe_connect(now);
    }

    /// A direct address for the friend, from the DHT (`dht_ip_callback`) or the Node.
    pub fn set_direct_addr(&mut self, now: Timestamp, addr: SocketAddr) {
        let addr = canonical(addr);
        let changed = self.direct_addr() != Some(addr);
        self.addrs[family(addr)] = Some(Addr { addr, seen: now });
        match self.status {
            FriendConnStatus::NotConnected => self.maybe_connect(now),
            _ if changed => self.push(FriendAction::SetDirectAddr(addr)),
            _ => {}
        }
    }

    /// The friend is opening a session to us (`handle_new_connections`). Returns whether to
    /// accept it: only when no session of ours is under way. `source` is the handshake's UDP
    /// address (`None` over a TCP relay).
    pub fn on_incoming(
        &mut self,
        now: Timestamp,
        dht_pk: PublicKey,
        source: Option<SocketAddr>,
    ) -> bool {
        if self.status != FriendConnStatus::NotConnected {
            return false;
        }
        self.status = FriendConnStatus::Connecting;
        self.learn_from_handshake(now, dht_pk, source);
        true
    }

    /// The net_crypto endpoint accepted a handshake from the friend into a new session, which
    /// is the friend's session from now on, whatever was under way: net_crypto adopts a
    /// handshake into a connection of ours still waiting for an address, and a handshake
    /// under a new DHT key replaces the friend's previous run's session
    /// (`handle_new_connection_handshake`). `source` is the handshake's UDP address.
    pub fn on_incoming_session(
        &mut self,
        now: Timestamp,
        dht_pk: PublicKey,
        source: Option<SocketAddr>,
    ) {
        if self.status == FriendConnStatus::Connected {
            self.go_offline(now);
        }
        self.learn_from_handshake(now, dht_pk, source);
        self.status = FriendConnStatus::Connecting;
    }

    /// What a handshake from the friend tells: its DHT key (a new one forgets the old
    /// addresses and asks the Node to search for it) and where it came from.
    fn learn_from_handshake(
        &mut self,
        now: Timestamp,
        dht_pk: PublicKey,
        source: Option<SocketAddr>,
    ) {
        let old = self.dht_pk();
        if old != Some(dht_pk) {
            if old.is_some() {
                self.addrs = [None, None];
            }
            self.push(FriendAction::DhtPkChanged {
                old,
                new: Some(dht_pk),
            });
        }
        self.dht_pk = Some((dht_pk, now));
        if let Some(addr) = source {
            let addr = canonical(addr);
            self.addrs[family(addr)] = Some(Addr { addr, seen: now });
        }
    }

    /// The session is up (net_crypto's status callback, `handle_status(true)`): ALIVE and
    /// SHARE_RELAYS go out now, and the friend has 32 s to send its first ALIVE.
    pub fn on_established(&mut self, now: Timestamp) {
        if self.status == FriendConnStatus::Connected {
            return;
        }
        self.status = FriendConnStatus::Connected;
        self.alive_received = now;
        self.share_relays_sent = None;
        self.stats.established += 1;
        self.push(FriendAction::StatusChanged { connected: true });
        self.handle_timeout(now);
    }

    /// A lossless packet arrived on the session: `id` and the bytes after it.
    pub fn on_packet(
        &mut self,
        now: Timestamp,
        id: u8,
        body: &[u8],
    ) -> Result<Received, PacketError> {
        match FriendConnPacket::decode_body(id, body) {
            Ok(FriendConnPacket::Alive) => {
                self.alive_received = now;
                self.stats.alives_received += 1;
                // Answered at once when ours is due within half an interval: two friends'
                // ALIVEs then travel together and an idle friend wakes each node about
                // once per interval, not twice. When ours went out less than half an
                // interval ago, our next one is timed from the friend's instead (once per
                // ALIVE we send, so at most 1.5 intervals pass between ours, well inside
                // FRIEND_CONNECTION_TIMEOUT): answering only one way, a friend whose timer
                // ran in the other half of the interval never joined ours, and a node with
                // many friends was woken by each of them at its own instant.
                if !self.send_alive_if_due_soon(now)
                    && self.status == FriendConnStatus::Connected
                    && self.alive_sent.is_some()
                    && self.alive_timed_from == self.alive_sent
                {
                    self.alive_timed_from = Some(now);
                }
                Ok(Received::Alive)
            }
            Ok(FriendConnPacket::ShareRelays(nodes)) => {
                let n = nodes.len();
                for node in nodes {
                    self.relays.add(node);
                }
                Ok(Received::Relays(n))
            }
            Ok(FriendConnPacket::FriendRequest(req)) => Ok(Received::FriendRequest(req)),
            Err(PacketError::NotFriendConnection(_)) => Ok(Received::ForMessenger),
            Err(e) => {
                self.stats.bad_packets += 1;
                Err(e)
            }
        }
    }

    /// The session ended without our asking, or could not be set up (net_crypto timed it
    /// out, or the friend killed it): `handle_status(false)`. The Node must report every
    /// session it opened on a `Connect` or accepted on [`Self::on_incoming`] that ends this
    /// way, or the friend stays `Connecting`. A new one is opened when the DHT key is known.
    pub fn on_closed(&mut self, now: Timestamp) {
        if self.status == FriendConnStatus::NotConnected {
            return;
        }
        self.go_offline(now);
        self.maybe_connect(now);
    }

    /// Store a TCP relay for this friend (from a DHT-PK announcement, or one of ours we
    /// shared with it).
    pub fn add_tcp_relay(&mut self, node: PackedNode) {
        self.relays.add(node);
    }

    /// Share relays at the next [`Self::handle_timeout`] if connected: call it when our
    /// first TCP relay connects, since [`FriendAction::SendShareRelays`] finds none before.
    pub fn share_relays_now(&mut self) {
        self.share_relays_sent = None;
    }

    /// Runs the timers (`do_friend_connections` for this friend).
    pub fn handle_timeout(&mut self, now: Timestamp) {
        match self.status {
            FriendConnStatus::Connected => {
                if now >= self.alive_received + FRIEND_CONNECTION_TIMEOUT {
                    self.stats.timeouts += 1;
                    self.push(FriendAction::Kill {
                        reason: KillReason::Timeout,
                    });
                    self.go_offline(now);
                    self.maybe_connect(now);
                    return;
                }
                if self
                    .alive_timed_from
                    .is_none_or(|t| now >= t + FRIEND_PING_INTERVAL)
                {
                    self.alive_sent = Some(now);
                    self.alive_timed_from = Some(now);
                    self.push(FriendAction::SendAlive);
                }
                self.share_relays_if_due(now);
            }
            FriendConnStatus::Connecting | FriendConnStatus::NotConnected => {
                if let Some((old, learned)) = self.dht_pk {
                    if now >= learned + FRIEND_DHT_TIMEOUT {
                        self.dht_pk = None;
                        self.push(FriendAction::DhtPkChanged {
                            old: Some(old),
                            new: None,
                        });
                    }
                }
                for slot in &mut self.addrs {
                    if slot.is_some_and(|a| now >= a.seen + FRIEND_DHT_TIMEOUT) {
                        *slot = None;
                    }
                }
                self.maybe_connect(now);
            }
        }
    }

    /// Sends ALIVE now if it would fall due within half an interval, and says whether it
    /// did. The node calls it for every friend when one friend's ALIVE timer fires, so an
    /// idle node sends all its friends' ALIVEs in one wake-up rather than one wake-up per
    /// friend; each friend still gets one at least every
    /// [`FRIEND_PING_INTERVAL`] and at most twice as often.
    pub fn send_alive_if_due_soon(&mut self, now: Timestamp) -> bool {
        let soon = self.status == FriendConnStatus::Connected
            && self
                .alive_timed_from
                .is_none_or(|t| now + FRIEND_PING_INTERVAL / 2 >= t + FRIEND_PING_INTERVAL);
        if soon {
            self.alive_sent = Some(now);
            self.alive_timed_from = Some(now);
            self.push(FriendAction::SendAlive);
            self.share_relays_if_due(now);
        }
        soon
    }

    /// SHARE_RELAYS at once when never sent on this connection (or asked for by
    /// [`Self::share_relays_now`]); after that, every [`SHARE_RELAYS_INTERVAL`] with the
    /// first ALIVE due then (at most 1.5 ALIVE intervals late), so that it costs no
    /// wake-up of its own: with many friends, each friend's relays on its own timer woke an
    /// idle node about once a second.
    fn share_relays_if_due(&mut self, now: Timestamp) {
        let due = match self.share_relays_sent {
            None => true,
            Some(t) => self.alive_sent == Some(now) && now >= t + SHARE_RELAYS_INTERVAL,
        };
        if due {
            self.share_relays_sent = Some(now);
            self.push(FriendAction::SendShareRelays);
        }
    }

    /// When our last ALIVE went out.
    pub fn alive_sent(&self) -> Option<Timestamp> {
        self.alive_sent
    }

    /// When [`Self::handle_timeout`] next has work.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        match self.status {
            FriendConnStatus::Connected => {
                let alive = self
                    .alive_timed_from
                    .map_or(Timestamp::ZERO, |t| t + FRIEND_PING_INTERVAL);
                let share = match self.share_relays_sent {
                    None => Timestamp::ZERO,
                    Some(_) => Timestamp::MAX,
                };
                let dead = self.alive_received + FRIEND_CONNECTION_TIMEOUT;
                Some(alive.min(share).min(dead))
            }
            FriendConnStatus::Connecting | FriendConnStatus::NotConnected => {
                let mut due = self.dht_pk.map(|(_, t)| t + FRIEND_DHT_TIMEOUT);
                for a in self.addrs.iter().flatten() {
                    due = earliest(due, a.seen + FRIEND_DHT_TIMEOUT);
                }
                if let (FriendConnStatus::NotConnected, Some(_), Some(t)) =
                    (self.status, self.dht_pk, self.last_connect)
                {
                    due = earliest(due, t + CONNECT_RETRY_INTERVAL);
                }
                due
            }
        }
    }

    /// Leaves the current session (killed or closed): `handle_status(false)`.
    fn go_offline(&mut self, now: Timestamp) {
        if self.status == FriendConnStatus::Connected {
            self.push(FriendAction::StatusChanged { connected: false });
            // c-toxcore restarts the DHT key's clock when the friend goes offline; the
            // addresses were in use until now, too.
            if let Some((_, learned)) = &mut self.dht_pk {
                *learned = now;
            }
            for a in self.addrs.iter_mut().flatten() {
                a.seen = now;
            }
        }
        self.status = FriendConnStatus::NotConnected;
    }

    /// Opens a session if none is under way and the DHT key is known
    /// (`friend_new_connection` in `do_friend_connections`).
    fn maybe_connect(&mut self, now: Timestamp) {
        if self.status != FriendConnStatus::NotConnected {
            return;
        }
        let Some(dht_pk) = self.dht_pk() else {
            return;
        };
        if self
            .last_connect
            .is_some_and(|t| now < t + CONNECT_RETRY_INTERVAL)
        {
            return;
        }
        self.last_connect = Some(now);
        self.status = FriendConnStatus::Connecting;
        self.stats.connects += 1;
        let addr = self.direct_addr();
        self.push(FriendAction::Connect { dht_pk, addr });
    }

    fn push(&mut self, action: FriendAction) {
        if self.actions.len() >= MAX_QUEUED_ACTIONS {
            self.stats.dropped_actions += 1;
            return;
        }
        self.actions.push_back(action);
    }
}

/// The earlier of a deadline that may be unset and one that is set. Not
/// `[..].into_iter().flatten().min()`: optimised, that form compares an unset deadline's
/// payload before looking at its tag, which is harmless but which valgrind reports as a
/// jump on uninitialised memory, and the C library's valgrind tests must stay clean
/// (ffi/tests/interop_c.rs).
fn earliest(due: Option<Timestamp>, t: Timestamp) -> Option<Timestamp> {
    match due {
        Some(d) if d <= t => Some(d),
        _ => Some(t),
    }
}

/// Index of an address's family in `addrs`.
fn family(addr: SocketAddr) -> usize {
    match addr {
        SocketAddr::V4(_) => 0,
        SocketAddr::V6(_) => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::friend::packets::{PACKET_ID_ALIVE, PACKET_ID_SHARE_RELAYS};

    const REAL: PublicKey = PublicKey([1; 32]);
    const DHT: PublicKey = PublicKey([2; 32]);
    const DHT2: PublicKey = PublicKey([3; 32]);

    /// A handshake from the friend becomes its session whatever was under way: a session of
    /// ours waiting for an address, or a live one from the friend's previous run.
    #[test]
    fn an_incoming_session_replaces_whatever_was_under_way() {
        let mut c = FriendConnection::new(REAL);
        c.set_dht_pk(secs(0), DHT);
        let _: Vec<_> = std::iter::from_fn(|| c.poll_action()).collect();
        assert_eq!(c.status(), FriendConnStatus::Connecting);
        let addr: SocketAddr = "10.0.0.9:33445".parse().unwrap();
        c.on_incoming_session(secs(1), DHT, Some(addr));
        assert_eq!(c.status(), FriendConnStatus::Connecting);
        assert_eq!(c.direct_addr(), Some(addr));
        assert_eq!(c.poll_action(), None);
        c.on_established(secs(1));
        let _: Vec<_> = std::iter::from_fn(|| c.poll_action()).collect();
        c.on_incoming_session(secs(5), DHT2, None);
        let actions: Vec<_> = std::iter::from_fn(|| c.poll_action()).collect();
        assert_eq!(
            actions,
            [
                FriendAction::StatusChanged { connected: false },
                FriendAction::DhtPkChanged {
                    old: Some(DHT),
                    new: Some(DHT2)
                }
            ]
        );
        assert_eq!(c.dht_pk(), Some(DHT2));
        assert_eq!(c.direct_addr(), None);
        assert_eq!(c.status(), FriendConnStatus::Connecting);
    }

    fn secs(s: u64) -> Timestamp {
        Timestamp::from_secs(s)
    }

    fn ms(m: u64) -> Timestamp {
        Timestamp::from_millis(m)
    }

    fn addr() -> SocketAddr {
        "198.51.100.7:33445".parse().unwrap()
    }

    fn drain(c: &mut FriendConnection) -> Vec<FriendAction> {
        std::iter::from_fn(|| c.poll_action()).collect()
    }

    fn relay(i: u8) -> PackedNode {
        PackedNode {
            addr: format!("10.0.0.{i}:443").parse().unwrap(),
            tcp: true,
            pk: PublicKey([i; 32]),
        }
    }

    /// A friend whose session came up at `at`, with the actions of getting there drained.
    fn connected_at(at: Timestamp) -> FriendConnection {
        let mut c = FriendConnection::new(REAL);
        c.set_direct_addr(at, addr());
        c.set_dht_pk(at, DHT);
        c.on_established(at);
        drain(&mut c);
        c
    }

    /// Runs the connection on a virtual clock from `from` to `to`, jumping from deadline to
    /// deadline, feeding the friend's ALIVE at each time in `alive_at`; returns the actions
    /// with their times.
    fn run(
        c: &mut FriendConnection,
        from: Timestamp,
        to: Timestamp,
        alive_at: &[Timestamp],
    ) -> Vec<(Timestamp, FriendAction)> {
        let mut out = Vec::new();
        let mut now = from;
        let mut alives = alive_at.iter().copied().peekable();
        loop {
            let next_alive = alives.peek().copied().unwrap_or(Timestamp::MAX);
            let next_timer = c.poll_timeout().unwrap_or(Timestamp::MAX).max(now);
            now = next_alive.min(next_timer);
            if now > to {
                return out;
            }
            if now == next_alive {
                alives.next();
                assert_eq!(c.on_packet(now, PACKET_ID_ALIVE, &[]), Ok(Received::Alive));
            } else {
                c.handle_timeout(now);
            }
            out.extend(drain(c).into_iter().map(|a| (now, a)));
        }
    }

    #[test]
    fn learning_the_dht_key_connects_with_the_known_address() {
        let mut c = FriendConnection::new(REAL);
        c.set_direct_addr(secs(1), addr());
        assert_eq!(
            drain(&mut c),
            vec![],
            "no DHT key yet: nothing to connect to"
        );
        c.set_dht_pk(secs(2), DHT);
        assert_eq!(
            drain(&mut c),
            vec![
                FriendAction::DhtPkChanged {
                    old: None,
                    new: Some(DHT)
                },
                FriendAction::Connect {
                    dht_pk: DHT,
                    addr: Some(addr())
                },
            ]
        );
        assert_eq!(c.status(), FriendConnStatus::Connecting);
        c.on_established(secs(3));
        assert_eq!(
            drain(&mut c),
            vec![
                FriendAction::StatusChanged { connected: true },
                FriendAction::SendAlive,
                FriendAction::SendShareRelays,
            ]
        );
        assert_eq!(c.status(), FriendConnStatus::Connected);
    }

    #[test]
    fn alive_every_8_s_and_share_relays_every_120_s() {
        let mut c = connected_at(secs(0));
        let friend_alives: Vec<_> = (1..=30).map(|i| secs(8 * i)).collect();
        let log = run(&mut c, secs(0), secs(240), &friend_alives);
        let alive_times: Vec<_> = log
            .iter()
            .filter(|(_, a)| *a == FriendAction::SendAlive)
            .map(|(t, _)| *t)
            .collect();
        assert_eq!(
            alive_times,
            (1..=30).map(|i| secs(8 * i)).collect::<Vec<_>>()
        );
        let share_times: Vec<_> = log
            .iter()
            .filter(|(_, a)| *a == FriendAction::SendShareRelays)
            .map(|(t, _)| *t)
            .collect();
        assert_eq!(share_times, vec![secs(120), secs(240)]);
        assert_eq!(c.status(), FriendConnStatus::Connected);
        assert_eq!(c.stats().alives_received, 30);
    }

    #[test]
    fn a_friend_alive_soon_after_ours_moves_our_next_one_to_its_phase() {
        let alive_times = |c: &mut FriendConnection, friend: &[Timestamp], to| {
            run(c, secs(0), to, friend)
                .into_iter()
                .filter(|(_, a)| *a == FriendAction::SendAlive)
                .map(|(t, _)| t)
                .collect::<Vec<_>>()
        };
        // The friend's timer runs 2 s after ours: ours follows it from then on.
        let mut c = connected_at(secs(0));
        let friend: Vec<_> = (0..10).map(|i| secs(2 + 8 * i)).collect();
        let ours = alive_times(&mut c, &friend, secs(60));
        assert_eq!(ours, [10, 18, 26, 34, 42, 50, 58].map(secs));
        // A friend that sends every 3 s cannot hold ours off: at most 1.5 intervals apart.
        let mut c = connected_at(secs(0));
        let friend: Vec<_> = (1..40).map(|i| secs(3 * i)).collect();
        let ours = alive_times(&mut c, &friend, secs(100));
        assert!(ours
            .windows(2)
            .all(|w| w[1] - w[0] <= std::time::Duration::from_secs(12)));
        assert!(ours.len() >= 100 / 12);
    }

    #[test]
    fn no_alive_for_32_s_kills_and_reconnects() {
        let mut c = connected_at(secs(0));
        let log = run(&mut c, secs(0), ms(31_999), &[]);
        assert!(log.iter().all(|(_, a)| *a == FriendAction::SendAlive));
        assert_eq!(c.poll_timeout(), Some(secs(32)));
        c.handle_timeout(secs(32));
        assert_eq!(
            drain(&mut c),
            vec![
                FriendAction::Kill {
                    reason: KillReason::Timeout
                },
                FriendAction::StatusChanged { connected: false },
                FriendAction::Connect {
                    dht_pk: DHT,
                    addr: Some(addr())
                },
            ]
        );
        assert_eq!(c.status(), FriendConnStatus::Connecting);
        assert_eq!(c.stats().timeouts, 1);
        // The new session comes up and runs as the first did.
        c.on_established(secs(33));
        assert_eq!(
            drain(&mut c)[0],
            FriendAction::StatusChanged { connected: true }
        );
        assert_eq!(
            c.poll_timeout(),
            Some(secs(41)),
            "ALIVE went last at 24 s, so at once"
        );
        assert_eq!(c.stats().established, 2);
    }

    #[test]
    fn only_alive_refreshes_the_timeout() {
        let mut c = connected_at(secs(0));
        c.handle_timeout(secs(20));
        assert_eq!(
            c.on_packet(secs(20), 64, b"message"),
            Ok(Received::ForMessenger)
        );
        let mut relays = Vec::new();
        relay(9).encode(&mut relays);
        assert_eq!(
            c.on_packet(secs(25), PACKET_ID_SHARE_RELAYS, &relays),
            Ok(Received::Relays(1))
        );
        drain(&mut c);
        c.handle_timeout(secs(32));
        assert!(drain(&mut c).contains(&FriendAction::Kill {
            reason: KillReason::Timeout
        }));

        let mut c = connected_at(secs(0));
        c.handle_timeout(secs(20));
        assert_eq!(
            c.on_packet(secs(20), PACKET_ID_ALIVE, &[]),
            Ok(Received::Alive)
        );
        c.handle_timeout(secs(51));
        assert!(!drain(&mut c)
            .iter()
            .any(|a| matches!(a, FriendAction::Kill { .. })));
        assert_eq!(c.poll_timeout(), Some(secs(52)));
    }

    #[test]
    fn new_dht_key_while_connected_kills_and_reconnects_with_it() {
        let mut c = connected_at(secs(0));
        c.add_tcp_relay(relay(1));
        c.set_dht_pk(secs(10), DHT2);
        assert_eq!(
            drain(&mut c),
            vec![
                FriendAction::DhtPkChanged {
                    old: Some(DHT),
                    new: Some(DHT2)
                },
                FriendAction::Kill {
                    reason: KillReason::DhtPkChanged
                },
                FriendAction::StatusChanged { connected: false },
                FriendAction::Connect {
                    dht_pk: DHT2,
                    addr: None
                },
            ]
        );
        assert_eq!(c.dht_pk(), Some(DHT2));
        assert_eq!(
            c.direct_addr(),
            None,
            "addresses of the old key are dropped"
        );
        assert_eq!(c.tcp_relays().count(), 1, "relays are kept");
        // The same key again changes nothing but its age.
        c.set_dht_pk(secs(11), DHT2);
        assert_eq!(drain(&mut c), vec![]);
        assert_eq!(c.dht_pk_learned(), Some(secs(11)));
    }

    #[test]
    fn new_dht_key_while_connecting_restarts_the_attempt_at_once() {
        let mut c = FriendConnection::new(REAL);
        c.set_dht_pk(secs(0), DHT);
        drain(&mut c);
        c.set_dht_pk(ms(100), DHT2);
        assert_eq!(
            drain(&mut c),
            vec![
                FriendAction::DhtPkChanged {
                    old: Some(DHT),
                    new: Some(DHT2)
                },
                FriendAction::Kill {
                    reason: KillReason::DhtPkChanged
                },
                FriendAction::Connect {
                    dht_pk: DHT2,
                    addr: None
                },
            ]
        );
    }

    #[test]
    fn dht_key_and_address_are_forgotten_after_122_s_unless_connected() {
        let mut c = FriendConnection::new(REAL);
        c.set_dht_pk(secs(0), DHT);
        c.set_direct_addr(secs(0), addr());
        drain(&mut c);
        // The attempt fails; reconnects follow, at most one a second.
        c.on_closed(secs(5));
        assert_eq!(
            drain(&mut c),
            vec![FriendAction::Connect {
                dht_pk: DHT,
                addr: Some(addr())
            }]
        );
        c.on_closed(ms(5_500));
        assert_eq!(drain(&mut c), vec![]);
        assert_eq!(c.poll_timeout(), Some(secs(6)));
        c.handle_timeout(secs(6));
        assert_eq!(drain(&mut c).len(), 1);
        assert_eq!(c.poll_timeout(), Some(secs(122)));
        c.handle_timeout(secs(122));
        assert_eq!(
            drain(&mut c),
            vec![FriendAction::DhtPkChanged {
                old: Some(DHT),
                new: None
            }]
        );
        assert_eq!(c.dht_pk(), None);
        assert_eq!(c.direct_addr(), None);
        c.on_closed(secs(123));
        assert_eq!(drain(&mut c), vec![], "no key, no connect");
        assert_eq!(c.poll_timeout(), None);

        // Connected, nothing expires; going offline restarts the clocks.
        let mut c = connected_at(secs(0));
        let alives: Vec<_> = (1..=25).map(|i| secs(8 * i)).collect();
        run(&mut c, secs(0), secs(200), &alives);
        assert_eq!(c.dht_pk(), Some(DHT));
        c.on_closed(secs(200));
        assert_eq!(
            drain(&mut c),
            vec![
                FriendAction::StatusChanged { connected: false },
                FriendAction::Connect {
                    dht_pk: DHT,
                    addr: Some(addr())
                },
            ]
        );
        assert_eq!(c.dht_pk_learned(), Some(secs(200)));
        c.on_closed(secs(321));
        c.handle_timeout(secs(321));
        assert_eq!(c.dht_pk(), Some(DHT));
        c.handle_timeout(secs(322));
        assert_eq!(c.dht_pk(), None);
    }

    #[test]
    fn incoming_session_is_accepted_only_without_one_of_ours() {
        let mut c = FriendConnection::new(REAL);
        assert!(c.on_incoming(secs(1), DHT, Some(addr())));
        assert_eq!(
            drain(&mut c),
            vec![FriendAction::DhtPkChanged {
                old: None,
                new: Some(DHT)
            }]
        );
        assert_eq!(c.direct_addr(), Some(addr()));
        assert!(!c.on_incoming(secs(1), DHT2, None));
        c.on_established(secs(2));
        assert!(!c.on_incoming(secs(3), DHT, None));
        assert_eq!(c.status(), FriendConnStatus::Connected);
    }

    #[test]
    fn direct_address_updates_reach_the_session_once() {
        let mut c = connected_at(secs(0));
        c.set_direct_addr(secs(1), addr());
        assert_eq!(drain(&mut c), vec![]);
        let new: SocketAddr = "[2001:db8::5]:40000".parse().unwrap();
        c.set_direct_addr(secs(2), new);
        assert_eq!(drain(&mut c), vec![FriendAction::SetDirectAddr(new)]);
        assert_eq!(c.direct_addrs().count(), 2);
        assert_eq!(c.direct_addr(), Some(new));
        // An IPv4-mapped address is stored as IPv4.
        c.set_direct_addr(secs(3), "[::ffff:198.51.100.7]:33445".parse().unwrap());
        assert_eq!(drain(&mut c), vec![FriendAction::SetDirectAddr(addr())]);
    }

    #[test]
    fn relays_ring_holds_24_newest_without_duplicates() {
        let mut c = FriendConnection::new(REAL);
        for i in 1..=30 {
            c.add_tcp_relay(relay(i));
        }
        let keys: Vec<u8> = c.tcp_relays().map(|n| n.pk.0[0]).collect();
        assert_eq!(keys, (7..=30).rev().collect::<Vec<_>>());
        c.add_tcp_relay(relay(10));
        assert_eq!(c.tcp_relays().count(), 24);
        assert_eq!(c.tcp_relays().next(), Some(&relay(10)));
    }

    #[test]
    fn share_relays_now_resends_at_the_next_timeout() {
        let mut c = connected_at(secs(0));
        c.share_relays_now();
        c.handle_timeout(secs(1));
        assert_eq!(drain(&mut c), vec![FriendAction::SendShareRelays]);
    }

    #[test]
    fn bad_packets_are_typed_and_counted() {
        let mut c = connected_at(secs(0));
        assert!(matches!(
            c.on_packet(secs(1), PACKET_ID_SHARE_RELAYS, &[3]),
            Err(PacketError::BadRelays(_))
        ));
        assert!(matches!(
            c.on_packet(secs(1), 18, &[1]),
            Err(PacketError::FriendRequest(_))
        ));
        assert_eq!(c.stats().bad_packets, 2);
    }

    #[test]
    fn action_queue_is_bounded() {
        let mut c = FriendConnection::new(REAL);
        for i in 0..100u8 {
            c.set_dht_pk(secs(u64::from(i)), PublicKey([i; 32]));
        }
        assert_eq!(drain(&mut c).len(), MAX_QUEUED_ACTIONS);
        assert!(c.stats().dropped_actions > 0);
    }
}
