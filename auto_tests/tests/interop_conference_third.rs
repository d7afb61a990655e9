//! Conference peers that are not each other's friends, joined through a third: A and B are
//! friends, B and C are friends, A and C are not. A makes the conference and invites B, B
//! invites C; then A and C see each other in the peer list, with their names, and each sees
//! the other's message and action from the right key: the conference itself connects them
//! (c-toxcore's group.c opens a friend connection between peers close in the conference),
//! not a friendship. Each line-up of implementations is its own test, the middle peer being
//! the one that introduces: all c-toxcore, rustox between two c-toxcore peers, and c-toxcore
//! between two rustox peers.
//!
//! With `CI` set, a missing c-toxcore, compiler or tox-bootstrapd fails these tests;
//! otherwise they return at once with a notice.

use std::time::Duration;

use rustox_auto_tests::ctoxcore::conference::Implementation::{self, CToxcore, Rustox};
use rustox_auto_tests::ctoxcore::conference_net::{
    befriend, invite, wait_message, wait_peer_count, wait_peer_name, ConfNet,
};

/// Friends online: c-toxcore alone takes 9–11 s on loopback; room for a loaded machine.
const FRIEND_LIMIT: Duration = Duration::from_secs(60);
/// An invite answered and the joiner connected; for A and C, their own connection.
const JOIN_LIMIT: Duration = Duration::from_secs(40);
/// One message across.
const SEE_LIMIT: Duration = Duration::from_secs(20);

fn ok<T>(r: Result<T, String>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

fn through_a_third(a_impl: Implementation, b_impl: Implementation, c_impl: Implementation) {
    let Some(net) = ConfNet::start(&[a_impl, b_impl, c_impl]) else {
        return;
    };
    let mut a = net.peer("anna", a_impl);
    let mut b = net.peer("ben", b_impl);
    let mut c = net.peer("cleo", c_impl);
    let (b_at_a, _) = befriend(&mut a, &mut b, FRIEND_LIMIT);
    let (c_at_b, _) = befriend(&mut b, &mut c, FRIEND_LIMIT);

    let ac: u32 = a.must("new").trim().parse().expect("conference number");
    let bc = invite(&mut a, ac, b_at_a, &mut b, JOIN_LIMIT);
    ok(wait_peer_count(&b, bc, 2, JOIN_LIMIT));
    let cc = invite(&mut b, bc, c_at_b, &mut c, JOIN_LIMIT);
    for (p, conf) in [(&a, ac), (&b, bc), (&c, cc)] {
        ok(wait_peer_count(p, conf, 3, JOIN_LIMIT));
    }
    ok(wait_peer_name(&c, cc, &a.pk, "anna", SEE_LIMIT));
    ok(wait_peer_name(&a, ac, &c.pk, "cleo", SEE_LIMIT));

    a.must(&format!("msg {ac} from anna to all"));
    ok(wait_message(
        &c,
        cc,
        &a.pk,
        false,
        "from anna to all",
        SEE_LIMIT,
    ));
    ok(wait_message(
        &b,
        bc,
        &a.pk,
        false,
        "from anna to all",
        SEE_LIMIT,
    ));
    c.must(&format!("msg {cc} from cleo to all"));
    ok(wait_message(
        &a,
        ac,
        &c.pk,
        false,
        "from cleo to all",
        SEE_LIMIT,
    ));
    ok(wait_message(
        &b,
        bc,
        &c.pk,
        false,
        "from cleo to all",
        SEE_LIMIT,
    ));
    c.must(&format!("action {cc} nods to anna"));
    ok(wait_message(&a, ac, &c.pk, true, "nods to anna", SEE_LIMIT));
    a.must(&format!("action {ac} nods to cleo"));
    ok(wait_message(&c, cc, &a.pk, true, "nods to cleo", SEE_LIMIT));

    // A title set at one end reaches the other end.
    c.must(&format!("title {cc} three of us"));
    ok(a.wait("the title from cleo", SEE_LIMIT, |l| {
        l.tag == "TITLE" && l.num(0) == Some(ac) && l.tail(2) == "three of us"
    }));
    for p in [&mut a, &mut b, &mut c] {
        p.quit(Duration::from_secs(5));
    }
}

#[test]
fn all_c_toxcore() {
    through_a_third(CToxcore, CToxcore, CToxcore);
}

#[test]
fn rustox_introduces_two_c_toxcore_peers() {
    through_a_third(CToxcore, Rustox, CToxcore);
}

#[test]
fn c_toxcore_introduces_two_rustox_peers() {
    through_a_third(Rustox, CToxcore, Rustox);
}

#[test]
fn a_rustox_host_reaches_a_c_toxcore_stranger() {
    through_a_third(Rustox, CToxcore, CToxcore);
}
