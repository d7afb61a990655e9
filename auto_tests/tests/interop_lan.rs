//! LAN discovery across implementations: a rustox node and a c-toxcore 0.2.18
//! client on one LAN, with no bootstrap node at all, find each other by LAN discovery and
//! become friends by friend request, in both directions.
//!
//! The LAN is two network namespaces joined by a veth pair whose addresses have broadcast
//! addresses (`brd +`): c-toxcore sends LAN discovery to the interfaces' broadcast addresses
//! and 255.255.255.255, never to loopback, so it cannot be tested on 127.0.0.1. Needs root
//! and iproute2; without them the tests skip with a message, except under CI (`CI` set),
//! where that is a failure. Each test has its own namespaces, so they run in parallel.

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use rustox_auto_tests::ctoxcore::friend::{CPeer, CPeerOptions};
use rustox_auto_tests::ctoxcore::{BuildOptions, PeerBinary};
use rustox_auto_tests::emulator::{check_prerequisites, veth_into, NetNs, NAMESPACE_PREFIX};
use rustox_auto_tests::live::{RustoxOptions, RustoxPeer};

/// c-toxcore alone needs ~9 s on such a LAN (its LAN discovery and onion run on one-second
/// timers); the rest is room for a loaded machine.
const ONLINE_LIMIT: Duration = Duration::from_secs(60);

/// Tox's default port: LAN discovery always covers it, so both ends listen there.
const TOX_PORT: u16 = 33445;

/// The two ends of a veth LAN: A at 10.98.N.1, B at 10.98.N.2, both /24 with broadcast.
struct Lan {
    a: NetNs,
    b: NetNs,
}

fn lan() -> Option<Lan> {
    if let Err(why) = check_prerequisites() {
        if std::env::var_os("CI").is_some() {
            panic!("CI must run the LAN interop tests, but: {why}");
        }
        eprintln!("skipping: {why}");
        return None;
    }
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let pid = std::process::id();
    let name = |side: &str| format!("{NAMESPACE_PREFIX}{pid}-lan{n}-{side}");
    let a = NetNs::create(&name("a")).expect("namespace a");
    let b = NetNs::create(&name("b")).expect("namespace b");
    let subnet = 10 + n;
    a.ip(&veth_into("va", "vb", &b)).expect("veth pair");
    for (ns, dev, host) in [(&a, "va", 1), (&b, "vb", 2)] {
        ns.ip(&[
            "addr",
            "add",
            &format!("10.98.{subnet}.{host}/24"),
            "brd",
            "+",
            "dev",
            dev,
        ])
        .expect("address");
        ns.ip(&["link", "set", dev, "up"]).expect("link up");
        ns.ip(&["link", "set", "lo", "up"]).expect("lo up");
    }
    Some(Lan { a, b })
}

fn toxfriend() -> PathBuf {
    PeerBinary::build_friend(&BuildOptions::default())
        .expect("the c-toxcore friend client (libtoxcore-dev)")
        .path()
        .to_path_buf()
}

/// A rustox node in B, LAN discovery on, no bootstrap node. It binds the wildcard address,
/// as c-toxcore does: a socket bound to a unicast address receives no broadcasts.
fn rustox_in_b(lan: &Lan, options: RustoxOptions) -> RustoxPeer {
    let options = RustoxOptions {
        port: TOX_PORT,
        bind_ip: Some(IpAddr::V4(Ipv4Addr::UNSPECIFIED)),
        lan: true,
        ..options
    };
    lan.b
        .run_inside(move || RustoxPeer::start(options))
        .expect("enter namespace b")
        .expect("start the rustox node")
}

fn c_in_a(lan: &Lan, options: CPeerOptions) -> CPeer {
    let options = CPeerOptions {
        port: TOX_PORT,
        lan: true,
        netns: Some(lan.a.name().to_string()),
        ..options
    };
    CPeer::start(&toxfriend(), &options).expect("start the c-toxcore client")
}

fn wait_both(c: &CPeer, r: &RustoxPeer, what: &str) {
    let end = Instant::now() + ONLINE_LIMIT;
    while Instant::now() < end {
        if c.log.friend_online().is_some() && r.log.friend_online().is_some() {
            eprintln!(
                "{what}: online after c-toxcore {:.2} s, rustox {:.2} s",
                c.log.friend_online().unwrap_or(-1.0),
                r.log.friend_online().unwrap_or(-1.0)
            );
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!(
        "{what}: not both online within {ONLINE_LIMIT:?}\n c-toxcore: {:?}\n rustox: {:?}",
        c.log.events(),
        r.log.events()
    );
}

#[test]
fn rustox_finds_c_toxcore_on_a_lan_and_its_request_is_accepted() {
    let Some(lan) = lan() else { return };
    let c = c_in_a(
        &lan,
        CPeerOptions {
            accept: true,
            ..CPeerOptions::default()
        },
    );
    let r = rustox_in_b(
        &lan,
        RustoxOptions {
            request: Some(c.tox_id),
            ..RustoxOptions::default()
        },
    );
    wait_both(&c, &r, "rustox → c-toxcore over LAN discovery");
}

#[test]
fn c_toxcore_finds_rustox_on_a_lan_and_its_request_is_accepted() {
    let Some(lan) = lan() else { return };
    let r = rustox_in_b(
        &lan,
        RustoxOptions {
            accept: true,
            ..RustoxOptions::default()
        },
    );
    let c = c_in_a(
        &lan,
        CPeerOptions {
            request: Some(r.tox_id),
            ..CPeerOptions::default()
        },
    );
    wait_both(&c, &r, "c-toxcore → rustox over LAN discovery");
}
