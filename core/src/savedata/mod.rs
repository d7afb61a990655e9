//! The Tox save file ("savedata", docs/protocol.md §8), byte-compatible with c-toxcore 0.2.18
//! (`tox_get_savedata` / `tox_load` in `toxcore/tox.c`, the state plugins in
//! `toxcore/Messenger.c`, `dht_save` in `toxcore/DHT.c`), and its password-protected form
//! ([`crypt`], `toxencryptsave`).
//!
//! | length | content                                                               |
//! |--------|-----------------------------------------------------------------------|
//! | 4      | zero                                                                  |
//! | 4      | `STATE_COOKIE_GLOBAL` 0x15ed1b1f, u32 little-endian                   |
//! | …      | sections (`section`: length u32 LE, type u16 LE, 0x01ce u16 LE, body) |
//!
//! | type | name          | body                                                     |
//! |------|---------------|----------------------------------------------------------|
//! | 1    | NOSPAMKEYS    | nospam 4 (the Tox ID's bytes) · public key 32 · secret key 32 |
//! | 2    | DHT           | `dht`: its own cookie and sub-sections of packed nodes |
//! | 3    | FRIENDS       | 2216-byte records (`friend`)                           |
//! | 4    | NAME          | our name, ≤ 128 bytes                                    |
//! | 5    | STATUSMESSAGE | our status message, ≤ 1007 bytes                         |
//! | 6    | STATUS        | 1 byte: our user status                                  |
//! | 10   | TCP_RELAY     | ≤ 8 packed nodes (TCP families)                          |
//! | 11   | PATH_NODE     | ≤ 8 packed nodes: onion path nodes                       |
//! | 20   | CONFERENCES   | old-style conferences (`conference`, `group.c`)          |
//! | 255  | END           | empty; the file stops here                               |
//!
//! c-toxcore writes them in that order (ascending type), every one of them even when empty.
//! `tox_get_savedata_size` reserves 8 × 51 bytes each for sections 10 and 11 but writes only
//! the nodes it has, so a saved file normally ends with zero bytes after END: a loader stops
//! at END and never looks at them.
//!
//! Data flows one way per call: [`Profile::parse`] turns bytes into a [`Profile`] — checking
//! every length against the bytes and against c-toxcore's limits, never panicking, and
//! allocating at most a bounded multiple of the input — and [`Profile::to_bytes`] turns it
//! back. Sections this crate does not interpret are kept verbatim, so a round trip loses
//! nothing. Files live in [`file`] (cargo feature `io`).
// A save file is untrusted input: every length in it is checked, so no indexing, slicing or
// arithmetic that could panic or wrap.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

pub(crate) mod conference;
pub mod crypt;
pub(crate) mod dht;
#[cfg(feature = "io")]
pub mod file;
pub(crate) mod friend;
pub(crate) mod section;

use rustox_net_crypto::crypto::{PublicKey, SecretKey, PUBLIC_KEY_SIZE, SECRET_KEY_SIZE};

use rustox_net_crypto::wire::Reader;

use crate::dht::wire::packed_node::{PackedNode, PACKED_NODE_SIZE_V4};
use crate::dht::wire::WireError;
use crate::friend::{NoSpam, ToxId};

pub use conference::{
    check_conferences, parse_conferences, write_conferences, ConferencesError, SavedConference,
    SavedConferencePeer, MAX_SAVED_CONFERENCES, MAX_SAVED_CONFERENCE_PEERS,
    SAVE_OFFSET_LOSSY_MESSAGE_NUMBER, SAVE_OFFSET_MESSAGE_NUMBER,
};
pub use crypt::{decrypt, encrypt, is_encrypted, CryptError, PassKey};
pub use dht::{DhtSectionError, DhtState};
pub use friend::{
    FriendRecordError, FriendStatus, SavedFriend, UserStatus, MAX_NAME_LENGTH,
    MAX_STATUSMESSAGE_LENGTH, SAVED_FRIEND_SIZE,
};
pub use section::FramingError;

