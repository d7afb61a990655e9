//! Just enough IP header parsing for the emulator: which flow a packet belongs to, and how
//! to hand it to a [`Link`](rustox_simulator::Link) so that the link counts its real size.
//!
//! `Link::transmit` takes a UDP payload and adds the IPv4/UDP (28) or IPv6/UDP (48) header
//! bytes itself ([`wire_bytes`]). The emulator holds whole IP packets, so it passes the packet
//! minus that many leading bytes: the link's wire size is then exactly the IP packet's length,
//! for UDP and TCP alike, and corruption can only hit bytes past the first 28 (the UDP payload
//! of a plain IPv4 datagram — the bytes the simulator's corruption hits too).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use rustox_simulator::wire_bytes;
use serde::Serialize;

/// IP protocol numbers (IANA) the flow table names.
pub const PROTO_TCP: u8 = 6;
/// UDP.
pub const PROTO_UDP: u8 = 17;

/// A transport flow as seen in one direction: protocol and both endpoints (ports are zero
/// for protocols without ports and for fragments after the first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct FlowKey {
    /// IP protocol number (6 TCP, 17 UDP).
    pub protocol: u8,
    /// Source address and port.
    pub src: SocketAddr,
    /// Destination address and port.
    pub dst: SocketAddr,
}

/// What the emulator reads from an IP packet's headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketInfo {
    /// The flow.
    pub flow: FlowKey,
}

/// Parses IPv4 or IPv6 headers; `None` for anything too short or of another version.
pub fn parse(packet: &[u8]) -> Option<PacketInfo> {
    match packet.first()? >> 4 {
        4 => parse_v4(packet),
        6 => parse_v6(packet),
        _ => None,
    }
}

fn parse_v4(p: &[u8]) -> Option<PacketInfo> {
    let ihl = usize::from(p.first()? & 0x0f) * 4;
    if ihl < 20 || p.len() < ihl {
        return None;
    }
    let protocol = p[9];
    let src = Ipv4Addr::new(p[12], p[13], p[14], p[15]);
    let dst = Ipv4Addr::new(p[16], p[17], p[18], p[19]);
    let fragment_offset = u16::from_be_bytes([p[6], p[7]]) & 0x1fff;
    let (sport, dport) = if fragment_offset == 0 {
        ports(protocol, &p[ihl..])
    } else {
        (0, 0)
    };
    Some(PacketInfo {
        flow: FlowKey {
            protocol,
            src: SocketAddr::new(IpAddr::V4(src), sport),
            dst: SocketAddr::new(IpAddr::V4(dst), dport),
        },
    })
}

fn parse_v6(p: &[u8]) -> Option<PacketInfo> {
    if p.len() < 40 {
        return None;
    }
    // Extension headers are not walked: the emulator's namespaces run IPv6-free, and an
    // unknown next header only costs the flow its ports.
    let protocol = p[6];
    let addr = |at: usize| {
        let mut b = [0u8; 16];
        b.copy_from_slice(&p[at..at + 16]);
        Ipv6Addr::from(b)
    };
    let (sport, dport) = ports(protocol, &p[40..]);
    Some(PacketInfo {
        flow: FlowKey {
            protocol,
            src: SocketAddr::new(IpAddr::V6(addr(8)), sport),
            dst: SocketAddr::new(IpAddr::V6(addr(24)), dport),
        },
    })
}

/// Source and destination ports of a TCP or UDP header (both start with them).
fn ports(protocol: u8, l4: &[u8]) -> (u16, u16) {
    match (protocol, l4) {
        (PROTO_TCP | PROTO_UDP, [a, b, c, d, ..]) => {
            (u16::from_be_bytes([*a, *b]), u16::from_be_bytes([*c, *d]))
        }
        _ => (0, 0),
    }
}

/// The destination to name to `Link::transmit` and how many leading bytes of `packet` to
/// hold back, so that the link's wire size equals `packet.len()` (exactly when the packet is
/// at least as long as the header allowance, 28 bytes for IPv4 and 48 for IPv6).
pub fn link_split(packet: &[u8]) -> (SocketAddr, usize) {
    let dst = parse(packet).map_or(SocketAddr::from(([0, 0, 0, 0], 0)), |i| i.flow.dst);
    let allowance = wire_bytes(dst, 0) as usize;
    (dst, allowance.min(packet.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal IPv4/UDP datagram (checksums not filled: nothing here checks them).
    fn udp_v4(payload: usize) -> Vec<u8> {
        let total = 28 + payload;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[9] = PROTO_UDP;
        p[12..16].copy_from_slice(&[10, 201, 0, 1]);
        p[16..20].copy_from_slice(&[10, 201, 0, 2]);
        p[20..22].copy_from_slice(&4000u16.to_be_bytes());
        p[22..24].copy_from_slice(&33445u16.to_be_bytes());
        p
    }

    #[test]
    fn flow_of_a_udp_datagram() {
        let info = parse(&udp_v4(10)).unwrap();
        assert_eq!(info.flow.protocol, PROTO_UDP);
        assert_eq!(info.flow.src, "10.201.0.1:4000".parse().unwrap());
        assert_eq!(info.flow.dst, "10.201.0.2:33445".parse().unwrap());
    }

    #[test]
    fn later_fragments_have_no_ports() {
        let mut p = udp_v4(10);
        p[7] = 10; // fragment offset 80 bytes
        assert_eq!(parse(&p).unwrap().flow.src.port(), 0);
    }

    #[test]
    fn the_link_counts_the_real_packet_size() {
        for payload in [0usize, 1, 1372] {
            let p = udp_v4(payload);
            let (dst, held) = link_split(&p);
            assert_eq!(wire_bytes(dst, p.len() - held), p.len() as u64);
        }
    }

    #[test]
    fn garbage_is_not_parsed_and_costs_no_panic() {
        assert_eq!(parse(&[]), None);
        assert_eq!(parse(&[0x45, 0, 0]), None);
        assert_eq!(parse(&[0x4f; 30]), None, "IHL 60 longer than the packet");
        assert_eq!(parse(&[0x60; 20]), None);
        let (_, held) = link_split(&[1, 2, 3]);
        assert_eq!(held, 3);
    }
}
