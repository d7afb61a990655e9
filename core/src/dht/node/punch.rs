//! NAT hole punching towards friends (docs/protocol.md §5.6): NAT pings routed through a
//! friend's close nodes, and pings to the ports its NAT is guessed to open (`do_NAT`).

use std::net::SocketAddr;

use rustox_net_crypto::crypto::{CryptoRng, PublicKey};
use rustox_net_crypto::Timestamp;

use super::DhtNode;
use crate::dht::nat::{common_ip, ports_for, punch_ports};
use crate::dht::timers::*;
use crate::dht::wire::crypto_request::{NatPing, CRYPTO_PACKET_NAT_PING};

impl DhtNode {
    pub(super) fn handle_nat_ping(
        &mut self,
        now: Timestamp,
        sender: PublicKey,
        data: &[u8],
        rng: &mut dyn CryptoRng,
    ) {
        let Ok(ping) = NatPing::decode(data) else {
            return;
        };
        let Some(i) = self.searches.iter().position(|s| s.pk == sender && !s.fake) else {
            return;
        };
        self.stats.nat_pings_received += 1;
        if !ping.response {
            let reply = NatPing {
                response: true,
                id: ping.id,
            };
            self.route_to_friend(now, i, CRYPTO_PACKET_NAT_PING, &reply.encode(), true);
            self.searches[i].nat.nat_ping_received = Some(now);
        } else if ping.id == self.searches[i].nat.nat_ping_id {
            self.searches[i].nat.nat_ping_id = rng.next_u64();
            self.searches[i].nat.hole_punching = true;
        }
    }

    /// Addresses the friend's close nodes report for it; empty if we reach it directly
    /// (`friend_iplist`).
    pub(super) fn friend_ips(&self, now: Timestamp, i: usize) -> Vec<SocketAddr> {
        let s = &self.searches[i];
        if s.clients.iter().any(|c| c.pk == s.pk && c.is_good(now)) {
            return Vec::new();
        }
        s.clients
            .iter()
            .flat_map(|c| c.assocs())
            .filter(|a| a.is_good(now))
            .filter_map(|a| {
                a.returned
                    .filter(|(_, t)| now < *t + BAD_NODE_TIMEOUT)
                    .map(|(addr, _)| addr)
            })
            .collect()
    }

    pub(super) fn do_nat(&mut self, now: Timestamp, rng: &mut dyn CryptoRng) {
        if !self.config.hole_punching {
            return;
        }
        for i in 0..self.searches.len() {
            if self.searches[i].fake || self.searches[i].dormant {
                continue;
            }
            let ips = self.friend_ips(now, i);
            if ips.len() < MAX_FRIEND_CLIENTS / 2 {
                continue;
            }
            let nat = &self.searches[i].nat;
            if nat.nat_ping_sent.is_none_or(|t| t + PUNCH_INTERVAL < now) {
                let ping = NatPing {
                    response: false,
                    id: nat.nat_ping_id,
                };
                self.route_to_friend(now, i, CRYPTO_PACKET_NAT_PING, &ping.encode(), false);
                self.searches[i].nat.nat_ping_sent = Some(now);
            }
            let nat = &self.searches[i].nat;
            let punch_due = nat.hole_punching
                && nat.punching_at.is_none_or(|t| t + PUNCH_INTERVAL < now)
                && nat
                    .nat_ping_received
                    .is_some_and(|t| t + PUNCH_INTERVAL * 2 >= now);
            if !punch_due {
                continue;
            }
            let Some(ip) = common_ip(&ips, MAX_FRIEND_CLIENTS / 2) else {
                continue;
            };
            let friend = self.searches[i].pk;
            let nat = &mut self.searches[i].nat;
            if nat.punching_at.is_some_and(|t| t + PUNCH_RESET_TIME < now) {
                nat.reset_guessing();
            }
            let ports = punch_ports(nat, &ports_for(&ips, ip));
            nat.punching_at = Some(now);
            nat.hole_punching = false;
            for port in ports {
                self.send_ping(now, SocketAddr::new(ip, port), friend, rng);
            }
        }
    }
}
