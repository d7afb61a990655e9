//! Floods of cookie requests and handshakes at 100 000 datagrams a second (virtual time) while
//! an honest peer sets up a session with the flooded endpoint: the flood's public-
//! key work stays within the endpoint's budget, and the honest peer gets through on its first
//! try, whether the flood comes from one source or from spoofed ones.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::Node;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rustox_net_crypto::crypto::{sha512, KeyPair, Nonce, PrecomputedKey, PublicKey};
use rustox_net_crypto::packets::{
    CookieRequest, CookieRequestPayload, CookieResponse, EncryptedCookie, Handshake,
    HandshakePayload,
};
use rustox_net_crypto::token_bucket::TokenBucket;
use rustox_net_crypto::{ConnectionStatus, Destination, DropReason, EndpointLimits, Timestamp};

/// The flood's rate: the top of the 50 000–100 000 packets/s.
const FLOOD_PER_SECOND: u64 = 100_000;
/// The harness's step; the flood injects `FLOOD_PER_SECOND × STEP` datagrams per step.
const STEP: Duration = Duration::from_micros(100);
/// The honest peer must be established within this: its first cookie request and handshake
/// answered, no resend (c-toxcore and rustox resend them after 1 s, `TEMP_PACKET_INTERVAL`).
const FIRST_TRY: Duration = Duration::from_millis(900);

/// Where the attacker sends from when it does not spoof: the honest peer's host, another port.
fn attacker_addr(honest: &Node) -> SocketAddr {
    SocketAddr::new(honest.addr.ip(), honest.addr.port().wrapping_add(1))
}

/// A spoofed source: any address in 198.18.0.0/15 (RFC 2544's benchmarking range), any port.
fn spoofed(rng: &mut ChaCha8Rng) -> SocketAddr {
    let n = rng.next_u32();
    SocketAddr::from((
        [198, 18 + (n >> 31) as u8, (n >> 8) as u8, n as u8],
        (n >> 16) as u16,
    ))
}

/// Valid cookie requests to `victim`, one per attacker key pair.
fn cookie_requests(victim: &Node, keys: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..keys)
        .map(|_| {
            let dht = KeyPair::generate(&mut rng);
            let real = KeyPair::generate(&mut rng);
            let shared = PrecomputedKey::new(&victim.dht.public, &dht.secret).unwrap();
            CookieRequest::seal(
                dht.public,
                &shared,
                Nonce::random(&mut rng),
                &CookieRequestPayload {
                    sender_real_pk: real.public,
                    echo_id: rng.next_u64(),
                },
            )
            .to_bytes()
        })
        .collect()
}

/// What a run measured.
struct Outcome {
    /// From `connect` to ESTABLISHED at the honest peer, if within the run.
    established_after: Option<Duration>,
    /// The victim's key agreements during the run.
    key_agreements: u64,
    /// Datagrams the flood sent.
    flood_sent: u64,
    run: Duration,
}

/// Runs `honest` connecting to `victim` while `flood(rng)` yields one attack datagram and its
/// source at a time, `FLOOD_PER_SECOND`, for `run` of virtual time (the flood starts 200 ms
/// before the honest peer connects). Every datagram between the two is delivered; what the
/// victim sends to anyone else is dropped (the attacker reads nothing).
fn run(
    honest: &mut Node,
    victim: &mut Node,
    run: Duration,
    mut flood: impl FnMut(&mut ChaCha8Rng) -> (SocketAddr, Vec<u8>),
) -> Outcome {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let start = Timestamp::from_secs(1000);
    let connect_at = start + Duration::from_millis(200);
    let end = start + run;
    let per_step = FLOOD_PER_SECOND * STEP.as_micros() as u64 / 1_000_000;
    let before = victim.endpoint.key_agreements();
    let mut now = start;
    let mut id = None;
    let mut established_after = None;
    let mut flood_sent = 0;
    while now < end {
        for _ in 0..per_step {
            let (from, datagram) = flood(&mut rng);
            let _ = victim.endpoint.handle_datagram(now, from, &datagram);
            flood_sent += 1;
        }
        if id.is_none() && now >= connect_at {
            id = Some(
                honest
                    .endpoint
                    .connect(now, victim.addr, victim.real.public, victim.dht.public)
                    .expect("connect"),
            );
        }
        exchange(now, honest, victim);
        if let (Some(id), None) = (id, established_after) {
            let status = honest.endpoint.connection(id).map(|c| c.status());
            if status == Some(ConnectionStatus::Established) {
                established_after = Some(now - connect_at);
            }
        }
        now += STEP;
    }
    Outcome {
        established_after,
        key_agreements: victim.endpoint.key_agreements() - before,
        flood_sent,
        run,
    }
}

