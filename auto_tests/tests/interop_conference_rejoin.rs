//! A conference peer leaving and coming back by a new invite: the guest deletes the
//! conference (c-toxcore's group.c then tells the others it left for good: a kill-peer
//! message), the host sees it gone from the peer list, not frozen among the offline peers;
//! the host invites it again, it joins as a fresh member, and messages go both ways again.
//! Each pairing of implementations is its own test; the one who leaves is the guest.
//!
//! A peer restarted from its savedata, which rejoins by itself, is
//! `interop_conference_restart.rs`.
//!
//! With `CI` set, a missing c-toxcore, compiler or tox-bootstrapd fails these tests;
//! otherwise they return at once with a notice.

use std::time::Duration;

use rustox_auto_tests::ctoxcore::conference::Implementation::{self, CToxcore, Rustox};
use rustox_auto_tests::ctoxcore::conference_net::{
    befriend, invite, wait_message, wait_peer_count, ConfNet,
};

/// Friends online: c-toxcore alone takes 9–11 s on loopback; room for a loaded machine.
const FRIEND_LIMIT: Duration = Duration::from_secs(60);
/// An invite answered and the joiner connected.
const JOIN_LIMIT: Duration = Duration::from_secs(30);
/// One message, or a departure, across.
const SEE_LIMIT: Duration = Duration::from_secs(20);

fn ok<T>(r: Result<T, String>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

fn leave_and_come_back(host_impl: Implementation, guest_impl: Implementation) {
    let Some(net) = ConfNet::start(&[host_impl, guest_impl]) else {
        return;
    };
    let mut host = net.peer("hana", host_impl);
    let mut guest = net.peer("gus", guest_impl);
    let (gus_at_host, _) = befriend(&mut host, &mut guest, FRIEND_LIMIT);
    let conf: u32 = host.must("new").trim().parse().expect("conference number");
    let gconf = invite(&mut host, conf, gus_at_host, &mut guest, JOIN_LIMIT);
    ok(wait_peer_count(&host, conf, 2, JOIN_LIMIT));
    ok(wait_peer_count(&guest, gconf, 2, JOIN_LIMIT));
    guest.must(&format!("msg {gconf} before leaving"));
    ok(wait_message(
        &host,
        conf,
        &guest.pk,
        false,
        "before leaving",
        SEE_LIMIT,
    ));

    // Deleting leaves for good: the host's list shrinks to itself and keeps no offline entry.
    guest.must(&format!("delete {gconf}"));
    assert_eq!(
        guest.must("chatlist").trim(),
        "",
        "the guest is in no conference"
    );
    ok(wait_peer_count(&host, conf, 1, SEE_LIMIT));
    assert_eq!(
        host.must(&format!("peers {conf}")).trim(),
        "1 0",
        "online and offline peers at the host after the guest deleted the conference"
    );

    // A new invite brings it back.
    let again = invite(&mut host, conf, gus_at_host, &mut guest, JOIN_LIMIT);
    ok(wait_peer_count(&host, conf, 2, JOIN_LIMIT));
    ok(wait_peer_count(&guest, again, 2, JOIN_LIMIT));
    assert_eq!(
        host.must(&format!("id {conf}")),
        guest.must(&format!("id {again}")),
        "the guest is back in the same conference"
    );
    host.must(&format!("msg {conf} welcome back"));
    ok(wait_message(
        &guest,
        again,
        &host.pk,
        false,
        "welcome back",
        SEE_LIMIT,
    ));
    guest.must(&format!("msg {again} glad to be back"));
    ok(wait_message(
        &host,
        conf,
        &guest.pk,
        false,
        "glad to be back",
        SEE_LIMIT,
    ));
    host.quit(Duration::from_secs(5));
    guest.quit(Duration::from_secs(5));
}

#[test]
fn c_toxcore_leaves_c_toxcore_and_comes_back() {
    leave_and_come_back(CToxcore, CToxcore);
}

#[test]
fn rustox_leaves_c_toxcore_and_comes_back() {
    leave_and_come_back(CToxcore, Rustox);
}

#[test]
fn c_toxcore_leaves_rustox_and_comes_back() {
    leave_and_come_back(Rustox, CToxcore);
}
