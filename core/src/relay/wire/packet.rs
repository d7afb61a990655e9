//! The plaintexts carried by frames (docs/protocol.md §7; c-toxcore 0.2.18 `TCP_common.h`,
//! `TCP_server.c` `handle_TCP_packet`, `TCP_client.c` `handle_TCP_client_packet`).
//!
//! | id    | name                    | layout                                          | dir  |
//! |-------|-------------------------|-------------------------------------------------|------|
//! | 0     | routing request         | `[0][peer pk 32]`                               | C→S  |
//! | 1     | routing response        | `[1][conn id (0 = refused, else 16..=255)][peer pk 32]` | S→C |
//! | 2     | connect notification    | `[2][conn id]`                                  | S→C  |
//! | 3     | disconnect notification | `[3][conn id]`                                  | both |
//! | 4 / 5 | ping / pong             | `[4 \| 5][ping id 8]`                           | both |
//! | 6     | OOB send                | `[6][destination pk 32][data 1..=1024]`         | C→S  |
//! | 7     | OOB receive             | `[7][sender pk 32][data]`                       | S→C  |
//! | 8     | onion request           | `[8][nonce 24][ipport B 19][PK2 32][E(k2)[..]]` | C→S  |
//! | 9     | onion response          | `[9][response]`                                 | S→C  |
//! | 10    | forward request         | `[10][packed ip_port 7 \| 19][data ..=1792]`    | C→S  |
//! | 11    | forwarding              | `[11][data]`                                    | S→C  |
//! | 16..  | data                    | `[conn id][payload]`                            | both |
//!
//! Each parser applies the length checks c-toxcore applies on receipt, where a wrong length
//! kills the connection on either side; the server's checks and the client's agree except
//! for packets only one side receives. Ping ids are opaque 8 bytes (c-toxcore copies them in
//! host order); here they are read big-endian, which gives back the same bytes when encoded.
//! A pong with id 0 parses: whether it is an error is the receiver's decision (0.2.18 kills
//! the connection on it).
//!
//! 10 and 11 carry the DHT-announcement forwarding of `forwarding.c`. No 0.2.18 client sends
//! a forward request (only its fuzz tests call `send_tcp_forward_request`); later versions use
//! them for group announcements.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use rustox_net_crypto::crypto::{Nonce, PublicKey, NONCE_SIZE, PUBLIC_KEY_SIZE};
use rustox_net_crypto::wire::Reader;

use super::frame::MAX_PLAINTEXT_SIZE;
use crate::dht::wire::packed_node::{FAMILY_UDP_V4, FAMILY_UDP_V6};
use crate::onion::wire::ip_port::SIZE_IPPORT;
use crate::onion::wire::SEND_BASE;

/// Packet ids (`TCP_common.h`).
pub mod id {
    /// `TCP_PACKET_ROUTING_REQUEST`.
    pub const ROUTING_REQUEST: u8 = 0;
    /// `TCP_PACKET_ROUTING_RESPONSE`.
    pub const ROUTING_RESPONSE: u8 = 1;
    /// `TCP_PACKET_CONNECTION_NOTIFICATION`.
    pub const CONNECT_NOTIFICATION: u8 = 2;
    /// `TCP_PACKET_DISCONNECT_NOTIFICATION`.
    pub const DISCONNECT_NOTIFICATION: u8 = 3;
    /// `TCP_PACKET_PING`.
    pub const PING: u8 = 4;
    /// `TCP_PACKET_PONG`.
    pub const PONG: u8 = 5;
    /// `TCP_PACKET_OOB_SEND`.
    pub const OOB_SEND: u8 = 6;
    /// `TCP_PACKET_OOB_RECV`.
    pub const OOB_RECV: u8 = 7;
    /// `TCP_PACKET_ONION_REQUEST`.
    pub const ONION_REQUEST: u8 = 8;
    /// `TCP_PACKET_ONION_RESPONSE`.
    pub const ONION_RESPONSE: u8 = 9;
    /// `TCP_PACKET_FORWARD_REQUEST`.
    pub const FORWARD_REQUEST: u8 = 10;
    /// `TCP_PACKET_FORWARDING`.
    pub const FORWARDING: u8 = 11;
}

