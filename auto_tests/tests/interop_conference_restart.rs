//! A conference peer restarted from its savedata rejoins by itself, also when the profile
//! was saved by one implementation and is loaded by the other: the guest saves its profile
//! (the CONFERENCES section holds the conference, its id, title and peers), quits (c-toxcore
//! then tells the others it froze: the host keeps it as an offline peer), and starts again
//! from the file on the same or the other library. With no new invite, the guest finds the
//! conference in its list with the same id and title, the host sees it come back online,
//! and messages go both ways.
//!
//! With `CI` set, a missing c-toxcore, compiler or tox-bootstrapd fails these tests;
//! otherwise they return at once with a notice.

use std::time::{Duration, Instant};

use rustox_auto_tests::ctoxcore::conference::Implementation::{self, CToxcore, Rustox};
use rustox_auto_tests::ctoxcore::conference_net::{
    befriend, invite, wait_message, wait_peer_count, ConfNet,
};
use rustox_testkit::temp::TempDir;

/// Friends online: c-toxcore alone takes 9–11 s on loopback; room for a loaded machine.
const FRIEND_LIMIT: Duration = Duration::from_secs(60);
/// An invite answered and the joiner connected.
const JOIN_LIMIT: Duration = Duration::from_secs(30);
/// A restarted peer back online with its friend and back in the conference.
const REJOIN_LIMIT: Duration = Duration::from_secs(60);
/// One message, or a departure, across.
const SEE_LIMIT: Duration = Duration::from_secs(20);

fn ok<T>(r: Result<T, String>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

fn restart(host_impl: Implementation, saved_by: Implementation, restarted_on: Implementation) {
    let Some(net) = ConfNet::start(&[host_impl, saved_by, restarted_on]) else {
        return;
    };
    let dir = TempDir::new(
        "rustox-conference-restart",
        &format!(
            "{}-{}-{}",
            host_impl.name(),
            saved_by.name(),
            restarted_on.name()
        ),
    );
    let mut host = net.peer("hana", host_impl);
    let mut guest = net.peer("gus", saved_by);
    let (gus_at_host, _) = befriend(&mut host, &mut guest, FRIEND_LIMIT);
    let conf: u32 = host.must("new").trim().parse().expect("conference number");
    host.must(&format!("title {conf} kept across restarts"));
    let gconf = invite(&mut host, conf, gus_at_host, &mut guest, JOIN_LIMIT);
    ok(wait_peer_count(&host, conf, 2, JOIN_LIMIT));
    ok(wait_peer_count(&guest, gconf, 2, JOIN_LIMIT));
    guest.must(&format!("msg {gconf} before the restart"));
    ok(wait_message(
        &host,
        conf,
        &guest.pk,
        false,
        "before the restart",
        SEE_LIMIT,
    ));
    // The title travels apart from the messages (host → guest): on a loaded machine the
    // guest's message can cross before it. Saved before it arrives, the profile would
    // rightly hold no title.
    let deadline = Instant::now() + SEE_LIMIT;
    loop {
        match guest.cmd(&format!("get-title {gconf}")) {
            Ok(title) if title.trim() == "kept across restarts" => break,
            other => assert!(
                Instant::now() < deadline,
                "the guest has no title after {SEE_LIMIT:?}: {other:?}"
            ),
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let id = guest.must(&format!("id {gconf}"));

    let profile = dir.join("gus.tox");
    guest.must(&format!("save {}", profile.display()));
    let pk = guest.pk.clone();
    guest.quit(Duration::from_secs(10));
    drop(guest);
    // Quitting froze the guest: offline, not gone.
    ok(wait_peer_count(&host, conf, 1, SEE_LIMIT));
    assert_eq!(
        host.must(&format!("peers {conf}")).trim(),
        "1 1",
        "online and offline peers at the host while the guest is away"
    );

    let mut back = net.peer_with("gus", restarted_on, Some(profile));
    assert_eq!(back.pk, pk, "the profile keeps the guest's key");
    assert_eq!(
        back.must("chatlist").trim(),
        gconf.to_string(),
        "the conference is in the restarted guest's list"
    );
    assert_eq!(
        back.must(&format!("id {gconf}")),
        id,
        "the same conference id"
    );
    assert_eq!(
        back.must(&format!("get-title {gconf}")),
        "kept across restarts",
        "the title survives the restart"
    );
    ok(wait_peer_count(&host, conf, 2, REJOIN_LIMIT));
    ok(wait_peer_count(&back, gconf, 2, REJOIN_LIMIT));
    host.must(&format!("msg {conf} welcome back"));
    ok(wait_message(
        &back,
        gconf,
        &host.pk,
        false,
        "welcome back",
        SEE_LIMIT,
    ));
    back.must(&format!("msg {gconf} back by myself"));
    ok(wait_message(
        &host,
        conf,
        &back.pk,
        false,
        "back by myself",
        SEE_LIMIT,
    ));
    host.quit(Duration::from_secs(5));
    back.quit(Duration::from_secs(5));
}

#[test]
fn saved_and_restarted_on_c_toxcore() {
    restart(CToxcore, CToxcore, CToxcore);
}

#[test]
fn saved_by_c_toxcore_restarted_on_rustox() {
    restart(CToxcore, CToxcore, Rustox);
}

#[test]
fn saved_by_rustox_restarted_on_c_toxcore() {
    restart(CToxcore, Rustox, CToxcore);
}

#[test]
fn c_toxcore_restarted_rejoins_a_rustox_host() {
    restart(Rustox, CToxcore, CToxcore);
}
