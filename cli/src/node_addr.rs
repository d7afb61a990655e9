//! `HOST:PORT:KEY` on the command line: a DHT node to bootstrap from (`--bootstrap`) or a
//! TCP relay (`--tcp-relay`), each named by its address and its key.

use std::net::SocketAddr;

use rustox_core::crypto::PublicKey;

use crate::addr::parse_addr;

/// One `--bootstrap` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BootstrapNode {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its DHT public key.
    pub dht_pk: PublicKey,
}

/// Parses `HOST:PORT:KEY`; the key is the last colon-separated field, so an IPv6 host in
/// brackets (`[::1]:33445:KEY`) works.
pub fn parse_bootstrap(text: &str) -> Result<BootstrapNode, String> {
    let (host_port, key) = text
        .rsplit_once(':')
        .ok_or_else(|| format!("{text:?} is not HOST:PORT:KEY"))?;
    let key = key.trim();
    let dht_pk = (key.len() == 64)
        .then(|| PublicKey::from_hex(key))
        .flatten()
        .ok_or_else(|| format!("{text:?}: the node's key must be 64 hex digits"))?;
    let addr = parse_addr(host_port)?;
    Ok(BootstrapNode { addr, dht_pk })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "F404ABAA1C99A9D37D61AB54898F56793E1DEF8BD46B1038B9D822E8460FAB67";

    #[test]
    fn bootstrap_values_parse_with_ipv4_ipv6_and_names() {
        let b = parse_bootstrap(&format!("127.0.0.1:33445:{KEY}")).unwrap();
        assert_eq!(b.addr, SocketAddr::from(([127, 0, 0, 1], 33445)));
        assert_eq!(b.dht_pk.to_hex().to_uppercase(), KEY);
        let b = parse_bootstrap(&format!("[::1]:33445:{KEY}")).unwrap();
        assert!(b.addr.is_ipv6());
        assert!(parse_bootstrap(&format!("localhost:1:{KEY}")).is_ok());
    }

    #[test]
    fn bad_bootstrap_values_say_what_is_wrong() {
        assert!(parse_bootstrap("127.0.0.1:33445")
            .unwrap_err()
            .contains("64 hex"));
        assert!(parse_bootstrap(&format!("127.0.0.1:{KEY}"))
            .unwrap_err()
            .contains("no port"));
        assert!(parse_bootstrap(&format!("127.0.0.1:33445:{}", &KEY[..60]))
            .unwrap_err()
            .contains("64 hex"));
        assert!(parse_bootstrap("nonsense").is_err());
    }
}
