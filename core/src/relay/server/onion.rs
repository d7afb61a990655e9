//! The relay as the first hop of its clients' onion paths (docs/protocol.md §6.2, §7;
//! c-toxcore 0.2.18 `TCP_server.c` `con_id_to_ip_port`, `ip_port_to_con_id`,
//! `handle_onion_recv_1`, and `onion.c` `onion_send_1`, `handle_recv_1`).
//!
//! A client's packet 8 holds what hop A would have found in its layer; the onion relay sends
//! it on as 0x81 with a sendback naming the *connection* instead of a UDP address. When the
//! 0x8e comes back and that sendback opens, the response goes to the connection as packet 9.
//!
//! The sendback address uses family 11, c-toxcore's `TCP_CLIENT_FAMILY` (what
//! `con_id_to_ip_port` writes; 14, `TCP_SERVER_FAMILY`, is what *clients* mark relays with).
//! Its 16 address bytes are ours to fill, since only this relay ever opens them: the
//! driver's connection id, then the connection's serial number, both big-endian. The serial
//! is unique per connection for the server's lifetime, so a response that arrives after its
//! connection closed is not delivered to a later connection the driver gave the same id
//! (c-toxcore checks its `identifier` the same way).

use std::net::SocketAddr;

use rustox_net_crypto::crypto::Nonce;

use super::ConnId;
use crate::onion::wire::ip_port::{IpPort, FAMILY_TCP_CLIENT};

/// The sendback address that names connection `conn` with serial `serial`.
pub fn sendback_address(conn: ConnId, serial: u64) -> IpPort {
    let mut addr = [0u8; 16];
    addr[..8].copy_from_slice(&conn.0.to_be_bytes());
    addr[8..].copy_from_slice(&serial.to_be_bytes());
    IpPort::Other {
        family: FAMILY_TCP_CLIENT,
        addr,
        port: 0,
    }
}

/// The connection and serial a sendback address names, if it is one of ours.
pub fn parse_sendback_address(ip: &IpPort) -> Option<(ConnId, u64)> {
    match ip {
        IpPort::Other {
            family: FAMILY_TCP_CLIENT,
            addr,
            port: 0,
        } => {
            let mut conn = [0u8; 8];
            let mut serial = [0u8; 8];
            conn.copy_from_slice(&addr[..8]);
            serial.copy_from_slice(&addr[8..]);
            Some((ConnId(u64::from_be_bytes(conn)), u64::from_be_bytes(serial)))
        }
        _ => None,
    }
}

/// An onion request from a client, for the onion relay to send as hop A
/// (`OnionServer::handle_tcp_request`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnionRequest {
    /// The client's connection.
    pub conn: ConnId,
    /// The client's address (for the onion server's per-source limit).
    pub client: SocketAddr,
    /// The sendback address naming the connection ([`sendback_address`]).
    pub source: IpPort,
    /// The path's nonce.
    pub nonce: Nonce,
    /// `[ipport B 19][PK2 32][E(k2)[..]]`.
    pub plain: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_round_trips_and_other_families_are_not_ours() {
        let a = sendback_address(ConnId(0x0102030405060708), 99);
        assert_eq!(a.encode()[0], 11);
        assert_eq!(
            parse_sendback_address(&IpPort::decode(&a.encode()).unwrap()),
            Some((ConnId(0x0102030405060708), 99))
        );
        assert_eq!(
            parse_sendback_address(&IpPort::Udp("1.2.3.4:5".parse().unwrap())),
            None
        );
        assert_eq!(
            parse_sendback_address(&IpPort::Other {
                family: 14,
                addr: [0; 16],
                port: 0
            }),
            None
        );
    }
}

/// A forward request from a client (TCP packet 10, c-toxcore 0.2.18 `TCP_server.c`
/// `handle_TCP_packet`), for the DHT's forwarding to send as a 0x91 to `dest` with a sendback
/// naming the connection (`SENDBACK_TCP`: its index and identifier).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardRequest {
    /// The client's address (for the per-source limit).
    pub client: SocketAddr,
    /// The connection's index, as the sendback carries it.
    pub con: u32,
    /// The connection's serial, the sendback's identifier.
    pub serial: u64,
    /// The DHT node to forward to.
    pub dest: SocketAddr,
    /// The request, at most `MAX_FORWARD_DATA_SIZE` bytes.
    pub data: Vec<u8>,
}
