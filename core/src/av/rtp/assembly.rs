//! One frame being put together from its pieces (rtp.c's `RTPMessage` under assembly, for
//! both the work buffers and the old multi-part path; docs/protocol.md §13.2).
//!
//! c-toxcore allocates the whole frame (`data_length_full` bytes, never checked) at its first
//! piece and adds every piece's length to a counter, so a duplicated piece counts twice and
//! a piece past the end writes past the buffer. Here the pieces are kept as they arrive
//! (memory follows what was received, not what a header claims), a piece must lie inside
//! the frame and may repeat an earlier piece exactly but not overlap another, and the frame
//! is complete when the pieces cover it. The bytes on the wire are unchanged.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use std::collections::BTreeMap;

use super::RtpError;

/// The most pieces one frame keeps: a [`super::MAX_VIDEO_FRAME_LEN`] frame in c-toxcore's
/// 1292-byte pieces is 3247 of them; beyond this the pieces are smaller than any sender
/// makes them and the frame is refused.
pub(crate) const MAX_PIECES: usize = 4096;

/// A frame's pieces so far.
#[derive(Debug, Clone)]
pub(crate) struct Assembly {
    full_len: u32,
    received: u32,
    /// Pieces by offset; they never overlap.
    pieces: BTreeMap<u32, Vec<u8>>,
}

impl Assembly {
    /// Nothing received of a frame of `full_len` bytes.
    pub(crate) fn new(full_len: u32) -> Assembly {
        Assembly {
            full_len,
            received: 0,
            pieces: BTreeMap::new(),
        }
    }

    /// The frame's length as its first piece gave it.
    pub(crate) fn full_len(&self) -> u32 {
        self.full_len
    }

    /// Bytes received, each counted once.
    pub(crate) fn received(&self) -> u32 {
        self.received
    }

    /// Every byte is here.
    pub(crate) fn is_complete(&self) -> bool {
        self.received == self.full_len
    }

    /// Adds the piece at `offset`. An exact repeat of a piece is accepted and changes
    /// nothing; anything else that does not fit changes nothing and is an error.
    pub(crate) fn add(&mut self, offset: u32, piece: &[u8]) -> Result<(), RtpError> {
        let len = u32::try_from(piece.len()).map_err(|_| RtpError::PieceOutOfBounds)?;
        let end = offset.checked_add(len).ok_or(RtpError::PieceOutOfBounds)?;
        if end > self.full_len {
            return Err(RtpError::PieceOutOfBounds);
        }
        if len == 0 {
            return Ok(());
        }
        if let Some((&start, before)) = self.pieces.range(..=offset).next_back() {
            let before_len = u32::try_from(before.len()).unwrap_or(u32::MAX);
            if start == offset && before_len == len {
                return Ok(());
            }
            if start.saturating_add(before_len) > offset {
                return Err(RtpError::Overlap);
            }
        }
        if let Some((&next, _)) = self.pieces.range(offset..).find(|(&s, _)| s != offset) {
            if next < end {
                return Err(RtpError::Overlap);
            }
        }
        if self.pieces.len() >= MAX_PIECES {
            return Err(RtpError::TooManyPieces);
        }
        self.pieces.insert(offset, piece.to_vec());
        // The pieces lie inside the frame without overlap: their sum is at most `full_len`.
        self.received = self.received.saturating_add(len);
        Ok(())
    }

    /// The frame's bytes, pieces in place; bytes never received are zero.
    pub(crate) fn into_data(self) -> Vec<u8> {
        let full = usize::try_from(self.full_len).unwrap_or(0);
        let mut data = vec![0u8; full];
        for (offset, piece) in self.pieces {
            let start = usize::try_from(offset).unwrap_or(usize::MAX);
            if let Some(dst) = data
                .get_mut(start..)
                .and_then(|rest| rest.get_mut(..piece.len()))
            {
                dst.copy_from_slice(&piece);
            }
        }
        data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_in_any_order_with_repeats() {
        let mut a = Assembly::new(10);
        a.add(6, &[6, 7, 8, 9]).unwrap();
        a.add(0, &[0, 1, 2]).unwrap();
        a.add(6, &[6, 7, 8, 9]).unwrap();
        assert_eq!(a.received(), 7);
        assert!(!a.is_complete());
        a.add(3, &[3, 4, 5]).unwrap();
        assert!(a.is_complete());
        assert_eq!(a.into_data(), (0..10).collect::<Vec<u8>>());
    }

    #[test]
    fn refuses_what_does_not_fit() {
        let mut a = Assembly::new(10);
        a.add(2, &[0; 4]).unwrap();
        assert_eq!(a.add(8, &[0; 3]), Err(RtpError::PieceOutOfBounds));
        assert_eq!(a.add(u32::MAX, &[0; 3]), Err(RtpError::PieceOutOfBounds));
        assert_eq!(a.add(0, &[0; 3]), Err(RtpError::Overlap));
        assert_eq!(a.add(5, &[0; 2]), Err(RtpError::Overlap));
        assert_eq!(a.add(2, &[0; 2]), Err(RtpError::Overlap));
        assert_eq!(a.received(), 4);
        a.add(0, &[0; 2]).unwrap();
        a.add(6, &[0; 4]).unwrap();
        assert!(a.is_complete());
    }

    #[test]
    fn piece_count_is_bounded() {
        let mut a = Assembly::new(u32::MAX);
        for i in 0..MAX_PIECES as u32 {
            a.add(i * 2, &[1]).unwrap();
        }
        assert_eq!(a.add(1_000_000, &[1]), Err(RtpError::TooManyPieces));
    }
}
