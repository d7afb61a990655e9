//! MSI, the call signalling (msi.c): lossless packet 69 carrying typed fields
//! (request, error, capabilities), and the per-friend call state machine.

/// `PACKET_ID_MSI`.
pub const PACKET_ID_MSI: u8 = 69;
