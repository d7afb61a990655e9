//! toxav.h through the C ABI, against c-toxcore 0.2.18: `av.c` (alice and bob, friends, in
//! one process on loopback, each with a ToxAV session) calls every toxav_* function and
//! prints what each answered and what each callback saw: the session's life, the error
//! codes of every call function in toxav.c's order, an audio call with a 440 Hz and a
//! 660 Hz tone measured at the other end, bit rates changed mid-call (0 turning audio off),
//! mute, pause, hide and their invalid transitions, hang-ups from each side, a call with
//! video whose test pattern must arrive recognisable (only after the receiver iterates
//! video), a rejected call, a session killed during a call, and group audio on an A/V
//! conference with tones both ways and every group function's failures. It runs once on
//! Debian's libtoxcore.so.2 and once on ours; each run must finish and the two outputs must
//! be the same line for line. The program prints no timing, key or address (frame counts
//! as "some"/"none", tones to 10 Hz), so nothing needs normalising.

mod common;

use common::*;

#[test]
fn a_c_client_sees_the_same_calls_on_both_libraries() {
    if let Err(reason) = c_toolchain() {
        skip_or_fail(&reason);
        return;
    }
    let dir = TempDir::new("rustox-ffi", "av");
    let src = c_dir().join("av.c");
    let debian = compile_c(&src, dir.path(), "av", Lib::Debian, &["-lm"]);
    let ours = compile_c(&src, dir.path(), "av", Lib::Ours, &["-lm"]);
    let theirs = run_line_by_line(&debian, "av", 2);
    // c-toxcore itself shows what the program checks: calls connect, tones arrive at their
    // frequency, the pattern is recognised, group audio flows both ways.
    for expected in [
        "Q alice toxav_new(again) -> NULL err=3",
        "Q alice call(offline friend) -> 0 err=4",
        "CB bob call friend=0 audio=1 video=0",
        "CB alice state friend=0 state=52",
        "RX bob call audio=some format_ok=1 freq=440",
        "RX alice call audio=some format_ok=1 freq=660",
        "CB bob state friend=0 state=48",
        "RX alice call video=some pattern=recognised strides_ok=1",
        "CB bob state friend=0 state=2",
        "Q bob join_av_groupchat -> 0",
        "RX bob group audio=some format_ok=1 freq=440",
        "RX alice group audio=some format_ok=1 freq=660",
    ] {
        assert!(
            theirs.iter().any(|l| l == expected),
            "c-toxcore's run lacks {expected:?}"
        );
    }
    let mine = run_line_by_line(&ours, "av", 2);
    assert!(
        mine == theirs,
        "our library's calls differ from c-toxcore's: {}",
        first_difference(&mine, &theirs)
    );
}
