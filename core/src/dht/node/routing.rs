//! Routing 0x20 requests: to a node of our close list that a packet names, and to a friend
//! through its close nodes that report its address (`route_to_friend`, docs/protocol.md §5.5).

use std::net::SocketAddr;

use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::Timestamp;

use super::DhtNode;
use crate::dht::gate::{OutPacket, Outgoing};
use crate::dht::timers::*;

impl DhtNode {
    pub(super) fn route(&mut self, now: Timestamp, receiver: PublicKey, packet: Vec<u8>) {
        let dst = self.close.get(&receiver).and_then(|e| {
            e.v6.iter()
                .chain(e.v4.iter())
                .find(|a| !a.is_dead(now))
                .map(|a| a.addr)
        });
        match dst {
            Some(dst) => {
                self.stats.routed += 1;
                self.push_out(Outgoing {
                    dst,
                    packet: OutPacket::Raw(packet),
                    reply: false,
                });
            }
            None => self.stats.unroutable += 1,
        }
    }

    /// Sends a 0x20 request for the friend with DHT key `friend_dht_pk` through its close
    /// nodes that report its address, which route it on (`route_to_friend`, docs/protocol.md
    /// §5.5): how a DHT-PK announcement (request id 156) reaches a friend we know by DHT key
    /// but hold no address for. Needs at least `MAX_FRIEND_CLIENTS / 4` such nodes, as
    /// 0.2.18 does; returns how many copies went out (0: the friend is not searched for,
    /// or too few of its nodes know where it is).
    pub fn route_request_to_friend(
        &mut self,
        now: Timestamp,
        friend_dht_pk: &PublicKey,
        request_id: u8,
        data: &[u8],
    ) -> usize {
        let Some(i) = self
            .searches
            .iter()
            .position(|s| s.pk == *friend_dht_pk && !s.fake)
        else {
            return 0;
        };
        self.route_to_friend(now, i, request_id, data, false)
    }

    /// Sends a request through the friend's close nodes that know its address
    /// (`route_to_friend` / `route_one_to_friend`); at least 2 such nodes are required.
    pub(super) fn route_to_friend(
        &mut self,
        now: Timestamp,
        i: usize,
        request_id: u8,
        data: &[u8],
        only_one: bool,
    ) -> usize {
        let s = &self.searches[i];
        let routes: Vec<SocketAddr> = s
            .clients
            .iter()
            .flat_map(|c| c.assocs())
            .filter(|a| {
                a.is_good(now) && a.returned.is_some_and(|(_, t)| now < t + BAD_NODE_TIMEOUT)
            })
            .map(|a| a.addr)
            .collect();
        if routes.len() < MAX_FRIEND_CLIENTS / 4 {
            return 0;
        }
        let to = s.pk;
        let n = if only_one { 1 } else { routes.len() };
        for dst in routes.iter().take(n) {
            self.push_out(Outgoing {
                dst: *dst,
                packet: OutPacket::Request {
                    to,
                    request_id,
                    data: data.to_vec(),
                },
                reply: false,
            });
        }
        n.min(routes.len())
    }
}
