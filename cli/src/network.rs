//! How a node finds the network: `--bootstrap HOST:PORT:KEY` (repeatable) and `--lan`, shared
//! by `recv` and `send`.
//!
//! A bootstrap node is any DHT node whose address and DHT key we know: the public Tox nodes
//! (nodes.tox.chat lists them in this form), a `rustox bootstrap`, a c-toxcore
//! `tox-bootstrapd`, or another peer's `recv` line. From it the DHT learns the nodes closest
//! to us and the onion its first paths (docs/protocol.md §5.8, §6.1).

use std::net::SocketAddr;

use rustox_core::dht::DhtConfig;
use rustox_core::node::Node;
use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::Timestamp;

use crate::addr::parse_addr;
use crate::relay_args::RelayArgs;

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

/// The network options of a node's command.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct NetworkArgs {
    /// A DHT node to start from, as HOST:PORT:KEY (KEY: its DHT public key, 64 hex digits).
    /// Repeatable.
    #[arg(long = "bootstrap", value_name = "HOST:PORT:KEY", value_parser = parse_bootstrap)]
    pub bootstrap: Vec<BootstrapNode>,
    /// Find peers on the local network too (LAN discovery broadcasts, docs/protocol.md §5.7).
    #[arg(long)]
    pub lan: bool,
    #[command(flatten)]
    pub relays: RelayArgs,
}

impl NetworkArgs {
    /// The DHT settings these options ask for.
    pub fn dht_config(&self) -> DhtConfig {
        DhtConfig {
            lan_discovery: self.lan,
            ..DhtConfig::default()
        }
    }

    /// Starts `node` from every bootstrap node and TCP relay, and gives LAN discovery the
    /// interfaces' broadcast addresses.
    pub fn bootstrap(&self, node: &mut Node, now: Timestamp) -> anyhow::Result<()> {
        self.relays.add_relays(node, now)?;
        if self.lan {
            node.set_lan_broadcasts(rustox_core::driver::socket::interface_broadcasts());
        }
        for b in &self.bootstrap {
            node.bootstrap(now, b.addr, b.dht_pk);
        }
        Ok(())
    }

    /// Whether the node may send UDP ([`RelayArgs::no_udp`]; never with a proxy).
    pub fn udp_disabled(&self) -> bool {
        self.relays.no_udp || self.relays.proxy.is_some()
    }

    /// Whether the node has any way to find a peer it knows only by Tox ID.
    pub fn can_search(&self) -> bool {
        self.lan || !self.bootstrap.is_empty() || !self.relays.tcp_relays.is_empty()
    }
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