/// `NUM_RESERVED_PORTS`: ids below this are control packets; connection ids start here.
pub const NUM_RESERVED_PORTS: u8 = 16;
/// `NUM_CLIENT_CONNECTIONS` = 240: routes one connection may hold (ids 16..=255).
pub const NUM_CLIENT_CONNECTIONS: usize = 256 - NUM_RESERVED_PORTS as usize;
/// `TCP_MAX_OOB_DATA_LENGTH`.
pub const MAX_OOB_DATA_LENGTH: usize = 1024;
/// The shortest onion request a server with an onion accepts is one byte longer than this
/// (`handle_TCP_packet`: `length <= 1 + CRYPTO_NONCE_SIZE + ONION_SEND_BASE * 2` kills).
pub const ONION_REQUEST_MIN_EXCLUSIVE: usize = 1 + NONCE_SIZE + 2 * SEND_BASE;
/// `MAX_FORWARD_DATA_SIZE` (`forwarding.h`): `MAX_UDP_PACKET_SIZE` 2048 − (1 + 1 + 254).
pub const MAX_FORWARD_DATA_SIZE: usize = 2048 - (1 + 1 + 254);

/// A frame's plaintext, parsed. Payloads borrow from the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packet<'a> {
    /// 0: the client asks for a route to `pk`.
    RoutingRequest {
        /// The peer the client wants to reach.
        pk: PublicKey,
    },
    /// 1: the server's answer: `conn_id` 0 means refused (no free slot, or our own key).
    RoutingResponse {
        /// 0, or 16..=255.
        conn_id: u8,
        /// The peer asked for.
        pk: PublicKey,
    },
    /// 2: both sides asked; the route `conn_id` is up.
    ConnectNotification {
        /// The route.
        conn_id: u8,
    },
    /// 3: the route `conn_id` is down (server → client), or to be removed (client → server).
    DisconnectNotification {
        /// The route.
        conn_id: u8,
    },
    /// 4: answer with a pong carrying the same id.
    Ping {
        /// Opaque id.
        ping_id: u64,
    },
    /// 5: the answer to a ping.
    Pong {
        /// The ping's id.
        ping_id: u64,
    },
    /// 6: deliver `data` to the client connected with key `dest`, if any.
    OobSend {
        /// The destination's long-term key.
        dest: PublicKey,
        /// 1..=1024 bytes.
        data: &'a [u8],
    },
    /// 7: `data` sent out of band by `sender`.
    OobRecv {
        /// The sender's long-term key.
        sender: PublicKey,
        /// At least 1 byte.
        data: &'a [u8],
    },
    /// 8: an onion request for the server to send as the path's first hop. `plain` is what
    /// hop A would have found in its layer: `[ipport B 19][PK2 32][E(k2)[..]]`.
    OnionRequest {
        /// The path's nonce.
        nonce: Nonce,
        /// The rest.
        plain: &'a [u8],
    },
    /// 9: an onion response that came back along a path through this server.
    OnionResponse {
        /// The response (0x84 or 0x86 from a 0.2.18 relay).
        data: &'a [u8],
    },
    /// 10: forward `data` to the DHT node at `dest` (`forwarding.c`).
    ForwardRequest {
        /// A UDP address.
        dest: SocketAddr,
        /// Up to [`MAX_FORWARD_DATA_SIZE`] bytes.
        data: &'a [u8],
    },
    /// 11: a forwarded reply for the client.
    Forwarding {
        /// The reply.
        data: &'a [u8],
    },
    /// 16..=255: a packet on the route `conn_id`.
    Data {
        /// The route, 16..=255.
        conn_id: u8,
        /// At least 1 byte (a net_crypto packet).
        payload: &'a [u8],
    },
}

