//! `--proxy socks5://HOST:PORT` and `--proxy http://HOST:PORT`: every TCP relay connection
//! goes through that proxy (the SOCKS5 or HTTP CONNECT handshake of `rustox_core::proxy`),
//! and the node sends no UDP, as c-toxcore does with a proxy set. The proxy's own name is
//! resolved here; relays are named to the proxy by the address `--tcp-relay` resolved to.

use rustox_core::node::Node;
use rustox_core::proxy::{split_url, ProxyConfig};

use crate::addr::parse_addr;

/// Parses a `--proxy` value; the error text is what clap shows after "invalid value".
pub fn parse_proxy(text: &str) -> Result<ProxyConfig, String> {
    let (kind, host_port) = split_url(text).map_err(|e| e.to_string())?;
    let addr = parse_addr(host_port)?;
    if addr.port() == 0 {
        return Err(format!("{text:?}: the proxy's port must not be 0"));
    }
    Ok(ProxyConfig { kind, addr })
}

/// Tells the user on stderr when relay connections fail at the proxy: each time the
/// reason changes, so a proxy that keeps refusing is one line, not one per retry.
#[derive(Debug, Default)]
pub struct ProxyReport {
    last: Option<String>,
}

impl ProxyReport {
    /// Prints the node's latest proxy failure if it is news.
    pub fn check(&mut self, node: &Node) {
        let (Some(proxy), (_, Some(error))) = (node.relay_proxy(), node.relay_proxy_failure())
        else {
            return;
        };
        let line = format!("proxy {proxy}: {error}");
        if self.last.as_deref() != Some(line.as_str()) {
            eprintln!("{line}");
            self.last = Some(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustox_core::proxy::ProxyKind;

    #[test]
    fn proxy_values_parse_and_bad_ones_say_why() {
        let p = parse_proxy("socks5://127.0.0.1:1080").unwrap();
        assert_eq!((p.kind, p.addr.port()), (ProxyKind::Socks5, 1080));
        let p = parse_proxy("http://localhost:3128").unwrap();
        assert_eq!((p.kind, p.addr.port()), (ProxyKind::Http, 3128));
        assert!(parse_proxy("[::1]:1080").unwrap_err().contains("socks5://"));
        assert!(parse_proxy("gopher://1.2.3.4:70")
            .unwrap_err()
            .contains("socks5://"));
        assert!(parse_proxy("socks5://1.2.3.4")
            .unwrap_err()
            .contains("no port"));
        assert!(parse_proxy("http://1.2.3.4:0")
            .unwrap_err()
            .contains("must not be 0"));
    }
}
