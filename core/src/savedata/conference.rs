//! The CONFERENCES section (type 20): old-style conferences as c-toxcore 0.2.18 saves them
//! (`conferences_save`, `save_conf`, `save_peer` and `load_conferences`, `load_group` in
//! `toxcore/group.c`).
//!
//! The body is the conferences one after another, nothing between them and no count:
//!
//! | length | content                                                                 |
//! |--------|-------------------------------------------------------------------------|
//! | 1      | type (`Tox_Conference_Type`: 0 text, 1 AV)                              |
//! | 32     | conference id                                                           |
//! | 4      | message number to continue from, u32 little-endian                      |
//! | 2      | lossy message number to continue from, u16 little-endian               |
//! | 2      | our peer number, u16 little-endian                                      |
//! | 4      | number of peers `n`, u32 little-endian                                  |
//! | 1      | title length `t` (≤ 128)                                                |
//! | t      | title                                                                   |
//! | …      | `n` peers                                                               |
//!
//! and each peer:
//!
//! | length | content                                  |
//! |--------|------------------------------------------|
//! | 32     | real public key                          |
//! | 32     | DHT ("temp") public key                  |
//! | 2      | peer number, u16 little-endian           |
//! | 8      | last active, Unix seconds, u64 little-endian |
//! | 1      | name length `m` (≤ 128)                  |
//! | m      | name                                     |
//!
//! c-toxcore writes every conference whose status is connected, and in each every peer of
//! its online list and its frozen list except ourselves; on load they all become frozen. An
//! empty body (no conference) is what it writes most of the time. It loads conferences while
//! at least the 46 fixed bytes of one are left, so fewer trailing bytes are ignored there;
//! here they are an error ([`ConferencesError::Trailing`]), as every other silently skipped
//! thing is in [`super::Profile::parse`]. A title or name longer than 128 bytes, or a peer or
//! title cut off by the end of the section, fails c-toxcore's load of the whole section; here
//! it fails the parse with the conference's (and peer's) index.
//!
//! c-toxcore bounds the counts only by the section's length. Here they are bounded also by
//! [`MAX_SAVED_CONFERENCES`] and [`MAX_SAVED_CONFERENCE_PEERS`], refused above them (never
//! truncated), and nothing is allocated for a count field before the bytes it counts are seen.

use rustox_net_crypto::crypto::{PublicKey, PUBLIC_KEY_SIZE};
use rustox_net_crypto::wire::{Reader, TooShort};

/// `GROUP_ID_LENGTH`: a conference id is 32 bytes.
pub const CONFERENCE_ID_SIZE: usize = 32;
/// `MAX_NAME_LENGTH`: the longest title and peer name `load_group` accepts.
pub const MAX_CONFERENCE_NAME_LENGTH: usize = crate::types::MAX_NAME_LEN;
/// `SAVED_CONF_SIZE_CONSTANT`: a conference's fixed fields (type, id, message number, lossy
/// message number, peer number, peer count, title length).
pub const SAVED_CONFERENCE_FIXED_SIZE: usize = 1 + CONFERENCE_ID_SIZE + 4 + 2 + 2 + 4 + 1;
/// `SAVED_PEER_SIZE_CONSTANT`: a peer's fixed fields (two keys, peer number, last active,
/// name length).
pub const SAVED_PEER_FIXED_SIZE: usize = 2 * PUBLIC_KEY_SIZE + 2 + 8 + 1;
/// `SAVE_OFFSET_MESSAGE_NUMBER`: `save_conf` writes the message number this far ahead, so a
/// restart never reuses a number peers have already seen; the saved value is loaded as is.
pub const SAVE_OFFSET_MESSAGE_NUMBER: u32 = 1 << 16;
/// `SAVE_OFFSET_LOSSY_MESSAGE_NUMBER`: the same for lossy (audio) message numbers.
pub const SAVE_OFFSET_LOSSY_MESSAGE_NUMBER: u16 = 1 << 13;
/// Most conferences a section may hold: c-toxcore numbers its conferences with a `uint16_t`
/// (`Group_Chats::num_chats`), so it can never have saved more.
pub const MAX_SAVED_CONFERENCES: usize = u16::MAX as usize;
/// Most peers a saved conference may hold: peers are told apart by 16-bit peer numbers, so a
/// conference never has more distinct peers than that.
pub const MAX_SAVED_CONFERENCE_PEERS: usize = 1 << 16;

