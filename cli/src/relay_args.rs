//! TCP relays on the command line: `--tcp-relay HOST:PORT:KEY` (repeatable) and `--no-udp`,
//! shared by `recv`, `send` and `demo`.
//!
//! A TCP relay (docs/protocol.md §7: a `rustox bootstrap --tcp-ports`, a tox-bootstrapd with
//! `tcp_relay_ports`) carries the onion and session data for a node whose UDP is blocked or
//! cannot punch through a NAT. With `--no-udp` the node sends no UDP at all (c-toxcore's
//! `udp_enabled = false`): its onion paths start at a relay and its sessions run only
//! through relays, so it needs at least one `--tcp-relay`.

use std::net::SocketAddr;

use rustox_core::crypto::PublicKey;
use rustox_core::node::{FriendNumber, Node};
use rustox_core::transport::{PathKind, Timestamp};

use crate::node_addr::parse_bootstrap;

/// One `--tcp-relay` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpRelay {
    /// Its TCP address.
    pub addr: SocketAddr,
    /// Its public key (the relay's DHT key, as `rustox bootstrap` and tox-bootstrapd print
    /// it).
    pub pk: PublicKey,
}

/// Parses `HOST:PORT:KEY`, as `--bootstrap` does.
pub fn parse_tcp_relay(text: &str) -> Result<TcpRelay, String> {
    parse_bootstrap(text).map(|b| TcpRelay {
        addr: b.addr,
        pk: b.dht_pk,
    })
}

/// The relay options of a node's command.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RelayArgs {
    /// A TCP relay to connect through, as HOST:PORT:KEY (KEY: the relay's public key, 64
    /// hex digits). Repeatable.
    #[arg(long = "tcp-relay", value_name = "HOST:PORT:KEY", value_parser = parse_tcp_relay)]
    pub tcp_relays: Vec<TcpRelay>,
    /// Send no UDP at all: the onion and sessions go through the --tcp-relay relays only
    /// (for networks that block UDP).
    #[arg(long)]
    pub no_udp: bool,
    /// Connect to every --tcp-relay through this proxy: socks5://HOST:PORT or
    /// http://HOST:PORT (HTTP CONNECT). Implies --no-udp: nothing leaves but through it.
    #[arg(long, value_name = "URL", value_parser = crate::proxy_arg::parse_proxy)]
    pub proxy: Option<rustox_core::proxy::ProxyConfig>,
}

impl RelayArgs {
    /// A usage mistake these options contain, if any: without UDP a node can reach nobody
    /// but through a relay.
    pub fn check(&self) -> Result<(), String> {
        if self.no_udp && self.tcp_relays.is_empty() {
            return Err("--no-udp needs a relay: give --tcp-relay HOST:PORT:KEY".into());
        }
        if self.proxy.is_some() && self.tcp_relays.is_empty() {
            return Err("--proxy carries relay connections: give --tcp-relay HOST:PORT:KEY".into());
        }
        Ok(())
    }

    /// Adds every relay to `node`; the driver opens their connections.
    pub fn add_relays(&self, node: &mut Node, now: Timestamp) -> anyhow::Result<()> {
        for r in &self.tcp_relays {
            node.add_tcp_relay(now, r.addr, r.pk)
                .map_err(|e| anyhow::anyhow!("cannot add TCP relay {}: {e}", r.addr))?;
        }
        Ok(())
    }
}

/// How a friend's session travels now, in words: "over UDP from ADDR", "through TCP relay
/// ADDR (key KEY)", or "through a TCP relay" before the route is known.
pub fn describe_path(
    node: &Node,
    now: Timestamp,
    friend: FriendNumber,
    udp: Option<SocketAddr>,
) -> String {
    match (node.friend_data_path(now, friend), udp) {
        (Some(PathKind::Udp), Some(addr)) => format!("over UDP from {addr}"),
        (Some(PathKind::Udp), None) => "over UDP".into(),
        _ => match node.friend_relays(friend).first() {
            Some((addr, pk)) => format!("through TCP relay {addr} (key {})", pk.to_hex()),
            None => "through a TCP relay".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "F404ABAA1C99A9D37D61AB54898F56793E1DEF8BD46B1038B9D822E8460FAB67";

    #[test]
    fn tcp_relay_values_parse_like_bootstrap_values() {
        let r = parse_tcp_relay(&format!("127.0.0.1:3389:{KEY}")).unwrap();
        assert_eq!(r.addr, SocketAddr::from(([127, 0, 0, 1], 3389)));
        assert!(parse_tcp_relay("127.0.0.1:3389").is_err());
    }

    #[test]
    fn no_udp_without_a_relay_is_refused() {
        let mut args = RelayArgs {
            no_udp: true,
            ..RelayArgs::default()
        };
        assert!(args.check().unwrap_err().contains("--tcp-relay"));
        args.tcp_relays
            .push(parse_tcp_relay(&format!("127.0.0.1:3389:{KEY}")).unwrap());
        assert!(args.check().is_ok());
    }
}
