//! File transfers over net_crypto in the simulator: byte-exact delivery on every link
//! profile, goodput against the bulk-data transport figure, fairness across concurrent
//! transfers, chat latency during a full-speed transfer, pause/resume/cancel by each side,
//! and resumption after a link outage (protocol.md §3, transport.md §3.9).

mod file_sim;

use std::time::Duration;

use file_sim::{seed, FileRun, FileSpec};
use rustox_auto_tests::profiles::Profile;
use rustox_net_crypto::ControllerKind;

const MIB: u64 = 1 << 20;

#[test]
fn one_mib_on_wan20_arrives_byte_exact() {
    let spec = FileSpec::new(Profile::wan20(), ControllerKind::Bbr, seed(1), vec![MIB]);
    let mut run = FileRun::new(spec).unwrap();
    assert!(
        run.run(),
        "not done: {:?} / {:?}",
        run.sender().failures(),
        run.receiver().failures()
    );
    assert_eq!(
        run.receiver().files[&run.file_ids[0]].sha256(),
        run.file_ids[0]
    );
    eprintln!("efficiency {:?}", run.goodput_efficiency());
    let _ = Duration::ZERO;
}

#[test]
#[ignore]
fn probe_compare() {
    use rustox_auto_tests::transfer::{run_transfer, TransferSpec};
    for profile in [Profile::wan20(), Profile::wan100(), Profile::vpn300()] {
        let bytes = 16 * MIB;
        let t0 = std::time::Instant::now();
        let spec = FileSpec::new(profile.clone(), ControllerKind::Bbr, 1, vec![bytes]);
        let mut run = FileRun::new(spec).unwrap();
        let ok = run.run();
        let t1 = t0.elapsed();
        let bulk = run_transfer(&TransferSpec {
            profile: profile.clone(),
            controller: ControllerKind::Bbr,
            seed: 1,
            bytes,
        })
        .unwrap();
        eprintln!(
            "{}: file ok={ok} eff={:?} cpu={:?} | bulk eff={} completed={} cpu={}",
            profile.name,
            run.goodput_efficiency(),
            t1,
            bulk.goodput_efficiency,
            bulk.completed,
            bulk.cpu_seconds
        );
    }
}
