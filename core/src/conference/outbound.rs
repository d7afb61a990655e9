//! What one conference sends (`send_packet_online`, `send_packet_group_peer`, `send_peers`,
//! `send_message_group`, `send_message_all_connections`, `send_lossy_all_connections`,
//! `send_group_lossy_packet`, `send_invite_response`, `group_leave` in `toxcore/group.c`).

use rustox_net_crypto::crypto::PublicKey;

use super::connections::{
    ConnState, MAX_GROUP_CONNECTIONS, REASON_CLOSEST, REASON_INTRODUCER, REASON_INTRODUCING,
};
use super::group::{Group, SendError, Status};
use super::io::Io;
use super::wire::{
    self, encode_group_packet, encode_peer_entry, Cookie, InvitePacket, LossyPacket, MessageBody,
    MessageHeader, OnlinePacket, MAX_MESSAGE_DATA_LEN, MAX_PACKET_LEN, MAX_PEER_RESPONSE_LEN,
    PACKET_ID_DIRECT, PACKET_ID_LOSSY, PACKET_ID_MESSAGE, PEER_ENTRY_FIXED_LEN,
};

/// The 199 header (id, conference number) before [`LossyPacket`]'s own 4 bytes.
const LOSSY_OVERHEAD: usize = 3 + 4;

impl Group {
    /// `send_packet_online`.
    pub fn send_online(&self, io: &mut Io, pk: PublicKey) -> bool {
        let packet = OnlinePacket {
            group_number: self.number,
            kind: self.kind,
            id: self.id,
        };
        io.send(pk, packet.encode())
    }

    /// A one-byte packet 98 (PEER_QUERY, PEER_INTRODUCED).
    pub fn send_direct(&self, io: &mut Io, pk: PublicKey, group_number: u16, sub_id: u8) -> bool {
        io.send(
            pk,
            encode_group_packet(PACKET_ID_DIRECT, group_number, &[sub_id]),
        )
    }

    /// `send_peers`: our peer list in as many PEER_RESPONSE packets as it takes, then the
    /// title.
    pub fn send_peers(&self, io: &mut Io, pk: PublicKey, group_number: u16) {
        let mut chunk = vec![wire::PEER_RESPONSE_ID];
        let mut i = 0;
        loop {
            let next = self.peers.get(i);
            let full = next.is_some_and(|p| {
                chunk.len() + PEER_ENTRY_FIXED_LEN + p.nick.len() > MAX_PEER_RESPONSE_LEN
            });
            if next.is_none() || full {
                let packet = encode_group_packet(PACKET_ID_DIRECT, group_number, &chunk);
                if !io.send(pk, packet) {
                    return;
                }
                chunk.truncate(1);
            }
            let Some(p) = next else {
                break;
            };
            encode_peer_entry(&mut chunk, p.peer_number, &p.real_pk, &p.temp_pk, &p.nick);
            i += 1;
        }
        if !self.title.is_empty() {
            let mut packet = vec![wire::PEER_TITLE_ID];
            packet.extend_from_slice(&self.title);
            io.send(
                pk,
                encode_group_packet(PACKET_ID_DIRECT, group_number, &packet),
            );
        }
    }

    /// `send_message_all_connections`: `payload` (a message's header and body) on every
    /// online connection but `except`; how many took it.
    pub fn send_all(&self, io: &mut Io, payload: &[u8], except: Option<usize>) -> usize {
        let mut sent = 0;
        for (_, pk, gn) in self.conns.online_except(except) {
            if io.send(pk, encode_group_packet(PACKET_ID_MESSAGE, gn, payload)) {
                sent += 1;
            }
        }
        sent
    }

    /// `send_message_group`: a new message of ours, numbered, to every connection.
    pub fn send_message(&mut self, io: &mut Io, body: &MessageBody) -> Result<usize, SendError> {
        let (message_id, data) = body.encode();
        self.send_raw_message(io, message_id, &data)
    }

    /// As [`Group::send_message`], from an id and bytes.
    pub fn send_raw_message(
        &mut self,
        io: &mut Io,
        message_id: u8,
        data: &[u8],
    ) -> Result<usize, SendError> {
        if data.len() > MAX_MESSAGE_DATA_LEN {
            return Err(SendError::TooLong);
        }
        if self.status != Status::Connected || self.conns.count_online() == 0 {
            return Err(SendError::NoConnection);
        }
        self.message_number = self.message_number.wrapping_add(1);
        if self.message_number == 0 {
            self.message_number = 1;
        }
        let header = MessageHeader {
            peer_number: self.peer_number,
            message_number: self.message_number,
            message_id,
        };
        match self.send_all(io, &header.encode(data), None) {
            0 => Err(SendError::FailSend),
            n => Ok(n),
        }
    }

