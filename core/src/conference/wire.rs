//! The conference packets on a friend connection (docs/protocol.md "Conferences";
//! `toxcore/group.c` of c-toxcore 0.2.18): parsed from untrusted bytes with the one cursor,
//! [`Reader`], into typed values, and encoded byte-exact.
//!
//! | id  | name               | after the id                                                |
//! |-----|--------------------|-------------------------------------------------------------|
//! | 96  | invite (Messenger) | sub-id 0/1/2 and the fields of [`InvitePacket`]             |
//! | 97  | online             | sender's conference number u16 · type · id 32               |
//! | 98  | direct             | receiver's conference number u16 · sub-id · [`DirectPacket`] |
//! | 99  | message            | receiver's conference number u16 · [`MessageHeader`] · body |
//! | 100 | rejoin             | type · id 32                                                |
//! | 199 | lossy              | receiver's conference number u16 · [`LossyPacket`]          |
//!
//! Every integer is big-endian.
// Every length here comes from the network: no indexing, slicing or arithmetic that could
// panic or wrap.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use rustox_net_crypto::crypto::{PublicKey, PUBLIC_KEY_SIZE};
use rustox_net_crypto::wire::{Reader, TooShort, Trailing};

use super::CONFERENCE_ID_LEN;

/// `PACKET_ID_INVITE_CONFERENCE` (Messenger's lossless packet, friends only).
pub const PACKET_ID_INVITE: u8 = 96;
/// `PACKET_ID_ONLINE_PACKET`.
pub const PACKET_ID_ONLINE: u8 = 97;
/// `PACKET_ID_DIRECT_CONFERENCE`.
pub const PACKET_ID_DIRECT: u8 = 98;
/// `PACKET_ID_MESSAGE_CONFERENCE`.
pub const PACKET_ID_MESSAGE: u8 = 99;
/// `PACKET_ID_REJOIN_CONFERENCE`.
pub const PACKET_ID_REJOIN: u8 = 100;
/// `PACKET_ID_LOSSY_CONFERENCE`.
pub const PACKET_ID_LOSSY: u8 = 199;

/// `INVITE_ID`, `INVITE_ACCEPT_ID`, `INVITE_MEMBER_ID` (group.c `Invite_Id`).
pub const INVITE_ID: u8 = 0;
/// See [`INVITE_ID`].
pub const INVITE_ACCEPT_ID: u8 = 1;
/// See [`INVITE_ID`].
pub const INVITE_MEMBER_ID: u8 = 2;

/// group.c `Peer_Id`: the sub-ids of packet 98.
pub const PEER_INTRODUCED_ID: u8 = 1;
/// See [`PEER_INTRODUCED_ID`].
pub const PEER_QUERY_ID: u8 = 8;
/// See [`PEER_INTRODUCED_ID`].
pub const PEER_RESPONSE_ID: u8 = 9;
/// See [`PEER_INTRODUCED_ID`].
pub const PEER_TITLE_ID: u8 = 10;

/// group.c `Group_Message_Id` and Messenger's `PACKET_ID_MESSAGE`/`PACKET_ID_ACTION`: the
/// message ids of packet 99.
pub const MESSAGE_PING_ID: u8 = 0;
/// See [`MESSAGE_PING_ID`].
pub const MESSAGE_NEW_PEER_ID: u8 = 16;
/// See [`MESSAGE_PING_ID`].
pub const MESSAGE_KILL_PEER_ID: u8 = 17;
/// See [`MESSAGE_PING_ID`].
pub const MESSAGE_FREEZE_PEER_ID: u8 = 18;
/// See [`MESSAGE_PING_ID`].
pub const MESSAGE_NAME_ID: u8 = 48;
/// See [`MESSAGE_PING_ID`].
pub const MESSAGE_TITLE_ID: u8 = 49;
/// See [`MESSAGE_PING_ID`].
pub const MESSAGE_MESSAGE_ID: u8 = 64;
/// See [`MESSAGE_PING_ID`].
pub const MESSAGE_ACTION_ID: u8 = 65;

/// `MAX_NAME_LENGTH`: the longest name and title a packet may carry.
pub const MAX_NAME_LEN: usize = crate::types::MAX_NAME_LEN;

