//! Audio calls between two implementations: the same C call peer (`tools/toxav_peer.c`) on
//! Debian's c-toxcore 0.2.18 and on rustox's libtoxcore.so.2, one process each, bootstrapped
//! to a local tox-bootstrapd on loopback. Alice calls Bob (audio only) and Bob answers; each
//! sends a tone and must hear the other's at its frequency (± 3 %); then Bob mutes and
//! unmutes, Alice pauses and resumes, both change bit rates mid-call, and Alice hangs up (Bob
//! sees FINISHED). Then Bob calls Alice, and Alice, the callee now, hangs up. So each test
//! places calls both ways; each pairing is its own test, and `c_toxcore_with_c_toxcore`
//! holds the test to c-toxcore's own behaviour. A last pair of tests lets friends go offline
//! during a call and while one rings: the calls end.
//!
//! With `CI` set, a missing c-toxcore, compiler or tox-bootstrapd fails these tests;
//! otherwise they return at once with a notice.

use std::time::Duration;

use rustox_auto_tests::ctoxcore::av_peer::{
    assert_no_rate_cut, assert_none_between, call_state, must_at, place_call, send_result,
    wait_send_state, wait_state, wait_tone, AudioFrame, AvNet,
};
use rustox_auto_tests::ctoxcore::conference::Implementation::{self, CToxcore, Rustox};
use rustox_auto_tests::ctoxcore::conference_net::befriend;
use rustox_auto_tests::ctoxcore::conference_peer::{ConfPeer, Line};

/// Friends online: c-toxcore alone takes 9–11 s on loopback; room for a loaded machine.
const FRIEND_LIMIT: Duration = Duration::from_secs(60);
/// A call request, answer or control across.
const SIGNAL_LIMIT: Duration = Duration::from_secs(15);
/// Enough tone frames across.
const MEDIA_LIMIT: Duration = Duration::from_secs(20);
/// Frames that make a tone heard: half a second of 20 ms frames.
const HEARD: usize = 25;
/// How far a tone may arrive off its frequency.
const TOLERANCE: f64 = 0.03;
/// After a pause or mute, how long frames already under way may still arrive (seconds).
const SETTLE: f64 = 1.0;
/// How long a pause or mute is held (a quiet stretch after SETTLE).
const HOLD: Duration = Duration::from_secs(3);
/// The call's audio bit rate (kbit/s), a common client default.
const AUDIO_KBPS: u32 = 48;

const ALICE_HZ: f64 = 440.0;
const BOB_HZ: f64 = 1000.0;

