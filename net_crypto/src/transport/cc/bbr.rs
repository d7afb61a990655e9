//! Placeholder until the BBR controller lands: delegates to CUBIC.
use super::cubic::Cubic;
use crate::Timestamp;

pub(crate) type Bbr = Cubic;

#[allow(dead_code)]
fn _unused(_: Timestamp) {}