/// One peer of a PEER_RESPONSE: peer id u16 · real key 32 · temp key 32 · name length u8.
pub const PEER_ENTRY_FIXED_LEN: usize = 2 + 2 * PUBLIC_KEY_SIZE + 1;
/// `MAX_CRYPTO_DATA_SIZE`: the largest lossless or lossy payload, id included.
pub const MAX_PACKET_LEN: usize = rustox_net_crypto::packets::MAX_CRYPTO_DATA_SIZE;
/// `MAX_GROUP_MESSAGE_DATA_LEN` = 1373 − (1 + 9): the longest body of packet 99.
pub const MAX_MESSAGE_DATA_LEN: usize = 1363;
/// A PEER_RESPONSE's payload fits in `MAX_CRYPTO_DATA_SIZE − (1 + 2)` bytes with its sub-id
/// (group.c `send_peers`).
pub const MAX_PEER_RESPONSE_LEN: usize = 1370;

/// Why a conference packet was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The bytes ended before a field.
    #[error(transparent)]
    TooShort(#[from] TooShort),
    /// Bytes after a fixed layout.
    #[error(transparent)]
    Trailing(#[from] Trailing),
    /// A packet or sub-packet id this layout does not know.
    #[error("unknown id {0}")]
    UnknownId(u8),
    /// A field's length is not one c-toxcore accepts.
    #[error("bad length")]
    BadLength,
}

/// Packet 96's three forms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvitePacket {
    /// INVITE_ID: "join my conference": the inviter's conference number, the type, the id.
    /// The 35 bytes after the sub-id are the cookie handed to the application.
    Invite {
        /// The inviter's conference number.
        group_number: u16,
        /// The type byte.
        kind: u8,
        /// The conference id.
        id: [u8; CONFERENCE_ID_LEN],
    },
    /// INVITE_ACCEPT_ID (joining, not a member) or INVITE_MEMBER_ID (already a member, with
    /// our peer id): the answer to an invite; `cookie_*` echo the invite.
    Response {
        /// The answerer's conference number.
        group_number: u16,
        /// The inviter's conference number from the cookie.
        inviter_group_number: u16,
        /// The type byte from the cookie.
        kind: u8,
        /// The id from the cookie.
        id: [u8; CONFERENCE_ID_LEN],
        /// `Some(peer id)` for INVITE_MEMBER_ID.
        member_peer_number: Option<u16>,
    },
}

impl InvitePacket {
    /// Parses a whole packet, id 96 first. Lengths are exact, as in
    /// `handle_friend_invite_packet`.
    pub fn parse(data: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(data);
        let id = r.u8()?;
        if id != PACKET_ID_INVITE {
            return Err(WireError::UnknownId(id));
        }
        let packet = match r.u8()? {
            INVITE_ID => InvitePacket::Invite {
                group_number: r.u16_be()?,
                kind: r.u8()?,
                id: r.array()?,
            },
            sub @ (INVITE_ACCEPT_ID | INVITE_MEMBER_ID) => InvitePacket::Response {
                group_number: r.u16_be()?,
                inviter_group_number: r.u16_be()?,
                kind: r.u8()?,
                id: r.array()?,
                member_peer_number: if sub == INVITE_MEMBER_ID {
                    Some(r.u16_be()?)
                } else {
                    None
                },
            },
            other => return Err(WireError::UnknownId(other)),
        };
        r.expect_end()?;
        Ok(packet)
    }

    /// The packet, id 96 first.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![PACKET_ID_INVITE];
        match self {
            InvitePacket::Invite {
                group_number,
                kind,
                id,
            } => {
                out.push(INVITE_ID);
                out.extend_from_slice(&group_number.to_be_bytes());
                out.push(*kind);
                out.extend_from_slice(id);
            }
            InvitePacket::Response {
                group_number,
                inviter_group_number,
                kind,
                id,
                member_peer_number,
            } => {
                out.push(if member_peer_number.is_some() {
                    INVITE_MEMBER_ID
                } else {
                    INVITE_ACCEPT_ID
                });
                out.extend_from_slice(&group_number.to_be_bytes());
                out.extend_from_slice(&inviter_group_number.to_be_bytes());
                out.push(*kind);
                out.extend_from_slice(id);
                if let Some(peer) = member_peer_number {
                    out.extend_from_slice(&peer.to_be_bytes());
                }
            }
        }
        out
    }
}

/// An invite cookie (the 35 bytes after INVITE_ID): inviter's conference number, type, id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cookie {
    /// The inviter's conference number.
    pub group_number: u16,
    /// The type byte.
    pub kind: u8,
    /// The conference id.
    pub id: [u8; CONFERENCE_ID_LEN],
}

