//! Friends across implementations: c-toxcore 0.2.18 (Debian's libtoxcore, in
//! `auto_tests/tools/toxfriend.c`) and a rustox `Node` on real loopback sockets become friends
//! by friend request in both directions, through a rustox bootstrap node and through a
//! c-toxcore one; c-toxcore clients find each other through rustox nodes alone; each side
//! restarts and comes back online.
//!
//! Each test has its own ports (361xx–367xx), so they run in parallel: c-toxcore's onion
//! runs on one-second timers, and a test takes 5–20 s of waiting, not of CPU.
//!
//! With `CI` set, a missing c-toxcore fails these tests; otherwise they return at once with
//! a notice.

use rustox_auto_tests::live::wait_until;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use rustox_auto_tests::ctoxcore::friend::{CPeer, CPeerOptions, PeerEvent, PeerLog};
use rustox_auto_tests::live::{rustox_bootstrap, RustoxOptions, RustoxPeer};
use rustox_net_crypto::crypto::PublicKey;

/// How long a pair may take to come online. c-toxcore alone takes 9–11 s on loopback; this
/// leaves room for a loaded CI machine.
const ONLINE_LIMIT: Duration = Duration::from_secs(60);

fn toxfriend() -> Option<PathBuf> {
    rustox_auto_tests::ctoxcore::friend::friend_binary_or_skip()
}

fn c_peer(bin: &std::path::Path, options: &CPeerOptions) -> CPeer {
    CPeer::start(bin, options).expect("start the c-toxcore client")
}

fn r_peer(options: RustoxOptions) -> RustoxPeer {
    RustoxPeer::start(options).expect("start the rustox node")
}

fn r_boot(port: u16) -> rustox_core::driver::workers::NodeRunner {
    rustox_bootstrap(port).expect("start the rustox bootstrap node")
}

/// A c-toxcore client as the bootstrap node: its DHT and onion serve as c-toxcore's do.
fn c_bootstrap(bin: &std::path::Path, port: u16) -> CPeer {
    c_peer(
        bin,
        &CPeerOptions {
            port,
            ..CPeerOptions::default()
        },
    )
}

/// Both report each other online, and the greeting each sent arrived.
fn assert_friends(c: &CPeer, r: &RustoxPeer, what: &str) {
    let online = wait_until(ONLINE_LIMIT, || {
        c.log.friend_online().is_some()
            && r.log.friend_online().is_some()
            && c.log.message().is_some()
            && r.log.message().is_some()
    });
    assert!(
        online,
        "{what}: not both online with messages within {ONLINE_LIMIT:?}\n c-toxcore: {:?}\n rustox: {:?}",
        c.log.events(),
        r.log.events()
    );
    assert_eq!(c.log.message().as_deref(), Some("hi from rustox"), "{what}");
    assert_eq!(
        r.log.message().as_deref(),
        Some("hi from c-toxcore"),
        "{what}"
    );
    eprintln!(
        "{what}: online after c-toxcore {:.2} s, rustox {:.2} s",
        c.log.friend_online().unwrap_or(-1.0),
        r.log.friend_online().unwrap_or(-1.0)
    );
}

/// Waits (up to `limit`) until `stayed` has seen its friend come online more than `before`
/// times and the restarted side `restarted` has its friend online.
fn back_online(stayed: &PeerLog, restarted: &PeerLog, before: usize, limit: Duration) -> bool {
    wait_until(limit, || {
        stayed.times_online() > before && restarted.friend_online().is_some()
    })
}

fn c_options(boot: (SocketAddr, PublicKey), port: u16) -> CPeerOptions {
    CPeerOptions {
        port,
        bootstrap: vec![boot],
        say: Some("hi from c-toxcore".into()),
        ..CPeerOptions::default()
    }
}

fn r_options(boot: (SocketAddr, PublicKey), port: u16) -> RustoxOptions {
    RustoxOptions {
        port,
        bootstrap: vec![boot],
        say: Some("hi from rustox".into()),
        ..RustoxOptions::default()
    }
}

