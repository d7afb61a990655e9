//! The node's onion client at work (docs/protocol.md §6): what it is fed, and what its findings
//! do to the friend list.
//!
//! * Fed: the bootstrap nodes, the nodes the DHT holds (its path nodes), the nodes our DHT-PK
//!   packets name, which friends exist and which are online.
//! * Findings: a friend's DHT key from a DHT-PK packet (onion data 0x9c, or the DHT route
//!   0x20 id 156 that the node opens here) goes to the friend's friend_connection, and the
//!   nodes it names are asked for the friend (`handle_dhtpk_announce`, `dht_getnodes`); a
//!   friend request that came as onion data goes through the request filter.
//! * The DHT route is ours to send: every `DHT_DHTPK_SEND_INTERVAL` to each friend not yet
//!   online whose DHT key we know, at once when we learn it (§6.4).

use std::time::Duration;

use rustox_net_crypto::crypto::{Nonce, PrecomputedKey, PublicKey};
use rustox_net_crypto::Timestamp;

use super::friends::FriendNumber;
use super::Node;
use crate::dht::wire::crypto_request::CRYPTO_PACKET_DHTPK;
use crate::dht::wire::packed_node::PackedNode;
use crate::friend::dht_pk::{seal_dht_route, DhtPkRoute, DHT_DHTPK_SEND_INTERVAL, MAX_DHTPK_NODES};
use crate::friend::FriendRequest;
use crate::onion::client::OnionEvent;

/// How often at most the onion client is given the DHT's nodes when nothing prompts it: the
/// DHT's lists change slowly (c-toxcore refreshes its path nodes once a second,
/// `populate_path_nodes`), and every answer the DHT accepts while the client has few path
/// nodes triggers a feed at once. The feed has no timer of its own: it rides on the node's
/// other wake-ups (the DHT's rounds come at least every 10 s), so it never wakes an idle
/// node by itself.
const FEED_INTERVAL: Duration = Duration::from_secs(5);
/// Path nodes that count as enough to stop feeding on every DHT answer: the 6 + 6 paths
/// of 3 relays each can then be drawn mostly distinct.
const FEED_ENOUGH_NODES: usize = 16;
/// How soon the DHT route is tried again when no node could route it: the DHT is still
/// finding the friend's close nodes, which takes a few round trips.
const DHT_ROUTE_RETRY: Duration = Duration::from_secs(1);

impl Node {
    /// Gives the onion client the DHT's nodes as path nodes and the nodes our DHT-PK
    /// packets carry, when due.
    pub(super) fn feed_onion(&mut self, now: Timestamp) {
        // Also at once whenever the DHT accepted an answer since the last feed: a node that
        // just answered is the path node the client may be waiting for.
        let answers = self.dht.stats().responses_accepted;
        let dht_news = answers != self.onion_fed_answers;
        if now < self.next_onion_feed
            && !(dht_news && self.onion_client.stats().path_nodes < FEED_ENOUGH_NODES)
        {
            return;
        }
        self.onion_fed_answers = answers;
        let heard = self.dht.close_nodes_heard(now);
        for (node, at) in &heard {
            self.onion_client.path_node_heard(now, &node.pk, *at);
            self.onion_client.add_path_node(now, *node);
        }
        let close: Vec<PackedNode> = heard.into_iter().map(|(n, _)| n).collect();
        // c-toxcore carries up to 2 TCP relays it is connected to, then its closest good
        // DHT nodes (`closelist_nodes`), at most 4 in all.
        let mut carried = self.advertised_relays(super::relays::MAX_DHTPK_RELAYS);
        let mut closest: Vec<PackedNode> = close.clone();
        let own = self.dht.public_key();
        closest.sort_by(|a, b| crate::dht::distance::cmp_distance(&own, &a.pk, &b.pk));
        carried.extend(closest);
        carried.truncate(MAX_DHTPK_NODES);
        self.onion_client.set_dht_pk_nodes(carried);
        self.offer_relays_to_onion(now);
        self.next_onion_feed = now + FEED_INTERVAL;
    }

    /// Acts on what the onion client found.
    pub(super) fn drain_onion(&mut self, now: Timestamp) {
        while let Some(event) = self.onion_client.poll_event() {
            match event {
                OnionEvent::Connected(connected) => {
                    if connected != self.onion_connected {
                        self.onion_connected = connected;
                        self.push_event(super::NodeEvent::SelfConnection { connected });
                    }
                }
                OnionEvent::FriendDhtPk {
                    friend,
                    dht_pk,
                    nodes,
                } => self.on_friend_dht_pk(now, &friend, dht_pk, &nodes),
                OnionEvent::FriendReachable { friend } => {
                    if let Some(number) = self.friends.by_pk(&friend) {
                        self.send_friend_request(now, number);
                    }
                }
                OnionEvent::FriendRequest { from, payload } => {
                    self.stats.onion_requests += 1;
                    if let Ok(request) = FriendRequest::decode_body(&payload) {
                        self.on_friend_request(now, Some(from), request);
                    }
                }
            }
        }
    }