impl Cookie {
    /// Exactly [`super::INVITE_COOKIE_LEN`] bytes (`join_groupchat`'s length check).
    pub fn parse(data: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(data);
        let cookie = Cookie {
            group_number: r.u16_be()?,
            kind: r.u8()?,
            id: r.array()?,
        };
        r.expect_end()?;
        Ok(cookie)
    }

    /// The cookie's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(super::INVITE_COOKIE_LEN);
        out.extend_from_slice(&self.group_number.to_be_bytes());
        out.push(self.kind);
        out.extend_from_slice(&self.id);
        out
    }
}

/// Packet 97: "I hold a connection to you for this conference" (`send_packet_online`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OnlinePacket {
    /// The sender's conference number.
    pub group_number: u16,
    /// The type byte.
    pub kind: u8,
    /// The conference id.
    pub id: [u8; CONFERENCE_ID_LEN],
}

impl OnlinePacket {
    /// Parses a whole packet, id 97 first; the length is exact (`handle_packet_online`).
    pub fn parse(data: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(data);
        let id = r.u8()?;
        if id != PACKET_ID_ONLINE {
            return Err(WireError::UnknownId(id));
        }
        let packet = OnlinePacket {
            group_number: r.u16_be()?,
            kind: r.u8()?,
            id: r.array()?,
        };
        r.expect_end()?;
        Ok(packet)
    }

    /// The packet, id first.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![PACKET_ID_ONLINE];
        out.extend_from_slice(&self.group_number.to_be_bytes());
        out.push(self.kind);
        out.extend_from_slice(&self.id);
        out
    }
}

/// Packet 100: "I am back; I was in this conference" (`try_send_rejoin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RejoinPacket {
    /// The type byte.
    pub kind: u8,
    /// The conference id.
    pub id: [u8; CONFERENCE_ID_LEN],
}

impl RejoinPacket {
    /// Parses a whole packet, id 100 first. c-toxcore's `g_handle_packet` wants at least 4
    /// bytes and `handle_packet_rejoin` at least the id; trailing bytes are ignored as there.
    pub fn parse(data: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(data);
        let id = r.u8()?;
        if id != PACKET_ID_REJOIN {
            return Err(WireError::UnknownId(id));
        }
        Ok(RejoinPacket {
            kind: r.u8()?,
            id: r.array()?,
        })
    }

    /// The packet, id first.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![PACKET_ID_REJOIN];
        out.push(self.kind);
        out.extend_from_slice(&self.id);
        out
    }
}

/// The header of packets 98, 99 and 199: id and the receiver's conference number
/// (`send_packet_group_peer`). `g_handle_packet` drops anything shorter than 4 bytes.
pub fn parse_group_header(data: &[u8]) -> Result<(u8, u16, &[u8]), WireError> {
    let mut r = Reader::new(data);
    let id = r.u8()?;
    let group_number = r.u16_be()?;
    let rest = r.rest();
    if rest.is_empty() {
        return Err(WireError::BadLength);
    }
    Ok((id, group_number, rest))
}

/// `id · group_number · payload`.
pub fn encode_group_packet(id: u8, group_number: u16, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len().saturating_add(3));
    out.push(id);
    out.extend_from_slice(&group_number.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// One peer of a PEER_RESPONSE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerEntry {
    /// Its 16-bit peer id.
    pub peer_number: u16,
    /// Its real key.
    pub real_pk: PublicKey,
    /// Its DHT key.
    pub temp_pk: PublicKey,
    /// Its name (≤ [`MAX_NAME_LEN`]).
    pub name: Vec<u8>,
}

/// The payload of packet 98 after the conference number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirectPacket {
    /// PEER_INTRODUCED_ID: "you no longer need to keep introducing me".
    Introduced,
    /// PEER_QUERY_ID: "send me your peer list".
    Query,
    /// PEER_RESPONSE_ID: part of the peer list. `handle_send_peers` reads entries while a
    /// whole fixed part remains and stops at an entry whose name overruns the bytes or the
    /// 128-byte bound; that entry's keys were still taken (`bad_entry`), as were the entries
    /// before it.
    Response {
        /// The entries read.
        peers: Vec<PeerEntry>,
        /// The entry whose name was bad: peer id, real key, DHT key.
        bad_entry: Option<(u16, PublicKey, PublicKey)>,
    },
    /// PEER_TITLE_ID: the title, sent after the peer list.
    Title(Vec<u8>),
}

