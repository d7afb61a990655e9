//! The two ways a session's datagrams travel (docs/protocol.md §2.9, c-toxcore 0.2.18
//! `send_packet_to`): direct UDP to the peer's address, or through TCP relays that the
//! peer and we both use (§7), where the relay names the peer by its DHT key.
//!
//! Which one carries data:
//! * UDP while an authentic packet came from the peer's address within
//!   [`UDP_DIRECT_TIMEOUT`] (c-toxcore's "direct connected");
//! * otherwise the relays, when the node says the peer is reachable through one;
//! * otherwise UDP to the last known address (nothing better: a session set up before the
//!   peer's first reply, or a node without relays).
//!
//! While data goes through relays and the peer's UDP address is known, a small datagram
//! (< [`UDP_PROBE_MAX_SIZE`]) also goes over UDP at most every [`UDP_PROBE_INTERVAL`], so the
//! session moves back to UDP as soon as hole punching lets a packet through. Cookie
//! requests and handshakes go both ways.
//!
//! A change of the carrying path is reported to the caller, which tells the transport
//! ([`crate::transport::Transport::on_path_change`]): RTT, bandwidth and congestion state
//! belong to a path, packet numbers and arrays to the session.

use std::net::SocketAddr;
use std::time::Duration;

use crate::crypto::PublicKey;
use crate::Timestamp;

/// `UDP_DIRECT_TIMEOUT` (net_crypto.h): UDP counts as working while a packet from the peer
/// arrived within this time.
pub const UDP_DIRECT_TIMEOUT: Duration = Duration::from_secs(8);

/// `UDP_DIRECT_TIMEOUT / 2` (net_crypto.c `send_packet_to`): how often a small datagram is
/// also tried over UDP while the relays carry the session.
pub const UDP_PROBE_INTERVAL: Duration = Duration::from_secs(4);

/// `send_packet_to` tries UDP beside the relays only for datagrams shorter than this
/// (96 bytes: requests, ALIVEs and short messages, never file data).
pub const UDP_PROBE_MAX_SIZE: usize = 96;

/// Where one datagram goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Destination {
    /// Direct UDP to this address.
    Udp(SocketAddr),
    /// Through a TCP relay to the peer with this DHT key (the node's relay client picks the
    /// relay: a route if one is up, otherwise out-of-band through every relay the peer uses).
    Relay(PublicKey),
}

impl Destination {
    /// The UDP address, for a datagram that goes over UDP.
    pub fn udp(&self) -> Option<SocketAddr> {
        match self {
            Destination::Udp(addr) => Some(*addr),
            Destination::Relay(_) => None,
        }
    }
}

/// Which way a session's data travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathKind {
    /// Direct UDP.
    Udp,
    /// TCP relays.
    Relay,
}

/// The paths of one session and the choice between them. See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Paths {
    /// The peer's UDP address, if known.
    udp: Option<SocketAddr>,
    /// When an authentic datagram last came over UDP from `udp`.
    udp_heard: Option<Timestamp>,
    /// The node can reach the peer through a relay.
    relay: bool,
    /// The path data went on last (`None` before the first data packet).
    active: Option<PathKind>,
    /// When a small datagram last went over UDP beside the relays.
    last_probe: Option<Timestamp>,
}

impl Paths {
    pub(crate) fn new(udp: Option<SocketAddr>, relay: bool) -> Self {
        Paths {
            udp,
            udp_heard: None,
            relay,
            active: None,
            last_probe: None,
        }
    }

    pub(crate) fn udp(&self) -> Option<SocketAddr> {
        self.udp
    }

    pub(crate) fn relay(&self) -> bool {
        self.relay
    }

    /// A new UDP address. The old one's freshness does not carry over.
    pub(crate) fn set_udp(&mut self, addr: SocketAddr) {
        if self.udp != Some(addr) {
            self.udp = Some(addr);
            self.udp_heard = None;
        }
    }

    pub(crate) fn set_relay(&mut self, available: bool) {
        self.relay = available;
    }

    /// An authentic datagram arrived over UDP.
    pub(crate) fn on_udp_heard(&mut self, now: Timestamp) {
        self.udp_heard = Some(now);
    }

    /// UDP is working: a packet arrived within [`UDP_DIRECT_TIMEOUT`].
    pub(crate) fn udp_fresh(&self, now: Timestamp) -> bool {
        self.udp_heard
            .is_some_and(|t| now.saturating_duration_since(t) < UDP_DIRECT_TIMEOUT)
    }

