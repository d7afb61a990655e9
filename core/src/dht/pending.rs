//! Outstanding pings and get-nodes (c-toxcore `ping_array`, docs/protocol.md §5.2).
//!
//! A response counts only if its id matches a request we sent within `PING_TIMEOUT` to that
//! same key *and* address. 512 slots, the oldest overwritten: memory is fixed whatever the
//! traffic. The id's low bits are its slot (as in `ping_array_add`), the rest random, so a
//! forged id must guess 55 random bits.

use std::net::SocketAddr;

use rustox_net_crypto::crypto::{CryptoRng, PublicKey};
use rustox_net_crypto::Timestamp;

use super::timers::{PING_ARRAY_SIZE, PING_TIMEOUT};

/// What a pending id was sent for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    /// A 0x00 ping.
    Ping,
    /// A 0x02 get-nodes.
    Nodes,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    id: u64,
    kind: RequestKind,
    pk: PublicKey,
    addr: SocketAddr,
    sent: Timestamp,
}

/// The fixed-size table of requests awaiting an answer.
#[derive(Debug, Clone)]
pub struct PendingRequests {
    slots: Vec<Option<Slot>>,
    next: usize,
}

impl Default for PendingRequests {
    fn default() -> Self {
        PendingRequests {
            slots: vec![None; PING_ARRAY_SIZE],
            next: 0,
        }
    }
}

impl PendingRequests {
    /// Remembers a request and returns its id.
    pub fn add(
        &mut self,
        now: Timestamp,
        kind: RequestKind,
        pk: PublicKey,
        addr: SocketAddr,
        rng: &mut dyn CryptoRng,
    ) -> u64 {
        let index = self.next % PING_ARRAY_SIZE;
        self.next = self.next.wrapping_add(1);
        let size = PING_ARRAY_SIZE as u64;
        let mut id = (rng.next_u64() / size) * size + index as u64;
        if id == 0 {
            id += size;
        }
        self.slots[index] = Some(Slot {
            id,
            kind,
            pk,
            addr,
            sent: now,
        });
        id
    }

    /// Consumes the entry if `id` answers a live request of `kind` to `pk` at `addr`.
    pub fn take(
        &mut self,
        now: Timestamp,
        id: u64,
        kind: RequestKind,
        pk: &PublicKey,
        addr: SocketAddr,
    ) -> bool {
        let index = (id % PING_ARRAY_SIZE as u64) as usize;
        let slot = &mut self.slots[index];
        let ok = slot.as_ref().is_some_and(|s| {
            s.id == id
                && s.kind == kind
                && s.pk == *pk
                && s.addr == addr
                && now < s.sent + PING_TIMEOUT
        });
        if ok {
            *slot = None;
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn only_the_right_pk_addr_kind_and_time_match_once() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut p = PendingRequests::default();
        let addr: SocketAddr = "127.0.0.1:5".parse().unwrap();
        let pk = PublicKey([1; 32]);
        let t = Timestamp::from_secs(10);
        let id = p.add(t, RequestKind::Nodes, pk, addr, &mut rng);
        assert!(!p.take(t, id, RequestKind::Ping, &pk, addr));
        assert!(!p.take(t, id, RequestKind::Nodes, &PublicKey([2; 32]), addr));
        assert!(!p.take(
            t,
            id,
            RequestKind::Nodes,
            &pk,
            "127.0.0.1:6".parse().unwrap()
        ));
        assert!(!p.take(t, id ^ 1 << 20, RequestKind::Nodes, &pk, addr));
        assert!(!p.take(t + PING_TIMEOUT, id, RequestKind::Nodes, &pk, addr));
        assert!(p.take(t + PING_TIMEOUT / 2, id, RequestKind::Nodes, &pk, addr));
        assert!(
            !p.take(t, id, RequestKind::Nodes, &pk, addr),
            "an id is used once"
        );
    }
}
