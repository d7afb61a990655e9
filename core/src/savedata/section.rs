//! The section framing shared by the save file and the DHT section inside it (c-toxcore
//! 0.2.18 `state_load` / `state_write_section_header`, `toxcore/state.c`).
//!
//! | length | content                                                          |
//! |--------|------------------------------------------------------------------|
//! | 4      | section length `L`, u32 little-endian                            |
//! | 2      | section type, u16 little-endian                                  |
//! | 2      | inner cookie, u16 little-endian: 0x01ce (file), 0x11ce (DHT)     |
//! | L      | section body                                                     |
//!
//! Sections follow each other with nothing between them. What `state_load` accepts, and so
//! what [`split`] accepts: a body longer than what is left is an error ("file truncated"); a
//! wrong inner cookie is an error ("garbled"); 1–7 bytes left over after the last section are
//! an error ("unparsed data"); no bytes left over is the end, with or without an END section.
//! The caller decides what an END section means (the file stops at it; the DHT has none).

use rustox_net_crypto::wire::Reader;

/// Size of a section header: length u32 + type u16 + cookie u16.
pub const SECTION_HEADER_SIZE: usize = 8;

/// Why the framing could not be followed. `index` counts sections from 0, `offset` is the
/// header's position in the bytes that were split (after the 8-byte file or 4-byte DHT cookie).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FramingError {
    /// Fewer than 8 but more than 0 bytes after the last complete section.
    #[error("section {index} at offset {offset}: {remaining} byte(s) left, too few for a header")]
    HeaderTruncated {
        /// Index of the section that would have started here.
        index: usize,
        /// Where it would have started.
        offset: usize,
        /// Bytes left.
        remaining: usize,
    },
    /// The header's inner cookie is not the expected one.
    #[error("section {index} at offset {offset}: cookie {found:#06x}, expected {expected:#06x}")]
    BadCookie {
        /// Index of the section.
        index: usize,
        /// Where its header starts.
        offset: usize,
        /// The cookie found.
        found: u16,
        /// The cookie this framing uses.
        expected: u16,
    },
    /// The header says the body is longer than the bytes left.
    #[error(
        "section {index} (type {kind}) at offset {offset}: length {len} but only {available} byte(s) left"
    )]
    Truncated {
        /// Index of the section.
        index: usize,
        /// Where its header starts.
        offset: usize,
        /// Its type.
        kind: u16,
        /// The length its header claims.
        len: u32,
        /// The bytes after its header.
        available: usize,
    },
}

/// One section as found in the bytes: its type and a borrowed body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawSection<'a> {
    /// The section type.
    pub kind: u16,
    /// The body, exactly as long as the header said.
    pub body: &'a [u8],
}

/// Iterates the sections of `bytes` framed with `cookie`. Stops after the first section whose
/// type is `end` (that section is yielded, the bytes after it are not looked at), at the end of
/// the bytes, or at the first error. Nothing is allocated; the bodies borrow `bytes`.
#[derive(Debug, Clone)]
pub struct Sections<'a> {
    bytes: &'a [u8],
    offset: usize,
    index: usize,
    cookie: u16,
    end: Option<u16>,
    done: bool,
}

/// The sections of `bytes`, framed with `cookie`, stopping after a section of type `end`.
pub fn split(bytes: &[u8], cookie: u16, end: Option<u16>) -> Sections<'_> {
    Sections {
        bytes,
        offset: 0,
        index: 0,
        cookie,
        end,
        done: false,
    }
}

impl<'a> Iterator for Sections<'a> {
    type Item = Result<RawSection<'a>, FramingError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let rest = self.bytes.get(self.offset..).unwrap_or_default();
        if rest.is_empty() {
            self.done = true;
            return None;
        }
        let index = self.index;
        let offset = self.offset;
        let mut r = Reader::new(rest);
        let Ok(header) = r.array::<SECTION_HEADER_SIZE>() else {
            self.done = true;
            return Some(Err(FramingError::HeaderTruncated {
                index,
                offset,
                remaining: rest.len(),
            }));
        };
        let body_and_rest = r.rest();
        let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
        let kind = u16::from_le_bytes([header[4], header[5]]);
        let found = u16::from_le_bytes([header[6], header[7]]);
        // state_load checks the length before the cookie; the error for a section that is
        // both truncated and garbled is "truncated" there too.
        let body = match usize::try_from(len)
            .ok()
            .and_then(|len| body_and_rest.get(..len))
        {
            Some(body) => body,
            None => {
                self.done = true;
                return Some(Err(FramingError::Truncated {
                    index,
                    offset,
                    kind,
                    len,
                    available: body_and_rest.len(),
                }));
            }
        };
        if found != self.cookie {
            self.done = true;
            return Some(Err(FramingError::BadCookie {
                index,
                offset,
                found,
                expected: self.cookie,
            }));
        }
        // The header and body lie inside `bytes`, so neither sum can reach usize::MAX.
        self.offset = self
            .offset
            .saturating_add(SECTION_HEADER_SIZE)
            .saturating_add(body.len());
        self.index = self.index.saturating_add(1);
        if Some(kind) == self.end {
            self.done = true;
        }
        Some(Ok(RawSection { kind, body }))
    }
}

/// Appends a section header and `body` to `out` (`state_write_section_header` + the body).
/// Bodies are bounded far below 4 GiB by the profile's limits; a longer one is cut at the
/// u32 boundary rather than written with a wrong length.
pub fn write(out: &mut Vec<u8>, cookie: u16, kind: u16, body: &[u8]) {
    let len = u32::try_from(body.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&cookie.to_le_bytes());
    // `len` is at most body.len(), so this is the whole body or its first 2^32 - 1 bytes.
    out.extend_from_slice(body.get(..len as usize).unwrap_or(body));
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    #[test]
    fn header_is_length_type_cookie_little_endian() {
        let mut out = Vec::new();
        write(&mut out, 0x01ce, 4, b"abc");
        assert_eq!(out, [3, 0, 0, 0, 4, 0, 0xce, 0x01, b'a', b'b', b'c']);
    }

    #[test]
    fn split_stops_at_end_and_ignores_what_follows() {
        let mut out = Vec::new();
        write(&mut out, 0x01ce, 4, b"x");
        write(&mut out, 0x01ce, 255, b"");
        out.extend_from_slice(&[0; 13]);
        let sections: Vec<_> = split(&out, 0x01ce, Some(255)).collect();
        assert_eq!(
            sections,
            vec![
                Ok(RawSection {
                    kind: 4,
                    body: b"x"
                }),
                Ok(RawSection {
                    kind: 255,
                    body: b""
                })
            ]
        );
    }

    #[test]
    fn leftover_bytes_short_of_a_header_are_an_error() {
        let mut out = Vec::new();
        write(&mut out, 0x01ce, 4, b"x");
        out.extend_from_slice(&[0; 3]);
        let last = split(&out, 0x01ce, None).last().unwrap();
        assert_eq!(
            last,
            Err(FramingError::HeaderTruncated {
                index: 1,
                offset: 9,
                remaining: 3
            })
        );
    }

    #[test]
    fn wrong_cookie_and_long_length_are_errors() {
        let mut out = Vec::new();
        write(&mut out, 0x11ce, 4, b"x");
        assert!(matches!(
            split(&out, 0x01ce, None).next(),
            Some(Err(FramingError::BadCookie { found: 0x11ce, .. }))
        ));
        out[0] = 2;
        assert!(matches!(
            split(&out, 0x11ce, None).next(),
            Some(Err(FramingError::Truncated {
                len: 2,
                available: 1,
                ..
            }))
        ));
    }
}