/// `STATE_COOKIE_GLOBAL`: the file's second word.
pub const STATE_COOKIE_GLOBAL: u32 = 0x15ed_1b1f;
/// `STATE_COOKIE_TYPE`: every section header's inner cookie.
pub const STATE_COOKIE_TYPE: u16 = 0x01ce;

/// `STATE_TYPE_NOSPAMKEYS`.
pub const SECTION_NOSPAMKEYS: u16 = 1;
/// `STATE_TYPE_DHT`.
pub const SECTION_DHT: u16 = 2;
/// `STATE_TYPE_FRIENDS`.
pub const SECTION_FRIENDS: u16 = 3;
/// `STATE_TYPE_NAME`.
pub const SECTION_NAME: u16 = 4;
/// `STATE_TYPE_STATUSMESSAGE`.
pub const SECTION_STATUSMESSAGE: u16 = 5;
/// `STATE_TYPE_STATUS`.
pub const SECTION_STATUS: u16 = 6;
/// `STATE_TYPE_TCP_RELAY`.
pub const SECTION_TCP_RELAY: u16 = 10;
/// `STATE_TYPE_PATH_NODE`.
pub const SECTION_PATH_NODE: u16 = 11;
/// `STATE_TYPE_CONFERENCES`: [`Profile::conferences`].
pub const SECTION_CONFERENCES: u16 = 20;
/// `STATE_TYPE_END`.
pub const SECTION_END: u16 = 255;

/// The sections [`Profile`] interprets, in the order c-toxcore writes them.
const KNOWN_SECTIONS: [u16; 9] = [
    SECTION_NOSPAMKEYS,
    SECTION_DHT,
    SECTION_FRIENDS,
    SECTION_NAME,
    SECTION_STATUSMESSAGE,
    SECTION_STATUS,
    SECTION_TCP_RELAY,
    SECTION_PATH_NODE,
    SECTION_CONFERENCES,
];

/// Size of the NOSPAMKEYS body: nospam 4 + public key 32 + secret key 32.
pub const NOSPAMKEYS_SIZE: usize = 4 + PUBLIC_KEY_SIZE + SECRET_KEY_SIZE;
/// Largest save file parsed: far above any real profile (1024 friends take 2.2 MiB), small
/// enough that parsing can never exhaust memory.
pub const MAX_SAVEDATA_SIZE: usize = 64 << 20;
/// Most friends a profile holds: the node's friend list limit ([`crate::node::MAX_FRIENDS`]).
pub const MAX_SAVED_FRIENDS: usize = crate::types::MAX_FRIENDS;
/// `NUM_SAVED_TCP_RELAYS`: c-toxcore saves at most 8 relays and reads at most 8.
pub const MAX_TCP_RELAYS: usize = 8;
/// `NUM_SAVED_PATH_NODES`: c-toxcore saves at most 8 onion path nodes and reads at most 8.
pub const MAX_PATH_NODES: usize = 8;
/// Most uninterpreted sections kept (in the file, and again in the DHT section). c-toxcore
/// 0.2.18 writes none, later versions one (their new groups); the bound keeps a file of millions of
/// empty sections from costing more memory than its own size.
pub const MAX_OTHER_SECTIONS: usize = 256;