/// Why a plaintext is not a valid packet. In c-toxcore every one of these closes the
/// connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PacketError {
    /// An empty plaintext.
    #[error("empty packet")]
    Empty,
    /// Ids 12 to 15 are reserved and unused.
    #[error("reserved packet id {0}")]
    Reserved(u8),
    /// A length the id does not allow.
    #[error("bad length {len} for packet id {id}")]
    BadLength {
        /// The id.
        id: u8,
        /// The plaintext's length.
        len: usize,
    },
    /// A forward request whose address is not packed UDP (family 2 or 10).
    #[error("forward request to an address of family {0}")]
    BadAddress(u8),
}

/// `unpack_ip_port(.., include_tcp = false)`: family 2 with 4 bytes or 10 with 16, then the
/// port; the size read.
fn unpack_udp_ip_port(bytes: &[u8]) -> Result<(SocketAddr, &[u8]), PacketError> {
    let mut r = Reader::new(bytes);
    let family = r.u8().map_err(|_| PacketError::BadAddress(0))?;
    let short = |_| PacketError::BadAddress(family);
    let ip = match family {
        FAMILY_UDP_V4 => IpAddr::V4(Ipv4Addr::from(r.array::<4>().map_err(short)?)),
        FAMILY_UDP_V6 => IpAddr::V6(Ipv6Addr::from(r.array::<16>().map_err(short)?)),
        other => return Err(PacketError::BadAddress(other)),
    };
    let port = r.u16_be().map_err(short)?;
    Ok((SocketAddr::new(ip, port), r.rest()))
}

