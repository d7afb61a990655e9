//! Flood and amplification limits per source address (docs/design.md principle 5).
//!
//! c-toxcore 0.2.18 answers every well-formed request; a DHT node with a public address is
//! then a reflector. Two limits, both per source IP, kept in a fixed table (1024 slots on a
//! client node, 4096 on a bootstrap node: [`GuardConfig::slots`]) indexed by a keyed hash
//! (sources that collide share a slot, which only ever makes the limit stricter; the random
//! key stops an attacker from aiming collisions at a victim):
//!
//! * **Request rate**: a token bucket of `burst` datagrams refilled at `rate` per second.
//!   A datagram over the limit is dropped before any decryption, so a flood costs a hash
//!   and a compare, not a key agreement.
//! * **Amplification**: every byte received earns [`AMPLIFICATION_FACTOR`] bytes of reply
//!   credit (capped); a reply is sent only if the credit covers it. The largest legitimate
//!   ratios are 2.53 (113-byte get-nodes → 286-byte send-nodes with four IPv6 nodes) and 3.35
//!   (78-byte info request → 261-byte reply with a full MOTD), so a factor of 4 never refuses a
//!   single honest exchange, and a spoofed source never gets more than 4× what was sent in its
//!   name — however many requests are made.
//!
//! The request rate is net_crypto's [`TokenBucket`] refilled continuously
//! ([`Refill::PerSecond`]); the table is the guard's own, because its decisions differ on
//! purpose from the endpoint's [`RecentMap`] of buckets: a fixed table where colliding sources
//! share a slot (a source is never forgotten, so a flood of spoofed sources cannot refill
//! anyone's allowance, and the memory is 24 bytes a slot whatever arrives: the bucket's 16 and
//! the amplification credit beside it).
//!
//! [`TokenBucket`]: rustox_net_crypto::token_bucket::TokenBucket
//! [`Refill::PerSecond`]: rustox_net_crypto::token_bucket::Refill::PerSecond
//! [`RecentMap`]: rustox_net_crypto::recent_map::RecentMap

use std::net::IpAddr;
use std::time::Duration;

use rustox_net_crypto::crypto::CryptoRng;
use rustox_net_crypto::token_bucket::{BucketLimit, TokenBucket};
use rustox_net_crypto::Timestamp;

use super::key_cache::KeyAgreementLimit;

/// Slots of a client node's table: it hears from a few hundred sources, and a 24-byte slot
/// table is a fixed cost of every node (two tables, DHT and onion: 48 KiB at 1024 slots).
pub const CLIENT_SLOTS: usize = 1024;
/// Slots of a bootstrap node's table, which hears from thousands.
pub const BOOTSTRAP_SLOTS: usize = 4096;
/// Reply bytes allowed per byte received.
pub const AMPLIFICATION_FACTOR: u32 = 4;
/// Most reply credit a source can bank: 16 full send-nodes replies.
pub const MAX_CREDIT: u32 = 16 * 286;

/// Limits of a gate: the guard's, per source, and the key-agreement budget of all sources
/// together ([`super::key_cache::KeyBudget`]), which a datagram meets only once its source's
/// allowance has let it through.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GuardConfig {
    /// Datagrams per second a source may send; `None` disables the rate limit.
    pub rate: Option<f64>,
    /// Burst of the rate limit.
    pub burst: f64,
    /// Slots in the table, rounded up to a power of two: more means fewer sources sharing
    /// a slot (and a limit), at 24 bytes each.
    pub slots: usize,
    /// Key agreements with senders' keys that no cached key saves, all sources together,
    /// checked after the per-source limit (key_cache.rs); `None`: unlimited.
    pub key_agreements: Option<KeyAgreementLimit>,
}

impl Default for GuardConfig {
    /// 32 datagrams/s, burst 64: a c-toxcore peer sends a given node a handful of packets a
    /// minute in steady state (one get-nodes per 60 s per list it appears in, pings every 2
    /// s at most), so honest peers — even dozens behind one NAT — stay far below it.
    fn default() -> Self {
        GuardConfig {
            rate: Some(32.0),
            burst: 64.0,
            slots: CLIENT_SLOTS,
            key_agreements: Some(KeyAgreementLimit::default()),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    /// The request rate's bucket, made full when the slot is first used.
    bucket: TokenBucket,
    credit: u32,
    used: bool,
}

/// Why the guard refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Over the per-source datagram rate.
    RateLimited,
    /// The reply would exceed the source's amplification credit.
    Amplification,
}

/// The table.
#[derive(Debug, Clone)]
pub struct SourceGuard {
    /// The request rate ([`GuardConfig::rate`] and [`GuardConfig::burst`]); `None`: not
    /// limited.
    limit: Option<BucketLimit>,
    key: [u64; 2],
    slots: Vec<Slot>,
}

impl SourceGuard {
    /// A guard with a random hash key.
    pub fn new(config: GuardConfig, rng: &mut dyn CryptoRng) -> Self {
        let limit = config
            .rate
            .map(|rate| BucketLimit::per_second(config.burst, rate));
        // Refilled only once used (made full then), so the placeholder's limit is any.
        let placeholder = BucketLimit::per_second(config.burst, 0.0);
        let unused = Slot {
            bucket: TokenBucket::new(Timestamp::default(), &placeholder),
            credit: 0,
            used: false,
        };
        SourceGuard {
            limit,
            key: [rng.next_u64(), rng.next_u64()],
            slots: vec![unused; config.slots.clamp(1, 1 << 20).next_power_of_two()],
        }
    }