impl DirectPacket {
    /// Parses the bytes after the conference number (sub-id first). c-toxcore ignores
    /// trailing bytes after INTRODUCED and QUERY, and so do we.
    pub fn parse(data: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(data);
        match r.u8()? {
            PEER_INTRODUCED_ID => Ok(DirectPacket::Introduced),
            PEER_QUERY_ID => Ok(DirectPacket::Query),
            PEER_RESPONSE_ID => {
                // At most len / 67 entries: bounded by the packet.
                let mut peers = Vec::new();
                let mut bad_entry = None;
                while r.remaining() >= PEER_ENTRY_FIXED_LEN {
                    let peer_number = r.u16_be()?;
                    let real_pk = PublicKey(r.array()?);
                    let temp_pk = PublicKey(r.array()?);
                    let len = usize::from(r.u8()?);
                    if len > r.remaining() || len > MAX_NAME_LEN {
                        bad_entry = Some((peer_number, real_pk, temp_pk));
                        break;
                    }
                    let mut name = vec![0; len];
                    for b in name.iter_mut() {
                        *b = r.u8()?;
                    }
                    peers.push(PeerEntry {
                        peer_number,
                        real_pk,
                        temp_pk,
                        name,
                    });
                }
                Ok(DirectPacket::Response { peers, bad_entry })
            }
            PEER_TITLE_ID => Ok(DirectPacket::Title(r.rest().to_vec())),
            other => Err(WireError::UnknownId(other)),
        }
    }

    /// The bytes after the conference number (sub-id first).
    pub fn encode(&self) -> Vec<u8> {
        match self {
            DirectPacket::Introduced => vec![PEER_INTRODUCED_ID],
            DirectPacket::Query => vec![PEER_QUERY_ID],
            DirectPacket::Response { peers, .. } => {
                let mut out = vec![PEER_RESPONSE_ID];
                for p in peers {
                    encode_peer_entry(&mut out, p.peer_number, &p.real_pk, &p.temp_pk, &p.name);
                }
                out
            }
            DirectPacket::Title(title) => {
                let mut out = vec![PEER_TITLE_ID];
                out.extend_from_slice(title);
                out
            }
        }
    }
}

/// Appends one PEER_RESPONSE entry; a name longer than 255 bytes is cut (names are ≤ 128).
pub fn encode_peer_entry(
    out: &mut Vec<u8>,
    peer_number: u16,
    real_pk: &PublicKey,
    temp_pk: &PublicKey,
    name: &[u8],
) {
    let name = name.get(..MAX_NAME_LEN).unwrap_or(name);
    out.extend_from_slice(&peer_number.to_be_bytes());
    out.extend_from_slice(&real_pk.0);
    out.extend_from_slice(&temp_pk.0);
    out.push(u8::try_from(name.len()).unwrap_or(u8::MAX));
    out.extend_from_slice(name);
}

/// The header of a packet 99 after the conference number (`MIN_MESSAGE_PACKET_LEN`, 7
/// bytes): who wrote it, its number in the writer's sequence, and what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageHeader {
    /// The writer's 16-bit peer id.
    pub peer_number: u16,
    /// The writer's message number (starts at 1, skips 0 on wrap).
    pub message_number: u32,
    /// The message id.
    pub message_id: u8,
}

/// `peer id u16 · message number u32 · message id u8`.
pub const MESSAGE_HEADER_LEN: usize = 7;

impl MessageHeader {
    /// The header and the body after it.
    pub fn parse(data: &[u8]) -> Result<(Self, &[u8]), WireError> {
        let mut r = Reader::new(data);
        let header = MessageHeader {
            peer_number: r.u16_be()?,
            message_number: r.u32_be()?,
            message_id: r.u8()?,
        };
        Ok((header, r.rest()))
    }

    /// Header then body.
    pub fn encode(&self, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(body.len().saturating_add(MESSAGE_HEADER_LEN));
        out.extend_from_slice(&self.peer_number.to_be_bytes());
        out.extend_from_slice(&self.message_number.to_be_bytes());
        out.push(self.message_id);
        out.extend_from_slice(body);
        out
    }
}

