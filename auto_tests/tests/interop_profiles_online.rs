//! Save files across implementations, alive: a profile that c-toxcore 0.2.18
//! wrote, loaded by a rustox node, brings its friend (a c-toxcore client) online; a profile
//! rustox wrote, loaded by c-toxcore, does the same with a rustox friend.
//!
//! With `CI` set, a missing c-toxcore fails these tests; otherwise they return with a notice.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rustox_auto_tests::ctoxcore::friend::{CPeer, CPeerOptions};
use rustox_auto_tests::live::{rustox_bootstrap, RustoxOptions, RustoxPeer};
use rustox_core::savedata::Profile;

const LIMIT: Duration = Duration::from_secs(60);

fn toxfriend() -> Option<PathBuf> {
    rustox_auto_tests::ctoxcore::friend::friend_binary_or_skip()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rustox-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn wait(limit: Duration, what: impl Fn() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if what() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    what()
}

#[test]
fn a_c_toxcore_profile_loaded_by_rustox_brings_its_friend_online() {
    let Some(bin) = toxfriend() else { return };
    let dir = scratch("c-profile");
    let runner = rustox_bootstrap(37001).expect("bootstrap node");
    let boot = (runner.local_addr(), runner.public_key());
    // X: the friend, a c-toxcore client that stays up.
    let x = CPeer::start(
        &bin,
        &CPeerOptions {
            port: 37002,
            bootstrap: vec![boot],
            ..CPeerOptions::default()
        },
    )
    .expect("start X");
    // P: a c-toxcore client whose save file has X as a friend; it stops at once.
    let saved = dir.join("p.tox");
    let p = CPeer::start(
        &bin,
        &CPeerOptions {
            port: 37003,
            add: Some(x.tox_id.pk),
            save: Some(saved.clone()),
            ..CPeerOptions::default()
        },
    )
    .expect("start P");
    let p_pk = p.tox_id.pk;
    drop(p);
    let x_secret = x.secret;
    drop(x);
    let x = CPeer::start(
        &bin,
        &CPeerOptions {
            port: 37002,
            bootstrap: vec![boot],
            secret: Some(x_secret),
            add: Some(p_pk),
            say: Some("hi P".into()),
            ..CPeerOptions::default()
        },
    )
    .expect("restart X with P as friend");
    let profile = Profile::parse(&std::fs::read(&saved).unwrap()).expect("c-toxcore's save");
    assert_eq!(profile.public_key(), p_pk);
    // rustox becomes P.
    let r = RustoxPeer::start(RustoxOptions {
        port: 37004,
        bootstrap: vec![boot],
        profile: Some(profile),
        ..RustoxOptions::default()
    })
    .expect("rustox as P");
    assert_eq!(r.tox_id.pk, p_pk);
    assert!(
        wait(LIMIT, || r.log.friend_online().is_some()
            && x.log.friend_online().is_some()
            && r.log.message().is_some()),
        "not online: rustox {:?} X {:?}",
        r.log.events(),
        x.log.events()
    );
    assert_eq!(r.log.message().as_deref(), Some("hi P"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_rustox_profile_loaded_by_c_toxcore_brings_its_friend_online() {
    let Some(bin) = toxfriend() else { return };
    let dir = scratch("r-profile");
    let runner = rustox_bootstrap(37011).expect("bootstrap node");
    let boot = (runner.local_addr(), runner.public_key());
    // Q: a rustox identity, and F, its friend, a rustox node that knows Q's key.
    let mut rng = rand::rngs::OsRng;
    let keys = rustox_net_crypto::crypto::KeyPair::generate(&mut rng);
    let f = RustoxPeer::start(RustoxOptions {
        port: 37012,
        bootstrap: vec![boot],
        add: Some(keys.public),
        say: Some("hi from F".into()),
        ..RustoxOptions::default()
    })
    .expect("start F");
    // Q's profile, with F as a friend.
    let mut profile = Profile::new(
        keys.secret.clone(),
        rustox_core::friend::NoSpam::random(&mut rng),
    );
    profile.name = b"Q".to_vec();
    profile
        .friends
        .push(rustox_core::savedata::SavedFriend::confirmed(f.tox_id.pk));
    let saved = dir.join("q.tox");
    std::fs::write(&saved, profile.to_bytes()).unwrap();
    // c-toxcore loads Q's profile.
    let q = CPeer::start(
        &bin,
        &CPeerOptions {
            port: 37013,
            bootstrap: vec![boot],
            load: Some(saved),
            ..CPeerOptions::default()
        },
    )
    .expect("c-toxcore as Q");
    assert_eq!(q.tox_id.pk, keys.public);
    assert!(
        wait(LIMIT, || q.log.friend_online().is_some()
            && f.log.friend_online().is_some()
            && q.log.message().is_some()),
        "not online: c-toxcore {:?} F {:?}",
        q.log.events(),
        f.log.events()
    );
    assert_eq!(q.log.message().as_deref(), Some("hi from F"));
    let _ = std::fs::remove_dir_all(&dir);
}
