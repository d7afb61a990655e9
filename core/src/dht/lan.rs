//! Which addresses count as LAN (c-toxcore `ip_is_lan` / `ip_is_local`, docs/protocol.md §5.7) and
//! where LAN discovery datagrams go.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// `TOX_PORTRANGE_FROM`.
pub const PORT_RANGE_FROM: u16 = 33445;
/// `TOX_PORTRANGE_TO`.
pub const PORT_RANGE_TO: u16 = 33545;
/// Ports besides the default one that each LAN discovery round covers.
pub const PORTS_PER_ROUND: u16 = 10;

/// Loopback (`ip_is_local`).
pub fn is_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.octets()[0] == 127,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_local(IpAddr::V4(v4)),
            None => v6 == Ipv6Addr::LOCALHOST,
        },
    }
}

/// LAN or local (`ip_is_lan`).
pub fn is_lan(ip: IpAddr) -> bool {
    if is_local(ip) {
        return true;
    }
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            o[0] == 10
                || (o[0] == 172 && (16..=31).contains(&o[1]))
                || (o[0] == 192 && o[1] == 168)
                || (o[0] == 169 && o[1] == 254 && o[2] != 0 && o[2] != 255)
                || (o[0] == 100 && (o[1] & 0xC0) == 0x40)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_lan(IpAddr::V4(v4));
            }
            let o = v6.octets();
            (o[0] == 0xFF && o[1] < 3 && o[15] == 1) || (o[0] == 0xFE && (o[1] & 0xC0) == 0x80)
        }
    }
}

/// Most interface broadcast addresses a LAN discovery round covers: a host with more
/// interfaces than this is unusual, and each costs 11 datagrams a round.
pub const MAX_BROADCAST_ADDRS: usize = 16;

/// The destinations of one LAN discovery round: the default port plus the next
/// `PORTS_PER_ROUND` of the range starting at `*cursor`, on IPv4 broadcast, `ff02::1` and
/// each interface broadcast address in `broadcasts` (`send_broadcasts` in c-toxcore's
/// LAN_discovery.c: 255.255.255.255 alone reaches nothing on an interface without a route
/// for it, an interface's own broadcast address does).
pub fn discovery_targets(cursor: &mut u16, ipv6: bool, broadcasts: &[IpAddr]) -> Vec<SocketAddr> {
    let span = PORT_RANGE_TO - PORT_RANGE_FROM + 1;
    let mut ports = vec![PORT_RANGE_FROM];
    for _ in 0..PORTS_PER_ROUND {
        *cursor = (*cursor + 1) % span;
        let p = PORT_RANGE_FROM + *cursor;
        if !ports.contains(&p) {
            ports.push(p);
        }
    }
    let mut out = Vec::new();
    for p in ports {
        out.push(SocketAddr::new(IpAddr::V4(Ipv4Addr::BROADCAST), p));
        for b in broadcasts.iter().take(MAX_BROADCAST_ADDRS) {
            out.push(SocketAddr::new(*b, p));
        }
        if ipv6 {
            out.push(SocketAddr::new(
                IpAddr::V6(Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1)),
                p,
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lan_ranges() {
        for ip in [
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.1.1",
            "100.64.0.1",
            "127.0.0.1",
            "::1",
            "fe80::1",
            "ff02::1",
            "::ffff:192.168.0.1",
        ] {
            assert!(is_lan(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "8.8.8.8",
            "172.32.0.1",
            "169.254.0.1",
            "169.254.255.1",
            "100.128.0.1",
            "2001:db8::1",
            "ff02::2",
        ] {
            assert!(!is_lan(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn rounds_cycle_through_the_whole_range() {
        let mut cursor = 0;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..11 {
            for t in discovery_targets(&mut cursor, false, &[]) {
                assert!((PORT_RANGE_FROM..=PORT_RANGE_TO).contains(&t.port()));
                seen.insert(t.port());
            }
        }
        assert_eq!(seen.len(), 101);
    }

    #[test]
    fn each_interface_broadcast_address_gets_every_port_of_the_round() {
        let mut cursor = 0;
        let lan: IpAddr = "10.98.0.255".parse().unwrap();
        let targets = discovery_targets(&mut cursor, false, &[lan]);
        let on_lan: Vec<u16> = targets
            .iter()
            .filter(|t| t.ip() == lan)
            .map(|t| t.port())
            .collect();
        let global = targets
            .iter()
            .filter(|t| t.ip() == IpAddr::V4(Ipv4Addr::BROADCAST))
            .count();
        assert_eq!(on_lan.len(), global);
        assert_eq!(on_lan[0], PORT_RANGE_FROM);
        // A flood of addresses is capped.
        let many: Vec<IpAddr> = (0..100u8)
            .map(|i| IpAddr::V4(Ipv4Addr::new(10, i, 0, 255)))
            .collect();
        let targets = discovery_targets(&mut cursor, false, &many);
        assert_eq!(targets.len(), global * (1 + MAX_BROADCAST_ADDRS));
    }
}
