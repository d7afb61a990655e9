//! The key caches and the budget of key agreements (docs/protocol.md §2.2): a cookie request
//! needs a key agreed with the requester's DHT key, and a handshake for a new connection one
//! with the peer's real key. Keys agreed before are kept ([`EndpointLimits::max_cached_keys`]
//! of each), so that a peer's next request or handshake costs no X25519; a new one takes from
//! the bucket of all sources (admission.rs) and is counted.
//!
//! [`EndpointLimits::max_cached_keys`]: super::EndpointLimits::max_cached_keys

use super::state::Endpoint;
use crate::crypto::{PrecomputedKey, PublicKey};
use crate::drop_reason::{low_order_drop, DropReason};
use crate::Timestamp;

/// Which of our key pairs a key is agreed with.
#[derive(Clone, Copy)]
enum OurKey {
    Dht,
    Real,
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
            .or_else(|| self.dht_keys.get_mut(dht_pk).cloned());
        match known {
            Some(key) => Ok((key, false)),
            None => Ok((self.agree_key(now, dht_pk, OurKey::Dht)?, true)),
        }
    }

    /// The key to open a handshake from this real key with, for a peer with no connection:
    /// one agreed before, or (within the budget of all sources) a new X25519.
    pub(super) fn peer_key(
        &mut self,
        now: Timestamp,
        real_pk: &PublicKey,
    ) -> Result<PrecomputedKey, DropReason> {
        if let Some(key) = self.real_keys.get_mut(real_pk) {
            return Ok(key.clone());
        }
        let key = self.agree_key(now, real_pk, OurKey::Real)?;
        // Kept whether or not the box opens: the key is one of a peer we accept (checked
        // before), and a flood of boxes it does not open must not cost an X25519 each.
        self.real_keys.insert(*real_pk, key.clone());
        Ok(key)
    }

    /// One X25519 that no cached key saves, within the bucket of all sources, counted.
    fn agree_key(
        &mut self,
        now: Timestamp,
        peer: &PublicKey,
        ours: OurKey,
    ) -> Result<PrecomputedKey, DropReason> {
        self.admission.admit_key_agreement(now)?;
        self.key_agreements += 1;
        let secret = match ours {
            OurKey::Dht => &self.identity.dht.secret,
            OurKey::Real => &self.identity.real.secret,
        };
        PrecomputedKey::new(peer, secret).map_err(low_order_drop)
    }
}
