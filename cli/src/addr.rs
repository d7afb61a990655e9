//! Addresses on the command line: `127.0.0.1:33445`, `[::1]:33445` or `host:port`.

use std::net::{SocketAddr, ToSocketAddrs};

/// Parses or resolves `HOST:PORT`; the error text is what clap shows after "invalid value".
pub fn parse_addr(text: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    if !text.contains(':') {
        return Err(format!(
            "{text:?} has no port (write HOST:PORT, e.g. 127.0.0.1:33445)"
        ));
    }
    text.to_socket_addrs()
        .map_err(|e| format!("cannot resolve {text:?}: {e}"))?
        .next()
        .ok_or_else(|| format!("{text:?} resolves to no address"))
}

/// The wildcard address of the same family as `peer`, port chosen by the OS.
pub fn any_for(peer: SocketAddr) -> SocketAddr {
    match peer {
        SocketAddr::V4(_) => SocketAddr::from(([0, 0, 0, 0], 0)),
        SocketAddr::V6(_) => SocketAddr::from(([0u16; 8], 0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_and_resolved_addresses() {
        assert_eq!(
            parse_addr("127.0.0.1:9"),
            Ok(SocketAddr::from(([127, 0, 0, 1], 9)))
        );
        assert!(parse_addr("[::1]:9").is_ok());
        assert!(parse_addr("localhost:9").is_ok());
        assert!(parse_addr("127.0.0.1").unwrap_err().contains("no port"));
        assert!(parse_addr("127.0.0.1:99999").is_err());
    }
}
