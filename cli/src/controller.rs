//! Congestion controllers by name on the command line.

use rustox_auto_tests::transfer::controller_by_name;
use rustox_net_crypto::ControllerKind;

/// Parses `bbr`, `cubic` or `legacy`; the error text is what clap shows after "invalid value".
pub fn parse_controller(text: &str) -> Result<ControllerKind, String> {
    controller_by_name(text.trim())
        .ok_or_else(|| format!("unknown controller {text:?} (choose bbr, cubic or legacy)"))
}
