//! Conferences in save files across implementations: c-toxcore 0.2.18 (Debian's libtoxcore,
//! driven by `tools/toxconfsave.c`) saves conferences that rustox's savedata reads and writes
//! back byte for byte, and loads the conferences rustox writes, listing the same ids, types,
//! titles and peers. c-toxcore is the judge of the CONFERENCES section's layout
//! (core/src/savedata/conference.rs).
//!
//! The c-toxcore side of the first test runs two toxes on loopback UDP (free ports) so that
//! the conferences it saves hold a real peer; it takes about ten seconds. The others use no
//! socket.
//!
//! With `CI` set, a missing c-toxcore or C compiler fails these tests; otherwise they return
//! at once with a notice.

use std::path::{Path, PathBuf};
use std::process::Command;

use rand_chacha::rand_core::SeedableRng;
use rustox_core::friend::NoSpam;
use rustox_core::savedata::{
    file, Profile, SavedConference, SavedConferencePeer, SAVE_OFFSET_LOSSY_MESSAGE_NUMBER,
    SAVE_OFFSET_MESSAGE_NUMBER,
};
use rustox_net_crypto::crypto::{KeyPair, PublicKey};
use rustox_testkit::c::Cc;
use rustox_testkit::temp::TempDir;
use serde_json::Value;

const SOURCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tools/toxconfsave.c");

/// The title `toxconfsave make` gives its text conference.
const C_TITLE: &str = "rustox ♥ c-toxcore";

/// Builds `toxconfsave` into `dir`, pinned to Debian's libtoxcore; `None` (with a notice) when
/// c-toxcore or a compiler is missing and `CI` is not set.
fn toxconfsave(dir: &TempDir) -> Option<PathBuf> {
    let exe = dir.join("toxconfsave");
    let built = Cc::new("cc")
        .args(["-O2", "-std=c11", "-Wall", "-Wextra"])
        .arg(SOURCE)
        .pkg_config(&["--cflags", "--libs"], &["toxcore"])
        .and_then(|cc| cc.pin_pkg_config_library("toxcore"))
        .and_then(|cc| cc.build(&exe));
    match built {
        Ok(()) => Some(exe),
        Err(e) if e.is_missing_dependency() => {
            rustox_testkit::ci::skip_or_fail(format!(
                "{e}; c-toxcore interop test (apt-get install libtoxcore-dev)"
            ));
            None
        }
        Err(e) => panic!("cannot build toxconfsave: {e}"),
    }
}

/// Runs the tool; returns its JSON report, or panics with its stderr.
fn run(tool: &Path, args: &[&str]) -> Value {
    let out = Command::new(tool)
        .args(args)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("run toxconfsave");
    assert!(
        out.status.success(),
        "toxconfsave {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("toxconfsave prints JSON")
}

fn hex_field(v: &Value, key: &str) -> Vec<u8> {
    hex::decode(v[key].as_str().unwrap_or_else(|| panic!("{key} in {v}"))).unwrap()
}

fn pk_field(v: &Value, key: &str) -> PublicKey {
    PublicKey(hex_field(v, key).try_into().unwrap())
}

fn conferences(report: &Value) -> &Vec<Value> {
    report["conferences"].as_array().unwrap()
}

/// `ours` is what c-toxcore wrote up to END, and only zeros follow.
fn assert_same_bytes(ours: &[u8], theirs: &[u8]) {
    assert!(theirs.len() >= ours.len());
    assert_eq!(ours, &theirs[..ours.len()], "same sections, same bytes");
    assert!(theirs[ours.len()..].iter().all(|&b| b == 0));
}

/// c-toxcore's listing after loading a file holds exactly `saved`, every peer offline and
/// only ourselves online.
fn assert_c_lists(report: &Value, saved: &[SavedConference], self_pk: &PublicKey) {
    assert_eq!(pk_field(report, "self_pk"), *self_pk);
    let listed = conferences(report);
    assert_eq!(listed.len(), saved.len(), "{report}");
    for (c, s) in listed.iter().zip(saved) {
        assert_eq!(c["type"], u64::from(s.kind), "{c}");
        assert_eq!(hex_field(c, "id"), s.id);
        assert_eq!(hex_field(c, "title_hex"), s.title);
        let online = c["peers"].as_array().unwrap();
        assert_eq!(online.len(), 1, "only ourselves online: {c}");
        assert_eq!(online[0]["ours"], true);
        let offline: Vec<(PublicKey, Vec<u8>, u64)> = c["offline"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    pk_field(p, "pk"),
                    hex_field(p, "name_hex"),
                    p["last_active"].as_u64().unwrap(),
                )
            })
            .collect();
        let expected: Vec<(PublicKey, Vec<u8>, u64)> = s
            .peers
            .iter()
            .map(|p| (p.real_pk, p.name.clone(), p.last_active))
            .collect();
        assert_eq!(offline, expected);
    }
}

