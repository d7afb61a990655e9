//! Pause/resume and cancel by each side over a real (simulated) net_crypto session, and a
//! transfer cut by a 30 s link outage that resumes after reconnection from the receiver's
//! offset via seek, byte-exact (docs/protocol.md §3.2, §3.4).

use std::time::Duration;

use rustox_file_transfer::FileControl;
use rustox_net_crypto::{ControllerKind, Timestamp};
use rustox_simulator::{seed_from_env as seed, FileAction as Action, FileRun, FileSpec, Profile};

const MIB: u64 = 1 << 20;

fn pause_and_resume(by_receiver: bool) {
    let profile = Profile::wan100();
    let rtt = profile.rtt;
    let mut spec = FileSpec::new(profile, ControllerKind::Bbr, seed(0x9a05e), vec![16 * MIB]);
    let (pause_at, resume_at) = (Timestamp::from_secs(2), Timestamp::from_secs(6));
    let script = vec![
        (pause_at, Action::Control(0, FileControl::Pause)),
        (resume_at, Action::Control(0, FileControl::Resume)),
    ];
    if by_receiver {
        spec.receiver_script = script;
    } else {
        spec.sender_script = script;
    }
    let mut run = FileRun::new(spec);
    run.run_to(pause_at);
    let at_pause = run.received_bytes(0);
    assert!(
        at_pause > 0 && at_pause < 16 * MIB,
        "pause must hit mid-transfer ({at_pause})"
    );
    // Once the pause is known to the sender (at once, or one trip of the control packet
    // through a queue of at most a BDP), no chunk is read or sent...
    run.run_to(pause_at + rtt * 2);
    let chunks = run.sender().file_stats().chunks_sent;
    // ...and once what was in flight has landed (resends included), nothing arrives.
    run.run_to(pause_at + Duration::from_secs(2));
    let frozen = run.received_bytes(0);
    // Up to just before the resume (events at `resume_at` itself include the resume).
    run.run_to(resume_at - Duration::from_millis(1));
    assert_eq!(
        run.sender().file_stats().chunks_sent,
        chunks,
        "chunks sent while paused"
    );
    assert_eq!(run.received_bytes(0), frozen, "data arrived while paused");
    assert!(run.run(), "did not finish after resume");
    assert_eq!(
        run.receiver().files[&run.file_ids[0]].sha256(),
        run.file_ids[0]
    );
    let peer = if by_receiver {
        run.sender()
    } else {
        run.receiver()
    };
    let controls: Vec<FileControl> = peer.peer_controls.iter().map(|c| c.1).collect();
    assert!(
        controls.ends_with(&[FileControl::Pause, FileControl::Resume]),
        "peer saw {controls:?}"
    );
    assert!(
        run.sender().failures().is_empty(),
        "{:?}",
        run.sender().failures()
    );
    assert!(
        run.receiver().failures().is_empty(),
        "{:?}",
        run.receiver().failures()
    );
}

#[test]
fn file_pause_and_resume_by_receiver() {
    pause_and_resume(true);
}

#[test]
fn file_pause_and_resume_by_sender() {
    pause_and_resume(false);
}

fn cancel(by_receiver: bool) {
    let profile = Profile::wan100();
    let rtt = profile.rtt;
    let mut spec = FileSpec::new(profile, ControllerKind::Bbr, seed(0xca5ce1), vec![16 * MIB]);
    let at = Timestamp::from_secs(2);
    let script = vec![(at, Action::Control(0, FileControl::Cancel))];
    if by_receiver {
        spec.receiver_script = script;
    } else {
        spec.sender_script = script;
    }
    let mut run = FileRun::new(spec);
    run.run_to(at);
    assert!(
        run.received_bytes(0) < 16 * MIB,
        "cancel must hit mid-transfer"
    );
    run.run_to(at + rtt * 4);
    let frozen = run.received_bytes(0);
    run.run_to(at + Duration::from_secs(10));
    assert_eq!(run.received_bytes(0), frozen, "data after cancel");
    assert!(run.receiver().received.is_empty() && run.sender().sent.is_empty());
    let peer = if by_receiver {
        run.sender()
    } else {
        run.receiver()
    };
    assert_eq!(
        peer.peer_controls.last().map(|c| c.1),
        Some(FileControl::Cancel)
    );
}

#[test]
fn file_cancel_by_receiver() {
    cancel(true);
}

#[test]
fn file_cancel_by_sender() {
    cancel(false);
}

#[test]
fn file_outage_of_30_s_resumes_from_the_receivers_offset() {
    let size = 16 * MIB;
    let mut spec = FileSpec::new(
        Profile::wan100(),
        ControllerKind::Bbr,
        seed(0x07a6e),
        vec![size],
    );
    let (down, up) = (Timestamp::from_secs(3), Timestamp::from_secs(33));
    spec.outages = vec![(down, up)];
    spec.deadline += Duration::from_secs(60);
    let mut run = FileRun::new(spec);
    run.run_to(down);
    let before = run.received_bytes(0);
    assert!(
        before > 0 && before < size,
        "outage must hit mid-transfer ({before})"
    );
    assert!(
        run.run(),
        "did not finish after the outage: {} bytes; sender {:?}; receiver {:?}",
        run.received_bytes(0),
        run.sender().failures(),
        run.receiver().failures()
    );
    let r = run.receiver();
    assert_eq!(
        r.files[&run.file_ids[0]].sha256(),
        run.file_ids[0],
        "content differs"
    );
    assert!(
        run.sender().sessions_established >= 2,
        "the session was never re-established"
    );
    assert_eq!(r.resumed_from.len(), 1, "resumed {:?}", r.resumed_from);
    assert!(
        r.resumed_from[0] >= before,
        "resumed from {} < {before}",
        r.resumed_from[0]
    );
    eprintln!("resumed from offset {} after the outage", r.resumed_from[0]);
}