    /// A friend's DHT key, from either route: friend_connection learns it, and each node the
    /// packet names is asked for the nodes closest to that key, where the DHT finds the
    /// friend's address.
    fn on_friend_dht_pk(
        &mut self,
        now: Timestamp,
        friend: &PublicKey,
        dht_pk: PublicKey,
        nodes: &[PackedNode],
    ) {
        // Friends and hidden links alike: both are onion friends (`new_friend_connection`).
        let Some(number) = self.friends.link_by_pk(friend) else {
            return;
        };
        self.stats.dht_pks_received += 1;
        if let Some(f) = self.friends.link_mut(number) {
            f.conn.set_dht_pk(now, dht_pk);
            if f.conn.dht_pk_learned() == Some(now) {
                // A new key: tell the friend ours through the DHT as soon as a route exists.
                f.dht_route_due = Some(now);
            }
            for node in nodes {
                if node.tcp {
                    f.conn.add_tcp_relay(*node);
                }
            }
        }
        for node in nodes.iter().filter(|n| !n.tcp) {
            self.dht
                .get_nodes(now, node.addr, node.pk, dht_pk, self.rng.as_mut());
        }
        // The friend's relays: it is (or will be) registered there under this DHT key.
        let relays: Vec<PackedNode> = nodes.iter().filter(|n| n.tcp).copied().collect();
        if !relays.is_empty() && self.attach_friend_relays(now, dht_pk, &relays) {
            self.dial_waiting_friend(now, number);
        }
        self.drive_friend(now, number);
    }

    /// A 0x20 request with id 156 from `sender` (a DHT key): a friend's DHT-PK packet
    /// routed through the DHT. Opened with our real key, and taken only if the DHT key inside
    /// is the one that sent it and the friend's `no_replay` grew.
    pub(super) fn on_dht_route_pk(&mut self, now: Timestamp, sender: PublicKey, data: &[u8]) {
        let Ok(route) = DhtPkRoute::parse(data) else {
            self.stats.bad_dht_pks += 1;
            return;
        };
        // Only friends: a stranger costs one lookup, not a key agreement.
        if self.friends.link_by_pk(&route.sender_real_pk).is_none() {
            self.stats.bad_dht_pks += 1;
            return;
        }
        // The key agreed when the friend was added: a flood of DHT-route packets naming a
        // friend costs no key agreement each. A friend the onion client refused
        // (a key of low order) has none, and is refused like a bad box.
        let Some(key) = self.onion_client.friend_shared_key(&route.sender_real_pk) else {
            self.stats.bad_dht_pks += 1;
            return;
        };
        let Ok(announce) = route.open(key, &sender) else {
            self.stats.bad_dht_pks += 1;
            return;
        };
        if !self
            .onion_client
            .accept_dht_route_pk(&route.sender_real_pk, &announce)
        {
            self.stats.bad_dht_pks += 1;
            return;
        }
        self.on_friend_dht_pk(now, &route.sender_real_pk, announce.dht_pk, &announce.nodes);
    }

    /// Sends our DHT-PK packet through the DHT to friend `number` when due: it must not be
    /// online, and we must know its DHT key (the route leads to that key's close nodes).
    pub(super) fn send_dht_route_pk(&mut self, now: Timestamp, number: FriendNumber) {
        let Some(f) = self.friends.link(number) else {
            return;
        };
        if f.dht_route_deadline().is_none_or(|due| due > now) {
            return;
        }
        let Some(friend_dht_pk) = f.conn.dht_pk() else {
            return;
        };
        let friend_pk = f.pk;
        let announce = self.onion_client.dht_pk_announce(now);
        let key = PrecomputedKey::new(&friend_pk, &self.keys.secret);
        let nonce = Nonce::random(self.rng.as_mut());
        let sealed = key.map(|key| seal_dht_route(&self.keys.public, &key, &nonce, &announce));
        let sent = match sealed {
            Ok(Ok(data)) => {
                self.dht
                    .route_request_to_friend(now, &friend_dht_pk, CRYPTO_PACKET_DHTPK, &data)
            }
            // A friend key of low order (nothing can be sealed to it), or an announcement
            // that does not fit.
            Ok(Err(_)) | Err(_) => 0,
        };
        if sent > 0 {
            self.stats.dht_pks_routed += 1;
        }
        if let Some(f) = self.friends.link_mut(number) {
            f.dht_route_due = Some(
                now + if sent > 0 {
                    DHT_DHTPK_SEND_INTERVAL
                } else {
                    DHT_ROUTE_RETRY
                },
            );
        }
    }
}
