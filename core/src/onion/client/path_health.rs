//! Which path nodes paths have timed out through, so that new paths leave them out.
//!
//! c-toxcore 0.2.18 keeps a path node until 32 newer ones push it out of its ring
//! (`onion_add_path_node`) and draws every path from the whole ring (`random_path`), so a
//! node that died stays a candidate for ever on a small network: with one live node and
//! one dead one, seven paths in eight pass the dead one, and a friend that restarted with a
//! new key and port is not found again for minutes. Here a path that stops answering
//! (`path_timed_out` on its no-response clause) blames its relays that nothing has heard
//! from since it last answered (no other path through them, and not the DHT: the DHT's
//! replies say a node is alive); relays with the fewest recent failures are drawn first,
//! and the ring drops a node after [`DROP_AFTER_FAILURES`] failures with no answer between
//! them. An answer through a node clears it; a failure is forgotten after
//! [`FAILURE_MEMORY`], so a node that was only unlucky (blamed beside a dead one) is tried
//! again.

use std::time::Duration;

use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::Timestamp;

/// `MAX_PATH_NODES` (`onion_client.h`): path-node candidates kept, and bootstrap nodes kept
/// (the ring in `paths.rs`).
pub const MAX_PATH_NODES: usize = 32;
/// Failures after which a node leaves the ring of path nodes (it may come back through the
/// DHT, still counted as failed until its failures are forgotten): two paths through it
/// timed out and none answered in between.
pub const DROP_AFTER_FAILURES: u8 = 2;
/// How long a failure counts: the DHT's `BAD_NODE_TIMEOUT` (DHT.c, 122 s), after which the
/// DHT itself stops offering a node that does not answer.
pub const FAILURE_MEMORY: Duration = Duration::from_secs(122);
/// Nodes whose health is remembered: the ring, the bootstrap list, and as many again that
/// left them. The oldest record goes first.
pub const MAX_HEALTH_RECORDS: usize = 4 * MAX_PATH_NODES;

#[derive(Debug, Clone, Copy)]
struct Record {
    pk: PublicKey,
    /// Failures since the last answer (forgotten [`FAILURE_MEMORY`] after the last one).
    failures: u8,
    last_failure: Timestamp,
    /// When a path through it, or the node itself, last answered.
    last_answer: Option<Timestamp>,
    /// When the record last changed (for eviction).
    touched: Timestamp,
}

/// Failures and answers of path nodes, by key.
#[derive(Debug, Default)]
pub(super) struct PathHealth {
    records: Vec<Record>,
}

impl PathHealth {
    fn record(&mut self, now: Timestamp, pk: &PublicKey) -> &mut Record {
        if let Some(i) = self.records.iter().position(|r| r.pk == *pk) {
            let r = &mut self.records[i];
            r.touched = now;
            return r;
        }
        if self.records.len() >= MAX_HEALTH_RECORDS {
            if let Some(oldest) = (0..self.records.len()).min_by_key(|&i| self.records[i].touched) {
                self.records.swap_remove(oldest);
            }
        }
        self.records.push(Record {
            pk: *pk,
            failures: 0,
            last_failure: Timestamp::ZERO,
            last_answer: None,
            touched: now,
        });
        let last = self.records.len() - 1;
        &mut self.records[last]
    }

    /// `pk` answered at `at` (a path through it, the node itself as announce node, or its
    /// DHT answers): failures before then are cleared.
    pub(super) fn answered(&mut self, now: Timestamp, pk: &PublicKey, at: Timestamp) {
        let r = self.record(now, pk);
        if r.failures > 0 && at <= r.last_failure {
            return;
        }
        r.failures = 0;
        r.last_answer = Some(r.last_answer.map_or(at, |t| t.max(at)));
    }

    /// A path through `relays` stopped answering; it last answered at `path_answered` (its
    /// creation if never). A relay that answered on another path since then is not to
    /// blame. Returns the keys that reached [`DROP_AFTER_FAILURES`].
    pub(super) fn path_failed(
        &mut self,
        now: Timestamp,
        relays: &[PublicKey],
        path_answered: Timestamp,
    ) -> Vec<PublicKey> {
        let mut dropped = Vec::new();
        for (i, pk) in relays.iter().enumerate() {
            // A node drawn twice into one path is blamed once.
            if relays[..i].contains(pk) {
                continue;
            }
            let current = self.failures(now, pk);
            let r = self.record(now, pk);
            if r.last_answer.is_some_and(|t| t >= path_answered) {
                continue;
            }
            r.failures = current.saturating_add(1);
            r.last_failure = now;
            if r.failures >= DROP_AFTER_FAILURES {
                dropped.push(*pk);
            }
        }
        dropped
    }

    /// Failures of `pk` that still count at `now`.
    pub(super) fn failures(&self, now: Timestamp, pk: &PublicKey) -> u8 {
        self.records
            .iter()
            .find(|r| r.pk == *pk)
            .filter(|r| r.last_failure + FAILURE_MEMORY > now)
            .map_or(0, |r| r.failures)
    }

    /// Records kept.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.records.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pk(b: u8) -> PublicKey {
        PublicKey([b; 32])
    }

    fn at(secs: u64) -> Timestamp {
        Timestamp::ZERO + Duration::from_secs(secs)
    }

    #[test]
    fn a_relay_heard_on_another_path_since_is_not_blamed() {
        let mut h = PathHealth::default();
        h.answered(at(5), &pk(1), at(5));
        let dropped = h.path_failed(at(10), &[pk(1), pk(2), pk(1)], at(3));
        assert!(dropped.is_empty());
        assert_eq!(h.failures(at(10), &pk(1)), 0);
        assert_eq!(
            h.failures(at(10), &pk(2)),
            1,
            "blamed once although drawn once"
        );
        let dropped = h.path_failed(at(20), &[pk(2), pk(2), pk(2)], at(12));
        assert_eq!(dropped, vec![pk(2)], "a second failure drops it");
        assert_eq!(h.failures(at(20), &pk(2)), 2);
        h.answered(at(21), &pk(2), at(19));
        assert_eq!(
            h.failures(at(21), &pk(2)),
            2,
            "an answer older than the failure (a DHT reply heard before) does not clear it"
        );
        h.answered(at(21), &pk(2), at(21));
        assert_eq!(h.failures(at(21), &pk(2)), 0, "an answer clears it");
    }

    #[test]
    fn failures_are_forgotten_and_records_are_bounded() {
        let mut h = PathHealth::default();
        h.path_failed(at(0), &[pk(9)], at(0));
        assert_eq!(h.failures(at(121), &pk(9)), 1);
        assert_eq!(h.failures(at(122), &pk(9)), 0);
        for i in 0..=MAX_HEALTH_RECORDS {
            let k = PublicKey((i as u32).to_le_bytes().repeat(8).try_into().unwrap());
            h.path_failed(at(200 + i as u64), &[k], at(0));
        }
        assert_eq!(h.len(), MAX_HEALTH_RECORDS);
    }
}
