//! IP_Port inside onion layers and sendbacks (docs/protocol.md §6.1; c-toxcore 0.2.18 `onion.c`
//! `ipport_pack` / `ipport_unpack`, which are private to onion.c and differ from the DHT's
//! packed nodes).
//!
//! | length | content                                                          |
//! |--------|------------------------------------------------------------------|
//! | 1      | family byte, verbatim                                            |
//! | 16     | IPv6 address; or IPv4 in the first 4 bytes, then 12 zero bytes   |
//! | 2      | port, big-endian                                                 |
//!
//! 19 bytes (`SIZE_IPPORT`) whatever the family. What 0.2.18 does with each family:
//! * 2 / 10 (UDP): packed and unpacked; the only families relays forward to.
//! * 130 / 138 (`TOX_TCP_INET`/`6`): `ip_pack` lays them out like 2 / 10, but every
//!   `ipport_unpack` *with* its family check refuses them. The check is off only where the
//!   first hop opens its own sendback (`handle_recv_1`).
//! * Anything else is copied as 16 opaque bytes. The TCP server writes
//!   `TCP_CLIENT_FAMILY` (11) with a connection id in those bytes into the first hop's
//!   sendback (`con_id_to_ip_port`), and `handle_recv_1` hands such a sendback back to the
//!   TCP server. Clients mark the relays they reach onion nodes through with
//!   `TCP_SERVER_FAMILY` (14); that one never leaves the client.
//!
//! On decoding, the 12 bytes after an IPv4 address are ignored, as c-toxcore ignores them.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use rustox_net_crypto::wire::Reader;

use crate::dht::wire::packed_node::{
    canonical, FAMILY_TCP_V4, FAMILY_TCP_V6, FAMILY_UDP_V4, FAMILY_UDP_V6,
};

/// `SIZE_IPPORT`.
pub const SIZE_IPPORT: usize = 1 + 16 + 2;

/// c-toxcore's `TCP_SERVER_FAMILY` (`network.h`: `TOX_AF_INET6 + 4`): how a client marks an
/// onion node it reaches through a TCP relay (`TCP_connection.c`, `onion_client.c`).
pub const FAMILY_TCP_SERVER: u8 = 14;

/// c-toxcore's `TCP_CLIENT_FAMILY` (`network.h`: `TOX_AF_INET6 + 1`): the family a TCP relay
/// writes into its first-hop sendback to name one of its client connections
/// (`TCP_server.c` `con_id_to_ip_port`).
pub const FAMILY_TCP_CLIENT: u8 = 11;

/// An address as it travels inside an onion layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IpPort {
    /// Families 2 / 10. IPv4-mapped IPv6 addresses are kept as IPv4 (c-toxcore converts
    /// them on receipt), so the canonical form is what is packed.
    Udp(SocketAddr),
    /// Families 130 / 138: a TCP relay's address.
    Tcp(SocketAddr),
    /// Any other family byte, with its 16 address bytes as they were.
    Other {
        /// The family byte.
        family: u8,
        /// The 16 address bytes.
        addr: [u8; 16],
        /// The port.
        port: u16,
    },
}

/// Why 19 bytes are not an address a relay may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IpPortError {
    /// Fewer than 19 bytes.
    #[error("truncated IP_Port: {0} bytes")]
    Truncated(usize),
    /// A family other than 2 / 10 where c-toxcore checks the family.
    #[error("family {0} is not UDP")]
    NotUdp(u8),
}

impl IpPort {
    /// The packed 19 bytes.
    pub fn encode(&self) -> [u8; SIZE_IPPORT] {
        let mut out = [0u8; SIZE_IPPORT];
        let (family, ip, port) = match *self {
            IpPort::Udp(a) | IpPort::Tcp(a) => {
                let a = canonical(a);
                let tcp = matches!(self, IpPort::Tcp(_));
                match a.ip() {
                    IpAddr::V4(v4) => {
                        let mut ip = [0u8; 16];
                        ip[..4].copy_from_slice(&v4.octets());
                        let f = if tcp { FAMILY_TCP_V4 } else { FAMILY_UDP_V4 };
                        (f, ip, a.port())
                    }
                    IpAddr::V6(v6) => {
                        let f = if tcp { FAMILY_TCP_V6 } else { FAMILY_UDP_V6 };
                        (f, v6.octets(), a.port())
                    }
                }
            }
            IpPort::Other { family, addr, port } => (family, addr, port),
        };
        out[0] = family;
        out[1..17].copy_from_slice(&ip);
        out[17..19].copy_from_slice(&port.to_be_bytes());
        out
    }