/// What c-toxcore saves again after loading `ours`: the same conferences and peers, message
/// numbers moved on by its save offsets once more.
fn assert_resaved(resaved: &[SavedConference], ours: &[SavedConference]) {
    assert_eq!(resaved.len(), ours.len());
    for (r, o) in resaved.iter().zip(ours) {
        assert_eq!(
            r,
            &SavedConference {
                message_number: o.message_number.wrapping_add(SAVE_OFFSET_MESSAGE_NUMBER),
                lossy_message_number: o
                    .lossy_message_number
                    .wrapping_add(SAVE_OFFSET_LOSSY_MESSAGE_NUMBER),
                ..o.clone()
            }
        );
    }
}

#[test]
fn c_toxcore_conferences_parse_in_rustox_and_write_back_byte_for_byte() {
    let dir = TempDir::new("rustox-interop-confsave", "c-to-rust");
    let Some(tool) = toxconfsave(&dir) else {
        return;
    };
    let path = dir.join("c.tox");
    let (port_a, port_b) = (
        rustox_testkit::net::free_udp_port(),
        rustox_testkit::net::free_udp_port(),
    );
    let made = run(
        &tool,
        &[
            "make",
            path.to_str().unwrap(),
            &port_a.to_string(),
            &port_b.to_string(),
        ],
    );
    let bytes = file::load(&path).unwrap();
    let profile = Profile::parse(&bytes).unwrap();
    assert_eq!(profile.public_key(), pk_field(&made, "self_pk"));

    // The text conference with its title, then the AV one without; A founded both (peer
    // number 0), B is the one other peer of each, named, with its DHT key.
    let listed = conferences(&made);
    assert_eq!(profile.conferences.len(), 2);
    assert_eq!(listed.len(), 2);
    for (saved, c) in profile.conferences.iter().zip(listed) {
        assert_eq!(u64::from(saved.kind), c["type"].as_u64().unwrap());
        assert_eq!(saved.id.to_vec(), hex_field(c, "id"));
        assert_eq!(saved.title, hex_field(c, "title_hex"));
        assert_eq!(saved.peer_number, 0, "the founder is peer 0");
        // A few messages sent (the title, names, the new peer): the saved numbers are those
        // plus c-toxcore's offsets.
        assert!(saved.message_number >= SAVE_OFFSET_MESSAGE_NUMBER);
        assert!(saved.message_number < SAVE_OFFSET_MESSAGE_NUMBER + 16);
        assert_eq!(saved.lossy_message_number, SAVE_OFFSET_LOSSY_MESSAGE_NUMBER);
        let others: Vec<&Value> = c["peers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["ours"] == false)
            .collect();
        assert_eq!(others.len(), 1);
        assert_eq!(saved.peers.len(), 1, "ourselves excluded: {saved:?}");
        let bob = &saved.peers[0];
        assert_eq!(bob.real_pk, pk_field(others[0], "pk"));
        assert_eq!(bob.name, b"bob");
        assert_ne!(bob.temp_pk, bob.real_pk, "the DHT key, not the real one");
        assert_ne!(bob.temp_pk, PublicKey([0; 32]));
        assert!(bob.last_active > 1_600_000_000, "Unix seconds");
    }
    assert_eq!(profile.conferences[0].kind, 0);
    assert_eq!(profile.conferences[0].title, C_TITLE.as_bytes());
    assert_eq!(profile.conferences[1].kind, 1);
    assert!(profile.conferences[1].title.is_empty());

    let ours = profile.to_bytes();
    assert_same_bytes(&ours, &bytes);

    // And what we wrote (the same bytes) c-toxcore loads back as the same conferences, B now
    // offline.
    let rewritten = dir.join("rustox.tox");
    file::save_atomic(&rewritten, &ours).unwrap();
    let resaved = dir.join("resaved.tox");
    let shown = run(
        &tool,
        &[
            "show",
            rewritten.to_str().unwrap(),
            "--resave",
            resaved.to_str().unwrap(),
        ],
    );
    assert_c_lists(&shown, &profile.conferences, &profile.public_key());
    let back = Profile::parse(&file::load(&resaved).unwrap()).unwrap();
    assert_resaved(&back.conferences, &profile.conferences);
}

/// A profile made by rustox alone with three conferences: a titled text one with two frozen
/// peers, an untitled AV one with none, a text one with a 128-byte title and a 128-byte name.
fn scratch_profile() -> Profile {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(0xc0f5);
    let keys = KeyPair::generate(&mut rng);
    let mut profile = Profile::new(keys.secret, NoSpam::from_u32(0x0bad_cafe));
    profile.name = b"rustox".to_vec();
    let mut pk = || KeyPair::generate(&mut rng).public;
    let peer = |real_pk, temp_pk, peer_number, last_active, name: &[u8]| SavedConferencePeer {
        real_pk,
        temp_pk,
        peer_number,
        last_active,
        name: name.to_vec(),
    };
    profile.conferences = vec![
        SavedConference {
            kind: 0,
            id: [0x11; 32],
            message_number: 70_000,
            lossy_message_number: 9_000,
            peer_number: 4_242,
            title: "saved by rustox ✓".as_bytes().to_vec(),
            peers: vec![
                peer(pk(), pk(), 7, 1_764_000_000, b"carol"),
                peer(pk(), pk(), 65_535, 1_764_000_100, b""),
            ],
        },
        SavedConference {
            kind: 1,
            id: [0x22; 32],
            message_number: u32::MAX,
            lossy_message_number: u16::MAX,
            peer_number: 0,
            title: Vec::new(),
            peers: Vec::new(),
        },
        SavedConference {
            kind: 0,
            id: [0x33; 32],
            message_number: SAVE_OFFSET_MESSAGE_NUMBER,
            lossy_message_number: SAVE_OFFSET_LOSSY_MESSAGE_NUMBER,
            peer_number: 1,
            title: vec![b'T'; 128],
            peers: vec![peer(pk(), pk(), 2, 1_700_000_000, &[b'n'; 128])],
        },
    ];
    profile
}

#[test]
fn rustox_conferences_load_in_c_toxcore_intact() {
    let dir = TempDir::new("rustox-interop-confsave", "rust-to-c");
    let Some(tool) = toxconfsave(&dir) else {
        return;
    };
    let profile = scratch_profile();
    assert_eq!(profile.check(), Ok(()));
    let path = dir.join("rustox.tox");
    file::save_atomic(&path, &profile.to_bytes()).unwrap();
    let resaved = dir.join("resaved.tox");
    let report = run(
        &tool,
        &[
            "show",
            path.to_str().unwrap(),
            "--resave",
            resaved.to_str().unwrap(),
        ],
    );
    assert_c_lists(&report, &profile.conferences, &profile.public_key());
    // Conference numbers are the saved order.
    let numbers: Vec<u64> = conferences(&report)
        .iter()
        .map(|c| c["number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [0, 1, 2]);
    let back = Profile::parse(&file::load(&resaved).unwrap()).unwrap();
    assert_resaved(&back.conferences, &profile.conferences);
    // Everything else c-toxcore saves of it is what we gave it.
    let mut rest = back.clone();
    rest.conferences = profile.conferences.clone();
    assert_eq!(rest, profile);
}
