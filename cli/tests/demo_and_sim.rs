//! `rustox demo` and `rustox sim` end to end, small enough for a test run.

mod common;

use std::time::Duration;

use common::{run_with_limit, rustox, Scratch};

#[test]
fn demo_chats_transfers_reports_a_hash_match_and_holds_a_conference_of_three() {
    let out = run_with_limit(
        rustox().args(["demo", "--size", "4MiB"]),
        Duration::from_secs(120),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "demo failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in [
        "alice → bob  : Hello Bob!",
        "bob   → alice: Hi Alice",
        "alice → bob  : I have a file for you",
        "bob   → alice: Go ahead",
        "RTT (smoothed)",
        "resent packets",
        "SHA-256 match",
        "Alice creates a conference and invites Bob",
        "Bob accepts Alice's invitation",
        "Bob invites Carol",
        "Carol accepts Bob's invitation",
        "alice → all  : Hello both!",
        "bob   → all  : Hi Alice, hi Carol",
        "carol → all  : Hi! Alice and I are not friends",
        "Alice's line heard by Bob (",
        "Bob's line heard by Alice (",
        "Carol's line heard by Alice (",
        "every line reached every peer",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in {stdout}");
    }
    let hashes: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("SHA-256 sent") || l.starts_with("SHA-256 received"))
        .map(|l| l.split_whitespace().last().unwrap_or(""))
        .collect();
    assert_eq!(hashes.len(), 2);
    assert_eq!(hashes[0], hashes[1]);
    assert!(!stdout.contains("(never)"), "a line went unheard: {stdout}");
}

#[test]
fn sim_prints_a_row_per_controller_and_draws_the_plot() {
    let dir = Scratch::new("sim");
    let svg = dir.path("lan.svg");
    let out = run_with_limit(
        rustox()
            .args([
                "sim",
                "--profile",
                "lan",
                "--size",
                "2MiB",
                "--controller",
                "bbr,cubic",
                "--plot",
            ])
            .arg(&svg),
        Duration::from_secs(300),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "sim failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("bbr ") || l.starts_with("cubic "))
        .collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    assert!(
        rows.iter().all(|r| r.contains(" yes ")),
        "both complete: {stdout}"
    );
    let drawing = std::fs::read_to_string(&svg).expect("plot written");
    assert!(drawing.starts_with("<svg"));
    assert!(
        drawing.contains("bbr") && drawing.contains("cubic"),
        "legend labels"
    );
}

#[test]
fn sim_replays_the_same_figures_from_the_same_seed() {
    let run = || {
        let out = run_with_limit(
            rustox().args([
                "sim",
                "--profile",
                "lossy",
                "--size",
                "1MiB",
                "--controller",
                "bbr",
                "--seed",
                "7",
                "--json",
            ]),
            Duration::from_secs(300),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value =
            serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).expect("json");
        (
            v["trace_hash"].clone(),
            v["transfer_time_s"].clone(),
            v["packets_resent"].clone(),
        )
    };
    assert_eq!(run(), run());
}
