//! What woke a driver, counted by cause: which of the node's timers were due, or which kind
//! of datagram arrived (by its first byte, c-toxcore 0.2.18's packet ids: `network.h`
//! `Net_Packet_Type`). An idle node's cost is its wake-ups; this says which protocol task
//! each one served, so a benchmark can name what to batch (docs/benchmarks.md, "an idle
//! node").
//!
//! A session's data packets (id 27) are encrypted: ALIVEs, requests and acknowledgements
//! all count as `session`. A count is of the driver's loop turns; a turn whose cause was
//! already waiting when the previous one ended did not sleep, so the turns are at least
//! the process's voluntary context switches from the driver's thread.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::node::DueTimers;

/// Loop turns by cause.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WakeTally {
    /// Every turn counted.
    pub total: u64,
    /// Turns by cause: `timer:` and the timers due joined by `+`, `recv:` and the first
    /// datagram's kind, or a driver's own cause (`relay`, `app`, `recv:none`).
    pub by_cause: BTreeMap<String, u64>,
}

impl WakeTally {
    /// A turn woken by the node's deadline, with these timers due.
    pub fn timer(&mut self, due: DueTimers) {
        let names: Vec<&str> = [
            ("dht", due.dht),
            ("onion_server", due.onion_server),
            ("onion_client", due.onion_client),
            ("sessions", due.sessions),
            ("friends", due.friends),
            ("conferences", due.conferences),
            ("calls", due.calls),
        ]
        .iter()
        .filter(|c| c.1)
        .map(|c| c.0)
        .collect();
        let cause = if names.is_empty() {
            // Woken at a deadline that a datagram handled just before had moved.
            "timer:none".to_string()
        } else {
            format!("timer:{}", names.join("+"))
        };
        self.count(cause);
    }

    /// A turn woken by datagrams; `first` is the first one's first byte (`None`: the
    /// socket had nothing after all).
    pub fn datagram(&mut self, first: Option<u8>) {
        let kind = first.map_or("none", datagram_kind);
        self.count(format!("recv:{kind}"));
    }

    /// A turn with another cause (`relay`: a TCP relay's bytes; `app`: the application).
    pub fn other(&mut self, cause: &str) {
        self.count(cause.to_string());
    }

    fn count(&mut self, cause: String) {
        self.total += 1;
        *self.by_cause.entry(cause).or_default() += 1;
    }

    /// One line: `total=N cause=N ...`, causes in name order.
    pub fn line(&self) -> String {
        let mut s = format!("total={}", self.total);
        for (cause, n) in &self.by_cause {
            let _ = write!(s, " {cause}={n}");
        }
        s
    }
}

/// The kind of a datagram by its first byte (c-toxcore 0.2.18 `network.h`).
pub fn datagram_kind(first: u8) -> &'static str {
    match first {
        0x00 | 0x01 => "dht_ping",
        0x02 => "dht_get_nodes",
        0x04 => "dht_nodes_answer",
        0x18..=0x1a => "session_handshake",
        0x1b => "session",
        0x20 => "dht_crypto",
        0x21 => "lan",
        0x80..=0x83 | 0x85 | 0x87 | 0x8c..=0x8e => "onion_relay",
        0x84 => "onion_announce",
        0x86 => "onion_data",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_are_named_and_counted_in_one_line() {
        let mut t = WakeTally::default();
        t.timer(DueTimers {
            dht: true,
            friends: true,
            ..DueTimers::default()
        });
        t.timer(DueTimers::default());
        t.datagram(Some(0x84));
        t.datagram(Some(0x84));
        t.datagram(Some(27));
        t.datagram(None);
        t.other("app");
        assert_eq!(t.total, 7);
        assert_eq!(
            t.line(),
            "total=7 app=1 recv:none=1 recv:onion_announce=2 recv:session=1 timer:dht+friends=1 timer:none=1"
        );
    }

    #[test]
    fn every_byte_has_a_kind() {
        assert_eq!(datagram_kind(0x02), "dht_get_nodes");
        assert_eq!(datagram_kind(0x04), "dht_nodes_answer");
        assert_eq!(datagram_kind(0x8c), "onion_relay");
        assert_eq!(datagram_kind(0xff), "other");
    }
}
