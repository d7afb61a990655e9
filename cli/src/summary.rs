//! The one JSON line `rustox send` and `rustox recv` print per transfer: the type lives in
//! the simulator crate, so the test rig that runs the real binaries parses the same type.

pub use rustox_simulator::TransferSummary;
