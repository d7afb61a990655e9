//! A 64 MiB file crosses every link profile of docs/design.md byte-exact: the receiver's
//! SHA-256 check (file id = content hash) passes and the test compares the hashes again.

use rustox_net_crypto::ControllerKind;
use rustox_simulator::{seed_from_env as seed, FileRun, FileSpec, Profile};

const MIB: u64 = 1 << 20;

fn sixty_four_mib_arrives_byte_exact(profile: Profile) {
    let name = profile.name;
    let spec = FileSpec::new(profile, ControllerKind::Bbr, seed(0x64), vec![64 * MIB]);
    let mut run = FileRun::new(spec);
    let done = run.run();
    assert!(
        done,
        "{name}: {} of {} bytes by the deadline; sender {:?}, receiver {:?}",
        run.received_bytes(0),
        64 * MIB,
        run.sender().failures(),
        run.receiver().failures()
    );
    let file = &run.receiver().files[&run.file_ids[0]];
    assert_eq!(file.len(), 64 * MIB);
    assert_eq!(file.sha256(), run.file_ids[0], "{name}: content differs");
    assert!(run.sender().failures().is_empty() && run.receiver().failures().is_empty());
    eprintln!(
        "{name}: goodput efficiency {:.3}",
        run.goodput_efficiency().unwrap_or(0.0)
    );
}

#[test]
fn file_64_mib_lan() {
    sixty_four_mib_arrives_byte_exact(Profile::lan());
}

#[test]
fn file_64_mib_wan20() {
    sixty_four_mib_arrives_byte_exact(Profile::wan20());
}

#[test]
fn file_64_mib_wan100() {
    sixty_four_mib_arrives_byte_exact(Profile::wan100());
}

#[test]
fn file_64_mib_vpn300() {
    sixty_four_mib_arrives_byte_exact(Profile::vpn300());
}

#[test]
fn file_64_mib_lossy() {
    sixty_four_mib_arrives_byte_exact(Profile::lossy());
}

#[test]
fn file_64_mib_bursty() {
    sixty_four_mib_arrives_byte_exact(Profile::bursty());
}

#[test]
fn file_64_mib_sat600() {
    sixty_four_mib_arrives_byte_exact(Profile::sat600());
}

/// relay500's shape as one UDP link: this host pair is net_crypto and the file layer alone,
/// without the node's relay client; whole nodes run relay500 through the simulated relay
/// (`node_relay.rs`).
#[test]
fn file_64_mib_relay500() {
    sixty_four_mib_arrives_byte_exact(Profile::relay500());
}
