//! Where a packet goes: invites and answers to the conference they name by id or number
//! (`handle_friend_invite_packet` in `toxcore/group.c`), packets 98, 99 and 199 to the
//! conference and connection they arrive on (`g_handle_packet`, `handle_lossy`).

use rustox_net_crypto::crypto::PublicKey;

use super::connections::{ConnState, REASON_INTRODUCER, REASON_INTRODUCING};
use super::group::Status;
use super::wire::{self, Cookie, InvitePacket, MessageBody};
use super::{ConferenceEvent, ConferenceType, Conferences};

impl Conferences {
    /// Packets 98, 99 and 199: for the conference they name, on a connection it holds.
    pub(super) fn handle_group_packet(&mut self, pk: PublicKey, data: &[u8]) -> bool {
        let Ok((id, number, rest)) = wire::parse_group_header(data) else {
            return false;
        };
        let Some((g, io)) = self.parts(usize::from(number)) else {
            return false;
        };
        let Some(conn) = g.conns.find(&pk) else {
            return false;
        };
        match id {
            wire::PACKET_ID_DIRECT => match wire::DirectPacket::parse(rest) {
                Ok(p) => g.handle_direct(io, conn, p),
                Err(_) => return false,
            },
            wire::PACKET_ID_MESSAGE => g.handle_message(io, conn, rest),
            _ => {
                if ConferenceType::from_byte(g.kind) != Some(ConferenceType::Av) {
                    return false;
                }
                g.handle_lossy(io, conn, rest);
            }
        }
        true
    }

    /// `handle_friend_invite_packet`: an invite (to a conference we are not in: the
    /// application hears of it; to one we are in: we answer as a member) or an answer to
    /// ours (the friend joins: a peer id, a connection, a NEW_PEER to everyone).
    pub(super) fn handle_invite(&mut self, friend_pk: PublicKey, data: &[u8]) -> bool {
        let Ok(packet) = InvitePacket::parse(data) else {
            return false;
        };
        match packet {
            InvitePacket::Invite {
                group_number,
                kind,
                id,
            } => {
                let cookie = Cookie {
                    group_number,
                    kind,
                    id,
                };
                match self.find(kind, &id) {
                    None => {
                        let Some(kind) = ConferenceType::from_byte(kind) else {
                            return false;
                        };
                        self.io.event(ConferenceEvent::Invite {
                            friend_pk,
                            kind,
                            cookie: cookie.encode(),
                        });
                    }
                    Some(n) => {
                        if let Some((g, io)) = self.parts(n) {
                            if g.status == Status::Connected {
                                g.send_invite_response(io, friend_pk, &cookie);
                            }
                        }
                    }
                }
                true
            }
            InvitePacket::Response {
                group_number: other,
                inviter_group_number: ours,
                kind,
                id,
                member_peer_number,
            } => {
                let Some((g, io)) = self.parts(usize::from(ours)) else {
                    return false;
                };
                if g.kind != kind || g.id != id {
                    return false;
                }
                let peer_number = match member_peer_number {
                    Some(n) => n,
                    None => {
                        let mut n = io.random_u16();
                        let mut tries = 0;
                        while g.peer_index(n).is_some() || g.frozen_index(n).is_some() {
                            n = io.random_u16();
                            tries += 1;
                            if tries > 32 {
                                return false;
                            }
                        }
                        n
                    }
                };
                let temp = g.dht_of(io, &friend_pk);
                g.add_peer(io, friend_pk, temp, peer_number, true, true);
                let ci = g.add_conn(io, friend_pk, REASON_INTRODUCING, None);
                if member_peer_number.is_some() {
                    g.add_conn(io, friend_pk, REASON_INTRODUCER, None);
                    g.send_direct(io, friend_pk, other, wire::PEER_QUERY_ID);
                }
                if let Some(c) = ci.and_then(|i| g.conns.get_mut(i)) {
                    c.group_number = other;
                    c.state = ConnState::Online;
                }
                let body = MessageBody::NewPeer {
                    peer_number,
                    real_pk: friend_pk,
                    temp_pk: temp,
                };
                let _ = g.send_message(io, &body);
                true
            }
        }
    }
}
