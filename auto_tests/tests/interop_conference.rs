//! Conferences between two implementations: the same C client (`tools/toxconference.c`) on
//! Debian's c-toxcore 0.2.18 and on rustox's libtoxcore.so.2, one process each, bootstrapped
//! to a local tox-bootstrapd on loopback. The host makes a conference, titles it and invites
//! its friend; then messages, actions, titles and name changes go both ways and each side
//! checks it saw them from the right peer key. Each pairing is its own test (they run in
//! parallel on free ports); `c_toxcore_invites_c_toxcore` holds the harness to c-toxcore's
//! own behaviour.
//!
//! With `CI` set, a missing c-toxcore, compiler or tox-bootstrapd fails these tests;
//! otherwise they return at once with a notice.

use std::time::Duration;

use rustox_auto_tests::ctoxcore::conference::Implementation::{self, CToxcore, Rustox};
use rustox_auto_tests::ctoxcore::conference_net::{
    befriend, invite, wait_message, wait_peer_count, wait_peer_name, wait_title, ConfNet,
};

/// Friends online: c-toxcore alone takes 9–11 s on loopback; room for a loaded machine.
const FRIEND_LIMIT: Duration = Duration::from_secs(60);
/// An invite answered and the joiner connected.
const JOIN_LIMIT: Duration = Duration::from_secs(30);
/// One message, title or name across.
const SEE_LIMIT: Duration = Duration::from_secs(20);

fn ok<T>(r: Result<T, String>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

fn two_peers(host_impl: Implementation, guest_impl: Implementation) {
    let Some(net) = ConfNet::start(&[host_impl, guest_impl]) else {
        return;
    };
    let mut host = net.peer("alice", host_impl);
    let mut guest = net.peer("bob", guest_impl);
    let (bob_at_host, _) = befriend(&mut host, &mut guest, FRIEND_LIMIT);

    let conf: u32 = host.must("new").trim().parse().expect("conference number");
    host.must(&format!("title {conf} tea room"));
    let gconf = invite(&mut host, conf, bob_at_host, &mut guest, JOIN_LIMIT);
    ok(guest.wait(&format!("CONNECTED {gconf}"), JOIN_LIMIT, |l| {
        l.tag == "CONNECTED" && l.num(0) == Some(gconf)
    }));
    ok(wait_peer_count(&host, conf, 2, JOIN_LIMIT));
    ok(wait_peer_count(&guest, gconf, 2, JOIN_LIMIT));
    assert_eq!(
        host.must(&format!("id {conf}")),
        guest.must(&format!("id {gconf}")),
        "both sides name the same conference id"
    );

    // What the joiner learns on joining: the title and the host's name; and the host
    // learns the joiner's name.
    ok(wait_title(&guest, gconf, "tea room", SEE_LIMIT));
    assert_eq!(guest.must(&format!("get-title {gconf}")), "tea room");
    ok(wait_peer_name(&guest, gconf, &host.pk, "alice", SEE_LIMIT));
    ok(wait_peer_name(&host, conf, &guest.pk, "bob", SEE_LIMIT));

    // Messages and actions both ways, each from the right key.
    host.must(&format!("msg {conf} hello from alice"));
    ok(wait_message(
        &guest,
        gconf,
        &host.pk,
        false,
        "hello from alice",
        SEE_LIMIT,
    ));
    guest.must(&format!("msg {gconf} hello from bob \u{2713}"));
    ok(wait_message(
        &host,
        conf,
        &guest.pk,
        false,
        "hello from bob \u{2713}",
        SEE_LIMIT,
    ));
    host.must(&format!("action {conf} waves"));
    ok(wait_message(
        &guest, gconf, &host.pk, true, "waves", SEE_LIMIT,
    ));
    guest.must(&format!("action {gconf} waves back"));
    ok(wait_message(
        &host,
        conf,
        &guest.pk,
        true,
        "waves back",
        SEE_LIMIT,
    ));

    // Titles both ways.
    guest.must(&format!("title {gconf} bob's room"));
    ok(wait_title(&host, conf, "bob's room", SEE_LIMIT));
    assert_eq!(host.must(&format!("get-title {conf}")), "bob's room");
    host.must(&format!("title {conf} alice's room"));
    ok(wait_title(&guest, gconf, "alice's room", SEE_LIMIT));

    // Names both ways, as the peers change them while in the conference.
    host.must("name alice two");
    ok(wait_peer_name(
        &guest,
        gconf,
        &host.pk,
        "alice two",
        SEE_LIMIT,
    ));
    guest.must("name bob two");
    ok(wait_peer_name(&host, conf, &guest.pk, "bob two", SEE_LIMIT));

    // The peer list as the API reads it: two peers, one of them us.
    let listed = host.must(&format!("peers {conf}"));
    assert_eq!(listed.trim(), "2 0", "online and offline peers at the host");
    let lines = host.lines();
    let peers: Vec<_> = lines
        .iter()
        .rev()
        .filter(|l| l.tag == "PEER" && l.num(0) == Some(conf))
        .take(2)
        .collect();
    assert!(
        peers
            .iter()
            .any(|l| l.word(2) == Some("0") && l.word(3) == Some(guest.pk.as_str())),
        "the host lists bob as a peer that is not itself: {peers:?}"
    );
    assert!(
        peers
            .iter()
            .any(|l| l.word(2) == Some("1") && l.word(3) == Some(host.pk.as_str())),
        "the host lists itself as ours: {peers:?}"
    );
    host.quit(Duration::from_secs(5));
    guest.quit(Duration::from_secs(5));
}

#[test]
fn c_toxcore_invites_c_toxcore() {
    two_peers(CToxcore, CToxcore);
}

#[test]
fn c_toxcore_invites_rustox() {
    two_peers(CToxcore, Rustox);
}

#[test]
fn rustox_invites_c_toxcore() {
    two_peers(Rustox, CToxcore);
}

#[test]
fn rustox_invites_rustox() {
    two_peers(Rustox, Rustox);
}
