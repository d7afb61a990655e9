//! The bandwidth controller's reports (bwcontroller.c): lossy packet 196 with the bytes lost
//! and received since the last report, sent by the receiver every 950 ms.

/// `BWC_PACKET_ID`.
pub const PACKET_ID_BWC: u8 = 196;