/// One step of the two endpoints: timers, then datagrams both ways until none is left.
fn exchange(now: Timestamp, honest: &mut Node, victim: &mut Node) {
    for node in [&mut *honest, &mut *victim] {
        if node.endpoint.poll_timeout().is_some_and(|t| t <= now) {
            node.endpoint.handle_timeout(now);
        }
    }
    loop {
        let mut moved = false;
        while let Some(t) = honest.endpoint.poll_transmit(now) {
            moved = true;
            if t.destination == Destination::Udp(victim.addr) {
                let _ = victim
                    .endpoint
                    .handle_datagram(now, honest.addr, &t.payload);
            }
        }
        while let Some(t) = victim.endpoint.poll_transmit(now) {
            moved = true;
            if t.destination == Destination::Udp(honest.addr) {
                let _ = honest
                    .endpoint
                    .handle_datagram(now, victim.addr, &t.payload);
            }
        }
        while honest.endpoint.poll_event().is_some() || victim.endpoint.poll_event().is_some() {}
        if !moved {
            return;
        }
    }
}

/// The most key agreements the default limits allow in `run`: the burst, then one per
/// interval.
fn key_agreement_bound(run: Duration) -> u64 {
    let limits = EndpointLimits::default();
    TokenBucket::most_in(
        limits.key_agreement_burst,
        limits.key_agreement_interval,
        run,
    )
}

fn assert_honest_first_try(outcome: &Outcome, what: &str) {
    let after = outcome
        .established_after
        .unwrap_or_else(|| panic!("{what}: the honest peer never got through"));
    assert!(
        after < FIRST_TRY,
        "{what}: the honest peer needed {after:?}, more than its first try"
    );
}

#[test]
fn a_cookie_request_flood_from_one_source_costs_its_burst_and_locks_nobody_out() {
    let mut victim = common::node(1, 33445, true);
    let mut honest = common::node(2, 40000, false);
    let from = attacker_addr(&honest);
    // The attack: valid requests replayed from a pool of 32 keys, half malformed.
    let pool = cookie_requests(&victim, 32, 3);
    let mut i = 0usize;
    let outcome = run(&mut honest, &mut victim, Duration::from_secs(2), |rng| {
        i += 1;
        let mut datagram = pool[i % pool.len()].clone();
        if i.is_multiple_of(2) {
            let len = 1 + (rng.next_u32() as usize % datagram.len());
            datagram.truncate(len);
        }
        (from, datagram)
    });
    assert_eq!(outcome.flood_sent, 200_000);
    assert_honest_first_try(&outcome, "one-source cookie flood");
    // The attacker's source: a burst of 10, then 10 a second; each of its 32 keys costs one
    // X25519 at most once (then its key is cached). The honest peer's cookie request and
    // handshake cost one each.
    assert!(
        outcome.key_agreements <= 2 + 10 + 2 * 10,
        "{} key agreements",
        outcome.key_agreements
    );
    let drops = victim.endpoint.drop_counters();
    assert!(drops.get(DropReason::SourceRateLimited) > 99_000);
    assert!(drops.get(DropReason::BadLength) > 99_000);
}

