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
    let theirs = run_line_by_line(&debian, "conference", 3);
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
    let mine = run_line_by_line(&ours, "conference", 3);
    assert!(
        mine == theirs,
        "our library's conferences differ from c-toxcore's: {}",
        first_difference(&mine, &theirs)
    );
}