/// The body of a packet 99, by its message id, checked as `handle_message_packet_group`
/// checks it (a body it rejects is neither acted on nor forwarded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MessageBody {
    /// Ping: any body, ignored.
    Ping,
    /// NEW_PEER: peer id · real key · temp key, exactly 66 bytes.
    NewPeer {
        /// The newcomer's peer id.
        peer_number: u16,
        /// Its real key.
        real_pk: PublicKey,
        /// Its DHT key.
        temp_pk: PublicKey,
    },
    /// KILL_PEER: the writer leaves for good (exactly 2 bytes: the peer id).
    KillPeer(u16),
    /// FREEZE_PEER: the writer goes offline (exactly 2 bytes: the peer id).
    FreezePeer(u16),
    /// NAME: the writer's name, ≤ 128 bytes (may be empty).
    Name(Vec<u8>),
    /// TITLE: 1..=128 bytes.
    Title(Vec<u8>),
    /// A message, not empty.
    Message(Vec<u8>),
    /// An action, not empty.
    Action(Vec<u8>),
}

impl MessageBody {
    /// The body of message `id`.
    pub fn parse(id: u8, body: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(body);
        let parsed = match id {
            MESSAGE_PING_ID => return Ok(MessageBody::Ping),
            MESSAGE_NEW_PEER_ID => MessageBody::NewPeer {
                peer_number: r.u16_be()?,
                real_pk: PublicKey(r.array()?),
                temp_pk: PublicKey(r.array()?),
            },
            MESSAGE_KILL_PEER_ID => MessageBody::KillPeer(r.u16_be()?),
            MESSAGE_FREEZE_PEER_ID => MessageBody::FreezePeer(r.u16_be()?),
            MESSAGE_NAME_ID if body.len() <= MAX_NAME_LEN => {
                return Ok(MessageBody::Name(body.to_vec()))
            }
            MESSAGE_TITLE_ID if !body.is_empty() && body.len() <= MAX_NAME_LEN => {
                return Ok(MessageBody::Title(body.to_vec()))
            }
            MESSAGE_MESSAGE_ID if !body.is_empty() => {
                return Ok(MessageBody::Message(body.to_vec()))
            }
            MESSAGE_ACTION_ID if !body.is_empty() => return Ok(MessageBody::Action(body.to_vec())),
            MESSAGE_NAME_ID | MESSAGE_TITLE_ID | MESSAGE_MESSAGE_ID | MESSAGE_ACTION_ID => {
                return Err(WireError::BadLength)
            }
            other => return Err(WireError::UnknownId(other)),
        };
        r.expect_end()?;
        Ok(parsed)
    }

    /// The message id and the body's bytes.
    pub fn encode(&self) -> (u8, Vec<u8>) {
        match self {
            MessageBody::Ping => (MESSAGE_PING_ID, Vec::new()),
            MessageBody::NewPeer {
                peer_number,
                real_pk,
                temp_pk,
            } => {
                let mut out = Vec::with_capacity(2 + 2 * PUBLIC_KEY_SIZE);
                out.extend_from_slice(&peer_number.to_be_bytes());
                out.extend_from_slice(&real_pk.0);
                out.extend_from_slice(&temp_pk.0);
                (MESSAGE_NEW_PEER_ID, out)
            }
            MessageBody::KillPeer(p) => (MESSAGE_KILL_PEER_ID, p.to_be_bytes().to_vec()),
            MessageBody::FreezePeer(p) => (MESSAGE_FREEZE_PEER_ID, p.to_be_bytes().to_vec()),
            MessageBody::Name(b) => (MESSAGE_NAME_ID, b.clone()),
            MessageBody::Title(b) => (MESSAGE_TITLE_ID, b.clone()),
            MessageBody::Message(b) => (MESSAGE_MESSAGE_ID, b.clone()),
            MessageBody::Action(b) => (MESSAGE_ACTION_ID, b.clone()),
        }
    }
}

/// A packet 199 after the conference number: who wrote it, its lossy number, the handler
/// id and the payload (`send_group_lossy_packet`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LossyPacket<'a> {
    /// The writer's peer id.
    pub peer_number: u16,
    /// The writer's lossy sequence number.
    pub message_number: u16,
    /// The payload, handler id first (never empty).
    pub data: &'a [u8],
}

impl<'a> LossyPacket<'a> {
    /// Parses the bytes after the conference number; `handle_lossy` wants the handler id.
    pub fn parse(data: &'a [u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(data);
        let peer_number = r.u16_be()?;
        let message_number = r.u16_be()?;
        let rest = r.rest();
        if rest.is_empty() {
            return Err(WireError::BadLength);
        }
        Ok(LossyPacket {
            peer_number,
            message_number,
            data: rest,
        })
    }

    /// The bytes after the conference number.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.data.len().saturating_add(4));
        out.extend_from_slice(&self.peer_number.to_be_bytes());
        out.extend_from_slice(&self.message_number.to_be_bytes());
        out.extend_from_slice(self.data);
        out
    }
}
