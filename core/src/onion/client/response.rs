//! Announce responses 0x84, for our list and for searches (docs/protocol.md §6.3; c-toxcore
//! 0.2.18 `onion_client.c` `handle_announce_response`, `client_ping_nodes`).
//!
//! The clear 8-byte sendback finds the request ([`super::sendback`]); its shared key opens
//! the response; the path it went on is marked alive; the answering node enters or updates
//! its list; the nodes it names that are closer than the list's farthest are asked at once
//! (as 0.2.18 does, within the per-node ceiling). Ours, beyond 0.2.18: a fresh ping id from
//! a node of our list is sent back at once, and a node that knows a friend's data key
//! triggers the DHT-PK at once when it is due.

use std::net::SocketAddr;

use rustox_net_crypto::crypto::CryptoRng;
use rustox_net_crypto::Timestamp;

use super::nodes::{NodeAnswer, NodeList};
use super::sendback::ListId;
use super::{OnionClient, OnionClientDrop, OnionEvent};
use crate::dht::lan::is_lan;
use crate::dht::wire::packed_node::PackedNode;
use crate::onion::wire::announce::{AnnounceError, AnnounceResponseEnvelope, AnnounceStatus};

impl OnionClient {
    pub(super) fn handle_announce_response(
        &mut self,
        now: Timestamp,
        from: SocketAddr,
        bytes: &[u8],
        rng: &mut dyn CryptoRng,
    ) -> Result<(), OnionClientDrop> {
        let env = AnnounceResponseEnvelope::parse(bytes).map_err(|e| match e {
            AnnounceError::UnknownKind(_) => OnionClientDrop::UnknownKind,
            _ => OnionClientDrop::BadLength,
        })?;
        let entry = self
            .sendbacks
            .get(now, &env.sendback)
            .ok_or(OnionClientDrop::UnknownSendback)?
            .clone();
        let response = env.open(&entry.key).map_err(|e| match e {
            AnnounceError::Decrypt => OnionClientDrop::Decrypt,
            _ => OnionClientDrop::BadContents,
        })?;
        self.sendbacks.remove(&env.sendback);
        let answer = match (entry.list, response.status) {
            (ListId::Announce, AnnounceStatus::Stored(p)) => NodeAnswer {
                is_stored: true,
                ping_id: Some(p),
                data_pk: None,
            },
            // Searching our own key finds our data key: we are stored there (0.2.18 keeps
            // is_stored 1 only if the key is our data key).
            (ListId::Announce, AnnounceStatus::Found(pk)) => NodeAnswer {
                is_stored: pk == self.data_keys.public,
                ping_id: None,
                data_pk: None,
            },
            (_, AnnounceStatus::NotStored(p)) => NodeAnswer {
                is_stored: false,
                ping_id: Some(p),
                data_pk: None,
            },
            (ListId::Friend(_), AnnounceStatus::Found(pk)) => NodeAnswer {
                is_stored: true,
                ping_id: None,
                data_pk: Some(pk),
            },
            (ListId::Friend(_), AnnounceStatus::Stored(_)) => {
                return Err(OnionClientDrop::BadContents)
            }
        };
        let set = match entry.list {
            ListId::Announce => &mut self.paths_self,
            ListId::Friend(_) => &mut self.paths_friends,
        };
        let relays = set.confirm(now, entry.path_num);
        let path_used = relays.map(|_| entry.path_num);
        for r in relays.into_iter().flatten() {
            self.path_nodes.answered(now, &r.pk, now);
            self.path_nodes.add(now, r);
        }
        self.path_nodes.answered(now, &entry.node_pk, now);
        self.path_nodes
            .add(now, PackedNode::udp(entry.node_addr, entry.node_pk));
        self.last_response = Some(now);
        self.stats.announce_responses += 1;

        // The node's answer, into the list it was asked for.
        let add = |list: &mut NodeList| {
            list.add(
                now,
                entry.node_pk,
                entry.node_addr,
                answer,
                path_used,
                entry.sent,
            )
        };
        match entry.list {
            ListId::Announce => {
                let added = add(&mut self.announce.list);
                // A fresh ping id: send it back at once on the same path (0.2.18 waits for
                // its next tick or two).
                if let (Some(i), Some(p)) = (added, answer.ping_id) {
                    if !answer.is_stored && p != entry.ping_id {
                        let n = self.announce.list.nodes[i].clone();
                        if self.announce.guard.allow_follow_up(now, &n.pk) {
                            let sent = self.send_announce_request(
                                now,
                                ListId::Announce,
                                (n.pk, n.addr),
                                p,
                                n.path_used,
                                rng,
                            );
                            if sent.is_some() {
                                let node = &mut self.announce.list.nodes[i];
                                node.last_pinged = Some(now);
                                node.pings_since_response = 1;
                                self.stats.follow_ups += 1;
                            }
                        } else {
                            self.stats.rate_limited += 1;
                        }
                    }
                }
            }
            ListId::Friend(pk) => {
                let Some(f) = self.friends.get_mut(&pk) else {
                    return Err(OnionClientDrop::UnknownFriend);
                };
                add(&mut f.list);
                if answer.is_stored && !f.online {
                    // The Node sends a waiting friend request now rather than on its next
                    // retry.
                    self.push_event(OnionEvent::FriendReachable { friend: pk });
                    let Some(f) = self.friends.get(&pk) else {
                        return Err(OnionClientDrop::UnknownFriend);
                    };
                    let due = f
                        .last_dht_pk_sent
                        .is_none_or(|t| t + f.dht_pk_interval() <= now);
                    if due {
                        self.send_dht_pk(now, &pk, rng);
                    }
                }
            }
        }
        self.ping_nodes(now, entry.list, from, &response.nodes, rng);
        Ok(())
    }

    /// `client_ping_nodes`: asks the nodes of a response that would get a place in the
    /// list. LAN addresses only if the response came from a LAN address.
    fn ping_nodes(
        &mut self,
        now: Timestamp,
        list: ListId,
        source: SocketAddr,
        nodes: &[PackedNode],
        rng: &mut dyn CryptoRng,
    ) {
        let lan_ok = is_lan(source.ip());
        for node in nodes {
            if node.tcp || node.addr.port() == 0 || (!lan_ok && is_lan(node.addr.ip())) {
                continue;
            }
            let (node_list, guard) = match list {
                ListId::Announce => (&self.announce.list, &mut self.announce.guard),
                ListId::Friend(pk) => match self.friends.get_mut(&pk) {
                    Some(f) => (&f.list, &mut f.guard),
                    None => return,
                },
            };
            if node_list.wants(&node.pk) && guard.allow(now, &node.pk) {
                self.send_announce_request(now, list, (node.pk, node.addr), [0; 32], None, rng);
            }
        }
    }
}