#[test]
fn a_cookie_request_flood_from_spoofed_sources_and_fresh_keys_is_bounded_and_a_friend_gets_through()
{
    let mut victim = common::node(4, 33445, false);
    let mut honest = common::node(5, 40000, false);
    // The victim knows the honest peer (a friend: it is connecting to it too, as friends in
    // Tox both do) and so holds its DHT key agreed already; it has an old address for it, so
    // the session must come from the honest peer's cookie request, answered under the flood.
    victim.endpoint.allow_peer(honest.real.public);
    let now = Timestamp::from_secs(1000);
    let old_addr = SocketAddr::new(honest.addr.ip(), honest.addr.port().wrapping_add(7));
    victim
        .endpoint
        .connect(now, old_addr, honest.real.public, honest.dht.public)
        .unwrap();
    // More distinct keys than the victim caches, so that every request could need an X25519.
    let keys = EndpointLimits::default().max_cached_keys * 4;
    let pool = cookie_requests(&victim, keys, 6);
    let mut i = 0usize;
    let outcome = run(&mut honest, &mut victim, Duration::from_secs(2), |rng| {
        i += 1;
        (spoofed(rng), pool[i % pool.len()].clone())
    });
    assert_honest_first_try(&outcome, "spoofed cookie flood");
    // The spoofed sources each pass their own bucket; the budget of all sources holds.
    assert!(
        outcome.key_agreements <= key_agreement_bound(outcome.run),
        "{} key agreements in {:?}",
        outcome.key_agreements,
        outcome.run
    );
    assert!(
        victim
            .endpoint
            .drop_counters()
            .get(DropReason::KeyAgreementRateLimited)
            > 150_000
    );
}

/// A handshake of the attacker's, with a genuine cookie from the victim (the attacker asked
/// for it from its own address) and a fresh session key each time it is called.
struct HandshakeForger {
    cookie: EncryptedCookie,
    real_shared: PrecomputedKey,
}

/// A genuine cookie from `victim`, asked for from `from` under the DHT key pair `dht`, naming
/// `real_pk` as the requester's real key (which a cookie request does not authenticate).
fn cookie_from(
    victim: &mut Node,
    from: SocketAddr,
    dht: &KeyPair,
    real_pk: PublicKey,
    rng: &mut ChaCha8Rng,
) -> EncryptedCookie {
    let dht_shared = PrecomputedKey::new(&victim.dht.public, &dht.secret).unwrap();
    let request = CookieRequest::seal(
        dht.public,
        &dht_shared,
        Nonce::random(rng),
        &CookieRequestPayload {
            sender_real_pk: real_pk,
            echo_id: 1,
        },
    );
    let now = Timestamp::from_secs(1000);
    victim
        .endpoint
        .handle_datagram(now, from, &request.to_bytes())
        .unwrap();
    let response = victim.endpoint.poll_transmit(now).unwrap();
    CookieResponse::parse(&response.payload)
        .unwrap()
        .open(&dht_shared)
        .unwrap()
        .cookie
}

impl HandshakeForger {
    fn new(victim: &mut Node, from: SocketAddr, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let dht = KeyPair::generate(&mut rng);
        let real = KeyPair::generate(&mut rng);
        HandshakeForger {
            cookie: cookie_from(victim, from, &dht, real.public, &mut rng),
            real_shared: PrecomputedKey::new(&victim.real.public, &real.secret).unwrap(),
        }
    }

    fn handshake(&self, rng: &mut ChaCha8Rng) -> Vec<u8> {
        let session = KeyPair::generate(rng);
        Handshake::seal(
            self.cookie,
            &self.real_shared,
            Nonce::random(rng),
            &HandshakePayload {
                base_nonce: Nonce::random(rng),
                session_pk: session.public,
                cookie_hash: sha512(&self.cookie.0),
                other_cookie: self.cookie,
            },
        )
        .to_bytes()
    }
}

