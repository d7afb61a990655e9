//! Who may make the endpoint do public-key work, and how often.
//!
//! Answering a cookie request costs an X25519 with the requester's DHT key, and a handshake
//! from a peer the endpoint has no agreed key with costs an X25519 with its real key, before
//! anything proves the sender holds that key (docs/protocol.md §2.2). A flood of either must cost
//! bounded CPU, and must not become the attacker's weapon by taking the allowance of honest
//! peers. So work is admitted in two steps, cheapest first:
//!
//! 1. Each source — a UDP address with its port, or the DHT key a TCP relay names the sender
//!    by — has its own bucket. A flood from one source spends only its own; an honest peer
//!    on another port of the same host, or on another host, is untouched.
//! 2. Key agreements that no cached key saves take from one bucket of all sources together:
//!    what bounds the CPU of a flood from many (spoofed) sources. Peers whose key is already
//!    agreed — a connection's, a friend's, a requester that proved its key before — do not
//!    take from it, so a flood of fresh keys cannot lock them out.

use crate::drop_reason::DropReason;
use crate::path::Destination;
use crate::recent_map::RecentMap;
use crate::token_bucket::{BucketLimit, TokenBucket};
use crate::Timestamp;

use crate::endpoint::config::EndpointLimits;

/// The two levels of buckets (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct Admission {
    per_source: RecentMap<Destination, TokenBucket>,
    source_limit: BucketLimit,
    key_agreements: TokenBucket,
    key_agreement_limit: BucketLimit,
}

impl Admission {
    /// Every bucket full.
    pub(crate) fn new(now: Timestamp, limits: EndpointLimits) -> Self {
        let key_agreement_limit =
            BucketLimit::per_interval(limits.key_agreement_burst, limits.key_agreement_interval);
        Admission {
            per_source: RecentMap::new(limits.max_tracked_sources),
            source_limit: BucketLimit::per_interval(limits.source_burst, limits.source_interval),
            key_agreements: TokenBucket::new(now, &key_agreement_limit),
            key_agreement_limit,
        }
    }

    /// One cookie request or handshake from `source`: within its own bucket? A source not
    /// seen recently starts with a full one.
    pub(crate) fn admit_source(
        &mut self,
        now: Timestamp,
        source: &Destination,
    ) -> Result<(), DropReason> {
        let limit = self.source_limit;
        let bucket = self
            .per_source
            .get_or_insert_with(source, || TokenBucket::new(now, &limit));
        if bucket.try_take(now, &limit) {
            Ok(())
        } else {
            Err(DropReason::SourceRateLimited)
        }
    }

    /// One X25519 that no cached key saves: within the bucket of all sources?
    pub(crate) fn admit_key_agreement(&mut self, now: Timestamp) -> Result<(), DropReason> {
        if self.key_agreements.try_take(now, &self.key_agreement_limit) {
            Ok(())
        } else {
            Err(DropReason::KeyAgreementRateLimited)
        }
    }

    /// Bytes held by the per-source table.
    pub(crate) fn memory_usage(&self) -> usize {
        self.per_source.memory_usage()
    }
}
