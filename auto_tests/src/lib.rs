//! rustox's test and benchmark rig, built on the deterministic simulator (`rustox_simulator`):
//!
//! - in the simulator: whole Tox nodes ([`tox_node`]), a TCP model ([`tcp`]) for cross
//!   traffic, simulated TCP relays ([`relay_sim`]), node-level file transfers, friends coming
//!   online, an idle node, the scale simulation, and [`toy`] nodes that test the simulator;
//! - on real sockets: the TUN link emulator ([`emulator`]), a kernel-shaped veth link
//!   ([`kernel_link`]), live rustox peers ([`live`]),
//!   the c-toxcore 0.2.18 harness ([`ctoxcore`]), proxies, relay probes and the attack tools;
//! - the scenario and interop tests (`tests/`) and the benchmark binaries (`src/bin`, with
//!   what they share in [`bench`](mod@bench)).

pub mod attack;
pub mod av_sim;
pub mod bench;
pub mod conference_sim;
pub mod cross_traffic;
pub mod ctoxcore;
pub mod emulator;
pub mod friend_online;
pub mod hashing_sink;
pub mod heap_meter;
pub mod idle;
pub mod kernel_link;
pub mod live;
pub mod node_transfer;
pub mod proxies;
pub mod relay_probe;
pub mod relay_sim;
pub mod relay_switch;
pub mod scale;
pub mod tcp;
pub mod tox_node;
pub mod toy;
