//! What one conference does with the packets that reach it (`handle_packet_online`,
//! `handle_packet_rejoin`, `handle_direct_packet`, `handle_send_peers`,
//! `handle_message_packet_group`, `handle_lossy` in `toxcore/group.c`).

use rustox_net_crypto::crypto::PublicKey;

use super::closest::DESIRED_CLOSEST;
use super::connections::{ConnState, REASON_INTRODUCER, REASON_INTRODUCING};
use super::group::{Group, Status};
use super::io::Io;
use super::peers::LossySeen;
use super::wire::{
    DirectPacket, LossyPacket, MessageBody, MessageHeader, OnlinePacket, PeerEntry, PEER_QUERY_ID,
};
use super::{ConferenceEvent, ConferenceNumber};
use crate::types::MessageKind;

impl Group {
    fn number_for_events(&self) -> ConferenceNumber {
        ConferenceNumber(u32::from(self.number))
    }

    /// Packet 97 from `pk`: the other side holds the connection too. The first online
    /// connection (or an introducer) is asked for the peer list; a peer we introduce is
    /// announced to the conference.
    pub fn handle_online(&mut self, io: &mut Io, pk: PublicKey, packet: &OnlinePacket) -> bool {
        let Some(i) = self.conns.find(&pk) else {
            return false;
        };
        let Some(c) = self.conns.get(i).copied() else {
            return false;
        };
        if c.state == ConnState::Online {
            return false;
        }
        if self.conns.count_online() == 0 || c.reasons & REASON_INTRODUCER != 0 {
            self.send_direct(io, pk, packet.group_number, PEER_QUERY_ID);
        }
        if let Some(slot) = self.conns.get_mut(i) {
            slot.group_number = packet.group_number;
            slot.state = ConnState::Online;
        }
        self.send_online(io, pk);
        if c.reasons & REASON_INTRODUCING != 0 {
            if let Some(p) = self.peer_by_pk(&pk).and_then(|p| self.peers.get(p)) {
                let body = MessageBody::NewPeer {
                    peer_number: p.peer_number,
                    real_pk: pk,
                    temp_pk: self.dht_of(io, &pk),
                };
                let _ = self.send_message(io, &body);
            }
            self.need_send_name = true;
        }
        self.ping(io);
        true
    }

    /// Packet 100 from `pk`: a peer we know (online or frozen) is back.
    pub fn handle_rejoin(&mut self, io: &mut Io, pk: PublicKey) -> bool {
        let Some(peer_number) = self.peer_number_of(&pk) else {
            return false;
        };
        let temp = self.dht_of(io, &pk);
        self.add_peer(io, pk, temp, peer_number, true, true);
        if self.add_conn(io, pk, REASON_INTRODUCING, None).is_some() {
            self.send_online(io, pk);
        }
        true
    }

    /// Packet 98 on connection `conn`.
    pub fn handle_direct(&mut self, io: &mut Io, conn: usize, packet: DirectPacket) {
        match packet {
            DirectPacket::Introduced => {
                self.remove_connection_reason(io, conn, REASON_INTRODUCING);
            }
            DirectPacket::Query => {
                let now = io.now;
                let Some(c) = self.conns.get_mut(conn) else {
                    return;
                };
                if c.state != ConnState::Online {
                    return;
                }
                if !c.take_query(now) {
                    io.drop_packet();
                    return;
                }
                let (pk, gn) = (c.pk, c.group_number);
                self.send_peers(io, pk, gn);
            }
            DirectPacket::Response { peers, bad_entry } => {
                self.handle_peer_response(io, &peers, bad_entry);
            }
            DirectPacket::Title(title) => {
                if !self.title_fresh {
                    self.set_title_from(io, None, &title);
                }
            }
        }
    }

    /// `handle_send_peers`: the entries of a peer list, in order, until one fails.
    fn handle_peer_response(
        &mut self,
        io: &mut Io,
        peers: &[PeerEntry],
        bad_entry: Option<(u16, PublicKey, PublicKey)>,
    ) {
        for e in peers {
            let Some(i) = self.take_peer_entry(io, e.peer_number, e.real_pk, e.temp_pk) else {
                return;
            };
            if self.peers.get(i).is_some_and(|p| !p.nick_updated) {
                self.set_nick(io, i, &e.name, true);
            }
        }
        if let Some((n, real, temp)) = bad_entry {
            self.take_peer_entry(io, n, real, temp);
        }
    }

    /// One entry's keys: the entry naming us while joining makes us connected
    /// (`tox_conference_connected_cb`), then the peer is added or updated (not fresh).
    fn take_peer_entry(
        &mut self,
        io: &mut Io,
        peer_number: u16,
        real_pk: PublicKey,
        temp_pk: PublicKey,
    ) -> Option<usize> {
        if self.status == Status::Valid && real_pk == io.self_pk {
            self.peer_number = peer_number;
            self.status = Status::Connected;
            io.event(ConferenceEvent::Connected {
                conference: self.number_for_events(),
            });
            self.need_send_name = true;
        }
        self.add_peer(io, real_pk, temp_pk, peer_number, false, true)
    }

