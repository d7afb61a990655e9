//! `rustox profile new|show` and `--profile` on `recv` and `send`: profiles are created,
//! shown as JSON, encrypted with a passphrase from `RUSTOX_PASSWORD`, refused with the wrong
//! one, and remember the friend a transfer made.

mod common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use common::{run_with_limit, rustox, stderr_of, write_pattern, Scratch};

const LIMIT: Duration = Duration::from_secs(30);

fn show(path: &std::path::Path, password: Option<&str>) -> std::process::Output {
    let mut cmd = rustox();
    cmd.args(["profile", "show"]).arg(path);
    match password {
        Some(p) => cmd.env("RUSTOX_PASSWORD", p),
        None => cmd.env_remove("RUSTOX_PASSWORD"),
    };
    run_with_limit(cmd.stdin(Stdio::null()), LIMIT)
}

#[test]
fn a_new_profile_shows_its_tox_id_and_name_and_encryption_needs_the_passphrase() {
    let dir = Scratch::new("profile-new");
    let plain = dir.path("plain.tox");
    let out = run_with_limit(
        rustox()
            .args(["profile", "new"])
            .arg(&plain)
            .args(["--name", "Alice"]),
        LIMIT,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = String::from_utf8_lossy(&out.stdout)
        .trim()
        .strip_prefix("tox id ")
        .expect("prints the Tox ID")
        .to_owned();
    let shown = show(&plain, None);
    assert!(shown.status.success());
    let json: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(json["tox_id"], id.as_str());
    assert_eq!(json["name"], "Alice");
    assert_eq!(json["encrypted"], false);
    // Not overwritten.
    let again = run_with_limit(rustox().args(["profile", "new"]).arg(&plain), LIMIT);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("not overwriting"));

    let secret = dir.path("secret.tox");
    let out = run_with_limit(
        rustox()
            .args(["profile", "new"])
            .arg(&secret)
            .arg("--password")
            .env("RUSTOX_PASSWORD", "correct horse"),
        LIMIT,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&secret).unwrap();
    assert_eq!(&bytes[..8], b"toxEsave", "toxencryptsave's magic");
    let ok = show(&secret, Some("correct horse"));
    assert!(ok.status.success());
    let json: serde_json::Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(json["encrypted"], true);
    let wrong = show(&secret, Some("wrong"));
    assert!(!wrong.status.success());
    assert!(
        String::from_utf8_lossy(&wrong.stderr).contains("cannot decrypt"),
        "{}",
        String::from_utf8_lossy(&wrong.stderr)
    );
}

#[test]
fn recv_with_a_profile_remembers_the_friend_that_sent_it_a_file() {
    let dir = Scratch::new("profile-recv");
    write_pattern(&dir.path("payload.bin"), 200_000, 5);
    let send_profile = dir.path("sender.tox");
    let out = run_with_limit(rustox().args(["profile", "new"]).arg(&send_profile), LIMIT);
    assert!(out.status.success());
    let sender_pk: String = {
        let shown = show(&send_profile, None);
        let json: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
        json["public_key"].as_str().unwrap().to_owned()
    };
    let recv_profile = dir.path("receiver.tox");
    let mut recv = rustox()
        .args(["recv", "--listen", "127.0.0.1:0", "--once", "--out"])
        .arg(dir.path("inbox"))
        .arg("--profile")
        .arg(&recv_profile)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn recv");
    let mut out = BufReader::new(recv.stdout.take().unwrap());
    let mut line = String::new();
    let (mut addr, mut key) = (String::new(), String::new());
    while addr.is_empty() || key.is_empty() {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "recv exited");
        if let Some(a) = line.strip_prefix("rustox recv listening on ") {
            addr = a.trim().to_owned();
        }
        if let Some(k) = line.strip_prefix("public key ") {
            key = k.trim().to_owned();
        }
    }
    let send = run_with_limit(
        rustox()
            .args(["send", "--to", &addr, "--key", &key, "--profile"])
            .arg(&send_profile)
            .arg(dir.path("payload.bin")),
        Duration::from_secs(60),
    );
    assert!(send.status.success(), "{}", stderr_of(&send));
    let status = common::wait_with_limit(&mut recv, LIMIT);
    assert!(status.success());
    // The receiver's profile holds the sender; the sender's holds the receiver.
    let shown = show(&recv_profile, None);
    let json: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    let friends: Vec<String> = json["friends"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["public_key"].as_str().unwrap().to_lowercase())
        .collect();
    assert_eq!(friends, vec![sender_pk.to_lowercase()], "{json}");
    let shown = show(&send_profile, None);
    let json: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(
        json["friends"][0]["public_key"]
            .as_str()
            .map(str::to_lowercase),
        Some(key.to_lowercase()),
        "{json}"
    );
}
