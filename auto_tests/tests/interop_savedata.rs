//! Save files across implementations: c-toxcore 0.2.18 (Debian's libtoxcore, driven by
//! `tools/toxsave.c`) writes profiles that rustox's `savedata` reads, and loads the profiles
//! rustox writes — plain and encrypted, both ways. c-toxcore is the judge: what it writes
//! must parse to what it reports, what we write must load with everything intact, and where
//! the two hold the same state the bytes must be the same.
//!
//! No sockets: the C tool runs c-toxcore with UDP off and nothing bootstrapped, so these tests
//! take well under a second each, most of it scrypt.
//!
//! With `CI` set, a missing c-toxcore fails these tests; otherwise they return at once with
//! a notice.

use std::path::{Path, PathBuf};
use std::process::Command;

use rand_chacha::rand_core::SeedableRng;
use rustox_auto_tests::ctoxcore::{BuildOptions, PeerBinary};
use rustox_core::dht::wire::packed_node::PackedNode;
use rustox_core::friend::NoSpam;
use rustox_core::savedata::{self, file, FriendStatus, Profile, SavedFriend, UserStatus};
use rustox_net_crypto::crypto::{KeyPair, PublicKey};
use serde_json::Value;

/// The c-toxcore save tool, built once; `None` (with a notice) when c-toxcore is not
/// installed and `CI` is not set.
fn toxsave() -> Option<PathBuf> {
    match PeerBinary::build_save(&BuildOptions::default()) {
        Ok(bin) => Some(bin.path().to_path_buf()),
        Err(e) if e.is_missing_dependency() && std::env::var_os("CI").is_none() => {
            eprintln!(
                "NOTICE: {e}; c-toxcore interop test skipped (apt-get install libtoxcore-dev)"
            );
            None
        }
        Err(e) => panic!("cannot build the c-toxcore save tool: {e}"),
    }
}