#[test]
fn c_toxcore_requests_rustox_through_a_rustox_bootstrap_node() {
    let Some(bin) = toxfriend() else { return };
    let runner = r_boot(36101);
    let boot = (runner.local_addr(), runner.public_key());
    let r = r_peer(RustoxOptions {
        accept: true,
        ..r_options(boot, 36102)
    });
    let c = c_peer(
        &bin,
        &CPeerOptions {
            request: Some(r.tox_id),
            ..c_options(boot, 36103)
        },
    );
    assert_friends(&c, &r, "c-toxcore → rustox via rustox bootstrap");
    let events = r.log.events();
    let c_pk = c.tox_id.pk;
    assert!(
        events.iter().any(|(_, e)| *e == PeerEvent::Request(c_pk)),
        "rustox never saw the request: {events:?}"
    );
}

#[test]
fn rustox_requests_c_toxcore_through_a_rustox_bootstrap_node() {
    let Some(bin) = toxfriend() else { return };
    let runner = r_boot(36201);
    let boot = (runner.local_addr(), runner.public_key());
    let c = c_peer(
        &bin,
        &CPeerOptions {
            accept: true,
            ..c_options(boot, 36202)
        },
    );
    let r = r_peer(RustoxOptions {
        request: Some(c.tox_id),
        ..r_options(boot, 36203)
    });
    assert_friends(&c, &r, "rustox → c-toxcore via rustox bootstrap");
}

#[test]
fn c_toxcore_requests_rustox_through_a_c_toxcore_bootstrap_node() {
    let Some(bin) = toxfriend() else { return };
    let b = c_bootstrap(&bin, 36301);
    let boot = (b.addr(), b.dht_pk);
    let r = r_peer(RustoxOptions {
        accept: true,
        ..r_options(boot, 36302)
    });
    let c = c_peer(
        &bin,
        &CPeerOptions {
            request: Some(r.tox_id),
            ..c_options(boot, 36303)
        },
    );
    assert_friends(&c, &r, "c-toxcore → rustox via c-toxcore bootstrap");
}

#[test]
fn rustox_requests_c_toxcore_through_a_c_toxcore_bootstrap_node() {
    let Some(bin) = toxfriend() else { return };
    let b = c_bootstrap(&bin, 36401);
    let boot = (b.addr(), b.dht_pk);
    let c = c_peer(
        &bin,
        &CPeerOptions {
            accept: true,
            ..c_options(boot, 36402)
        },
    );
    let r = r_peer(RustoxOptions {
        request: Some(c.tox_id),
        ..r_options(boot, 36403)
    });
    assert_friends(&c, &r, "rustox → c-toxcore via c-toxcore bootstrap");
}

/// Two c-toxcore clients that know only rustox nodes (three of them, bootstrapped off each
/// other) become friends: every DHT and onion service they use between them, other than each
/// other, is rustox's.
#[test]
fn c_toxcore_clients_find_each_other_through_rustox_nodes_only() {
    let Some(bin) = toxfriend() else { return };
    let first = r_peer(RustoxOptions {
        port: 36501,
        ..RustoxOptions::default()
    });
    let first_boot = (first.addr, first.dht_pk);
    let others: Vec<RustoxPeer> = (0..2)
        .map(|i| {
            r_peer(RustoxOptions {
                port: 36502 + i,
                bootstrap: vec![first_boot],
                ..RustoxOptions::default()
            })
        })
        .collect();
    let boots: Vec<(SocketAddr, PublicKey)> = std::iter::once(first_boot)
        .chain(others.iter().map(|o| (o.addr, o.dht_pk)))
        .collect();
    let alice = c_peer(
        &bin,
        &CPeerOptions {
            port: 36510,
            bootstrap: boots.clone(),
            accept: true,
            say: Some("hi".into()),
            ..CPeerOptions::default()
        },
    );
    let bob = c_peer(
        &bin,
        &CPeerOptions {
            port: 36511,
            bootstrap: boots,
            request: Some(alice.tox_id),
            say: Some("hi".into()),
            ..CPeerOptions::default()
        },
    );
    let online = wait_until(ONLINE_LIMIT, || {
        alice.log.friend_online().is_some() && bob.log.friend_online().is_some()
    });
    assert!(
        online,
        "c-toxcore pair not online through rustox nodes: alice {:?} bob {:?}",
        alice.log.events(),
        bob.log.events()
    );
    eprintln!(
        "c-toxcore pair through rustox nodes: online after {:.2} s / {:.2} s",
        alice.log.friend_online().unwrap_or(-1.0),
        bob.log.friend_online().unwrap_or(-1.0)
    );
}