    /// Packet 99 on connection `conn`; `data` is what follows the conference number. A
    /// message from an unknown peer makes us ask the relaying peer for its list; a new one
    /// is acted on and forwarded once to every other online connection (back to the sender
    /// too when it came straight from it, so a sender with one connection sees its own).
    pub fn handle_message(&mut self, io: &mut Io, conn: usize, data: &[u8]) {
        let Ok((header, body)) = MessageHeader::parse(data) else {
            io.drop_packet();
            return;
        };
        let Some(c) = self.conns.get(conn).copied() else {
            return;
        };
        let ignore_frozen = header.message_id == super::wire::MESSAGE_FREEZE_PEER_ID;
        let index = if ignore_frozen {
            self.peer_index(header.peer_number)
        } else {
            self.note_peer_active(io, header.peer_number)
        };
        let Some(index) = index else {
            if !ignore_frozen && c.state == ConnState::Online {
                self.send_direct(io, c.pk, c.group_number, PEER_QUERY_ID);
            }
            io.drop_packet();
            return;
        };
        let Some(sender_pk) = self.peers.get(index).map(|p| p.real_pk) else {
            return;
        };
        if self.conns.num_introducer > 0 && self.conns.count_online() > DESIRED_CLOSEST {
            // Heard through someone else: the introduction worked.
            for i in 0..self.conns.slots.len() {
                let Some(other) = self.conns.get(i).copied() else {
                    continue;
                };
                if other.state == ConnState::None
                    || other.reasons & REASON_INTRODUCER == 0
                    || i == conn
                {
                    continue;
                }
                if other.pk == sender_pk {
                    self.remove_connection_reason(io, i, REASON_INTRODUCER);
                }
            }
        }
        let fresh = self
            .peers
            .get_mut(index)
            .is_some_and(|p| p.infos.check(header.message_number, header.message_id));
        if !fresh {
            io.stats.duplicates = io.stats.duplicates.saturating_add(1);
            return;
        }
        let direct_from_sender = sender_pk == c.pk;
        let Ok(body) = MessageBody::parse(header.message_id, body) else {
            io.drop_packet();
            return;
        };
        let conference = self.number_for_events();
        let peer = u32::try_from(index).unwrap_or(u32::MAX);
        match body {
            MessageBody::Ping => {}
            MessageBody::NewPeer {
                peer_number,
                real_pk,
                temp_pk,
            } => {
                self.add_peer(io, real_pk, temp_pk, peer_number, true, true);
            }
            MessageBody::KillPeer(n) | MessageBody::FreezePeer(n) if n != header.peer_number => {
                return;
            }
            MessageBody::KillPeer(_) => {
                self.del_peer(io, index);
            }
            MessageBody::FreezePeer(_) => {
                self.freeze_peer(io, index);
            }
            MessageBody::Name(name) => {
                if !self.set_nick(io, index, &name, true) {
                    return;
                }
            }
            MessageBody::Title(title) => {
                if !self.set_title_from(io, Some(index), &title) {
                    return;
                }
            }
            MessageBody::Message(text) => io.event(ConferenceEvent::Message {
                conference,
                peer,
                kind: MessageKind::Normal,
                text,
            }),
            MessageBody::Action(text) => io.event(ConferenceEvent::Message {
                conference,
                peer,
                kind: MessageKind::Action,
                text,
            }),
        }
        self.send_all(io, data, if direct_from_sender { None } else { Some(conn) });
    }

    /// Packet 199 on connection `conn` of an AV conference; `data` follows the conference
    /// number. New packets are forwarded and handed to the application.
    pub fn handle_lossy(&mut self, io: &mut Io, conn: usize, data: &[u8]) {
        let Ok(packet) = LossyPacket::parse(data) else {
            io.drop_packet();
            return;
        };
        if packet.peer_number == self.peer_number {
            io.drop_packet();
            return;
        }
        let Some(index) = self.peer_index(packet.peer_number) else {
            io.drop_packet();
            return;
        };
        let seen = self
            .peers
            .get_mut(index)
            .map(|p| p.lossy.check(packet.message_number));
        if seen != Some(LossySeen::New) {
            io.stats.duplicates = io.stats.duplicates.saturating_add(1);
            return;
        }
        self.send_lossy_all(io, data, Some(conn));
        io.event(ConferenceEvent::Lossy {
            conference: self.number_for_events(),
            peer: u32::try_from(index).unwrap_or(u32::MAX),
            data: packet.data.to_vec(),
        });
    }
}