/// One saved conference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedConference {
    /// `Tox_Conference_Type` byte (0 text, 1 AV); kept as saved (c-toxcore loads any value).
    pub kind: u8,
    /// The conference id.
    pub id: [u8; 32],
    /// The message number to continue from, as in the file: the saver wrote its own last
    /// number plus [`SAVE_OFFSET_MESSAGE_NUMBER`] (wrapping), and a loader uses it as is.
    pub message_number: u32,
    /// The lossy message number to continue from, as in the file (the saver added
    /// [`SAVE_OFFSET_LOSSY_MESSAGE_NUMBER`], wrapping).
    pub lossy_message_number: u16,
    /// Our 16-bit peer id in it.
    pub peer_number: u16,
    /// The title (≤ 128 bytes).
    pub title: Vec<u8>,
    /// The peers, all saved frozen (ourselves excluded).
    pub peers: Vec<SavedConferencePeer>,
}

/// One peer of a saved conference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedConferencePeer {
    /// Its real key.
    pub real_pk: PublicKey,
    /// Its DHT ("temp") key as last known.
    pub temp_pk: PublicKey,
    /// Its 16-bit peer id.
    pub peer_number: u16,
    /// When it was last active, Unix seconds.
    pub last_active: u64,
    /// Its name (≤ 128 bytes).
    pub name: Vec<u8>,
}

/// Why the CONFERENCES section was refused. `conference` and `peer` count from 0 in file
/// order; `offset` is a position in the section's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ConferencesError {
    /// The section ends inside a conference's title or inside one of its peers.
    #[error("conference {conference}: cut off at byte {got} of the section, {needed} needed")]
    Truncated {
        /// The conference being read.
        conference: usize,
        /// Bytes of the section needed to finish the field.
        needed: usize,
        /// Bytes the section has.
        got: usize,
    },
    /// 1–45 bytes after the last conference: too few for another one.
    #[error("{len} byte(s) after the last conference at offset {offset}, too few for one")]
    Trailing {
        /// Where they start.
        offset: usize,
        /// How many there are.
        len: usize,
    },
    /// A title longer than 128 bytes.
    #[error("conference {conference}: title length {len}, limit 128")]
    TitleTooLong {
        /// The conference.
        conference: usize,
        /// The length it claims.
        len: usize,
    },
    /// A peer name longer than 128 bytes.
    #[error("conference {conference}, peer {peer}: name length {len}, limit 128")]
    NameTooLong {
        /// The conference.
        conference: usize,
        /// The peer.
        peer: usize,
        /// The length it claims.
        len: usize,
    },
    /// More conferences than [`MAX_SAVED_CONFERENCES`].
    #[error("more than {max} conferences")]
    TooManyConferences {
        /// The limit.
        max: usize,
    },
    /// A conference with more peers than [`MAX_SAVED_CONFERENCE_PEERS`].
    #[error("conference {conference}: {count} peers exceed the limit of {max}")]
    TooManyPeers {
        /// The conference.
        conference: usize,
        /// How many it claims.
        count: usize,
        /// The limit.
        max: usize,
    },
}

/// Parses the section's body into its conferences, in file order. Allocates at most one
/// record per 46 bytes and one peer per 75 bytes of `body`, titles and names within 128 bytes.
pub fn parse_conferences(body: &[u8]) -> Result<Vec<SavedConference>, ConferencesError> {
    let mut conferences = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let offset = body.len().saturating_sub(rest.len());
        if rest.len() < SAVED_CONFERENCE_FIXED_SIZE {
            return Err(ConferencesError::Trailing {
                offset,
                len: rest.len(),
            });
        }
        if conferences.len() >= MAX_SAVED_CONFERENCES {
            return Err(ConferencesError::TooManyConferences {
                max: MAX_SAVED_CONFERENCES,
            });
        }
        let mut cursor = Cursor {
            body,
            rest,
            conference: conferences.len(),
        };
        conferences.push(cursor.conference()?);
        rest = cursor.rest;
    }
    Ok(conferences)
}

