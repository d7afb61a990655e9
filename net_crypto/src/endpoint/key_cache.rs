//! The key caches and the budget of key agreements (docs/protocol.md §2.2): a cookie request
//! needs a key agreed with the requester's DHT key, and a handshake for a new connection one
//! with the peer's real key. Keys agreed before are kept ([`EndpointLimits::max_cached_keys`]
//! of each, in the shared [`KeyCache`] with two generations: `net_crypto/src/key_cache.rs`),
//! so that a peer's next request or handshake costs no X25519; a new one takes from the bucket
//! of all sources (admission.rs) and is counted.
//!
//! [`EndpointLimits::max_cached_keys`]: super::EndpointLimits::max_cached_keys

use super::config::EndpointLimits;
use super::state::Endpoint;
use crate::crypto::{KeyPair, PrecomputedKey, PublicKey};
use crate::drop_reason::{low_order_drop, DropReason};
use crate::key_cache::{AgreeError, Eviction, KeyCache};
use crate::Timestamp;

/// Empty caches of keys agreed with our DHT key and with our real key, in that order.
pub(super) fn agreed_key_caches(
    real: &KeyPair,
    dht: &KeyPair,
    limits: EndpointLimits,
) -> (KeyCache, KeyCache) {
    let eviction = Eviction::TwoGenerations {
        capacity: limits.max_cached_keys,
    };
    (
        KeyCache::with_eviction(dht.secret.clone(), eviction),
        KeyCache::with_eviction(real.secret.clone(), eviction),
    )
}

impl Endpoint {
    /// The key to answer a cookie request from this DHT key with: our connection's to that
    /// peer, or one agreed before, or (within the budget of all sources) a new X25519. True
    /// when new: the caller keeps it once the request's box opens.
    pub(super) fn requester_key(
        &mut self,
        now: Timestamp,
        dht_pk: &PublicKey,
    ) -> Result<(PrecomputedKey, bool), DropReason> {
        let known = self
            .live_by_dht_pk(dht_pk)
            .and_then(|id| self.connections.get(&id))
            .and_then(|conn| conn.dht_shared_key())
            .cloned()
            .or_else(|| self.dht_keys.cached(now, dht_pk).cloned());
        if let Some(key) = known {
            return Ok((key, false));
        }
        self.admission.admit_key_agreement(now)?;
        self.key_agreements += 1;
        let key = self.dht_keys.agree(dht_pk).map_err(low_order_drop)?;
        Ok((key, true))
    }

    /// The key to open a handshake from this real key with, for a peer with no connection:
    /// one agreed before, or (within the budget of all sources) a new X25519. Kept whether or
    /// not the box opens: the key is one of a peer we accept (checked before), and a flood of
    /// boxes it does not open must not cost an X25519 each.
    pub(super) fn peer_key(
        &mut self,
        now: Timestamp,
        real_pk: &PublicKey,
    ) -> Result<PrecomputedKey, DropReason> {
        let (admission, agreements) = (&mut self.admission, &mut self.key_agreements);
        let key = self.real_keys.get_or_agree(now, real_pk, || {
            admission.admit_key_agreement(now)?;
            *agreements += 1;
            Ok(())
        });
        match key {
            Ok(key) => Ok(key.clone()),
            Err(AgreeError::Refused(reason)) => Err(reason),
            Err(AgreeError::LowOrder(e)) => Err(low_order_drop(e)),
        }
    }
}