    /// Reads the first 19 bytes without the family check (c-toxcore's
    /// `ipport_unpack(.., disable_family_check = true)`).
    pub fn decode(bytes: &[u8]) -> Result<IpPort, IpPortError> {
        let short = |_| IpPortError::Truncated(bytes.len());
        let mut r = Reader::new(bytes);
        let family = r.u8().map_err(short)?;
        let v6: [u8; 16] = r.array().map_err(short)?;
        let port = r.u16_be().map_err(short)?;
        let [a0, a1, a2, a3, ..] = v6;
        let v4 = || IpAddr::V4(Ipv4Addr::new(a0, a1, a2, a3));
        let v6addr = IpAddr::V6(Ipv6Addr::from(v6));
        Ok(match family {
            FAMILY_UDP_V4 => IpPort::Udp(SocketAddr::new(v4(), port)),
            FAMILY_UDP_V6 => IpPort::Udp(canonical(SocketAddr::new(v6addr, port))),
            FAMILY_TCP_V4 => IpPort::Tcp(SocketAddr::new(v4(), port)),
            FAMILY_TCP_V6 => IpPort::Tcp(canonical(SocketAddr::new(v6addr, port))),
            _ => IpPort::Other {
                family,
                addr: v6,
                port,
            },
        })
    }

    /// Reads the first 19 bytes with the family check every relay applies before it forwards
    /// (`ipport_unpack(.., false)`): only UDP over IPv4 or IPv6 passes.
    pub fn decode_udp(bytes: &[u8]) -> Result<SocketAddr, IpPortError> {
        match Self::decode(bytes)? {
            IpPort::Udp(a) => Ok(a),
            IpPort::Tcp(a) if a.is_ipv4() => Err(IpPortError::NotUdp(FAMILY_TCP_V4)),
            IpPort::Tcp(_) => Err(IpPortError::NotUdp(FAMILY_TCP_V6)),
            IpPort::Other { family, .. } => Err(IpPortError::NotUdp(family)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ipv4_byte_table() {
        let b = IpPort::Udp("1.2.3.4:33445".parse().unwrap()).encode();
        let mut expected = [0u8; 19];
        expected[..5].copy_from_slice(&[2, 1, 2, 3, 4]);
        expected[17..].copy_from_slice(&[0x82, 0xa5]);
        assert_eq!(b, expected);
    }

    #[test]
    fn ipv6_and_tcp_families() {
        let a: SocketAddr = "[2001:db8::7]:443".parse().unwrap();
        let b = IpPort::Tcp(a).encode();
        assert_eq!(b[0], 138);
        assert_eq!(IpPort::decode(&b), Ok(IpPort::Tcp(a)));
        assert_eq!(IpPort::decode_udp(&b), Err(IpPortError::NotUdp(138)));
        let b = IpPort::Udp(a).encode();
        assert_eq!(b[0], 10);
        assert_eq!(IpPort::decode_udp(&b), Ok(a));
        let t4 = IpPort::Tcp("9.8.7.6:5".parse().unwrap()).encode();
        assert_eq!(t4[0], 130);
        assert_eq!(&t4[5..17], &[0; 12]);
        assert_eq!(IpPort::decode_udp(&t4), Err(IpPortError::NotUdp(130)));
    }

    #[test]
    fn tcp_server_connection_ids_pass_through_unchecked() {
        let other = IpPort::Other {
            family: FAMILY_TCP_SERVER,
            addr: [0xab; 16],
            port: 0,
        };
        let b = other.encode();
        assert_eq!(IpPort::decode(&b), Ok(other));
        assert_eq!(IpPort::decode_udp(&b), Err(IpPortError::NotUdp(14)));
    }

    #[test]
    fn ipv4_padding_is_ignored_and_mapped_v6_is_canonical() {
        let mut b = IpPort::Udp("1.2.3.4:5".parse().unwrap()).encode();
        b[10] = 0xff;
        assert_eq!(IpPort::decode_udp(&b), Ok("1.2.3.4:5".parse().unwrap()));
        let mapped = IpPort::Udp("[::ffff:1.2.3.4]:5".parse().unwrap()).encode();
        assert_eq!(mapped[0], 2);
        assert_eq!(IpPort::decode(&[2; 18]), Err(IpPortError::Truncated(18)));
    }

    proptest! {
        #[test]
        fn round_trip(bytes in any::<[u8; 19]>()) {
            let ip = IpPort::decode(&bytes).unwrap();
            // Decoding normalises (IPv4 padding, mapped IPv6); once normal, it is stable.
            prop_assert_eq!(IpPort::decode(&ip.encode()), Ok(ip));
        }

        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            let _ = IpPort::decode(&bytes);
            let _ = IpPort::decode_udp(&bytes);
        }
    }
}