impl<'a> Packet<'a> {
    /// Parses a frame's plaintext. Never panics; the result borrows from `bytes`.
    pub fn parse(bytes: &'a [u8]) -> Result<Packet<'a>, PacketError> {
        let mut r = Reader::new(bytes);
        let id = r.u8().map_err(|_| PacketError::Empty)?;
        let len = bytes.len();
        let bad = PacketError::BadLength { id, len };
        let short = |_| bad;
        let packet = match id {
            id::ROUTING_REQUEST if len == 1 + PUBLIC_KEY_SIZE => Packet::RoutingRequest {
                pk: PublicKey(r.array().map_err(short)?),
            },
            id::ROUTING_RESPONSE if len == 2 + PUBLIC_KEY_SIZE => Packet::RoutingResponse {
                conn_id: r.u8().map_err(short)?,
                pk: PublicKey(r.array().map_err(short)?),
            },
            id::CONNECT_NOTIFICATION if len == 2 => Packet::ConnectNotification {
                conn_id: r.u8().map_err(short)?,
            },
            id::DISCONNECT_NOTIFICATION if len == 2 => Packet::DisconnectNotification {
                conn_id: r.u8().map_err(short)?,
            },
            id::PING if len == 9 => Packet::Ping {
                ping_id: r.u64_be().map_err(short)?,
            },
            id::PONG if len == 9 => Packet::Pong {
                ping_id: r.u64_be().map_err(short)?,
            },
            id::OOB_SEND
                if len > 1 + PUBLIC_KEY_SIZE
                    && len <= 1 + PUBLIC_KEY_SIZE + MAX_OOB_DATA_LENGTH =>
            {
                Packet::OobSend {
                    dest: PublicKey(r.array().map_err(short)?),
                    data: r.rest(),
                }
            }
            id::OOB_RECV if len > 1 + PUBLIC_KEY_SIZE => Packet::OobRecv {
                sender: PublicKey(r.array().map_err(short)?),
                data: r.rest(),
            },
            id::ONION_REQUEST if len > ONION_REQUEST_MIN_EXCLUSIVE => Packet::OnionRequest {
                nonce: Nonce(r.array().map_err(short)?),
                plain: r.rest(),
            },
            id::ONION_RESPONSE if len > 1 => Packet::OnionResponse { data: r.rest() },
            id::FORWARD_REQUEST => {
                let (dest, data) = unpack_udp_ip_port(r.rest())?;
                if data.len() > MAX_FORWARD_DATA_SIZE {
                    return Err(bad);
                }
                Packet::ForwardRequest { dest, data }
            }
            id::FORWARDING if len > 1 => Packet::Forwarding { data: r.rest() },
            12..=15 => return Err(PacketError::Reserved(id)),
            id if id >= NUM_RESERVED_PORTS && len > 1 => Packet::Data {
                conn_id: id,
                payload: r.rest(),
            },
            _ => return Err(bad),
        };
        Ok(packet)
    }

    /// The id byte this packet starts with.
    pub fn id(&self) -> u8 {
        match self {
            Packet::RoutingRequest { .. } => id::ROUTING_REQUEST,
            Packet::RoutingResponse { .. } => id::ROUTING_RESPONSE,
            Packet::ConnectNotification { .. } => id::CONNECT_NOTIFICATION,
            Packet::DisconnectNotification { .. } => id::DISCONNECT_NOTIFICATION,
            Packet::Ping { .. } => id::PING,
            Packet::Pong { .. } => id::PONG,
            Packet::OobSend { .. } => id::OOB_SEND,
            Packet::OobRecv { .. } => id::OOB_RECV,
            Packet::OnionRequest { .. } => id::ONION_REQUEST,
            Packet::OnionResponse { .. } => id::ONION_RESPONSE,
            Packet::ForwardRequest { .. } => id::FORWARD_REQUEST,
            Packet::Forwarding { .. } => id::FORWARDING,
            Packet::Data { conn_id, .. } => *conn_id,
        }
    }

    /// The plaintext's size once encoded.
    pub fn encoded_len(&self) -> usize {
        // Saturating: a packet too long to count does not fit a frame either.
        let body = match self {
            Packet::RoutingRequest { .. } => PUBLIC_KEY_SIZE,
            Packet::RoutingResponse { .. } => 1 + PUBLIC_KEY_SIZE,
            Packet::ConnectNotification { .. } | Packet::DisconnectNotification { .. } => 1,
            Packet::Ping { .. } | Packet::Pong { .. } => 8,
            Packet::OobSend { data, .. } | Packet::OobRecv { data, .. } => {
                PUBLIC_KEY_SIZE.saturating_add(data.len())
            }
            Packet::OnionRequest { plain, .. } => NONCE_SIZE.saturating_add(plain.len()),
            Packet::OnionResponse { data } | Packet::Forwarding { data } => data.len(),
            Packet::ForwardRequest { dest, data } => {
                (if dest.is_ipv4() { 7 } else { SIZE_IPPORT }).saturating_add(data.len())
            }
            Packet::Data { payload, .. } => payload.len(),
        };
        body.saturating_add(1)
    }

    /// Appends the plaintext to `out`. The result parses back to `self` when `self` obeys
    /// the limits [`Self::parse`] checks (a packet made from a parse always does); it is at
    /// most [`MAX_PLAINTEXT_SIZE`] bytes for every packet a relay or client sends.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.reserve(self.encoded_len());
        out.push(self.id());
        match self {
            Packet::RoutingRequest { pk } => out.extend_from_slice(pk.as_bytes()),
            Packet::RoutingResponse { conn_id, pk } => {
                out.push(*conn_id);
                out.extend_from_slice(pk.as_bytes());
            }
            Packet::ConnectNotification { conn_id }
            | Packet::DisconnectNotification { conn_id } => out.push(*conn_id),
            Packet::Ping { ping_id } | Packet::Pong { ping_id } => {
                out.extend_from_slice(&ping_id.to_be_bytes())
            }
            Packet::OobSend { dest: pk, data } | Packet::OobRecv { sender: pk, data } => {
                out.extend_from_slice(pk.as_bytes());
                out.extend_from_slice(data);
            }
            Packet::OnionRequest { nonce, plain } => {
                out.extend_from_slice(&nonce.0);
                out.extend_from_slice(plain);
            }
            Packet::OnionResponse { data } | Packet::Forwarding { data } => {
                out.extend_from_slice(data)
            }
            Packet::ForwardRequest { dest, data } => {
                match dest.ip() {
                    IpAddr::V4(v4) => {
                        out.push(FAMILY_UDP_V4);
                        out.extend_from_slice(&v4.octets());
                    }
                    IpAddr::V6(v6) => {
                        out.push(FAMILY_UDP_V6);
                        out.extend_from_slice(&v6.octets());
                    }
                }
                out.extend_from_slice(&dest.port().to_be_bytes());
                out.extend_from_slice(data);
            }
            Packet::Data { payload, .. } => out.extend_from_slice(payload),
        }
    }

