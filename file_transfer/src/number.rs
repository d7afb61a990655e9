//! File numbers and kinds as the API sees them (docs/protocol.md §3.2).
//!
//! The wire carries a one-byte slot number per direction; the API folds both directions
//! into one `u32` the way c-toxcore does: outgoing slot `i` is `i`, incoming slot `i` is
//! `(i + 1) << 16`.

/// Transfers per friend per direction (`MAX_CONCURRENT_FILE_PIPES`, docs/protocol.md §3.2).
pub const MAX_CONCURRENT_FILE_PIPES: usize = 256;

/// Size meaning "unknown, streaming": the file ends with a chunk shorter than 1371 bytes
/// (docs/protocol.md §3.2, `UINT64_MAX`).
pub const UNKNOWN_FILE_SIZE: u64 = u64::MAX;

/// A transfer's slot, by direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FileNumber {
    /// A file we send, in our outgoing slot `n`.
    Outgoing(u8),
    /// A file we receive, in the peer's outgoing slot `n`.
    Incoming(u8),
}

impl FileNumber {
    /// The API number: `n` for outgoing, `(n + 1) << 16` for incoming.
    pub fn to_u32(self) -> u32 {
        match self {
            FileNumber::Outgoing(n) => u32::from(n),
            FileNumber::Incoming(n) => (u32::from(n) + 1) << 16,
        }
    }

    /// Decode an API number the way c-toxcore's `file_control`/`file_seek` do: numbers
    /// ≥ 65536 are incoming with slot `(n >> 16) − 1` (the low 16 bits are ignored, as in
    /// c-toxcore); slots ≥ 256 and numbers 256..65535 are out of range (`None`).
    pub fn from_u32(number: u32) -> Option<FileNumber> {
        if number >= 1 << 16 {
            u8::try_from((number >> 16) - 1)
                .ok()
                .map(FileNumber::Incoming)
        } else {
            u8::try_from(number).ok().map(FileNumber::Outgoing)
        }
    }

    /// The wire slot number.
    pub fn slot(self) -> u8 {
        match self {
            FileNumber::Outgoing(n) | FileNumber::Incoming(n) => n,
        }
    }
}

/// What a file is for (`enum Tox_File_Kind`, a `u32` on the wire; docs/protocol.md §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// `TOX_FILE_KIND_DATA` = 0: an ordinary file.
    Data,
    /// `TOX_FILE_KIND_AVATAR` = 1: the sender's avatar; the file id should be the SHA-256 of
    /// the image and size 0 means "no avatar" (convention; core does not enforce it).
    Avatar,
    /// Any other value: tox.h passes kinds as `uint32_t` and c-toxcore forwards them as is.
    Other(u32),
}

impl FileKind {
    /// The wire value.
    pub fn to_u32(self) -> u32 {
        match self {
            FileKind::Data => 0,
            FileKind::Avatar => 1,
            FileKind::Other(v) => v,
        }
    }

    /// From the wire value (total: unknown kinds are kept, not rejected).
    pub fn from_u32(v: u32) -> FileKind {
        match v {
            0 => FileKind::Data,
            1 => FileKind::Avatar,
            other => FileKind::Other(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering_matches_c_toxcore() {
        assert_eq!(FileNumber::Outgoing(0).to_u32(), 0);
        assert_eq!(FileNumber::Outgoing(255).to_u32(), 255);
        assert_eq!(FileNumber::Incoming(0).to_u32(), 65536);
        assert_eq!(FileNumber::Incoming(255).to_u32(), 16_777_216);
        for n in 0..=255u8 {
            for f in [FileNumber::Outgoing(n), FileNumber::Incoming(n)] {
                assert_eq!(FileNumber::from_u32(f.to_u32()), Some(f));
            }
        }
    }

    #[test]
    fn out_of_range_numbers_are_none() {
        assert_eq!(FileNumber::from_u32(256), None);
        assert_eq!(FileNumber::from_u32(65535), None);
        assert_eq!(FileNumber::from_u32(257 << 16), None);
        assert_eq!(FileNumber::from_u32(u32::MAX), None);
    }

    #[test]
    fn kinds_round_trip() {
        for v in [0, 1, 2, u32::MAX] {
            assert_eq!(FileKind::from_u32(v).to_u32(), v);
        }
        assert_eq!(FileKind::from_u32(1), FileKind::Avatar);
    }
}
