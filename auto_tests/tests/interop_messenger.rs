//! Messenger across implementations: a rustox node and a c-toxcore 0.2.18 client,
//! friends by key, exchange names, status messages, user statuses, typing, a message and an
//! action each way, and each gets a read receipt for every message it sent.
//!
//! With `CI` set, a missing c-toxcore fails this test; otherwise it returns with a notice.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rustox_auto_tests::ctoxcore::friend::{CPeer, CPeerOptions, PeerEvent, PeerLog, Presence};
use rustox_auto_tests::live::{rustox_bootstrap, RustoxOptions, RustoxPeer};

/// c-toxcore alone needs ~10 s to find a friend on loopback.
const LIMIT: Duration = Duration::from_secs(60);

fn toxfriend() -> Option<PathBuf> {
    rustox_auto_tests::ctoxcore::friend::friend_binary_or_skip()
}

/// Everything one side must have seen of the other.
fn complete(log: &PeerLog, peer: &Presence, said: &str) -> Vec<String> {
    let mut missing = Vec::new();
    let name = peer.name.clone().unwrap_or_default();
    if !log.has(|e| matches!(e, PeerEvent::Name(_, n) if *n == name)) {
        missing.push(format!("name {name:?}"));
    }
    let text = peer.status_message.clone().unwrap_or_default();
    if !log.has(|e| matches!(e, PeerEvent::StatusMessage(_, t) if *t == text)) {
        missing.push(format!("status message {text:?}"));
    }
    let status = i32::from(peer.status.unwrap_or(0));
    if !log.has(|e| matches!(e, PeerEvent::Status(_, s) if *s == status)) {
        missing.push(format!("status {status}"));
    }
    if !log.has(|e| matches!(e, PeerEvent::Typing(_, true))) {
        missing.push("typing".into());
    }
    if !log.has(|e| matches!(e, PeerEvent::Message(_, m) if m == said)) {
        missing.push(format!("message {said:?}"));
    }
    let act = peer.act.clone().unwrap_or_default();
    if !log.has(|e| matches!(e, PeerEvent::Action(_, a) if *a == act)) {
        missing.push(format!("action {act:?}"));
    }
    // A receipt for every id we were given.
    let events = log.events();
    for (_, e) in &events {
        if let PeerEvent::Sent(n, id) = e {
            if !events
                .iter()
                .any(|(_, r)| *r == PeerEvent::Receipt(*n, *id))
            {
                missing.push(format!("receipt for message {id}"));
            }
        }
    }
    if events
        .iter()
        .filter(|(_, e)| matches!(e, PeerEvent::Sent(..)))
        .count()
        < 2
    {
        missing.push("both our messages sent".into());
    }
    missing
}

#[test]
fn names_statuses_typing_messages_actions_and_receipts_cross_both_ways() {
    let Some(bin) = toxfriend() else { return };
    let runner = rustox_bootstrap(36801).expect("start the rustox bootstrap node");
    let boot = (runner.local_addr(), runner.public_key());
    let c_says = Presence {
        name: Some("Carol (c-toxcore)".into()),
        status_message: Some("testing rustox".into()),
        status: Some(2),
        typing: true,
        act: Some("waves from C".into()),
    };
    let r_says = Presence {
        name: Some("Rusty".into()),
        status_message: Some("sans-IO all the way".into()),
        status: Some(1),
        typing: true,
        act: Some("waves from Rust".into()),
    };
    let r = RustoxPeer::start(RustoxOptions {
        port: 36802,
        bootstrap: vec![boot],
        say: Some("hello from rustox".into()),
        presence: r_says.clone(),
        ..RustoxOptions::default()
    })
    .expect("start the rustox node");
    let c = CPeer::start(
        &bin,
        &CPeerOptions {
            port: 36803,
            bootstrap: vec![boot],
            add: Some(r.tox_id.pk),
            say: Some("hello from c-toxcore".into()),
            presence: c_says.clone(),
            ..CPeerOptions::default()
        },
    )
    .expect("start the c-toxcore client");
    // rustox adds c-toxcore by key too: restart it knowing the key, same identity.
    let secret = r.secret;
    r.stop();
    let r = RustoxPeer::start(RustoxOptions {
        port: 36802,
        bootstrap: vec![boot],
        secret: Some(secret),
        add: Some(c.tox_id.pk),
        say: Some("hello from rustox".into()),
        presence: r_says.clone(),
        ..RustoxOptions::default()
    })
    .expect("restart the rustox node");

    let end = Instant::now() + LIMIT;
    let (mut c_missing, mut r_missing) = (vec!["start".to_string()], vec!["start".to_string()]);
    while Instant::now() < end && !(c_missing.is_empty() && r_missing.is_empty()) {
        std::thread::sleep(Duration::from_millis(100));
        c_missing = complete(&c.log, &r_says, "hello from rustox");
        r_missing = complete(&r.log, &c_says, "hello from c-toxcore");
    }
    assert!(
        c_missing.is_empty(),
        "c-toxcore lacks {c_missing:?}: {:?}",
        c.log.events()
    );
    assert!(
        r_missing.is_empty(),
        "rustox lacks {r_missing:?}: {:?}",
        r.log.events()
    );
}