/// A rustox friend that restarts, on the same port and then on a new one, as the same
/// identity, is back online with its c-toxcore friend soon after each restart.
#[test]
fn a_restarted_rustox_node_comes_back_online_with_its_c_toxcore_friend() {
    let Some(bin) = toxfriend() else { return };
    let runner = r_boot(36601);
    let boot = (runner.local_addr(), runner.public_key());
    let r = r_peer(r_options(boot, 36602));
    let c = c_peer(
        &bin,
        &CPeerOptions {
            add: Some(r.tox_id.pk),
            ..c_options(boot, 36603)
        },
    );
    let c_pk = c.tox_id.pk;
    let secret = r.secret;
    // The rustox node again, as the same identity with c-toxcore as its friend, on `port`.
    let restart = |port| {
        r_peer(RustoxOptions {
            secret: Some(secret),
            add: Some(c_pk),
            ..r_options(boot, port)
        })
    };
    r.stop();
    let r = restart(36602);
    assert_friends(&c, &r, "before restarts");
    let before = c.log.times_online();
    r.stop();
    // Same port.
    let r = restart(36602);
    let back = back_online(&c.log, &r.log, before, ONLINE_LIMIT);
    assert!(
        back,
        "not back online after a restart on the same port: c {:?} r {:?}",
        c.log.events(),
        r.log.events()
    );
    eprintln!(
        "rustox restarted on the same port: online again after {:.2} s",
        r.log.friend_online().unwrap_or(-1.0)
    );
    let before = c.log.times_online();
    r.stop();
    // A new port.
    let r = restart(36604);
    let back = back_online(&c.log, &r.log, before, ONLINE_LIMIT);
    assert!(
        back,
        "not back online after a restart on a new port: c {:?} r {:?}",
        c.log.events(),
        r.log.events()
    );
    eprintln!(
        "rustox restarted on a new port: online again after {:.2} s",
        r.log.friend_online().unwrap_or(-1.0)
    );
}

/// A c-toxcore friend that restarts as the same identity on a new port is back online with
/// its rustox friend.
#[test]
fn a_restarted_c_toxcore_client_comes_back_online_with_its_rustox_friend() {
    let Some(bin) = toxfriend() else { return };
    let runner = r_boot(36701);
    let boot = (runner.local_addr(), runner.public_key());
    let c = c_peer(&bin, &c_options(boot, 36702));
    let r = r_peer(RustoxOptions {
        add: Some(c.tox_id.pk),
        ..r_options(boot, 36703)
    });
    let secret = c.secret;
    let r_pk = r.tox_id.pk;
    // The c-toxcore client again, as the same identity with rustox as its friend, on `port`.
    let restart = |port| {
        c_peer(
            &bin,
            &CPeerOptions {
                secret: Some(secret),
                add: Some(r_pk),
                ..c_options(boot, port)
            },
        )
    };
    drop(c);
    let c = restart(36704);
    assert_friends(&c, &r, "first meeting");
    let before = r.log.times_online();
    drop(c);
    let c = restart(36705);
    let back = back_online(&r.log, &c.log, before, ONLINE_LIMIT + ONLINE_LIMIT);
    assert!(
        back,
        "not back online after c-toxcore restarted on a new port: c {:?} r {:?}",
        c.log.events(),
        r.log.events()
    );
    eprintln!(
        "c-toxcore restarted on a new port: online again after {:.2} s",
        c.log.friend_online().unwrap_or(-1.0)
    );
}
