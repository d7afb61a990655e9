//! Wiring a relayed path into a simulator: two nodes whose UDP to each other is blocked,
//! each joined to the relay host by a leg ([`super::legs`]) in each direction.

use rustox_net_crypto::Timestamp;
use rustox_simulator::{LinkConfig, LinkId, NodeId, Profile, SimNode, Simulator};

use super::legs::leg_config;

/// The links of a relayed path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RelayedPath {
    /// The relay host.
    pub relay: NodeId,
    /// a → relay, relay → a.
    pub leg_a: (LinkId, LinkId),
    /// relay → b, b → relay.
    pub leg_b: (LinkId, LinkId),
    /// The blocked direct links, a → b and b → a.
    pub direct: (LinkId, LinkId),
}

impl RelayedPath {
    /// The two links data from a to b crosses, in order.
    pub fn forward(&self) -> [LinkId; 2] {
        [self.leg_a.0, self.leg_b.0]
    }

    /// The two links from b back to a, in order.
    pub fn reverse(&self) -> [LinkId; 2] {
        [self.leg_b.1, self.leg_a.1]
    }
}

/// A link that drops everything: UDP between the two nodes is blocked (a firewall, a NAT
/// that hole punching cannot open), so their session can only go through the relay.
pub fn blocked() -> LinkConfig {
    LinkConfig {
        outages: vec![(Timestamp::ZERO, Timestamp::MAX)],
        ..LinkConfig::default()
    }
}

/// Routes `a` and `b` through `relay` on `profile`'s legs and blocks UDP between them.
pub fn through_relay<N: SimNode>(
    sim: &mut Simulator<N>,
    profile: &Profile,
    a: NodeId,
    b: NodeId,
    relay: NodeId,
) -> RelayedPath {
    let leg = leg_config(profile);
    let leg_a = sim.connect(a, relay, leg.clone(), leg.clone());
    let (to_b, from_b) = sim.connect(relay, b, leg.clone(), leg);
    let direct = sim.connect(a, b, blocked(), blocked());
    RelayedPath {
        relay,
        leg_a,
        leg_b: (to_b, from_b),
        direct,
    }
}
