//! A long-running DHT bootstrap node (`rustox bootstrap`): a DHT node with a stable key that
//! answers ping, get-nodes and bootstrap-info (docs/protocol.md §5.8), serves the onion — relays
//! paths, keeps announces, forwards data (§6.2, §6.3) — and, on the TCP ports it is given,
//! runs a TCP relay under the same key (§7), the way tox-bootstrapd does.
//!
//! Start-up order (opentracker lesson, docs/design.md lesson 4): the key file is read (or
//! created) before any socket exists, so no request is ever answered under a key that is
//! then replaced; the caller installs its signal handlers before calling [`BootstrapNode::start`],
//! so no worker thread starts with a default disposition.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::SeedableRng;
use rustox_net_crypto::crypto::{KeyPair, PublicKey};

use crate::dht::key_cache::KeyAgreementLimit;
use crate::dht::node::{BootstrapInfo, DhtConfig};
use crate::dht::source_guard::GuardConfig;
use crate::driver::keyfile::{self, KeyFileError};
use crate::driver::tcp_relay::TcpRelayConfig;
use crate::driver::workers::{NodeRunner, RunnerConfig, RunnerStats, UdpMode};
use crate::onion::server::{OnionConfig, OnionDrop};
use crate::relay::server::{CloseReason, RelayConfig, RelayDrop};

/// The version a bootstrap-info reply carries: rustox 0.1.0 encoded as
/// major × 1 000 000 + minor × 1000 + patch. (Debian's tox-bootstrapd 0.2.18 sends
/// 1000002018, measured in `tests/interop_dht.rs`; clients only display the number.)
pub const BOOTSTRAP_VERSION: u32 = 1000;

/// Settings of a bootstrap node.
#[derive(Debug, Clone)]
pub struct BootstrapOptions {
    /// Address to listen on (`[::]` = dual stack).
    pub ip: IpAddr,
    /// UDP port.
    pub port: u16,
    /// Worker threads.
    pub workers: usize,
    /// Socket layout.
    pub mode: UdpMode,
    /// Key file path.
    pub keys: PathBuf,
    /// Message of the day.
    pub motd: String,
    /// Per-source datagram rate (`None` = unlimited, for load tests on loopback).
    pub rate: Option<f64>,
    /// Answer LAN discovery and send it.
    pub lan_discovery: bool,
    /// Nodes to bootstrap from.
    pub bootstrap: Vec<(SocketAddr, PublicKey)>,
    /// TCP relay ports on [`Self::ip`] (tox-bootstrapd's `tcp_relay_ports`, commonly 443,
    /// 3389, 33445); empty for no relay. Port 0 takes any free port
    /// ([`NodeRunner::tcp_addrs`] says which).
    pub tcp_ports: Vec<u16>,
    /// The relay's limits and timers.
    pub relay: RelayConfig,
}

impl Default for BootstrapOptions {
    fn default() -> Self {
        BootstrapOptions {
            ip: IpAddr::V6(Ipv6Addr::UNSPECIFIED),
            port: 33445,
            workers: 1,
            mode: UdpMode::ReusePort,
            keys: PathBuf::from("rustox-bootstrap.keys"),
            motd: "rustox bootstrap node".into(),
            rate: GuardConfig::default().rate,
            lan_discovery: false,
            bootstrap: Vec::new(),
            tcp_ports: Vec::new(),
            relay: RelayConfig::default(),
        }
    }
}