/// Appends the section's body for `conferences`, as `conferences_save` lays it out. Fields
/// beyond their limits are cut to them (titles and names to 128 bytes, peers and conferences
/// to their maxima); [`check_conferences`] reports that beforehand.
pub fn write_conferences(conferences: &[SavedConference], out: &mut Vec<u8>) {
    for conference in conferences.iter().take(MAX_SAVED_CONFERENCES) {
        conference.write(out);
    }
}

/// Checks every limit [`parse_conferences`] enforces, so that what [`write_conferences`]
/// writes parses back to the same records.
pub fn check_conferences(conferences: &[SavedConference]) -> Result<(), ConferencesError> {
    if conferences.len() > MAX_SAVED_CONFERENCES {
        return Err(ConferencesError::TooManyConferences {
            max: MAX_SAVED_CONFERENCES,
        });
    }
    for (index, conference) in conferences.iter().enumerate() {
        conference.check(index)?;
    }
    Ok(())
}

impl SavedConference {
    /// Bytes this record takes in the section (after cutting to the limits).
    pub fn encoded_len(&self) -> usize {
        self.peers.iter().take(MAX_SAVED_CONFERENCE_PEERS).fold(
            SAVED_CONFERENCE_FIXED_SIZE.saturating_add(cut(&self.title).len()),
            |sum, peer| {
                sum.saturating_add(SAVED_PEER_FIXED_SIZE)
                    .saturating_add(cut(&peer.name).len())
            },
        )
    }

    /// Appends the record (`save_conf`).
    pub fn write(&self, out: &mut Vec<u8>) {
        let title = cut(&self.title);
        let peers = self
            .peers
            .get(..MAX_SAVED_CONFERENCE_PEERS)
            .unwrap_or(&self.peers);
        out.reserve(self.encoded_len());
        out.push(self.kind);
        out.extend_from_slice(&self.id);
        out.extend_from_slice(&self.message_number.to_le_bytes());
        out.extend_from_slice(&self.lossy_message_number.to_le_bytes());
        out.extend_from_slice(&self.peer_number.to_le_bytes());
        // At most 2^16 peers: the count always fits.
        out.extend_from_slice(&u32::try_from(peers.len()).unwrap_or(u32::MAX).to_le_bytes());
        out.push(len_byte(title));
        out.extend_from_slice(title);
        for peer in peers {
            peer.write(out);
        }
    }

    /// The record's limits; `index` is its place, for the error.
    fn check(&self, index: usize) -> Result<(), ConferencesError> {
        if self.title.len() > MAX_CONFERENCE_NAME_LENGTH {
            return Err(ConferencesError::TitleTooLong {
                conference: index,
                len: self.title.len(),
            });
        }
        if self.peers.len() > MAX_SAVED_CONFERENCE_PEERS {
            return Err(ConferencesError::TooManyPeers {
                conference: index,
                count: self.peers.len(),
                max: MAX_SAVED_CONFERENCE_PEERS,
            });
        }
        match self
            .peers
            .iter()
            .position(|p| p.name.len() > MAX_CONFERENCE_NAME_LENGTH)
        {
            Some(peer) => Err(ConferencesError::NameTooLong {
                conference: index,
                peer,
                len: self.peers.get(peer).map_or(0, |p| p.name.len()),
            }),
            None => Ok(()),
        }
    }
}

impl SavedConferencePeer {
    /// Appends the record (`save_peer`).
    pub fn write(&self, out: &mut Vec<u8>) {
        let name = cut(&self.name);
        out.extend_from_slice(self.real_pk.as_bytes());
        out.extend_from_slice(self.temp_pk.as_bytes());
        out.extend_from_slice(&self.peer_number.to_le_bytes());
        out.extend_from_slice(&self.last_active.to_le_bytes());
        out.push(len_byte(name));
        out.extend_from_slice(name);
    }
}

