//! How a node finds the network: `--bootstrap HOST:PORT:KEY` (repeatable) and `--lan`, shared
//! by `recv` and `send`.
//!
//! A bootstrap node is any DHT node whose address and DHT key we know: the public Tox nodes
//! (nodes.tox.chat lists them in this form), a `rustox bootstrap`, a c-toxcore
//! `tox-bootstrapd`, or another peer's `recv` line. From it the DHT learns the nodes closest
//! to us and the onion its first paths (docs/protocol.md §5.8, §6.1).

use rustox_core::dht::DhtConfig;
use rustox_core::node::Node;
use rustox_core::transport::Timestamp;

use crate::node_addr::{parse_bootstrap, BootstrapNode};
use crate::relay_args::RelayArgs;

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
