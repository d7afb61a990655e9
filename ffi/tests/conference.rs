//! tox.h's conferences through the C ABI, against c-toxcore 0.2.18: `conference.c` (three
//! instances in one process on loopback, alice - bob - carol as friends; a conference
//! alice creates, bob joins from her invite and carol from bob's; messages, actions, the
//! longest message, names, titles; every function's error codes for bad conference and
//! peer numbers, lengths, cookies and NULL arguments; carol saved, reloaded and rejoined;
//! bob leaving; conference numbers reused) runs once on Debian's libtoxcore.so.2 and once on
//! ours. Each run must finish, and the two outputs must be the same line for line: every
//! callback with its peer numbers, names and titles (and, for the joins, their order),
//! every count and error code. Nothing needs normalising: the program prints keys and ids
//! as whose they are.

mod common;

use common::*;
use rustox_testkit::net::free_udp_port;

/// Runs one build on three free ports; returns its output after the `LIB` line.
fn run(prog: &CProgram) -> Vec<String> {
    let ports: Vec<String> = (0..3).map(|_| free_udp_port().to_string()).collect();
    let out = prog
        .command(false)
        .args(&ports)
        .output()
        .expect("run conference");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.lines().last() == Some("OK"),
        "conference on {:?}'s library failed ({}):\n{stderr}\nlast lines:\n{}",
        prog.lib,
        out.status,
        stdout.lines().rev().take(15).collect::<Vec<_>>().join("\n")
    );
    let loaded = stdout
        .lines()
        .find_map(|l| l.strip_prefix("LIB "))
        .expect("a LIB line");
    prog.check_loaded(loaded);
    stdout
        .lines()
        .filter(|l| !l.starts_with("LIB "))
        .map(str::to_owned)
        .collect()
}

/// The first lines where `ours` and `theirs` part, with context, for the failure message.
fn first_difference(ours: &[String], theirs: &[String]) -> String {
    let at = ours
        .iter()
        .zip(theirs)
        .position(|(a, b)| a != b)
        .unwrap_or(ours.len().min(theirs.len()));
    let from = at.saturating_sub(5);
    let show = |lines: &[String]| {
        lines
            .iter()
            .enumerate()
            .skip(from)
            .take(15)
            .map(|(i, l)| format!("{:4} {l}", i + 1))
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!(
        "first difference at line {}\n--- c-toxcore:\n{}\n--- ours:\n{}",
        at + 1,
        show(theirs),
        show(ours)
    )
}

#[test]
fn a_c_client_sees_the_same_conferences_on_both_libraries() {
    if let Err(reason) = c_toolchain() {
        skip_or_fail(&reason);
        return;
    }
    let dir = TempDir::new("rustox-ffi", "conference");
    let src = c_dir().join("conference.c");
    let debian = compile_c(&src, dir.path(), "conference", Lib::Debian, &[]);
    let ours = compile_c(&src, dir.path(), "conference", Lib::Ours, &[]);
    let theirs = run(&debian);
    // c-toxcore itself shows what the program checks: the calls succeed where they should,
    // and the messages arrive once each.
    for expected in [
        "Q alice new -> 0 err=0",
        "Q bob join -> 0 err=0",
        "Q carol join -> 0 err=0",
        "CB carol message conference=0 peer=0(alice) type=0 \"<1363 bytes>\"",
        "CB alice title conference=0 peer=2(carol) \"Gamma's title\"",
        "Q carol chatlist size=1 [ 0 ]",
        "Q alice chatlist size=2 [ 0 2 ]",
        "ORDER bob P N:alice C P T N:bob",
    ] {
        assert!(
            theirs.iter().any(|l| l == expected),
            "c-toxcore's run lacks {expected:?}"
        );
    }
    let mine = run(&ours);
    assert!(
        mine == theirs,
        "our library's conferences differ from c-toxcore's: {}",
        first_difference(&mine, &theirs)
    );
}
