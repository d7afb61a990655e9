//! Small networks through the C library: two instances in one process (`tests/c/pair.c`),
//! with no bootstrap node but each other, built against our libtoxcore.so and against
//! Debian's c-toxcore 0.2.18 (which proves the program and sets the figures ours are
//! compared with).
//!
//! * `relay_*`: an instance started with `tcp_port` runs a TCP relay
//!   (`tox_self_get_tcp_port` answers the port) and two UDP-off instances that know only
//!   that relay (and bootstrap to it, as c-toxcore's `tox_many_tcp_test`) announce
//!   themselves through it, befriend and come online over TCP.
//! * `lan_*`: two instances with local discovery on and nothing else find each other on
//!   loopback and report themselves connected: TCP, as c-toxcore does while only LAN nodes
//!   answer (`onion_connection_status`: UDP needs `dht_non_lan_connected`).
//!
//! The LAN pairs must use c-toxcore's default port range (33445–33545: LAN discovery is
//! sent to those ports only), so those two tests take a lock and never overlap; the relay
//! pairs use ports of their own.

mod common;

use common::*;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The bound a pair must meet, in seconds: c-toxcore's pairs take 7–10 s here (its
/// announces start after 3 s on a one-second tick).
const PAIR_TIMEOUT_SECS: u64 = 30;

/// The program built against each library, once per test run.
fn pair_program(lib: Lib) -> Option<CProgram> {
    static DIR: OnceLock<Result<std::path::PathBuf, String>> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        c_toolchain()?;
        let dir = std::env::temp_dir().join(format!("rustox-ffi-pair-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        Ok(dir)
    });
    match dir {
        Ok(dir) => Some(compile_c(&c_dir().join("pair.c"), dir, "pair", lib, &[])),
        Err(reason) => {
            skip_or_fail(reason);
            None
        }
    }
}

/// Serialises the tests that use the default port range.
fn default_ports() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs the pair program to its end and returns its stdout lines, failing on a non-zero
/// exit with its output.
fn run_pair(lib: Lib, args: &[&str]) -> Option<Vec<String>> {
    let prog = pair_program(lib)?;
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let mut peer = Peer::spawn("pair", &prog, &args, false);
    let status = peer.finish(Duration::from_secs(PAIR_TIMEOUT_SECS + 20));
    assert!(status.success(), "pair {args:?} failed:\n{}", peer.report());
    Some(peer.lines())
}

/// The status (field 2) and seconds (field 3) of the last line `TAG WHO ...`.
fn last_status(lines: &[String], tag: &str, who: &str) -> Option<(u32, f64)> {
    let prefix = format!("{tag} {who} ");
    let line = lines.iter().rev().find(|l| l.starts_with(&prefix))?;
    let f: Vec<&str> = line.split_whitespace().collect();
    Some((f.get(2)?.parse().ok()?, f.get(3)?.parse().ok()?))
}

const TCP: u32 = 1;

fn relay_pair(lib: Lib, tcp_port: u16, base_port: u16) {
    let timeout = PAIR_TIMEOUT_SECS.to_string();
    let (tcp, base) = (tcp_port.to_string(), base_port.to_string());
    let Some(lines) = run_pair(
        lib,
        &[
            "relay",
            "--timeout",
            &timeout,
            "--tcp-port",
            &tcp,
            "--base-port",
            &base,
        ],
    ) else {
        return;
    };
    let report = lines.join("\n");
    assert!(
        lines.iter().any(|l| *l == format!("TCP_PORT {tcp_port}")),
        "tox_self_get_tcp_port:\n{report}"
    );
    for who in ["a", "b"] {
        let (status, self_secs) =
            last_status(&lines, "SELF", who).unwrap_or_else(|| panic!("no SELF {who}:\n{report}"));
        assert_eq!(
            status, TCP,
            "UDP-off instance {who} connects through TCP:\n{report}"
        );
        let (status, friend_secs) = last_status(&lines, "FRIEND", who)
            .unwrap_or_else(|| panic!("no FRIEND {who}:\n{report}"));
        assert_eq!(status, TCP, "{who}'s friend is online over TCP:\n{report}");
        println!(
            "{lib:?}: {who} connected after {self_secs:.2} s, its friend online after {friend_secs:.2} s"
        );
    }
}

#[test]
fn relay_instance_ours() {
    relay_pair(Lib::Ours, 33711, 33720);
}

#[test]
fn relay_instance_debian() {
    relay_pair(Lib::Debian, 33712, 33740);
}

fn lan_pair(lib: Lib) {
    let _ports = default_ports();
    let timeout = PAIR_TIMEOUT_SECS.to_string();
    let Some(lines) = run_pair(lib, &["lan", "--timeout", &timeout]) else {
        return;
    };
    let report = lines.join("\n");
    for who in ["a", "b"] {
        let (status, secs) =
            last_status(&lines, "SELF", who).unwrap_or_else(|| panic!("no SELF {who}:\n{report}"));
        assert_eq!(
            status, TCP,
            "with only LAN nodes about, {who} is connected over TCP as c-toxcore says:\n{report}"
        );
        println!("{lib:?}: {who} connected after {secs:.2} s");
    }
}

#[test]
fn lan_pair_ours() {
    lan_pair(Lib::Ours);
}

#[test]
fn lan_pair_debian() {
    lan_pair(Lib::Debian);
}
