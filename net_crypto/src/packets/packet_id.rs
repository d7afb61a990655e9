//! The id byte that starts every data-packet payload (docs/protocol.md §2.5, `net_crypto.h`).

/// `PACKET_ID_REQUEST`: a request (NACK) packet (docs/protocol.md §2.7).
pub const PACKET_ID_REQUEST: u8 = 1;
/// `PACKET_ID_KILL`: the sender closes the connection.
pub const PACKET_ID_KILL: u8 = 2;
/// First lossless id (`PACKET_ID_RANGE_LOSSLESS_START`).
const LOSSLESS_FIRST: u8 = 16;
/// Last lossless id (`PACKET_ID_RANGE_LOSSLESS_END`).
const LOSSLESS_LAST: u8 = 191;
/// First lossy id (`PACKET_ID_RANGE_LOSSY_START`).
const LOSSY_FIRST: u8 = 192;
/// Last lossy id (`PACKET_ID_RANGE_LOSSY_END`).
const LOSSY_LAST: u8 = 254;

/// How a payload is handled, by its id byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PayloadKind {
    /// 1: request (NACK) packet.
    Request,
    /// 2: kill packet.
    Kill,
    /// 3–15: reserved for net_crypto; dropped.
    Reserved,
    /// 16–191: lossless, delivered in order.
    Lossless,
    /// 192–254: lossy, delivered at once.
    Lossy,
    /// 0 (padding, never an id) and 255 (invalid in 0.2.18; docs/protocol.md §2.12).
    Invalid,
}

impl PayloadKind {
    /// The kind of a payload whose first byte is `id`.
    pub fn of(id: u8) -> Self {
        match id {
            PACKET_ID_REQUEST => PayloadKind::Request,
            PACKET_ID_KILL => PayloadKind::Kill,
            3..=15 => PayloadKind::Reserved,
            LOSSLESS_FIRST..=LOSSLESS_LAST => PayloadKind::Lossless,
            LOSSY_FIRST..=LOSSY_LAST => PayloadKind::Lossy,
            0 | 255 => PayloadKind::Invalid,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_has_the_kind_of_its_range() {
        let count = |k: PayloadKind| (0..=255u8).filter(|&i| PayloadKind::of(i) == k).count();
        assert_eq!(count(PayloadKind::Request), 1);
        assert_eq!(count(PayloadKind::Kill), 1);
        assert_eq!(count(PayloadKind::Reserved), 13);
        assert_eq!(count(PayloadKind::Lossless), 176);
        assert_eq!(count(PayloadKind::Lossy), 63);
        assert_eq!(count(PayloadKind::Invalid), 2);
        assert_eq!(PayloadKind::of(16), PayloadKind::Lossless);
        assert_eq!(PayloadKind::of(191), PayloadKind::Lossless);
        assert_eq!(PayloadKind::of(192), PayloadKind::Lossy);
        assert_eq!(PayloadKind::of(254), PayloadKind::Lossy);
        assert_eq!(PayloadKind::of(255), PayloadKind::Invalid);
        assert_eq!(PayloadKind::of(0), PayloadKind::Invalid);
    }
}
