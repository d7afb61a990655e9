//! The chunk requests a callback-driven C client sees, through the C ABI: `file_requests.c`
//! (two instances in one process, the sender answering every request from its callback)
//! runs once on Debian's c-toxcore 0.2.18 and once on our library. Each run asserts
//! c-toxcore's rules itself — requests in order from the seek position, nothing past the
//! end of a stream ended by a short or empty chunk, nothing while the receiver has the file
//! paused, one zero-length request at the end — and the two runs' request sequences must be
//! identical, position for position.

mod common;

use common::*;

/// Runs one build; returns its `REQ` and `RECV_END` lines.
fn run(prog: &CProgram, port: u16) -> Vec<String> {
    check_ports_free(&[port, port + 1]);
    let out = prog
        .command(false)
        .arg(port.to_string())
        .output()
        .expect("run file_requests");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.lines().any(|l| l == "OK"),
        "file_requests on {:?}'s library failed ({}):\n{stderr}\nlast lines:\n{}",
        prog.lib,
        out.status,
        stdout.lines().rev().take(5).collect::<Vec<_>>().join("\n")
    );
    let loaded = stdout
        .lines()
        .find_map(|l| l.strip_prefix("LIB "))
        .expect("a LIB line");
    prog.check_loaded(loaded);
    for scenario in ["stream_seek", "stream_empty", "known_size", "paused"] {
        assert!(
            stdout.lines().any(|l| l == format!("PASS {scenario}")),
            "{scenario} did not pass on {:?}'s library",
            prog.lib
        );
    }
    stdout
        .lines()
        .filter(|l| l.starts_with("REQ ") || l.starts_with("RECV_END "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn chunk_requests_follow_c_toxcore_to_the_end_of_a_stream() {
    if let Err(reason) = c_toolchain() {
        skip_or_fail(&reason);
        return;
    }
    let dir = TempDir::new("rustox-ffi", "file-requests");
    let src = c_dir().join("file_requests.c");
    let debian = compile_c(&src, dir.path(), "file_requests", Lib::Debian, &[]);
    let ours = compile_c(&src, dir.path(), "file_requests", Lib::Ours, &[]);
    let theirs = run(&debian, 34720);
    let mine = run(&ours, 34722);
    // The seek, the stream's short last chunk and the zero-length request at its end.
    for expected in [
        "REQ stream_seek 1337 1371",
        "REQ stream_seek 101420 1371",
        "REQ stream_seek 102400 0",
        "REQ stream_empty 6855 1371",
        "REQ stream_empty 6855 0",
        "REQ known_size 13710 100",
        "REQ known_size 13810 0",
        "REQ paused 5484000 0",
    ] {
        assert!(
            mine.iter().any(|l| l == expected),
            "ours lacks {expected:?}"
        );
    }
    assert_eq!(
        mine, theirs,
        "our library's request sequence differs from c-toxcore's"
    );
}