#[test]
fn a_handshake_replay_flood_costs_no_key_agreement_beyond_its_first_and_locks_nobody_out() {
    let mut victim = common::node(7, 33445, true);
    let mut honest = common::node(8, 40000, false);
    let from = attacker_addr(&honest);
    let forger = HandshakeForger::new(&mut victim, from, 9);
    // A pool of genuine handshakes (fresh session keys under the one cookie), replayed half
    // from the attacker's own address and half from spoofed sources.
    let mut seed = ChaCha8Rng::seed_from_u64(10);
    let pool: Vec<Vec<u8>> = (0..64).map(|_| forger.handshake(&mut seed)).collect();
    let before = victim.endpoint.key_agreements();
    let mut i = 0usize;
    let outcome = run(&mut honest, &mut victim, Duration::from_secs(2), |rng| {
        i += 1;
        let source = if i.is_multiple_of(2) {
            from
        } else {
            spoofed(rng)
        };
        (source, pool[i % pool.len()].clone())
    });
    assert_honest_first_try(&outcome, "handshake replay flood");
    // The attacker's real key is agreed once (its first handshake; then it is cached), and
    // the honest peer's cookie request and handshake cost one each.
    assert!(
        victim.endpoint.key_agreements() - before <= 3,
        "{} key agreements",
        victim.endpoint.key_agreements() - before
    );
    // The attacker got one connection (its first handshake), not one per replay.
    assert_eq!(victim.endpoint.connection_ids().len(), 2);
    assert!(
        victim
            .endpoint
            .drop_counters()
            .get(DropReason::SourceRateLimited)
            > 99_000
    );
}

#[test]
fn handshakes_naming_a_friend_from_spoofed_sources_cost_no_key_agreement() {
    // The victim accepts only its friend; the attacker gets genuine cookies that name the
    // friend's real key (a cookie request's real key is not authenticated) and floods
    // handshakes it cannot box under that key.
    let mut victim = common::node(11, 33445, false);
    let mut honest = common::node(12, 40000, false);
    victim.endpoint.allow_peer(honest.real.public);
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let dht = KeyPair::generate(&mut rng);
    let from = attacker_addr(&honest);
    let forger = HandshakeForger {
        cookie: cookie_from(&mut victim, from, &dht, honest.real.public, &mut rng),
        // Not the friend's key: the attacker does not have it.
        real_shared: PrecomputedKey::new(&victim.real.public, &dht.secret).unwrap(),
    };
    let pool: Vec<Vec<u8>> = (0..64).map(|_| forger.handshake(&mut rng)).collect();
    let mut i = 0usize;
    let outcome = run(&mut honest, &mut victim, Duration::from_secs(2), |rng| {
        i += 1;
        (spoofed(rng), pool[i % pool.len()].clone())
    });
    assert_honest_first_try(&outcome, "friend-named handshake flood");
    // The friend's real key is agreed once and then cached (the honest handshake opened
    // with it, or the first forged one needed it); the honest cookie request costs one.
    assert!(
        outcome.key_agreements <= 3,
        "{} key agreements",
        outcome.key_agreements
    );
    assert!(
        victim
            .endpoint
            .drop_counters()
            .get(DropReason::DecryptionFailed)
            > 150_000
    );
}

#[test]
fn an_endpoint_whose_peers_flood_keeps_answering_other_sources() {
    // Many attacker sources each within its own bucket: together they meet the budget of
    // all sources, and a source that has sent nothing before is still answered when the
    // bucket refills.
    let mut victim = common::node(14, 33445, true);
    let pool = cookie_requests(&victim, EndpointLimits::default().max_cached_keys * 2, 15);
    let mut rng = ChaCha8Rng::seed_from_u64(16);
    let mut now = Timestamp::from_secs(1000);
    let mut answered = 0;
    for (i, request) in pool.iter().enumerate() {
        if victim
            .endpoint
            .handle_datagram(now, spoofed(&mut rng), request)
            .is_ok()
        {
            answered += 1;
        }
        while victim.endpoint.poll_transmit(now).is_some() {}
        if i % 100 == 0 {
            now += Duration::from_millis(1);
        }
    }
    // 2048 requests over 20 ms of virtual time: the burst and the refill, no more.
    let bound = key_agreement_bound(Duration::from_millis(21));
    assert!(answered <= bound, "{answered} answered, bound {bound}");
    assert!(answered >= u64::from(EndpointLimits::default().key_agreement_burst));
    // A new key from a new source, once the bucket has refilled a little.
    now += Duration::from_millis(10);
    let newcomer = cookie_requests(&victim, 1, 17);
    assert_eq!(
        victim
            .endpoint
            .handle_datagram(now, spoofed(&mut rng), &newcomer[0]),
        Ok(())
    );
}
