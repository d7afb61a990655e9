//! C programs on our libtoxcore.so talking to C programs on Debian's c-toxcore 0.2.18.
//!
//! `tests/c/peer.c` is compiled twice against Debian's headers: linked to Debian's
//! libtoxcore.so.2 and to ours (`target/<profile>/libtoxcore.so`, which `cargo test -p
//! rustox-ffi` builds). Every scenario runs in three pairings, named after who sends the
//! friend request: `debian_adds_debian` (proves the harness and peer.c themselves),
//! `ours_adds_debian` and `debian_adds_ours`. The peers meet on loopback by bootstrapping
//! to one another; each pairing uses its own UDP ports so the tests run in parallel.
//!
//! A peer prints a line per milestone and exits 0 only when everything it was asked to
//! check happened (peer.c's header lists the lines); the harness also checks that the
//! loader picked the intended library (ldd and the `LIB` line), that the friend request
//! came from the right key and that both sides agree on file ids.
//!
//! Without cc or pkg-config's toxcore these tests are skipped, or fail when `CI` is set.

mod common;

use common::*;
use std::time::{Duration, Instant};

const MIB: usize = 1 << 20;

/// How long a peer may take for its checks (its `--timeout`), plain and under valgrind.
fn peer_timeout(valgrind: bool) -> u64 {
    if valgrind {
        300
    } else {
        90
    }
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// The arguments for both sides of a scenario (initiator, acceptor), given a directory
/// for its files.
fn scenario_args(scenario: &str, dir: &TempDir) -> (Vec<String>, Vec<String>) {
    let presence = |me: &str, other: &str, status: &str, other_status: &str| {
        s(&[
            "--typing",
            "--change-info",
            "--name",
            me,
            "--expect-name",
            other,
            "--status-message",
            &format!("{me} is testing"),
            "--expect-status-message",
            &format!("{other} is testing"),
            "--user-status",
            status,
            "--expect-user-status",
            other_status,
        ])
    };
    let files = |size: usize| {
        let a = dir.join("from-initiator.bin");
        let b = dir.join("from-acceptor.bin");
        std::fs::write(&a, test_data(size, 1)).unwrap();
        std::fs::write(&b, test_data(size, 2)).unwrap();
        let (a, b) = (a.display().to_string(), b.display().to_string());
        (
            s(&["--send-file", &a, "--expect-file", &b]),
            s(&["--send-file", &b, "--expect-file", &a]),
        )
    };
    match scenario {
        "messages" => (s(&["--messages", "20"]), s(&["--messages", "20"])),
        "presence" => (
            presence("alice", "bob \u{2713}", "1", "2"),
            presence("bob \u{2713}", "alice", "2", "1"),
        ),
        "custom_packets" => (s(&["--custom-packets"]), s(&["--custom-packets"])),
        "file_16mib" => files(16 * MIB),
        "events" | "chat" => {
            let mut i = s(&["--messages", "10", "--custom-packets"]);
            let mut a = i.clone();
            i.extend(presence("alice", "bob", "1", "2"));
            a.extend(presence("bob", "alice", "2", "1"));
            if scenario == "events" {
                let (fi, fa) = files(MIB);
                i.extend(fi);
                a.extend(fa);
                i.push("--events".into());
                a.push("--events".into());
            }
            (i, a)
        }
        _ => panic!("unknown scenario {scenario}"),
    }
}

/// Runs one scenario: starts the acceptor, then the initiator (bootstrapping to the
/// acceptor and adding it), tells the acceptor to bootstrap to the initiator, waits for
/// both to print DONE, says QUIT to both and checks their exits.
fn run_scenario(scenario: &str, initiator: Lib, acceptor: Lib, base_port: u16, valgrind: bool) {
    let Some(peers) = peers() else { return };
    if valgrind && !valgrind_available() {
        return;
    }
    let name = format!(
        "{scenario}-{}-adds-{}{}",
        initiator.name(),
        acceptor.name(),
        if valgrind { "-valgrind" } else { "" }
    );
    let dir = TempDir::new("rustox-ffi", &name);
    let (port_a, port_i) = (base_port, base_port + 1);
    check_ports_free(&[port_a, port_i]);
    let (mut args_i, mut args_a) = scenario_args(scenario, &dir);
    let timeout = peer_timeout(valgrind);
    let started = Instant::now();
    let wait = Duration::from_secs(timeout + 30);

    args_a.extend(s(&[
        "--port",
        &port_a.to_string(),
        "--accept-requests",
        "--timeout",
        &timeout.to_string(),
    ]));
    let mut acc = Peer::spawn("acceptor", peers.get(acceptor), &args_a, valgrind);
    let acc_id = acc.field("ID", 1, wait).unwrap_or_else(|e| panic!("{e}"));
    let acc_dht = acc.field("DHT", 1, wait).unwrap_or_else(|e| panic!("{e}"));

    args_i.extend(s(&[
        "--port",
        &port_i.to_string(),
        "--bootstrap",
        "127.0.0.1",
        &port_a.to_string(),
        &acc_dht,
        "--add",
        &acc_id,
        "--timeout",
        &timeout.to_string(),
    ]));
    let mut ini = Peer::spawn("initiator", peers.get(initiator), &args_i, valgrind);
    let ini_id = ini.field("ID", 1, wait).unwrap_or_else(|e| panic!("{e}"));
    let ini_dht = ini.field("DHT", 1, wait).unwrap_or_else(|e| panic!("{e}"));
    acc.send(&format!("BOOTSTRAP 127.0.0.1 {port_i} {ini_dht}"));

    let done_i = ini.wait_for("DONE", wait);
    let done_a = acc.wait_for("DONE", wait);
    let elapsed = started.elapsed();
    let status_i = ini.finish(Duration::from_secs(30));
    let status_a = acc.finish(Duration::from_secs(30));
    let reports = || format!("{}\n{}", ini.report(), acc.report());
    if done_i.is_err() || done_a.is_err() || !status_i.success() || !status_a.success() {
        let why = |p: &Peer, done: &Result<String, String>, st: std::process::ExitStatus| {
            let mut w = format!("{}: exit {st}", p.label);
            if st.code() == Some(99) {
                w.push_str(" (valgrind reported errors)");
            }
            if done.is_err() {
                w.push_str(", never printed DONE");
            }
            let fails: Vec<String> = p
                .stderr()
                .lines()
                .filter(|l| l.starts_with("FAIL"))
                .map(str::to_string)
                .collect();
            if !fails.is_empty() {
                w.push_str(&format!(": {}", fails.join(" | ")));
            }
            w
        };
        panic!(
            "{name} failed after {:.1} s:\n  {}\n  {}\n{}",
            elapsed.as_secs_f64(),
            why(&ini, &done_i, status_i),
            why(&acc, &done_a, status_a),
            reports()
        );
    }
    assert!(
        ini.lines().iter().any(|l| l == "OK") && acc.lines().iter().any(|l| l == "OK"),
        "{name}: exit 0 without OK\n{}",
        reports()
    );

    // Inside callbacks, the getters agreed with the callbacks (peer.c reports MISMATCH).
    for p in [&ini, &acc] {
        let m = p.lines_tagged("MISMATCH");
        assert!(
            m.is_empty(),
            "{name}: every milestone passed, but on {} a getter called inside a callback \
             disagreed with the callback's arguments (c-toxcore's agree): {m:?}\n{}",
            p.label,
            reports()
        );
    }
    // The request came from the initiator's key; file ids agree on both sides.
    let req = acc.field("FRIEND_REQUEST", 1, Duration::ZERO).unwrap();
    assert_eq!(
        req,
        ini_id[..64],
        "{name}: friend request key\n{}",
        reports()
    );
    for (sender, receiver) in [(&ini, &acc), (&acc, &ini)] {
        let sent = sender.lines_tagged("FILE_ID");
        let sent: Vec<&String> = sent.iter().filter(|l| l.contains(" send ")).collect();
        let recv = receiver.lines_tagged("FILE_ID");
        let recv: Vec<&String> = recv.iter().filter(|l| l.contains(" recv ")).collect();
        assert_eq!(sent.len(), recv.len(), "{name}: files offered vs received");
        for (x, y) in sent.iter().zip(&recv) {
            assert_eq!(
                x.split_whitespace().nth(2),
                y.split_whitespace().nth(2),
                "{name}: the file id differs between sender and receiver"
            );
        }
    }
    let file_ms: Vec<String> = [&ini, &acc]
        .iter()
        .flat_map(|p| p.lines_tagged("FILE_DONE"))
        .collect();
    println!(
        "{name}: both peers DONE in {:.1} s{}",
        elapsed.as_secs_f64(),
        if file_ms.is_empty() {
            String::new()
        } else {
            format!(" ({})", file_ms.join(", "))
        }
    );
}

macro_rules! pairings {
    ($scenario:ident, $base:expr) => {
        mod $scenario {
            use super::*;
            #[test]
            fn debian_adds_debian() {
                run_scenario(
                    stringify!($scenario),
                    Lib::Debian,
                    Lib::Debian,
                    $base,
                    false,
                );
            }
            #[test]
            fn ours_adds_debian() {
                run_scenario(
                    stringify!($scenario),
                    Lib::Ours,
                    Lib::Debian,
                    $base + 2,
                    false,
                );
            }
            #[test]
            fn debian_adds_ours() {
                run_scenario(
                    stringify!($scenario),
                    Lib::Debian,
                    Lib::Ours,
                    $base + 4,
                    false,
                );
            }
        }
    };
}

// Friend request, accept, 20 messages each way (normal and action, the last of maximum
// length with UTF-8 in it) in order and byte-exact, a read receipt for each.
pairings!(messages, 34100);
// Typing on and off, name, status message and user status: the values set before the
// connection arrive on it, the changed ones live; the getters agree with the callbacks.
pairings!(presence, 34110);
// 32 lossless custom packets each way (first bytes 160..191, up to 1373 bytes) in order
// and byte-exact; 32 lossy ones (200..231), at least half arriving intact.
pairings!(custom_packets, 34120);
// A 16 MiB file each way at the same time: name, size, file id, every chunk byte-exact
// at its position, the end-of-file chunk; tox_file_chunk_request on the sender's side.
pairings!(file_16mib, 34130);
// tox_events_iterate + tox_dispatch_invoke instead of callbacks on both sides (and every
// batch through tox_events_get_bytes/tox_events_load/tox_events_equal): messages,
// receipts, presence, custom packets and a 1 MiB file each way.
pairings!(events, 34140);

/// Messages, presence and custom packets with both C programs under valgrind: no
/// invalid read or write, no use of uninitialised memory across the C boundary.
mod valgrind {
    use super::*;
    #[test]
    fn debian_adds_debian() {
        run_scenario("chat", Lib::Debian, Lib::Debian, 34150, true);
    }
    #[test]
    fn ours_adds_debian() {
        run_scenario("chat", Lib::Ours, Lib::Debian, 34152, true);
    }
    #[test]
    fn debian_adds_ours() {
        run_scenario("chat", Lib::Debian, Lib::Ours, 34154, true);
    }
}

/// A peer saves (tox_get_savedata), exits, and restarts from the file; its friend sees it
/// go offline and come back, and the restarted peer has the same address, name and friend.
/// `first` writes the savedata, `second` loads it, `friend` stays up throughout.
fn savedata_round_trip(first: Lib, second: Lib, friend: Lib, base_port: u16) {
    let Some(peers) = peers() else { return };
    let name = format!(
        "savedata-{}-then-{}-with-{}",
        first.name(),
        second.name(),
        friend.name()
    );
    let dir = TempDir::new("rustox-ffi", &name);
    let save = dir.join("profile.tox").display().to_string();
    let (port_f, port_1, port_2) = (base_port, base_port + 1, base_port + 2);
    check_ports_free(&[port_f, port_1, port_2]);
    let timeout = peer_timeout(false);
    let wait = Duration::from_secs(timeout + 30);
    let started = Instant::now();
    let t = timeout.to_string();

    let mut f = Peer::spawn(
        "friend",
        peers.get(friend),
        &s(&[
            "--port",
            &port_f.to_string(),
            "--accept-requests",
            "--expect-reconnect",
            "--timeout",
            &t,
        ]),
        false,
    );
    let f_id = f.field("ID", 1, wait).unwrap_or_else(|e| panic!("{e}"));
    let f_dht = f.field("DHT", 1, wait).unwrap_or_else(|e| panic!("{e}"));
    fn fail_with(name: &str, what: String, peers: &[&Peer]) -> ! {
        let r: Vec<String> = peers.iter().map(|p| p.report()).collect();
        panic!("{name}: {what}\n{}", r.join("\n"))
    }
    let fail = |what: String, peers: &[&Peer]| fail_with(&name, what, peers);

    let mut p1 = Peer::spawn(
        "first run",
        peers.get(first),
        &s(&[
            "--port",
            &port_1.to_string(),
            "--savedata",
            &save,
            "--name",
            "saved name",
            "--bootstrap",
            "127.0.0.1",
            &port_f.to_string(),
            &f_dht,
            "--add",
            &f_id,
            "--timeout",
            &t,
        ]),
        false,
    );
    let id_1 = p1.field("ID", 1, wait).unwrap_or_else(|e| panic!("{e}"));
    let dht_1 = p1.field("DHT", 1, wait).unwrap_or_else(|e| panic!("{e}"));
    f.send(&format!("BOOTSTRAP 127.0.0.1 {port_1} {dht_1}"));
    if let Err(e) = p1.wait_for("DONE", wait) {
        fail(e, &[&p1, &f]);
    }
    let st = p1.finish(Duration::from_secs(30));
    if !st.success() || p1.wait_for("SAVED", Duration::ZERO).is_err() {
        fail(format!("first run: exit {st} (no SAVED?)"), &[&p1, &f]);
    }
    let online_after = started.elapsed();

    let mut p2 = Peer::spawn(
        "second run",
        peers.get(second),
        &s(&[
            "--port",
            &port_2.to_string(),
            "--savedata",
            &save,
            "--expect-friends",
            "1",
            "--expect-self-name",
            "saved name",
            "--bootstrap",
            "127.0.0.1",
            &port_f.to_string(),
            &f_dht,
            "--timeout",
            &t,
        ]),
        false,
    );
    let id_2 = p2.field("ID", 1, wait).unwrap_or_else(|e| panic!("{e}"));
    let dht_2 = p2.field("DHT", 1, wait).unwrap_or_else(|e| panic!("{e}"));
    f.send(&format!("BOOTSTRAP 127.0.0.1 {port_2} {dht_2}"));
    let d2 = p2.wait_for("DONE", wait);
    let df = f.wait_for("DONE", wait);
    let st2 = p2.finish(Duration::from_secs(30));
    let stf = f.finish(Duration::from_secs(30));
    if d2.is_err() || df.is_err() || !st2.success() || !stf.success() {
        fail(
            format!("second run exit {st2}, friend exit {stf}"),
            &[&p1, &p2, &f],
        );
    }
    if id_1 != id_2 {
        fail(
            format!("the address changed across the restart: {id_1} then {id_2}"),
            &[&p1, &p2],
        );
    }
    let friend_pk = p2.field("FRIEND", 2, Duration::ZERO).unwrap();
    if friend_pk != f_id[..64] {
        fail(
            format!("the restored friend is {friend_pk}, not {}", &f_id[..64]),
            &[&p2, &f],
        );
    }
    println!(
        "{name}: friend online after {:.1} s, back after restart at {:.1} s",
        online_after.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
}

mod savedata {
    use super::*;
    #[test]
    fn debian_only() {
        savedata_round_trip(Lib::Debian, Lib::Debian, Lib::Debian, 34160);
    }
    /// Our library saves and reloads its own profile; Debian's friend sees it come back.
    #[test]
    fn ours_restarts_with_debian_friend() {
        savedata_round_trip(Lib::Ours, Lib::Ours, Lib::Debian, 34164);
    }
    /// A profile c-toxcore wrote, loaded by our library: the format is c-toxcore's.
    #[test]
    fn debian_profile_loaded_by_ours() {
        savedata_round_trip(Lib::Debian, Lib::Ours, Lib::Debian, 34172);
    }
    /// A profile our library wrote, loaded by c-toxcore.
    #[test]
    fn our_profile_loaded_by_debian() {
        savedata_round_trip(Lib::Ours, Lib::Debian, Lib::Debian, 34176);
    }
}

/// peer.c's single-instance checks (common::run_selftest).
fn selftest(lib: Lib, port: u16, valgrind: bool) {
    let Some(peers) = peers() else { return };
    if valgrind && !valgrind_available() {
        return;
    }
    run_selftest(peers.get(lib), port, valgrind);
}

mod selftest {
    use super::*;
    #[test]
    fn debian() {
        selftest(Lib::Debian, 34180, false);
    }
    #[test]
    fn ours() {
        selftest(Lib::Ours, 34182, false);
    }
    #[test]
    fn ours_valgrind() {
        selftest(Lib::Ours, 34184, true);
    }
}
