//! The DHT section's body (c-toxcore 0.2.18 `dht_save` / `dht_load`, `toxcore/DHT.c`).
//!
//! | length | content                                                        |
//! |--------|----------------------------------------------------------------|
//! | 4      | `DHT_STATE_COOKIE_GLOBAL` 0x0159000d, u32 little-endian        |
//! | …      | sub-sections framed like the file's ([`super::section`]) but with cookie 0x11ce |
//!
//! c-toxcore writes exactly one sub-section, type 4 (`DHT_STATE_TYPE_NODES`): packed nodes
//! (docs/protocol.md §5.1), UDP families only — the nodes loaded from the last save that are still
//! unused, then the close list, then the two fake friends' client lists, each with IPv4 and
//! IPv6 entries. Loading reads at most `MAX_SAVED_DHT_NODES` (96) of them and ignores
//! sub-sections of other types; a body too short for the cookie, a wrong cookie or broken
//! framing makes c-toxcore ignore the rest of the DHT section without failing the load.
//!
//! Here the framing and the nodes are checked strictly; sub-sections of other types are kept
//! verbatim; several type-4 sub-sections are joined; an empty body means no nodes.

use rustox_net_crypto::wire::Reader;

use super::section::{self, FramingError};
use super::SavedataError;
use crate::dht::wire::packed_node::{PackedNode, PACKED_NODE_SIZE_V6};

/// `DHT_STATE_COOKIE_GLOBAL`.
pub const DHT_STATE_COOKIE_GLOBAL: u32 = 0x0159_000d;
/// `DHT_STATE_COOKIE_TYPE`: the sub-sections' inner cookie.
pub const DHT_STATE_COOKIE_TYPE: u16 = 0x11ce;
/// `DHT_STATE_TYPE_NODES`.
pub const DHT_STATE_TYPE_NODES: u16 = 4;
/// `MAX_SAVED_DHT_NODES` = (2 fake friends × 8 + 32 close) × 2 families: what c-toxcore
/// reads back.
pub const MAX_SAVED_DHT_NODES: usize = 96;
/// Most DHT nodes a save may hold: c-toxcore writes its still-unused loaded nodes (≤ 96)
/// *and* its current lists (≤ 96), so twice what it reads.
pub const MAX_DHT_NODES: usize = 2 * MAX_SAVED_DHT_NODES;

/// The DHT section, parsed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DhtState {
    /// The saved nodes, in file order.
    pub nodes: Vec<PackedNode>,
    /// Sub-sections of types other than 4, verbatim and in file order.
    pub other: Vec<(u16, Vec<u8>)>,
}

/// Why the DHT section was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DhtSectionError {
    /// The body is 1–4 bytes long or does not start with 0x0159000d.
    #[error("bad DHT cookie (body of {len} bytes)")]
    BadCookie {
        /// The body's length.
        len: usize,
    },
    /// The sub-section framing is broken.
    #[error("DHT {0}")]
    Framing(FramingError),
}

impl DhtState {
    /// Parses the DHT section's body. Node errors are [`SavedataError::Nodes`] for section 2.
    pub fn parse(body: &[u8]) -> Result<Self, SavedataError> {
        let mut state = DhtState::default();
        if body.is_empty() {
            return Ok(state);
        }
        let mut r = Reader::new(body);
        let rest = match r.array() {
            Ok(cookie) if u32::from_le_bytes(cookie) == DHT_STATE_COOKIE_GLOBAL => r.rest(),
            _ => return Err(DhtSectionError::BadCookie { len: body.len() }.into()),
        };
        for sub in section::split(rest, DHT_STATE_COOKIE_TYPE, None) {
            let sub = sub.map_err(DhtSectionError::Framing)?;
            if sub.kind == DHT_STATE_TYPE_NODES {
                // parse_nodes returns at most `room` nodes: never more than MAX_DHT_NODES.
                let room = MAX_DHT_NODES.saturating_sub(state.nodes.len());
                state.nodes.extend(super::parse_nodes(
                    sub.body,
                    super::SECTION_DHT,
                    room,
                    MAX_DHT_NODES,
                )?);
            } else {
                if state.other.len() >= super::MAX_OTHER_SECTIONS {
                    return Err(SavedataError::TooManySections {
                        max: super::MAX_OTHER_SECTIONS,
                    });
                }
                state.other.push((sub.kind, sub.body.to_vec()));
            }
        }
        Ok(state)
    }

    /// Appends the section body: cookie, the nodes sub-section (always, empty or not, as
    /// c-toxcore writes it), then the kept sub-sections.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&DHT_STATE_COOKIE_GLOBAL.to_le_bytes());
        let mut nodes = Vec::with_capacity(self.nodes.len().saturating_mul(PACKED_NODE_SIZE_V6));
        for node in &self.nodes {
            node.encode(&mut nodes);
        }
        section::write(out, DHT_STATE_COOKIE_TYPE, DHT_STATE_TYPE_NODES, &nodes);
        for (kind, body) in &self.other {
            section::write(out, DHT_STATE_COOKIE_TYPE, *kind, body);
        }
    }
}