/// Why the node could not start.
#[derive(Debug, thiserror::Error)]
pub enum BootstrapError {
    /// The key file.
    #[error(transparent)]
    Keys(#[from] KeyFileError),
    /// Binding or starting threads.
    #[error("cannot start the node: {0}")]
    Io(#[from] std::io::Error),
}

/// The DHT settings a bootstrap node runs with.
pub fn dht_config(opts: &BootstrapOptions) -> DhtConfig {
    // tox-bootstrapd sends the MOTD with its terminating NUL.
    let mut motd = opts.motd.clone().into_bytes();
    motd.truncate(crate::dht::wire::bootstrap_info::MAX_MOTD_LENGTH - 1);
    motd.push(0);
    DhtConfig {
        guard: GuardConfig {
            rate: opts.rate,
            slots: crate::dht::source_guard::BOOTSTRAP_SLOTS,
            key_agreements: key_agreements(opts),
            ..GuardConfig::default()
        },
        lan_discovery: opts.lan_discovery,
        bootstrap_info: Some(BootstrapInfo {
            version: BOOTSTRAP_VERSION,
            motd,
        }),
        hole_punching: false,
        ..DhtConfig::default()
    }
}

/// The key-agreement budget of each worker's gate and of the onion server: a client node's
/// (`KeyAgreementLimit::default`) per worker, so a flood of fresh keys from many sources
/// costs each worker a bounded share of its core; none when the per-source rate is off too
/// (load tests on loopback measure the key agreements themselves).
fn key_agreements(opts: &BootstrapOptions) -> Option<KeyAgreementLimit> {
    opts.rate.map(|_| KeyAgreementLimit::default())
}

/// The onion settings a bootstrap node runs with: the per-source onion rate is four times
/// the DHT rate (`OnionConfig::default`'s ratio), unlimited when the DHT rate is.
pub fn onion_config(opts: &BootstrapOptions) -> OnionConfig {
    let default = OnionConfig::default();
    OnionConfig {
        guard: GuardConfig {
            rate: opts.rate.map(|r| r * 4.0),
            burst: default.guard.burst,
            slots: crate::dht::source_guard::BOOTSTRAP_SLOTS,
            key_agreements: key_agreements(opts),
        },
    }
}

/// Loads (or creates) the key file.
pub fn load_keys(opts: &BootstrapOptions) -> Result<(KeyPair, bool), BootstrapError> {
    let mut rng = StdRng::from_entropy();
    Ok(keyfile::load_or_create(&opts.keys, &mut rng)?)
}

/// A running bootstrap node.
pub struct BootstrapNode {
    runner: NodeRunner,
    started: Instant,
    last: (Instant, RunnerStats),
}

impl BootstrapNode {
    /// Starts the workers with already-loaded keys.
    pub fn start(keys: KeyPair, opts: &BootstrapOptions) -> Result<Self, BootstrapError> {
        let runner = NodeRunner::start(
            keys,
            RunnerConfig {
                bind: SocketAddr::new(opts.ip, opts.port),
                workers: opts.workers,
                mode: opts.mode,
                dht: dht_config(opts),
                onion: Some(onion_config(opts)),
                tcp: (!opts.tcp_ports.is_empty()).then(|| TcpRelayConfig {
                    listen: opts
                        .tcp_ports
                        .iter()
                        .map(|p| SocketAddr::new(opts.ip, *p))
                        .collect(),
                    relay: opts.relay.clone(),
                }),
            },
        )?;
        for (addr, pk) in &opts.bootstrap {
            runner.bootstrap(*addr, *pk);
        }
        let now = Instant::now();
        Ok(BootstrapNode {
            runner,
            started: now,
            last: (now, RunnerStats::default()),
        })
    }

    /// The underlying runner.
    pub fn runner(&self) -> &NodeRunner {
        &self.runner
    }

    /// One statistics line; rates are over the time since the previous line, measured.
    pub fn stats_line(&mut self) -> String {
        let now = Instant::now();
        let s = self.runner.stats();
        let (then, prev) = self.last;
        let secs = now.duration_since(then).as_secs_f64().max(1e-3);
        let rate = |a: u64, b: u64| (a.saturating_sub(b)) as f64 / secs;
        self.last = (now, s);
        let o = &s.onion;
        let onion_drops: Vec<String> = OnionDrop::ALL
            .iter()
            .filter(|r| o.dropped(**r) > 0)
            .map(|r| format!("{}:{}", r.name(), o.dropped(*r)))
            .collect();
        format!(
            "up {:.0}s close_nodes={} in={} ({:.0}/s) out={} ({:.0}/s) pings={} get_nodes={} info={} \
             rate_limited={} amplification_refused={} malformed={} low_order_keys={} unsupported={} unsolicited={} key_agreements={} \
             onion_in={} ({:.0}/s) onion_relayed={} onion_responses={} announces={} announce_stored={} \
             search_found={} announced={} onion_data={} onion_dropped={} [{}] group_announces={} \
             group_announces_sent={} forwarded={} dht_announce_answered={} dht_announce_refused={} \
             dht_announce_dropped={}",
            self.started.elapsed().as_secs_f64(),
            s.close_nodes,
            s.gate.datagrams_in,
            rate(s.gate.datagrams_in, prev.gate.datagrams_in),
            s.gate.datagrams_out,
            rate(s.gate.datagrams_out, prev.gate.datagrams_out),
            s.dht.pings_answered,
            s.dht.nodes_answered,
            s.dht.info_answered,
            s.gate.rate_limited,
            s.gate.amplification_refused,
            s.gate.malformed,
            s.gate.low_order_keys,
            s.gate.unsupported,
            s.dht.responses_unsolicited,
            s.key_agreements,
            o.datagrams_in,
            rate(o.datagrams_in, prev.onion.datagrams_in),
            o.requests_relayed.iter().sum::<u64>(),
            o.responses_relayed.iter().sum::<u64>(),
            o.announces_answered,
            o.announces_stored,
            o.searches_found,
            s.onion_announced,
            o.data_forwarded,
            o.total_dropped(),
            onion_drops.join(" "),
            o.group_announces_stored,
            o.group_announces_sent,
            s.announce.forwarded,
            s.announce.answered.iter().sum::<u64>(),
            s.announce.refused,
            s.announce.dropped,
        ) + &relay_line(&s)
    }

    /// Stops the node (timer first, then workers).
    pub fn shutdown(self) {
        self.runner.shutdown();
    }
}

/// The TCP relay's part of a statistics line (empty without a relay).
fn relay_line(s: &RunnerStats) -> String {
    let Some(r) = s.relay else {
        return String::new();
    };
    let t = r.stats;
    let closes: Vec<String> = CloseReason::ALL
        .iter()
        .filter(|c| t.closed_for(**c) > 0)
        .map(|c| format!("{}:{}", c.name(), t.closed_for(*c)))
        .collect();
    let drops: Vec<String> = RelayDrop::ALL
        .iter()
        .filter(|d| t.dropped(**d) > 0)
        .map(|d| format!("{}:{}", d.name(), t.dropped(*d)))
        .collect();
    format!(
        " tcp_conns={} tcp_confirmed={} tcp_accepted={} tcp_refused={} tcp_in={} tcp_out={} \
         tcp_data={} tcp_data_bytes={} tcp_oob={} tcp_routes={} tcp_onion_req={} tcp_onion_resp={} \
         tcp_forward_req={} tcp_forward_replies={} tcp_closed=[{}] tcp_drops=[{}]",
        r.connections,
        r.confirmed,
        t.accepted,
        t.refused.iter().sum::<u64>(),
        t.bytes_in,
        t.bytes_out,
        t.data_forwarded,
        t.data_bytes_forwarded,
        t.oob_forwarded,
        t.routes_linked,
        t.onion_requests,
        t.onion_responses,
        t.forward_requests,
        t.forward_replies,
        closes.join(" "),
        drops.join(" "),
    )
}

/// How often statistics are logged by default.
pub const STATS_INTERVAL: Duration = Duration::from_secs(60);