    /// The path for data now, without changing anything.
    pub(crate) fn preferred(&self, now: Timestamp) -> Option<PathKind> {
        if self.udp.is_some() && self.udp_fresh(now) {
            Some(PathKind::Udp)
        } else if self.relay {
            Some(PathKind::Relay)
        } else if self.udp.is_some() {
            Some(PathKind::Udp)
        } else {
            None
        }
    }

    /// Chooses the path for a data datagram now; returns it and whether it differs from the
    /// path data used before (a path change the transport must hear of).
    pub(crate) fn choose(&mut self, now: Timestamp) -> Option<(PathKind, bool)> {
        let path = self.preferred(now)?;
        let changed = self.active.is_some_and(|a| a != path);
        self.active = Some(path);
        Some((path, changed))
    }

    /// The destination of a path for the peer with this DHT key.
    pub(crate) fn destination(
        &self,
        path: PathKind,
        peer_dht_pk: PublicKey,
    ) -> Option<Destination> {
        match path {
            PathKind::Udp => self.udp.map(Destination::Udp),
            PathKind::Relay => self.relay.then_some(Destination::Relay(peer_dht_pk)),
        }
    }

    /// Every destination a handshake-phase datagram goes to (both ways, §2.9).
    pub(crate) fn all(&self, peer_dht_pk: PublicKey) -> impl Iterator<Item = Destination> {
        let udp = self.udp.map(Destination::Udp);
        let relay = self.relay.then_some(Destination::Relay(peer_dht_pk));
        udp.into_iter().chain(relay)
    }

    /// True if a datagram of `len` bytes that goes through the relays should also be tried
    /// over UDP now (and records the try).
    pub(crate) fn take_probe(&mut self, now: Timestamp, len: usize) -> Option<SocketAddr> {
        let addr = self.udp?;
        if len >= UDP_PROBE_MAX_SIZE || self.udp_fresh(now) {
            return None;
        }
        if self
            .last_probe
            .is_some_and(|t| now.saturating_duration_since(t) < UDP_PROBE_INTERVAL)
        {
            return None;
        }
        self.last_probe = Some(now);
        Some(addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr() -> SocketAddr {
        "192.0.2.1:33445".parse().unwrap()
    }

    fn at(ms: u64) -> Timestamp {
        Timestamp::from_micros(ms * 1000)
    }

    #[test]
    fn udp_preferred_only_while_heard_within_the_timeout() {
        let mut p = Paths::new(Some(addr()), true);
        // Never heard over UDP: the relay carries data.
        assert_eq!(p.choose(at(0)), Some((PathKind::Relay, false)));
        p.on_udp_heard(at(1000));
        assert_eq!(p.choose(at(1000)), Some((PathKind::Udp, true)));
        assert_eq!(p.choose(at(8999)), Some((PathKind::Udp, false)));
        assert_eq!(p.choose(at(9000)), Some((PathKind::Relay, true)));
    }

    #[test]
    fn without_a_relay_udp_is_used_blind() {
        let mut p = Paths::new(Some(addr()), false);
        assert_eq!(p.choose(at(0)), Some((PathKind::Udp, false)));
        let mut none = Paths::new(None, false);
        assert_eq!(none.choose(at(0)), None);
    }

    #[test]
    fn small_datagrams_probe_udp_every_four_seconds_while_on_the_relay() {
        let mut p = Paths::new(Some(addr()), true);
        assert_eq!(p.take_probe(at(0), 40), Some(addr()));
        assert_eq!(p.take_probe(at(3999), 40), None);
        assert_eq!(p.take_probe(at(4000), UDP_PROBE_MAX_SIZE), None);
        assert_eq!(p.take_probe(at(4000), 95), Some(addr()));
        p.on_udp_heard(at(5000));
        assert_eq!(p.take_probe(at(9000), 40), None, "UDP works: no probe");
    }

    #[test]
    fn a_new_udp_address_starts_unheard() {
        let mut p = Paths::new(Some(addr()), true);
        p.on_udp_heard(at(0));
        assert!(p.udp_fresh(at(1)));
        p.set_udp("192.0.2.2:1".parse().unwrap());
        assert!(!p.udp_fresh(at(1)));
        let pk = PublicKey([7; 32]);
        assert_eq!(p.all(pk).count(), 2);
    }
}
