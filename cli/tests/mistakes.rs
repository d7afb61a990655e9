//! Every mistake a person can make on the command line ends with one line saying what went
//! wrong and a non-zero exit — never a panic or a backtrace.

mod common;

use std::net::UdpSocket;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use common::{assert_one_line_error, run_with_limit, rustox, write_pattern, Receiver, Scratch};

const LIMIT: Duration = Duration::from_secs(60);
/// A syntactically valid key nobody owns.
const STRANGER_KEY: &str = "0101010101010101010101010101010101010101010101010101010101010101";

#[test]
fn missing_file() {
    let out = run_with_limit(
        &mut send_to("127.0.0.1:9", STRANGER_KEY, "/nonexistent/file.bin"),
        LIMIT,
    );
    assert_one_line_error(
        &out,
        "cannot read /nonexistent/file.bin: No such file or directory",
    );
}

#[test]
fn directory_instead_of_file() {
    let dir = Scratch::new("dir-as-file");
    let out = run_with_limit(&mut send_to("127.0.0.1:9", STRANGER_KEY, &dir.0), LIMIT);
    assert_one_line_error(&out, "is a directory");
}

#[test]
fn malformed_key() {
    let dir = with_file("bad-key", 10);
    let out = run_with_limit(&mut send_to("127.0.0.1:9", "abc123", dir.path("f")), LIMIT);
    assert_one_line_error(&out, "--key must be 64 hex digits");
}

#[test]
fn nobody_answering_times_out_the_handshake() {
    // A bound socket that never answers: the address is reachable, nothing speaks Tox.
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap().to_string();
    let dir = with_file("unreachable", 1000);
    let out = run_with_limit(&mut send_to(&addr, STRANGER_KEY, dir.path("f")), LIMIT);
    assert_one_line_error(
        &out,
        &format!("no answer from {addr}: the handshake timed out"),
    );
}

#[test]
fn wrong_key_times_out_the_handshake() {
    let dir = with_file("wrong-key", 1000);
    let receiver = Receiver::start(&dir.path("in"), &dir.path("recv.key"));
    assert_ne!(receiver.key, STRANGER_KEY);
    let out = run_with_limit(
        &mut send_to(&receiver.addr, STRANGER_KEY, dir.path("f")),
        LIMIT,
    );
    assert_one_line_error(&out, "is --key its public key?");
}

#[test]
fn port_in_use() {
    let taken = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let dir = Scratch::new("port-in-use");
    let out = recv_into(&addr, &dir.path("in"), &dir.path("k"));
    assert_one_line_error(
        &out,
        &format!("cannot listen on {addr}: the port is already in use"),
    );
}

/// A scratch directory holding `f`, a file of `size` bytes.
fn with_file(name: &str, size: usize) -> Scratch {
    let dir = Scratch::new(name);
    write_pattern(&dir.path("f"), size, 1);
    dir
}

/// `rustox send --to <to> --key <key> <file>`.
fn send_to(to: &str, key: &str, file: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = rustox();
    command.args(["send", "--to", to, "--key", key]).arg(file);
    command
}

/// Runs `rustox recv --listen <listen> --out <out> --key-file <key>` (within [`LIMIT`]).
fn recv_into(listen: &str, out: &Path, key: &Path) -> Output {
    run_with_limit(
        rustox()
            .args(["recv", "--listen", listen, "--out"])
            .arg(out)
            .arg("--key-file")
            .arg(key),
        LIMIT,
    )
}

#[test]
fn address_not_on_this_machine() {
    let dir = Scratch::new("not-local");
    let out = recv_into("192.0.2.1:4000", &dir.path("in"), &dir.path("k"));
    assert_one_line_error(&out, "not assigned to this machine");
}

