//! What an endpoint is told: the transport's tunables, whom it accepts, and the bounds on
//! every table it holds (docs/design.md principle 5). The admission buckets (admission.rs)
//! read their burst and interval from [`EndpointLimits`].

use std::time::Duration;

use crate::transport::TransportConfig;

/// Endpoint configuration.
#[derive(Debug, Clone)]
pub struct EndpointConfig {
    /// Tunables for every connection's transport.
    pub transport: TransportConfig,
    /// Accept handshakes from any peer (demo/CLI receive). Otherwise only peers passed to
    /// [`Endpoint::allow_peer`](crate::Endpoint::allow_peer) (the friend list's stand-in) are
    /// accepted.
    pub accept_all: bool,
}

/// Bounds on what an endpoint holds (docs/design.md principle 5). What exceeds them is dropped
/// and counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndpointLimits {
    /// Connections of any state, closed ones awaiting their last event included.
    pub max_connections: usize,
    /// Connections in COOKIE_REQUESTING, HANDSHAKE_SENT or NOT_CONFIRMED. Incoming
    /// handshakes beyond it are dropped; each costs an X25519 and a connection's memory.
    pub max_handshakes_in_progress: usize,
    /// Stateless cookie responses waiting for `poll_transmit`.
    pub max_queued_responses: usize,
    /// Cookie requests and handshakes one source (a UDP address with its port, or a relayed
    /// peer) may send in a burst ...
    pub source_burst: u32,
    /// ... and then one per this interval. c-toxcore v0.2.22+ allows 10 and 100 ms for all
    /// cookie requests together; here that is each source's, so that a flood from one source
    /// spends only its own (admission.rs).
    pub source_interval: Duration,
    /// Sources whose buckets are remembered; one not seen recently starts with a full bucket.
    pub max_tracked_sources: usize,
    /// Key agreements (X25519) for cookie requests and handshakes that no cached key saves,
    /// all sources together, in a burst ...
    pub key_agreement_burst: u32,
    /// ... and then one per this interval: what a flood from many (spoofed) sources costs.
    pub key_agreement_interval: Duration,
    /// Agreed keys remembered: requesters' DHT keys and accepted peers' real keys whose
    /// boxes opened, so that their next cookie request or handshake costs no X25519.
    pub max_cached_keys: usize,
    /// Bytes all sessions' send and receive arrays may hold together before a session that
    /// holds its share (this over the number of sessions holding any) stops growing
    /// (transport/array_budget.rs).
    pub array_memory_budget: usize,
}

impl Default for EndpointLimits {
    /// 1024 connections (an idle one costs ≤ 16 KiB, so 16 MiB at most), 128 handshakes in
    /// progress, 256 queued cookie responses (a burst a driver drains in one loop),
    /// c-toxcore's cookie-request bucket for each source (docs/protocol.md §2.2) with 4096
    /// sources remembered (about 100 bytes each), and 1000 key agreements a second after a
    /// burst of 1000 (what a node whose friends all come online at once may need; core's
    /// layers take the same, key_cache.rs): a `PrecomputedKey::new` (X25519 and HSalsa20)
    /// took 73–90 µs on this project's 2-core VM with other work running, so a sustained
    /// flood of fresh keys costs at most about 9 % of a core.
    /// 1024 cached keys take 64 KiB. 64 MiB for the arrays: one session's full receive window
    /// (32 768 × 1373 bytes, 45 MiB) with room for a busy send array, so that a single
    /// session is never held back by the budget, and at most 128 MiB whatever the peers do.
    fn default() -> Self {
        EndpointLimits {
            max_connections: 1024,
            max_handshakes_in_progress: 128,
            max_queued_responses: 256,
            source_burst: 10,
            source_interval: Duration::from_millis(100),
            max_tracked_sources: 4096,
            key_agreement_burst: 1000,
            key_agreement_interval: Duration::from_millis(1),
            max_cached_keys: 1024,
            array_memory_budget: 64 << 20,
        }
    }
}