    fn index(&self, ip: IpAddr) -> usize {
        let bytes = match ip {
            IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
            IpAddr::V6(v6) => v6.octets(),
        };
        let hi = u64::from_be_bytes(bytes[..8].try_into().expect("8 bytes"));
        let lo = u64::from_be_bytes(bytes[8..].try_into().expect("8 bytes"));
        let mut h = mix(hi ^ self.key[0]);
        h = mix(h ^ lo ^ self.key[1]);
        (h as usize) & (self.slots.len() - 1)
    }

    /// Accounts a received datagram of `len` bytes; `Err` if the source is over its rate.
    pub fn on_receive(&mut self, now: Timestamp, ip: IpAddr, len: usize) -> Result<(), Refusal> {
        let i = self.index(ip);
        let slot = &mut self.slots[i];
        if let Some(limit) = &self.limit {
            if !slot.used {
                *slot = Slot {
                    bucket: TokenBucket::new(now, limit),
                    credit: 0,
                    used: true,
                };
            }
            if !slot.bucket.try_take(now, limit) {
                return Err(Refusal::RateLimited);
            }
        }
        slot.used = true;
        let earned = u32::try_from(len)
            .unwrap_or(u32::MAX)
            .saturating_mul(AMPLIFICATION_FACTOR);
        slot.credit = slot.credit.saturating_add(earned).min(MAX_CREDIT);
        Ok(())
    }

    /// Spends credit for a reply of `len` bytes to `ip`; `Err` if it is not covered.
    pub fn on_reply(&mut self, ip: IpAddr, len: usize) -> Result<(), Refusal> {
        let i = self.index(ip);
        let slot = &mut self.slots[i];
        let len = u32::try_from(len).unwrap_or(u32::MAX);
        if slot.credit < len {
            return Err(Refusal::Amplification);
        }
        slot.credit -= len;
        Ok(())
    }
}

/// splitmix64's finaliser.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// How long a source takes to regain one datagram of allowance at `rate`.
pub fn refill_time(rate: f64) -> Duration {
    Duration::from_secs_f64(1.0 / rate.max(1e-9))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;

    fn guard() -> SourceGuard {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        SourceGuard::new(GuardConfig::default(), &mut rng)
    }

    #[test]
    fn a_flood_is_cut_to_burst_then_rate() {
        let mut g = guard();
        let ip: IpAddr = "203.0.113.9".parse().unwrap();
        let t = Timestamp::from_secs(1);
        let passed = (0..1000)
            .filter(|_| g.on_receive(t, ip, 113).is_ok())
            .count();
        assert_eq!(passed, 64);
        let later = t + refill_time(32.0) * 10;
        let passed = (0..1000)
            .filter(|_| g.on_receive(later, ip, 113).is_ok())
            .count();
        assert_eq!(passed, 10);
        assert!(g
            .on_receive(t, "203.0.113.10".parse().unwrap(), 113)
            .is_ok());
    }

    #[test]
    fn a_slot_is_24_bytes() {
        assert_eq!(std::mem::size_of::<Slot>(), 24);
    }

    #[test]
    fn replies_never_exceed_four_times_what_was_received() {
        let mut g = guard();
        let ip: IpAddr = "198.51.100.1".parse().unwrap();
        let t = Timestamp::from_secs(1);
        let mut received = 0;
        let mut sent = 0;
        for _ in 0..50 {
            g.on_receive(t, ip, 78).unwrap();
            received += 78;
            while g.on_reply(ip, 261).is_ok() {
                sent += 261;
            }
            assert!(sent <= 4 * received);
        }
        assert!(sent > 3 * received, "honest exchanges are answered");
        assert_eq!(
            g.on_reply("198.51.100.2".parse().unwrap(), 1),
            Err(Refusal::Amplification)
        );
    }
}