#[test]
fn unknown_flag() {
    let out = run_with_limit(rustox().args(["send", "--bogus"]), LIMIT);
    assert_one_line_error(&out, "unexpected argument '--bogus'");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn missing_required_flags() {
    let out = run_with_limit(rustox().args(["send", "file.bin"]), LIMIT);
    assert_one_line_error(&out, "required arguments were not provided: --to <TO>");
}

#[test]
fn an_address_needs_a_key_and_a_tox_id_needs_a_way_to_find_it() {
    let out = run_with_limit(rustox().args(["send", "--to", "127.0.0.1:9", "f"]), LIMIT);
    assert_one_line_error(&out, "--to ADDR needs --key");
    let id = format!("{STRANGER_KEY}00000000");
    // 76 hex digits with a checksum that does not match.
    let out = run_with_limit(
        rustox().args(["send", "--to", &format!("{id}FFFF"), "f"]),
        LIMIT,
    );
    assert_one_line_error(&out, "not a valid Tox ID");
}

#[test]
fn a_tox_id_without_bootstrap_or_lan_is_refused_before_anything_is_sent() {
    let path = std::env::temp_dir().join(format!("rustox-mistakes-{}", std::process::id()));
    std::fs::write(&path, b"x").unwrap();
    // A valid Tox ID: the key, nospam 0, and its checksum.
    let id = rustox_core::friend::ToxId::new(
        rustox_net_crypto::crypto::PublicKey::from_hex(STRANGER_KEY).unwrap(),
        rustox_core::friend::NoSpam([0; 4]),
    );
    let out = run_with_limit(
        rustox().args(["send", "--to", &id.to_string(), path.to_str().unwrap()]),
        LIMIT,
    );
    assert_one_line_error(&out, "give a DHT node with --bootstrap");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_malformed_bootstrap_node_is_a_usage_error() {
    let out = run_with_limit(
        rustox().args([
            "recv",
            "--listen",
            "127.0.0.1:0",
            "--bootstrap",
            "127.0.0.1:33445",
        ]),
        LIMIT,
    );
    assert_one_line_error(&out, "must be 64 hex digits");
}

#[test]
fn address_without_port() {
    let out = run_with_limit(
        rustox().args(["send", "--to", "127.0.0.1", "--key", STRANGER_KEY, "f"]),
        LIMIT,
    );
    assert_one_line_error(&out, "has no port");
}

#[test]
fn short_target_names_both_forms() {
    let out = run_with_limit(rustox().args(["send", "--to", "1234", "f"]), LIMIT);
    assert_one_line_error(&out, "Tox ID (76 hex digits");
    let out = run_with_limit(
        rustox().args(["send", "--to", &"ab".repeat(30), "f"]),
        LIMIT,
    );
    assert_one_line_error(&out, "60 hex digits: a Tox ID has 76");
}

#[test]
fn unknown_controller() {
    let out = run_with_limit(
        rustox().args([
            "send",
            "--to",
            "127.0.0.1:9",
            "--key",
            STRANGER_KEY,
            "--controller",
            "fast",
            "f",
        ]),
        LIMIT,
    );
    assert_one_line_error(
        &out,
        "unknown controller \"fast\" (choose bbr, cubic or legacy)",
    );
}

#[test]
fn unknown_profile_and_bad_size_in_sim() {
    let out = run_with_limit(rustox().args(["sim", "--profile", "moon"]), LIMIT);
    assert_one_line_error(&out, "unknown profile \"moon\"");
    let out = run_with_limit(
        rustox().args(["sim", "--profile", "lan", "--size", "lots"]),
        LIMIT,
    );
    assert_one_line_error(&out, "is not a size");
}

#[test]
fn output_directory_that_is_a_file() {
    let dir = Scratch::new("out-is-file");
    write_pattern(&dir.path("file"), 10, 1);
    let out = recv_into("127.0.0.1:0", &dir.path("file"), &dir.path("k"));
    assert_one_line_error(&out, "cannot use output directory");
}

#[test]
fn bad_proxy_values() {
    let relay = format!("127.0.0.1:33445:{STRANGER_KEY}");
    for (proxy, expected) in [
        (
            "ftp://127.0.0.1:21",
            "a proxy is socks5://HOST:PORT or http://HOST:PORT",
        ),
        ("socks5://127.0.0.1", "has no port"),
        ("http://127.0.0.1:0", "the proxy's port must not be 0"),
    ] {
        let out = run_with_limit(
            rustox().args([
                "recv",
                "--listen",
                "127.0.0.1:0",
                "--tcp-relay",
                &relay,
                "--proxy",
                proxy,
            ]),
            LIMIT,
        );
        assert_one_line_error(&out, expected);
    }
    // A proxy carries relay connections only: without a relay there is nothing to carry.
    let out = run_with_limit(
        rustox().args([
            "recv",
            "--listen",
            "127.0.0.1:0",
            "--proxy",
            "socks5://127.0.0.1:1080",
        ]),
        LIMIT,
    );
    assert_one_line_error(&out, "--proxy carries relay connections");
}

/// A proxy that is not there is named on stderr with the reason, and the node keeps
/// running (it retries the relay later), as it does when a relay is down.
#[test]
fn a_proxy_that_is_not_listening_is_reported() {
    use std::io::{BufRead, BufReader};
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = dead.local_addr().unwrap().port();
    drop(dead);
    let dir = Scratch::new("dead-proxy");
    let mut child = rustox()
        .args(["recv", "--listen", "127.0.0.1:0", "--key-file"])
        .arg(dir.path("key"))
        .args(["--tcp-relay", &format!("127.0.0.1:33445:{STRANGER_KEY}")])
        .args(["--proxy", &format!("socks5://127.0.0.1:{port}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start rustox recv");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let want = format!("proxy socks5://127.0.0.1:{port}: cannot connect to the proxy");
    let mut seen = Vec::new();
    let mut found = false;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) if line.contains(&want) => {
                found = true;
                break;
            }
            Ok(line) => seen.push(line),
            Err(_) => break,
        }
    }
    let running = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let _ = child.wait();
    assert!(found, "no line {want:?} on stderr: {seen:?}");
    assert!(running, "rustox recv stopped: {seen:?}");
}