fn ok<T>(r: Result<T, String>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// Both report `from` on: `peer` hears `hz` from `friend`.
fn hears(peer: &ConfPeer, friend: u32, hz: f64) {
    let from = peer.mark();
    ok(wait_tone(
        peer,
        from,
        friend,
        hz,
        TOLERANCE,
        HEARD,
        MEDIA_LIMIT,
    ));
}

fn is_audio_from(friend: u32) -> impl Fn(&Line) -> bool {
    move |l| AudioFrame::parse(l).is_some_and(|f| f.friend == friend)
}

fn audio_calls(alice_impl: Implementation, bob_impl: Implementation) {
    let Some(net) = AvNet::start(&[alice_impl, bob_impl]) else {
        return;
    };
    let mut alice = net.peer("alice", alice_impl);
    let mut bob = net.peer("bob", bob_impl);
    let (b, a) = befriend(&mut alice, &mut bob, FRIEND_LIMIT);

    // Alice calls, audio only; Bob answers, audio only.
    place_call(
        &mut alice,
        b,
        &mut bob,
        a,
        (AUDIO_KBPS, 0),
        (AUDIO_KBPS, 0),
        SIGNAL_LIMIT,
    );
    alice.must(&format!("tone {b} {ALICE_HZ}"));
    bob.must(&format!("tone {a} {BOB_HZ}"));
    hears(&bob, a, ALICE_HZ);
    hears(&alice, b, BOB_HZ);
    let frames: Vec<AudioFrame> = bob
        .lines()
        .iter()
        .filter_map(AudioFrame::parse)
        .filter(|f| f.friend == a && f.rms > 0.0)
        .collect();
    assert!(
        frames.iter().all(|f| f.channels == 1 && f.rate == 48_000),
        "20 ms of 48 kHz mono arrives as 48 kHz mono: {:?}",
        frames.first()
    );

    // Bob mutes: he stops receiving Alice's audio. Alice's state loses ACCEPTING_A and her
    // frames are refused; Bob hears nothing from her, while she still hears him.
    let alice_from = alice.mark();
    let muted_at = must_at(&mut bob, &format!("control {a} mute"));
    ok(wait_state(
        &alice,
        alice_from,
        b,
        "Bob's mute",
        SIGNAL_LIMIT,
        |s| s & call_state::ACCEPTING_A == 0 && s & call_state::SENDING_A != 0,
    ));
    ok(wait_send_state(
        &alice,
        alice_from,
        b,
        "audio",
        send_result::PAYLOAD_TYPE_DISABLED,
        SIGNAL_LIMIT,
    ));
    hears(&alice, b, BOB_HZ);
    std::thread::sleep(HOLD);
    let unmuted_at = must_at(&mut bob, &format!("control {a} unmute"));
    assert_none_between(
        &bob,
        muted_at + SETTLE,
        unmuted_at,
        "audio frames from Alice while Bob has her muted",
        is_audio_from(a),
    );
    ok(wait_state(
        &alice,
        alice_from,
        b,
        "Bob's unmute",
        SIGNAL_LIMIT,
        |s| s & call_state::ACCEPTING_A != 0,
    ));
    hears(&bob, a, ALICE_HZ);

    // Alice pauses: nothing flows either way until she resumes; Bob sees state 0.
    let bob_from = bob.mark();
    let paused_at = must_at(&mut alice, &format!("control {b} pause"));
    ok(wait_state(
        &bob,
        bob_from,
        a,
        "Alice's pause",
        SIGNAL_LIMIT,
        |s| s == 0,
    ));
    ok(wait_send_state(
        &bob,
        bob_from,
        a,
        "audio",
        send_result::PAYLOAD_TYPE_DISABLED,
        SIGNAL_LIMIT,
    ));
    std::thread::sleep(HOLD);
    let resumed_at = must_at(&mut alice, &format!("control {b} resume"));
    assert_none_between(
        &bob,
        paused_at + SETTLE,
        resumed_at,
        "audio frames from Alice while she paused the call",
        is_audio_from(a),
    );
    assert_none_between(
        &alice,
        paused_at + SETTLE,
        resumed_at,
        "audio frames from Bob while Alice paused the call",
        is_audio_from(b),
    );
    ok(wait_state(
        &bob,
        bob_from,
        a,
        "Alice's resume",
        SIGNAL_LIMIT,
        |s| {
            s & (call_state::SENDING_A | call_state::ACCEPTING_A)
                == call_state::SENDING_A | call_state::ACCEPTING_A
        },
    ));
    hears(&bob, a, ALICE_HZ);
    hears(&alice, b, BOB_HZ);

    // Bit rates changed mid-call: the other side keeps decoding the tone. A bit rate Opus
    // cannot take is refused (TOXAV_ERR_BIT_RATE_SET_INVALID_BIT_RATE).
    for kbps in [16, 64, 8] {
        alice.must(&format!("abitrate {b} {kbps}"));
        hears(&bob, a, ALICE_HZ);
    }
    bob.must(&format!("abitrate {a} 24"));
    hears(&alice, b, BOB_HZ);
    assert_eq!(
        alice.cmd(&format!("abitrate {b} 1")),
        Err(format!(
            "{}: `abitrate {b} 1` failed with code 2",
            alice.label
        )),
        "1 kbit/s is below Opus's range"
    );
    let rates: Vec<String> = [&alice, &bob]
        .iter()
        .flat_map(|p| p.lines())
        .filter(|l| l.tag == "ABITRATE")
        .map(|l| l.rest)
        .collect();
    eprintln!("audio bit-rate events on loopback: {rates:?}");

    // Alice, the caller, hangs up: Bob sees FINISHED; nothing more arrives from her.
    let bob_from = bob.mark();
    let hung_at = must_at(&mut alice, &format!("hangup {b}"));
    ok(wait_state(
        &bob,
        bob_from,
        a,
        "FINISHED after Alice hung up",
        SIGNAL_LIMIT,
        |s| s == call_state::FINISHED,
    ));
    assert_eq!(
        alice.cmd(&format!("control {b} pause")),
        Err(format!(
            "{}: `control {b} pause` failed with code 3",
            alice.label
        )),
        "no call to control after hanging up (TOXAV_ERR_CALL_CONTROL_FRIEND_NOT_IN_CALL)"
    );
    std::thread::sleep(Duration::from_secs(2));
    assert_none_between(
        &bob,
        hung_at + SETTLE,
        f64::MAX,
        "audio frames from Alice after she hung up",
        is_audio_from(a),
    );

    // Bob calls Alice now; Alice answers, then hangs up as the callee.
    place_call(
        &mut bob,
        a,
        &mut alice,
        b,
        (AUDIO_KBPS, 0),
        (AUDIO_KBPS, 0),
        SIGNAL_LIMIT,
    );
    alice.must(&format!("tone {b} {ALICE_HZ}"));
    bob.must(&format!("tone {a} {BOB_HZ}"));
    hears(&alice, b, BOB_HZ);
    hears(&bob, a, ALICE_HZ);
    let bob_from = bob.mark();
    alice.must(&format!("hangup {b}"));
    ok(wait_state(
        &bob,
        bob_from,
        a,
        "FINISHED after Alice (callee) hung up",
        SIGNAL_LIMIT,
        |s| s == call_state::FINISHED,
    ));
    // The lowest audio rate set here is 8 kbit/s; loopback loses nothing.
    for p in [&alice, &bob] {
        assert_no_rate_cut(p, "ABITRATE", 8);
    }
    alice.quit(Duration::from_secs(5));
    bob.quit(Duration::from_secs(5));
}

/// Alice calls Bob (answered, tones flowing) and Carol (ringing, not answered); then both
/// go offline. Each call must end at Alice: state ERROR or FINISHED, no more frames.
fn friends_go_offline(alice_impl: Implementation, others: Implementation) {
    let Some(net) = AvNet::start(&[alice_impl, others]) else {
        return;
    };
    let mut alice = net.peer("alice", alice_impl);
    let mut bob = net.peer("bob", others);
    let mut carol = net.peer("carol", others);
    let (b, a) = befriend(&mut alice, &mut bob, FRIEND_LIMIT);
    let (c, _) = befriend(&mut alice, &mut carol, FRIEND_LIMIT);
    place_call(
        &mut alice,
        b,
        &mut bob,
        a,
        (AUDIO_KBPS, 0),
        (AUDIO_KBPS, 0),
        SIGNAL_LIMIT,
    );
    bob.must(&format!("tone {a} {BOB_HZ}"));
    hears(&alice, b, BOB_HZ);
    let carol_from = carol.mark();
    alice.must(&format!("call {c} {AUDIO_KBPS} 0"));
    ok(
        carol.wait_from(carol_from, "Alice's call", SIGNAL_LIMIT, |l| {
            l.tag == "CALL"
        }),
    );

    let from = alice.mark();
    drop(bob);
    drop(carol);
    let ended = |s: u32| s == call_state::ERROR || s == call_state::FINISHED;
    // c-toxcore notices a friend gone when its connection times out.
    let limit = Duration::from_secs(60);
    let bob_end = ok(wait_state(
        &alice,
        from,
        b,
        "the end of the call with Bob",
        limit,
        ended,
    ));
    ok(wait_state(
        &alice,
        from,
        c,
        "the end of the ringing call to Carol",
        limit,
        ended,
    ));
    ok(alice.wait_from(from, "Bob offline", limit, |l| {
        l.tag == "FRIEND" && l.num(0) == Some(b) && l.num(1) == Some(0)
    }));
    std::thread::sleep(Duration::from_secs(1));
    assert_none_between(
        &alice,
        bob_end.t + SETTLE,
        f64::MAX,
        "audio frames from Bob after the call ended",
        is_audio_from(b),
    );
    // The calls are gone: a new call to an offline friend is refused
    // (TOXAV_ERR_CALL_FRIEND_NOT_CONNECTED).
    assert_eq!(
        alice.cmd(&format!("call {b} {AUDIO_KBPS} 0")),
        Err(format!(
            "{}: `call {b} {AUDIO_KBPS} 0` failed with code 4",
            alice.label
        ))
    );
    alice.quit(Duration::from_secs(5));
}

#[test]
fn c_toxcore_with_c_toxcore() {
    audio_calls(CToxcore, CToxcore);
}

#[test]
fn c_toxcore_calls_rustox_first() {
    audio_calls(CToxcore, Rustox);
}

#[test]
fn rustox_calls_c_toxcore_first() {
    audio_calls(Rustox, CToxcore);
}

#[test]
fn rustox_with_rustox() {
    audio_calls(Rustox, Rustox);
}

#[test]
fn offline_c_toxcore_friends_of_c_toxcore() {
    friends_go_offline(CToxcore, CToxcore);
}

#[test]
fn offline_rustox_friends_of_c_toxcore() {
    friends_go_offline(CToxcore, Rustox);
}

#[test]
fn offline_c_toxcore_friends_of_rustox() {
    friends_go_offline(Rustox, CToxcore);
}

#[test]
fn offline_rustox_friends_of_rustox() {
    friends_go_offline(Rustox, Rustox);
}