    /// `send_lossy_all_connections`: to every online connection but `except` that is not
    /// for the closest rule, and to two picks among the closest ones (see below).
    pub fn send_lossy_all(&self, io: &mut Io, payload: &[u8], except: Option<usize>) -> usize {
        let mut sent = 0;
        let mut closest = Vec::new();
        for (i, pk, gn) in self.conns.online_except(except) {
            let is_closest = self
                .conns
                .get(i)
                .is_some_and(|c| c.reasons & REASON_CLOSEST != 0);
            if is_closest {
                closest.push((i, pk));
                continue;
            }
            if io.send_lossy(pk, encode_group_packet(PACKET_ID_LOSSY, gn, payload)) {
                sent += 1;
            }
        }
        if closest.is_empty() {
            return sent;
        }
        // As group.c: both picks start at slot 0 with the largest distance; the first
        // becomes the closest connection whose key is nearest below ours, the second (its comparison can
        // never succeed from that start) stays slot 0.
        let mut to_send = [0usize, 0usize];
        let mut old = [u64::MAX, u64::MAX];
        for &(i, pk) in &closest {
            let v = super::closest::comp_value(&io.self_pk, &pk);
            if v < old[0] {
                to_send[0] = i;
                old[0] = v;
            }
            if v > old[1] {
                to_send[1] = i;
                old[1] = v;
            }
        }
        for (j, &slot) in to_send.iter().enumerate() {
            if j > 0 && to_send[1] == to_send[0] {
                break;
            }
            let Some(c) = self.conns.get(slot).copied() else {
                continue;
            };
            if c.state != ConnState::None
                && io.send_lossy(
                    c.pk,
                    encode_group_packet(PACKET_ID_LOSSY, c.group_number, payload),
                )
            {
                sent += 1;
            }
        }
        sent
    }

    /// `send_group_lossy_packet`.
    pub fn send_lossy(&mut self, io: &mut Io, data: &[u8]) -> bool {
        if data.len().saturating_add(LOSSY_OVERHEAD) > MAX_PACKET_LEN {
            return false;
        }
        let packet = LossyPacket {
            peer_number: self.peer_number,
            message_number: self.lossy_message_number,
            data,
        };
        if self.send_lossy_all(io, &packet.encode(), None) == 0 {
            return false;
        }
        self.lossy_message_number = self.lossy_message_number.wrapping_add(1);
        true
    }

    /// `send_invite_response`: answer `cookie` to the friend `friend_pk` (accept when
    /// joining, member when already in), hold the link as introducer, ask for peers.
    pub fn send_invite_response(
        &mut self,
        io: &mut Io,
        friend_pk: PublicKey,
        cookie: &Cookie,
    ) -> bool {
        let member = self.status == Status::Connected;
        let packet = InvitePacket::Response {
            group_number: self.number,
            inviter_group_number: cookie.group_number,
            kind: cookie.kind,
            id: cookie.id,
            member_peer_number: member.then_some(self.peer_number),
        };
        if !io.send_invite(friend_pk, packet.encode()) {
            return false;
        }
        if !member {
            self.kind = cookie.kind;
            self.id = cookie.id;
        }
        let ci = self.add_conn(io, friend_pk, REASON_INTRODUCER, None);
        if member {
            self.add_conn(io, friend_pk, REASON_INTRODUCING, None);
        }
        if let Some(c) = ci.and_then(|i| self.conns.get_mut(i)) {
            c.group_number = cookie.group_number;
            c.state = ConnState::Online;
        }
        self.send_direct(io, friend_pk, cookie.group_number, wire::PEER_QUERY_ID);
        true
    }

    /// `group_leave`: KILL_PEER (permanent) or FREEZE_PEER about ourselves.
    pub fn leave(&mut self, io: &mut Io, permanent: bool) {
        let body = if permanent {
            MessageBody::KillPeer(self.peer_number)
        } else {
            MessageBody::FreezePeer(self.peer_number)
        };
        let _ = self.send_message(io, &body);
    }

    /// `del_groupchat`'s teardown: every connection released.
    pub fn release_all(&mut self, io: &mut Io) {
        for i in 0..MAX_GROUP_CONNECTIONS {
            if let Some(c) = self.conns.get_mut(i) {
                if c.state != ConnState::None {
                    c.state = ConnState::None;
                    let pk = c.pk;
                    io.release(pk);
                }
            }
        }
    }
}