/// Why save data was refused. Each variant says what is wrong and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SavedataError {
    /// Longer than [`MAX_SAVEDATA_SIZE`].
    #[error("save data of {len} bytes exceeds the {max}-byte limit")]
    TooLarge {
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// It starts with "toxEsave": decrypt it first ([`crypt::decrypt`]).
    #[error("save data is encrypted (toxEsave); decrypt it with the passphrase first")]
    Encrypted,
    /// Shorter than the 8-byte file header.
    #[error("save data of {len} bytes is shorter than its 8-byte header")]
    TooShort {
        /// Its length.
        len: usize,
    },
    /// The first 8 bytes are not `0` and 0x15ed1b1f (little-endian).
    #[error("bad file cookie {found:02x?}: not a Tox save file")]
    BadFileCookie {
        /// The first 8 bytes.
        found: [u8; 8],
    },
    /// The section framing is broken (the [`FramingError`] says which section and where).
    #[error("{0}")]
    Framing(FramingError),
    /// The END section (255) has a body.
    #[error("END section has length {len}, expected 0")]
    EndNotEmpty {
        /// Its length.
        len: usize,
    },
    /// The bytes end without an END section (255). c-toxcore accepts that when they end at a
    /// section boundary; here it is taken for what it almost always is, a truncated file.
    #[error("no END section (255): the save data is truncated")]
    MissingEnd,
    /// A section this crate interprets appears twice.
    #[error("section type {kind} appears twice")]
    DuplicateSection {
        /// Its type.
        kind: u16,
    },
    /// More than [`MAX_OTHER_SECTIONS`] uninterpreted sections.
    #[error("more than {max} uninterpreted sections")]
    TooManySections {
        /// The limit.
        max: usize,
    },
    /// No NOSPAMKEYS section: the file holds no identity.
    #[error("no NOSPAMKEYS section (type 1): the file holds no keys")]
    MissingKeys,
    /// The NOSPAMKEYS section is not 68 bytes.
    #[error("NOSPAMKEYS section has length {len}, expected 68")]
    KeysLength {
        /// Its length.
        len: usize,
    },
    /// The saved public key is not the one the saved secret key gives.
    #[error("NOSPAMKEYS: the public key does not belong to the secret key")]
    KeyMismatch,
    /// The DHT section's own cookie or framing is broken.
    #[error("DHT section: {0}")]
    Dht(#[from] DhtSectionError),
    /// A packed node in a node list is malformed or truncated.
    #[error("section type {section}: node {node} malformed: {source}")]
    Nodes {
        /// The section (2 DHT, 10 TCP_RELAY, 11 PATH_NODE).
        section: u16,
        /// Index of the node in its list.
        node: usize,
        /// What is wrong with it.
        source: WireError,
    },
    /// A node list is longer than its limit.
    #[error("section type {section}: more than {max} nodes")]
    TooManyNodes {
        /// The section.
        section: u16,
        /// The limit.
        max: usize,
    },
    /// The FRIENDS section is not a whole number of 2216-byte records.
    #[error("FRIENDS section has length {len}, not a multiple of 2216")]
    FriendsLength {
        /// Its length.
        len: usize,
    },
    /// More friends than [`MAX_SAVED_FRIENDS`].
    #[error("{count} friends exceed the limit of {max}")]
    TooManyFriends {
        /// How many the section holds.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// A friend record is malformed.
    #[error("friend record {index}: {source}")]
    Friend {
        /// Index of the record in the FRIENDS section.
        index: usize,
        /// What is wrong with it.
        source: FriendRecordError,
    },
    /// The NAME section is longer than 128 bytes.
    #[error("NAME section has length {len}, limit 128")]
    NameTooLong {
        /// Its length.
        len: usize,
    },
    /// The STATUSMESSAGE section is longer than 1007 bytes.
    #[error("STATUSMESSAGE section has length {len}, limit 1007")]
    StatusMessageTooLong {
        /// Its length.
        len: usize,
    },
    /// The STATUS section is not 1 byte.
    #[error("STATUS section has length {len}, expected 1")]
    StatusLength {
        /// Its length.
        len: usize,
    },
    /// The STATUS byte is not 0, 1 or 2.
    #[error("STATUS section holds user status {0}, not one of 0..=2")]
    BadUserStatus(u8),
    /// The CONFERENCES section is malformed or over a limit.
    #[error("CONFERENCES section: {0}")]
    Conferences(#[from] ConferencesError),
}

impl From<FramingError> for SavedataError {
    fn from(e: FramingError) -> Self {
        SavedataError::Framing(e)
    }
}

/// Everything a Tox profile holds, as plain data.
#[derive(Debug, Clone)]
pub struct Profile {
    /// Our long-term secret key; the public key and Tox ID derive from it.
    pub secret_key: SecretKey,
    /// Our nospam, in the Tox ID's byte order.
    pub nospam: NoSpam,
    /// Our name, ≤ 128 bytes.
    pub name: Vec<u8>,
    /// Our status message, ≤ 1007 bytes.
    pub status_message: Vec<u8>,
    /// Our user status.
    pub user_status: UserStatus,
    /// The friend list, in saved order (c-toxcore's friend numbers follow it on load).
    pub friends: Vec<SavedFriend>,
    /// DHT nodes to bootstrap from next time.
    pub dht_nodes: Vec<PackedNode>,
    /// Sub-sections of the DHT section other than the node list, verbatim.
    pub dht_other_sections: Vec<(u16, Vec<u8>)>,
    /// TCP relays to connect to next time, ≤ 8.
    pub tcp_relays: Vec<PackedNode>,
    /// Onion path nodes to build paths from next time, ≤ 8.
    pub path_nodes: Vec<PackedNode>,
    /// Old-style conferences (section 20), saved as c-toxcore 0.2.18 saves them.
    pub conferences: Vec<SavedConference>,
    /// Every section not interpreted here (newer versions' sections), verbatim and in file
    /// order. Types 1–6, 10, 11, 20 and 255 do not belong here and are not written.
    pub other_sections: Vec<(u16, Vec<u8>)>,
}

impl PartialEq for Profile {
    fn eq(&self, other: &Self) -> bool {
        self.secret_key.to_bytes() == other.secret_key.to_bytes()
            && self.nospam == other.nospam
            && self.name == other.name
            && self.status_message == other.status_message
            && self.user_status == other.user_status
            && self.friends == other.friends
            && self.dht_nodes == other.dht_nodes
            && self.dht_other_sections == other.dht_other_sections
            && self.tcp_relays == other.tcp_relays
            && self.path_nodes == other.path_nodes
            && self.conferences == other.conferences
            && self.other_sections == other.other_sections
    }
}

impl Eq for Profile {}

impl Profile {
    /// A fresh profile: keys and nospam, nothing else.
    pub fn new(secret_key: SecretKey, nospam: NoSpam) -> Self {
        Profile {
            secret_key,
            nospam,
            name: Vec::new(),
            status_message: Vec::new(),
            user_status: UserStatus::None,
            friends: Vec::new(),
            dht_nodes: Vec::new(),
            dht_other_sections: Vec::new(),
            tcp_relays: Vec::new(),
            path_nodes: Vec::new(),
            conferences: Vec::new(),
            other_sections: Vec::new(),
        }
    }

    /// Our long-term public key.
    pub fn public_key(&self) -> PublicKey {
        self.secret_key.public_key()
    }

    /// Our Tox ID.
    pub fn tox_id(&self) -> ToxId {
        ToxId::new(self.public_key(), self.nospam)
    }

    /// Parses plaintext save data as c-toxcore 0.2.18's `tox_new` loads it, but strictly:
    /// what c-toxcore would silently skip (a too-long name, a malformed node list, a friend
    /// it could not re-add, a file cut off at a section boundary) is an error here, never a
    /// profile that lost part of itself. Bytes after END are ignored, as c-toxcore does.
    pub fn parse(bytes: &[u8]) -> Result<Profile, SavedataError> {
        if bytes.len() > MAX_SAVEDATA_SIZE {
            return Err(SavedataError::TooLarge {
                len: bytes.len(),
                max: MAX_SAVEDATA_SIZE,
            });
        }
        if crypt::is_encrypted(bytes) {
            return Err(SavedataError::Encrypted);
        }
        let mut r = Reader::new(bytes);
        let Ok(head) = r.array::<8>() else {
            return Err(SavedataError::TooShort { len: bytes.len() });
        };
        let rest = r.rest();
        if head[..4] != [0; 4] || head[4..] != STATE_COOKIE_GLOBAL.to_le_bytes() {
            return Err(SavedataError::BadFileCookie { found: head });
        }

        let mut keys = None;
        let mut profile = Profile::new(
            SecretKey::from_bytes([0; SECRET_KEY_SIZE]),
            NoSpam::default(),
        );
        let mut seen = [false; KNOWN_SECTIONS.len()];
        let mut seen_end = false;
        for raw in section::split(rest, STATE_COOKIE_TYPE, Some(SECTION_END)) {
            let raw = raw?;
            let body = raw.body;
            if let Some(i) = KNOWN_SECTIONS.iter().position(|&k| k == raw.kind) {
                if seen.get_mut(i).is_some_and(|s| std::mem::replace(s, true)) {
                    return Err(SavedataError::DuplicateSection { kind: raw.kind });
                }
            }
            match raw.kind {
                SECTION_NOSPAMKEYS => keys = Some(parse_keys(body)?),
                SECTION_DHT => {
                    let dht = DhtState::parse(body)?;
                    profile.dht_nodes = dht.nodes;
                    profile.dht_other_sections = dht.other;
                }
                SECTION_FRIENDS => profile.friends = parse_friends(body)?,
                SECTION_NAME => {
                    if body.len() > MAX_NAME_LENGTH {
                        return Err(SavedataError::NameTooLong { len: body.len() });
                    }
                    profile.name = body.to_vec();
                }
                SECTION_STATUSMESSAGE => {
                    if body.len() > MAX_STATUSMESSAGE_LENGTH {
                        return Err(SavedataError::StatusMessageTooLong { len: body.len() });
                    }
                    profile.status_message = body.to_vec();
                }
                SECTION_STATUS => {
                    let &[status] = body else {
                        return Err(SavedataError::StatusLength { len: body.len() });
                    };
                    profile.user_status = UserStatus::from_byte(status)
                        .ok_or(SavedataError::BadUserStatus(status))?;
                }
                SECTION_TCP_RELAY => {
                    profile.tcp_relays =
                        parse_nodes(body, SECTION_TCP_RELAY, MAX_TCP_RELAYS, MAX_TCP_RELAYS)?;
                }
                SECTION_PATH_NODE => {
                    profile.path_nodes =
                        parse_nodes(body, SECTION_PATH_NODE, MAX_PATH_NODES, MAX_PATH_NODES)?;
                }
                SECTION_CONFERENCES => profile.conferences = parse_conferences(body)?,
                SECTION_END => {
                    if !body.is_empty() {
                        return Err(SavedataError::EndNotEmpty { len: body.len() });
                    }
                    seen_end = true;
                }
                other => {
                    if profile.other_sections.len() >= MAX_OTHER_SECTIONS {
                        return Err(SavedataError::TooManySections {
                            max: MAX_OTHER_SECTIONS,
                        });
                    }
                    profile.other_sections.push((other, body.to_vec()));
                }
            }
        }
        if !seen_end {
            return Err(SavedataError::MissingEnd);
        }
        let (secret_key, nospam) = keys.ok_or(SavedataError::MissingKeys)?;
        profile.secret_key = secret_key;
        profile.nospam = nospam;
        Ok(profile)
    }

    /// Checks every limit [`Profile::parse`] enforces, so that what [`Profile::to_bytes`]
    /// writes parses back to this profile.
    pub fn check(&self) -> Result<(), SavedataError> {
        if self.name.len() > MAX_NAME_LENGTH {
            return Err(SavedataError::NameTooLong {
                len: self.name.len(),
            });
        }
        if self.status_message.len() > MAX_STATUSMESSAGE_LENGTH {
            return Err(SavedataError::StatusMessageTooLong {
                len: self.status_message.len(),
            });
        }
        if self.friends.len() > MAX_SAVED_FRIENDS {
            return Err(SavedataError::TooManyFriends {
                count: self.friends.len(),
                max: MAX_SAVED_FRIENDS,
            });
        }
        for (index, friend) in self.friends.iter().enumerate() {
            friend
                .check()
                .map_err(|source| SavedataError::Friend { index, source })?;
        }
        for (section, nodes, max) in [
            (SECTION_DHT, &self.dht_nodes, dht::MAX_DHT_NODES),
            (SECTION_TCP_RELAY, &self.tcp_relays, MAX_TCP_RELAYS),
            (SECTION_PATH_NODE, &self.path_nodes, MAX_PATH_NODES),
        ] {
            if nodes.len() > max {
                return Err(SavedataError::TooManyNodes { section, max });
            }
        }
        check_conferences(&self.conferences)?;
        for others in [&self.other_sections, &self.dht_other_sections] {
            if others.len() > MAX_OTHER_SECTIONS {
                return Err(SavedataError::TooManySections {
                    max: MAX_OTHER_SECTIONS,
                });
            }
        }
        if let Some((kind, _)) = self
            .other_sections
            .iter()
            .find(|(kind, _)| KNOWN_SECTIONS.contains(kind) || *kind == SECTION_END)
        {
            return Err(SavedataError::DuplicateSection { kind: *kind });
        }
        Ok(())
    }

    /// The save file as c-toxcore writes it: the header, then every section in ascending type
    /// order — 1, 2, 3, 4, 5, 6, 10, 11, 20 always (empty or not), the kept sections merged in
    /// by type — then END. A file read without a CONFERENCES section gets an empty one, as
    /// c-toxcore writes it after loading such a file. No zero padding follows END (c-toxcore's
    /// `tox_get_savedata_size` adds some; it carries nothing).
    ///
    /// Fields beyond their limits are cut to them and kept sections of the interpreted types
    /// are left out; [`Profile::check`] reports both beforehand.
    pub fn to_bytes(&self) -> Vec<u8> {
        // A capacity hint: saturating, since the sizes are only what the caller put in.
        let mut out = Vec::with_capacity(
            self.friends
                .len()
                .saturating_mul(SAVED_FRIEND_SIZE)
                .saturating_add(256)
                .saturating_add(self.name.len())
                .saturating_add(self.status_message.len())
                .saturating_add(
                    self.conferences
                        .iter()
                        .fold(0usize, |sum, c| sum.saturating_add(c.encoded_len())),
                )
                .saturating_add(self.other_sections.iter().fold(0usize, |sum, (_, b)| {
                    sum.saturating_add(8).saturating_add(b.len())
                })),
        );
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&STATE_COOKIE_GLOBAL.to_le_bytes());

        let mut others: Vec<&(u16, Vec<u8>)> = self
            .other_sections
            .iter()
            .filter(|(kind, _)| !KNOWN_SECTIONS.contains(kind) && *kind != SECTION_END)
            .collect();
        others.sort_by_key(|(kind, _)| *kind); // stable: equal types keep their order
        let mut others = others.into_iter().peekable();
        let mut body = Vec::new();
        for kind in KNOWN_SECTIONS {
            while let Some((other, other_body)) = others.next_if(|(k, _)| *k < kind) {
                section::write(&mut out, STATE_COOKIE_TYPE, *other, other_body);
            }
            body.clear();
            self.write_body(kind, &mut body);
            section::write(&mut out, STATE_COOKIE_TYPE, kind, &body);
        }
        for (other, other_body) in others {
            section::write(&mut out, STATE_COOKIE_TYPE, *other, other_body);
        }
        section::write(&mut out, STATE_COOKIE_TYPE, SECTION_END, &[]);
        out
    }

    fn write_body(&self, kind: u16, out: &mut Vec<u8>) {
        let write_nodes = |nodes: &[PackedNode], max: usize, out: &mut Vec<u8>| {
            for node in nodes.iter().take(max) {
                node.encode(out);
            }
        };
        match kind {
            SECTION_NOSPAMKEYS => {
                out.extend_from_slice(&self.nospam.0);
                out.extend_from_slice(self.public_key().as_bytes());
                out.extend_from_slice(&self.secret_key.to_bytes());
            }
            SECTION_DHT => DhtState {
                nodes: self
                    .dht_nodes
                    .iter()
                    .take(dht::MAX_DHT_NODES)
                    .copied()
                    .collect(),
                other: self.dht_other_sections.clone(),
            }
            .write(out),
            SECTION_FRIENDS => {
                for friend in &self.friends {
                    friend.write(out);
                }
            }
            SECTION_NAME => {
                out.extend_from_slice(self.name.get(..MAX_NAME_LENGTH).unwrap_or(&self.name))
            }
            SECTION_STATUSMESSAGE => out.extend_from_slice(
                self.status_message
                    .get(..MAX_STATUSMESSAGE_LENGTH)
                    .unwrap_or(&self.status_message),
            ),
            SECTION_STATUS => out.push(self.user_status.to_byte()),
            SECTION_TCP_RELAY => write_nodes(&self.tcp_relays, MAX_TCP_RELAYS, out),
            SECTION_PATH_NODE => write_nodes(&self.path_nodes, MAX_PATH_NODES, out),
            SECTION_CONFERENCES => write_conferences(&self.conferences, out),
            _ => debug_assert!(false, "not an interpreted section: {kind}"),
        }
    }
}

/// NOSPAMKEYS: `load_nospam_keys` requires exactly 68 bytes and a public key that matches the
/// secret key.
fn parse_keys(body: &[u8]) -> Result<(SecretKey, NoSpam), SavedataError> {
    let body: &[u8; NOSPAMKEYS_SIZE] = body
        .try_into()
        .map_err(|_| SavedataError::KeysLength { len: body.len() })?;
    let mut nospam = [0u8; 4];
    nospam.copy_from_slice(&body[..4]);
    let mut sk = [0u8; SECRET_KEY_SIZE];
    sk.copy_from_slice(&body[4 + PUBLIC_KEY_SIZE..]);
    let secret_key = SecretKey::from_bytes(sk);
    if secret_key.public_key().as_bytes()[..] != body[4..4 + PUBLIC_KEY_SIZE] {
        return Err(SavedataError::KeyMismatch);
    }
    Ok((secret_key, NoSpam(nospam)))
}

fn parse_friends(body: &[u8]) -> Result<Vec<SavedFriend>, SavedataError> {
    if !body.len().is_multiple_of(SAVED_FRIEND_SIZE) {
        return Err(SavedataError::FriendsLength { len: body.len() });
    }
    let count = body.len() / SAVED_FRIEND_SIZE;
    if count > MAX_SAVED_FRIENDS {
        return Err(SavedataError::TooManyFriends {
            count,
            max: MAX_SAVED_FRIENDS,
        });
    }
    let mut friends = Vec::with_capacity(count);
    for (index, record) in body.chunks_exact(SAVED_FRIEND_SIZE).enumerate() {
        // chunks_exact gives SAVED_FRIEND_SIZE bytes each time: the error never happens.
        let record: &[u8; SAVED_FRIEND_SIZE] = record
            .try_into()
            .map_err(|_| SavedataError::FriendsLength { len: body.len() })?;
        friends.push(
            SavedFriend::parse(record).map_err(|source| SavedataError::Friend { index, source })?,
        );
    }
    Ok(friends)
}

/// Reads a node list that must fill `body` exactly, at most `room` nodes (`max` is the limit
/// the error names). Allocates at most `room` nodes.
fn parse_nodes(
    body: &[u8],
    section: u16,
    room: usize,
    max: usize,
) -> Result<Vec<PackedNode>, SavedataError> {
    let mut nodes = Vec::with_capacity(room.min(body.len() / PACKED_NODE_SIZE_V4));
    let mut rest = body;
    while !rest.is_empty() {
        if nodes.len() == room {
            return Err(SavedataError::TooManyNodes { section, max });
        }
        let nodes_error = |source| SavedataError::Nodes {
            section,
            node: nodes.len(),
            source,
        };
        let (node, used) = PackedNode::decode(rest).map_err(nodes_error)?;
        rest = rest
            .get(used..)
            .ok_or_else(|| nodes_error(WireError::BadNodeList))?;
        nodes.push(node);
    }
    Ok(nodes)
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests;
#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests_conference;