    /// The encoded plaintext in a new vector.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encoded_len());
        self.encode(&mut out);
        out
    }

    /// True if the encoded plaintext fits one frame.
    pub fn fits_frame(&self) -> bool {
        self.encoded_len() <= MAX_PLAINTEXT_SIZE
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const PK: PublicKey = PublicKey([0xaa; 32]);

    fn round_trip(p: Packet<'_>) {
        let bytes = p.to_vec();
        assert_eq!(bytes.len(), p.encoded_len());
        assert_eq!(Packet::parse(&bytes), Ok(p), "{bytes:?}");
    }

    #[test]
    fn constants_match_c_toxcore() {
        assert_eq!(NUM_CLIENT_CONNECTIONS, 240);
        assert_eq!(ONION_REQUEST_MIN_EXCLUSIVE, 159);
        assert_eq!(MAX_FORWARD_DATA_SIZE, 1792);
    }

    #[test]
    fn every_kind_round_trips() {
        round_trip(Packet::RoutingRequest { pk: PK });
        round_trip(Packet::RoutingResponse { conn_id: 0, pk: PK });
        round_trip(Packet::RoutingResponse {
            conn_id: 255,
            pk: PK,
        });
        round_trip(Packet::ConnectNotification { conn_id: 16 });
        round_trip(Packet::DisconnectNotification { conn_id: 17 });
        round_trip(Packet::Ping {
            ping_id: 0x0102030405060708,
        });
        round_trip(Packet::Pong { ping_id: u64::MAX });
        round_trip(Packet::OobSend {
            dest: PK,
            data: &[1; 1024],
        });
        round_trip(Packet::OobRecv {
            sender: PK,
            data: &[2],
        });
        round_trip(Packet::OnionRequest {
            nonce: Nonce([3; 24]),
            plain: &[4; 200],
        });
        round_trip(Packet::OnionResponse { data: &[0x84, 1] });
        round_trip(Packet::ForwardRequest {
            dest: "1.2.3.4:33445".parse().unwrap(),
            data: &[5; 10],
        });
        round_trip(Packet::ForwardRequest {
            dest: "[2001:db8::1]:1".parse().unwrap(),
            data: &[],
        });
        round_trip(Packet::Forwarding { data: &[6] });
        round_trip(Packet::Data {
            conn_id: 16,
            payload: &[0x1b; 1400],
        });
    }

    #[test]
    fn byte_layouts() {
        assert_eq!(
            Packet::Ping {
                ping_id: 0x0102030405060708
            }
            .to_vec(),
            [4, 1, 2, 3, 4, 5, 6, 7, 8]
        );
        let r = Packet::RoutingResponse {
            conn_id: 20,
            pk: PK,
        }
        .to_vec();
        assert_eq!(&r[..2], &[1, 20]);
        assert_eq!(&r[2..], &[0xaa; 32]);
        assert_eq!(
            Packet::Data {
                conn_id: 200,
                payload: &[9, 8]
            }
            .to_vec(),
            [200, 9, 8]
        );
        let f = Packet::ForwardRequest {
            dest: "1.2.3.4:258".parse().unwrap(),
            data: &[7],
        }
        .to_vec();
        assert_eq!(f, [10, 2, 1, 2, 3, 4, 1, 2, 7]);
    }

    #[test]
    fn lengths_c_toxcore_kills_on_are_refused() {
        let bad = |bytes: &[u8]| Packet::parse(bytes).unwrap_err();
        assert_eq!(bad(&[]), PacketError::Empty);
        assert_eq!(bad(&[0; 32]), PacketError::BadLength { id: 0, len: 32 });
        assert_eq!(bad(&[0; 34]), PacketError::BadLength { id: 0, len: 34 });
        assert_eq!(bad(&[2]), PacketError::BadLength { id: 2, len: 1 });
        assert_eq!(bad(&[3, 16, 0]), PacketError::BadLength { id: 3, len: 3 });
        assert_eq!(bad(&[4; 8]), PacketError::BadLength { id: 4, len: 8 });
        assert_eq!(bad(&[5; 10]), PacketError::BadLength { id: 5, len: 10 });
        // OOB: no data, or more than 1024 bytes.
        assert_eq!(bad(&[6; 33]), PacketError::BadLength { id: 6, len: 33 });
        assert_eq!(
            bad(&[6; 1 + 32 + 1025]),
            PacketError::BadLength { id: 6, len: 1058 }
        );
        assert_eq!(bad(&[7; 33]), PacketError::BadLength { id: 7, len: 33 });
        assert_eq!(bad(&[8; 159]), PacketError::BadLength { id: 8, len: 159 });
        assert!(Packet::parse(&[8; 160]).is_ok());
        assert_eq!(bad(&[9]), PacketError::BadLength { id: 9, len: 1 });
        assert_eq!(bad(&[10, 2, 1, 2]), PacketError::BadAddress(2));
        assert_eq!(
            bad(&[10, 130, 1, 2, 3, 4, 0, 1]),
            PacketError::BadAddress(130)
        );
        let mut long = vec![10, 2, 1, 2, 3, 4, 0, 1];
        long.extend_from_slice(&[0; MAX_FORWARD_DATA_SIZE + 1]);
        assert_eq!(bad(&long), PacketError::BadLength { id: 10, len: 1801 });
        assert_eq!(bad(&[11]), PacketError::BadLength { id: 11, len: 1 });
        assert_eq!(bad(&[12, 1]), PacketError::Reserved(12));
        assert_eq!(bad(&[15, 1]), PacketError::Reserved(15));
        assert_eq!(bad(&[16]), PacketError::BadLength { id: 16, len: 1 });
    }

    fn any_packet() -> impl Strategy<Value = Vec<u8>> {
        let pk = any::<[u8; 32]>().prop_map(PublicKey);
        let data = |lo: usize, hi: usize| proptest::collection::vec(any::<u8>(), lo..hi);
        prop_oneof![
            pk.clone()
                .prop_map(|pk| Packet::RoutingRequest { pk }.to_vec()),
            (any::<u8>(), pk.clone()).prop_map(|(conn_id, pk)| Packet::RoutingResponse {
                conn_id,
                pk
            }
            .to_vec()),
            any::<u8>().prop_map(|conn_id| Packet::ConnectNotification { conn_id }.to_vec()),
            any::<u64>().prop_map(|ping_id| Packet::Ping { ping_id }.to_vec()),
            (pk.clone(), data(1, 1025))
                .prop_map(|(dest, d)| Packet::OobSend { dest, data: &d }.to_vec()),
            (any::<[u8; 24]>(), data(135, 1500)).prop_map(|(n, d)| Packet::OnionRequest {
                nonce: Nonce(n),
                plain: &d
            }
            .to_vec()),
            (any::<[u8; 4]>(), any::<u16>(), data(0, 100)).prop_map(|(ip, port, d)| {
                Packet::ForwardRequest {
                    dest: SocketAddr::from((ip, port)),
                    data: &d,
                }
                .to_vec()
            }),
            (16u8.., data(1, 2032)).prop_map(|(conn_id, d)| Packet::Data {
                conn_id,
                payload: &d
            }
            .to_vec()),
        ]
    }

    proptest! {
        #[test]
        fn encoded_packets_parse_and_re_encode_identically(bytes in any_packet()) {
            let p = Packet::parse(&bytes).unwrap();
            prop_assert_eq!(p.to_vec(), bytes);
        }

        #[test]
        fn whatever_parses_re_encodes_to_the_same_bytes(
            bytes in proptest::collection::vec(any::<u8>(), 0..300),
        ) {
            if let Ok(p) = Packet::parse(&bytes) {
                prop_assert_eq!(p.to_vec(), bytes);
            }
        }
    }
}
