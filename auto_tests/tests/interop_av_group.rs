//! Group audio in AV conferences mixing implementations: three call peers
//! (`tools/toxav_peer.c`) on Debian's c-toxcore 0.2.18 and rustox's libtoxcore.so.2. The
//! host makes an AV conference (`toxav_add_av_groupchat`) and invites both friends, who join
//! with `toxav_join_av_groupchat`; each sends a tone of its own with `toxav_group_send_audio`
//! and must hear the other two, each at its frequency (± 3 %) from the right peer key. Then
//! one member turns audio off (`toxav_groupchat_disable_av`): it hears nothing and is not
//! heard; turned on again (`toxav_groupchat_enable_av`) it hears and is heard again.
//! `all_c_toxcore` holds the test to c-toxcore's own behaviour.
//!
//! With `CI` set, a missing c-toxcore, compiler or tox-bootstrapd fails these tests;
//! otherwise they return at once with a notice.

use std::time::Duration;

use rustox_auto_tests::ctoxcore::av_peer::{
    assert_none_between, must_at, wait_group_tone, AvNet, GroupFrame,
};
use rustox_auto_tests::ctoxcore::conference::Implementation::{self, CToxcore, Rustox};
use rustox_auto_tests::ctoxcore::conference_net::{befriend, invite, wait_peer_count};
use rustox_auto_tests::ctoxcore::conference_peer::ConfPeer;

/// Friends online: c-toxcore alone takes 9–11 s on loopback; room for a loaded machine.
const FRIEND_LIMIT: Duration = Duration::from_secs(60);
/// An invite answered and every member seeing every other.
const JOIN_LIMIT: Duration = Duration::from_secs(45);
/// Enough tone frames across.
const MEDIA_LIMIT: Duration = Duration::from_secs(30);
/// Frames that make a tone heard.
const HEARD: usize = 25;
/// How far a tone may arrive off its frequency.
const TOLERANCE: f64 = 0.03;
/// After audio is turned off, how long frames already under way may still arrive (seconds).
const SETTLE: f64 = 1.0;
/// How long audio stays off.
const HOLD: Duration = Duration::from_secs(3);
/// Each member's tone, by position (host first).
const TONES: [f64; 3] = [440.0, 1000.0, 1500.0];

fn ok<T>(r: Result<T, String>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// Every member hears every other member's tone from its key (frames counted from now on).
fn all_hear_each_other(members: &[ConfPeer], confs: &[u32]) {
    for (i, listener) in members.iter().enumerate() {
        for (j, speaker) in members.iter().enumerate() {
            if i == j {
                continue;
            }
            let from = listener.mark();
            ok(wait_group_tone(
                listener,
                from,
                confs[i],
                &speaker.pk,
                TONES[j],
                TOLERANCE,
                HEARD,
                MEDIA_LIMIT,
            ));
        }
    }
}

fn group_audio(host_impl: Implementation, member_impls: [Implementation; 2]) {
    let Some(net) = AvNet::start(&[host_impl, member_impls[0], member_impls[1]]) else {
        return;
    };
    let mut host = net.peer("host", host_impl);
    let mut bob = net.peer("bob", member_impls[0]);
    let mut carol = net.peer("carol", member_impls[1]);
    let (hb, _) = befriend(&mut host, &mut bob, FRIEND_LIMIT);
    let (hc, _) = befriend(&mut host, &mut carol, FRIEND_LIMIT);

    let conf: u32 = host
        .must("av-new")
        .trim()
        .parse()
        .expect("conference number");
    let bconf = invite(&mut host, conf, hb, &mut bob, JOIN_LIMIT);
    let cconf = invite(&mut host, conf, hc, &mut carol, JOIN_LIMIT);
    ok(wait_peer_count(&host, conf, 3, JOIN_LIMIT));
    ok(wait_peer_count(&bob, bconf, 3, JOIN_LIMIT));
    ok(wait_peer_count(&carol, cconf, 3, JOIN_LIMIT));
    let mut members = [host, bob, carol];
    let confs = [conf, bconf, cconf];
    for (m, c) in members.iter_mut().zip(confs) {
        assert_eq!(
            m.must(&format!("gav {c} get")),
            "1",
            "{}: audio on",
            m.label
        );
    }

    for (i, (m, c)) in members.iter_mut().zip(confs).enumerate() {
        m.must(&format!("gtone {c} {}", TONES[i]));
    }
    all_hear_each_other(&members, &confs);

    // Carol turns audio off: she hears nobody, nobody hears her.
    members[2].must(&format!("gtone {cconf} 0"));
    let off_at = must_at(&mut members[2], &format!("gav {cconf} off"));
    assert_eq!(members[2].must(&format!("gav {cconf} get")), "0");
    std::thread::sleep(HOLD);
    let carol_pk = members[2].pk.clone();
    let on_at = must_at(&mut members[2], &format!("gav {cconf} on"));
    assert_none_between(
        &members[2],
        off_at + SETTLE,
        on_at,
        "conference audio frames while Carol had audio off",
        |l| l.tag == "GFRAME",
    );
    for (m, c) in members[..2].iter().zip(confs) {
        assert_none_between(
            m,
            off_at + SETTLE,
            on_at,
            "conference audio frames from Carol while she had audio off",
            |l| GroupFrame::parse(l).is_some_and(|f| f.conf == c && f.pk == carol_pk),
        );
    }
    // The other two still hear each other meanwhile.
    let from = members[0].mark();
    ok(wait_group_tone(
        &members[0],
        from,
        conf,
        &members[1].pk,
        TONES[1],
        TOLERANCE,
        HEARD,
        MEDIA_LIMIT,
    ));

    // On again: Carol hears and is heard.
    members[2].must(&format!("gtone {cconf} {}", TONES[2]));
    all_hear_each_other(&members, &confs);
    for m in &mut members {
        m.quit(Duration::from_secs(5));
    }
}

#[test]
fn all_c_toxcore() {
    group_audio(CToxcore, [CToxcore, CToxcore]);
}

#[test]
fn c_toxcore_hosts_rustox_and_c_toxcore() {
    group_audio(CToxcore, [Rustox, CToxcore]);
}

#[test]
fn rustox_hosts_c_toxcore_and_rustox() {
    group_audio(Rustox, [CToxcore, Rustox]);
}

#[test]
fn all_rustox() {
    group_audio(Rustox, [Rustox, Rustox]);
}
