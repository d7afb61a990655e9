//! `RUSTOX_TRACE_STATS`: a node's counters as one JSON line on stderr, for benches that
//! watch a running `rustox recv` from outside (the attack bench reads which drop reasons a
//! flood hit). A diagnostic, not part of the interface: the fields follow core's counters.
//!
//! The line is one JSON object (keys in alphabetical order) with `trace_stats`, the seconds
//! since start, and `drops`, `node`, `dht_gate`, `onion_server`, `key_agreements`, `io`.
//! `drops` is flat, every nonzero drop counter of
//! every layer named `layer.reason`: the DHT gate's, the onion server's and client's by
//! their reason names, the net_crypto endpoint's by its `DropReason`, and the datagrams no
//! layer took.

use rustox_core::node::Node;
use rustox_core::onion::client::OnionClientDrop;
use rustox_core::onion::server::OnionDrop;
use serde_json::{json, Map, Value};

/// The line for `node`, `seconds` after the process started.
pub fn line(node: &Node, seconds: f64) -> String {
    let s = node.stats();
    let gate = node.dht().gate_stats();
    let io = node.io_counters();
    let onion = node.onion_server_stats();
    let client = node.onion_client_stats();
    let mut drops = Map::new();
    let mut add = |name: String, n: u64| {
        if n > 0 {
            drops.insert(name, Value::from(n));
        }
    };
    add("node.unknown_kind".into(), s.unknown_kind);
    add("io.from_port_zero".into(), io.from_port_zero);
    add("dht.rate_limited".into(), gate.rate_limited);
    add("dht.malformed".into(), gate.malformed);
    add("dht.unsupported".into(), gate.unsupported);
    add("dht.from_port_zero".into(), gate.from_port_zero);
    add("dht.low_order_keys".into(), gate.low_order_keys);
    add("dht.key_budget".into(), gate.key_budget);
    add(
        "dht.amplification_refused".into(),
        gate.amplification_refused,
    );
    for r in OnionDrop::ALL {
        add(format!("onion.{}", r.name()), onion.dropped(r));
    }
    for r in OnionClientDrop::ALL {
        add(format!("onion_client.{}", r.name()), client.dropped(r));
    }
    for (r, n) in node.endpoint().drop_counters().iter() {
        add(format!("net_crypto.{r:?}"), n);
    }
    let value = json!({
        "trace_stats": (seconds * 1000.0).round() / 1000.0,
        "drops": drops,
        "node": {
            "dht_in": s.dht_in,
            "net_crypto_in": s.net_crypto_in,
            "onion_server_in": s.onion_server_in,
            "onion_client_in": s.onion_client_in,
            "unknown_kind": s.unknown_kind,
            "onion_requests": s.onion_requests,
            "dht_refused": s.dht_refused,
            "net_crypto_refused": s.net_crypto_refused,
            "bad_dht_pks": s.bad_dht_pks,
            "packets_ignored": s.packets_ignored,
            "events_dropped": s.events_dropped,
            "relayed_in": s.relayed_in,
            "relayed_out": s.relayed_out,
        },
        "dht_gate": {
            "datagrams_in": gate.datagrams_in,
            "bytes_in": gate.bytes_in,
            "datagrams_out": gate.datagrams_out,
            "bytes_out": gate.bytes_out,
        },
        "onion_server": {
            "datagrams_in": onion.datagrams_in,
            "forwarded": onion.forwarded(),
            "announces_answered": onion.announces_answered,
        },
        "key_agreements": {
            "dht": node.dht().key_agreements(),
            "net_crypto": node.endpoint().key_agreements(),
        },
        "io": {
            "send_errors": io.send_errors,
            "from_port_zero": io.from_port_zero,
            "relay_unsent": io.relay_unsent,
            "udp_disabled_dropped": io.udp_disabled_dropped,
        },
    });
    value.to_string()
}
