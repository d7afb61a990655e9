//! Congestion controllers by name on the command line.

use rustox_core::transport::ControllerKind;

/// Parses `bbr`, `cubic` or `legacy`; the error text is what clap shows after "invalid value".
pub fn parse_controller(text: &str) -> Result<ControllerKind, String> {
    ControllerKind::from_name(text.trim())
        .ok_or_else(|| format!("unknown controller {text:?} (choose bbr, cubic or legacy)"))
}