/// A title or name cut to 128 bytes.
fn cut(bytes: &[u8]) -> &[u8] {
    bytes.get(..MAX_CONFERENCE_NAME_LENGTH).unwrap_or(bytes)
}

/// The length byte of a field already cut to 128 bytes.
fn len_byte(field: &[u8]) -> u8 {
    u8::try_from(field.len()).unwrap_or(u8::MAX)
}

/// Reads one conference from `rest`, a tail of `body`; errors name positions in `body`.
struct Cursor<'a> {
    body: &'a [u8],
    rest: &'a [u8],
    conference: usize,
}

impl<'a> Cursor<'a> {
    fn truncated(&self, e: TooShort) -> ConferencesError {
        // `e` counts from the start of `rest`; the error counts from the start of `body`.
        let before = self.body.len().saturating_sub(self.rest.len());
        ConferencesError::Truncated {
            conference: self.conference,
            needed: before.saturating_add(e.needed),
            got: self.body.len(),
        }
    }

    /// Fixed-size fields through the one cursor; `rest` moves past them.
    fn fixed<const N: usize>(&mut self) -> Result<[u8; N], ConferencesError> {
        let mut r = Reader::new(self.rest);
        let field = r.array::<N>().map_err(|e| self.truncated(e))?;
        self.rest = r.rest();
        Ok(field)
    }

    /// A length-prefixed title or name whose length was already checked against 128.
    fn field(&mut self, len: usize) -> Result<Vec<u8>, ConferencesError> {
        let Some((field, rest)) = self.rest.split_at_checked(len) else {
            return Err(self.truncated(TooShort {
                needed: len,
                got: self.rest.len(),
            }));
        };
        self.rest = rest;
        Ok(field.to_vec())
    }

    fn conference(&mut self) -> Result<SavedConference, ConferencesError> {
        let [kind] = self.fixed::<1>()?;
        let id = self.fixed::<CONFERENCE_ID_SIZE>()?;
        let message_number = u32::from_le_bytes(self.fixed()?);
        let lossy_message_number = u16::from_le_bytes(self.fixed()?);
        let peer_number = u16::from_le_bytes(self.fixed()?);
        let count = usize::try_from(u32::from_le_bytes(self.fixed()?)).unwrap_or(usize::MAX);
        let [title_len] = self.fixed::<1>()?;
        let title_len = usize::from(title_len);
        if title_len > MAX_CONFERENCE_NAME_LENGTH {
            return Err(ConferencesError::TitleTooLong {
                conference: self.conference,
                len: title_len,
            });
        }
        let title = self.field(title_len)?;
        if count > MAX_SAVED_CONFERENCE_PEERS {
            return Err(ConferencesError::TooManyPeers {
                conference: self.conference,
                count,
                max: MAX_SAVED_CONFERENCE_PEERS,
            });
        }
        // Room for no more peers than the bytes left could hold.
        let mut peers = Vec::with_capacity(count.min(self.rest.len() / SAVED_PEER_FIXED_SIZE));
        for index in 0..count {
            peers.push(self.peer(index)?);
        }
        Ok(SavedConference {
            kind,
            id,
            message_number,
            lossy_message_number,
            peer_number,
            title,
            peers,
        })
    }

    fn peer(&mut self, index: usize) -> Result<SavedConferencePeer, ConferencesError> {
        let real_pk = PublicKey(self.fixed()?);
        let temp_pk = PublicKey(self.fixed()?);
        let peer_number = u16::from_le_bytes(self.fixed()?);
        let last_active = u64::from_le_bytes(self.fixed()?);
        let [name_len] = self.fixed::<1>()?;
        let name_len = usize::from(name_len);
        if name_len > MAX_CONFERENCE_NAME_LENGTH {
            return Err(ConferencesError::NameTooLong {
                conference: self.conference,
                peer: index,
                len: name_len,
            });
        }
        Ok(SavedConferencePeer {
            real_pk,
            temp_pk,
            peer_number,
            last_active,
            name: self.field(name_len)?,
        })
    }
}