/// A fresh directory for one test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "rustox-interop-savedata-{}-{test}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the tool; returns its JSON report, or panics with its stderr.
fn run(tool: &Path, args: &[&str]) -> Value {
    let out = Command::new(tool).args(args).output().expect("run toxsave");
    assert!(
        out.status.success(),
        "toxsave {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("toxsave prints JSON")
}

fn hex_field(v: &Value, key: &str) -> Vec<u8> {
    hex::decode(v[key].as_str().unwrap_or_else(|| panic!("{key} in {v}"))).unwrap()
}

fn friend_keys(v: &Value) -> Vec<PublicKey> {
    v["friends"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pk| PublicKey::from_hex(pk.as_str().unwrap()).unwrap())
        .collect()
}

/// The profile matches what c-toxcore reported for the file it wrote (`make`).
fn assert_profile_is_c_report(profile: &Profile, report: &Value) {
    assert_eq!(
        profile.tox_id().to_bytes().to_vec(),
        hex_field(report, "tox_id")
    );
    assert_eq!(profile.nospam, NoSpam::from_u32(0x1234_5678));
    assert_eq!(report["nospam"], 0x1234_5678);
    assert_eq!(profile.name, hex_field(report, "name_hex"));
    assert_eq!(
        profile.status_message,
        hex_field(report, "status_message_hex")
    );
    assert_eq!(profile.user_status, UserStatus::Away);
    let pks: Vec<PublicKey> = profile.friends.iter().map(|f| f.pk).collect();
    assert_eq!(pks, friend_keys(report));
    for friend in &profile.friends[..2] {
        assert_eq!(friend.status, FriendStatus::Confirmed, "{friend:?}");
        assert!(friend.name.is_empty() && friend.request_message.is_empty());
    }
    let pending = &profile.friends[2];
    assert_eq!(
        pending.status,
        FriendStatus::Added,
        "added by request, never sent"
    );
    assert_eq!(pending.request_message, b"please add me, rustox");
    assert_ne!(pending.request_nospam, NoSpam::default());
    assert!(profile.conferences.is_empty() && profile.other_sections.is_empty());
}

/// `ours` is what c-toxcore wrote up to END, and only zeros follow.
fn assert_same_bytes(ours: &[u8], theirs: &[u8]) {
    assert!(
        theirs.len() >= ours.len(),
        "ours {} > theirs {}",
        ours.len(),
        theirs.len()
    );
    assert_eq!(ours, &theirs[..ours.len()], "same sections, same bytes");
    assert!(
        theirs[ours.len()..].iter().all(|&b| b == 0),
        "c-toxcore's tail is its zero reserve"
    );
}

#[test]
fn c_toxcore_save_parses_in_rustox_and_writes_back_byte_for_byte() {
    let Some(tool) = toxsave() else { return };
    let dir = scratch("c-to-rust");
    let path = dir.join("c.tox");
    let report = run(&tool, &["make", path.to_str().unwrap()]);
    let bytes = file::load(&path).unwrap();
    let profile = Profile::parse(&bytes).unwrap();
    assert_profile_is_c_report(&profile, &report);
    assert_same_bytes(&profile.to_bytes(), &bytes);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn c_toxcore_encrypted_save_decrypts_and_parses_in_rustox() {
    let Some(tool) = toxsave() else { return };
    let dir = scratch("c-enc-to-rust");
    let path = dir.join("c.tox");
    let report = run(
        &tool,
        &["make", path.to_str().unwrap(), "--pass", "pässwörd"],
    );
    let sealed = file::load(&path).unwrap();
    assert!(savedata::is_encrypted(&sealed));
    assert_eq!(
        Profile::parse(&sealed),
        Err(savedata::SavedataError::Encrypted)
    );
    assert_eq!(
        savedata::decrypt("password".as_bytes(), &sealed),
        Err(savedata::CryptError::WrongPassphrase)
    );
    let plain = savedata::decrypt("pässwörd".as_bytes(), &sealed).unwrap();
    let profile = Profile::parse(&plain).unwrap();
    assert_profile_is_c_report(&profile, &report);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn rustox_rewrite_of_a_c_toxcore_save_loads_in_c_toxcore_intact() {
    let Some(tool) = toxsave() else { return };
    let dir = scratch("c-rust-c");
    let original = dir.join("c.tox");
    let made = run(&tool, &["make", original.to_str().unwrap()]);
    let profile = Profile::parse(&file::load(&original).unwrap()).unwrap();
    let ours = dir.join("rustox.tox");
    file::save_atomic(&ours, &profile.to_bytes()).unwrap();
    let resaved = dir.join("resaved.tox");
    let shown = run(
        &tool,
        &[
            "show",
            ours.to_str().unwrap(),
            "--resave",
            resaved.to_str().unwrap(),
        ],
    );
    assert_eq!(shown, made, "c-toxcore sees what it wrote");
    assert_same_bytes(&profile.to_bytes(), &file::load(&resaved).unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A profile with a bit of everything, made by rustox alone.
fn scratch_profile() -> Profile {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(0x5a7e);
    let keys = KeyPair::generate(&mut rng);
    let mut profile = Profile::new(keys.secret, NoSpam::from_u32(0xcafe_f00d));
    profile.name = "rustox écrit".as_bytes().to_vec();
    profile.status_message = vec![b'm'; 1007];
    profile.user_status = UserStatus::Busy;
    let friend_pk = |rng: &mut rand_chacha::ChaCha20Rng| KeyPair::generate(rng).public;
    profile.friends = vec![
        SavedFriend {
            name: vec![b'n'; 128],
            status_message: b"out fishing".to_vec(),
            user_status: UserStatus::Away,
            last_seen: 1_764_000_000,
            ..SavedFriend::confirmed(friend_pk(&mut rng))
        },
        SavedFriend::pending(
            friend_pk(&mut rng),
            NoSpam::from_u32(0x0102_0304),
            b"hi from rustox".to_vec(),
        ),
        SavedFriend::confirmed(friend_pk(&mut rng)),
    ];
    profile.dht_nodes = vec![
        PackedNode::udp("192.0.2.1:33445".parse().unwrap(), friend_pk(&mut rng)),
        PackedNode::udp("[2001:db8::7]:33446".parse().unwrap(), friend_pk(&mut rng)),
    ];
    profile.tcp_relays = vec![PackedNode {
        addr: "192.0.2.2:443".parse().unwrap(),
        tcp: true,
        pk: friend_pk(&mut rng),
    }];
    profile
}

/// c-toxcore's report of `profile` matches it field by field.
fn assert_c_report_is_profile(report: &Value, profile: &Profile) {
    assert_eq!(hex_field(report, "tox_id"), profile.tox_id().to_bytes());
    assert_eq!(report["nospam"], 0xcafe_f00du32);
    assert_eq!(hex_field(report, "name_hex"), profile.name);
    assert_eq!(
        hex_field(report, "status_message_hex"),
        profile.status_message
    );
    assert_eq!(report["user_status"], 2);
    let pks: Vec<PublicKey> = profile.friends.iter().map(|f| f.pk).collect();
    assert_eq!(friend_keys(report), pks);
    let first = &report["friend_details"][0];
    assert_eq!(hex_field(first, "name_hex"), profile.friends[0].name);
    assert_eq!(
        hex_field(first, "status_message_hex"),
        profile.friends[0].status_message
    );
    assert_eq!(first["user_status"], 1);
    assert_eq!(first["last_online"], 1_764_000_000u64);
}

#[test]
fn rustox_profile_from_scratch_loads_in_c_toxcore_intact() {
    let Some(tool) = toxsave() else { return };
    let dir = scratch("rust-to-c");
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
    assert_c_report_is_profile(&report, &profile);
    // What c-toxcore saves of it is what we gave it, the pending request and the saved nodes
    // included.
    let back = Profile::parse(&file::load(&resaved).unwrap()).unwrap();
    assert_eq!(back, profile);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn rustox_encrypted_profile_loads_in_c_toxcore() {
    let Some(tool) = toxsave() else { return };
    let dir = scratch("rust-enc-to-c");
    let profile = scratch_profile();
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(9);
    let sealed = savedata::encrypt(b"s3cret", &profile.to_bytes(), &mut rng).unwrap();
    let path = dir.join("rustox.tox");
    file::save_atomic(&path, &sealed).unwrap();
    let report = run(&tool, &["show", path.to_str().unwrap(), "--pass", "s3cret"]);
    assert_c_report_is_profile(&report, &profile);
    let out = Command::new(&tool)
        .args(["show", path.to_str().unwrap(), "--pass", "wrong"])
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "c-toxcore refuses the wrong passphrase"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
