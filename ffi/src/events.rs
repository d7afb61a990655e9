//! tox_events.h: the events of one iteration as an owned object (`Tox_Events`), read through
//! per-type accessors, and its msgpack serialisation (`tox_events_get_bytes`,
//! `tox_events_load`), byte for byte c-toxcore 0.2.18's.
//!
//! A `Tox_Events` keeps its events grouped by type, in one list per type, as c-toxcore's
//! does: `tox_events_get_friend_message(events, i)` is the i-th friend message of the
//! iteration, and the order between types is lost. Each entry is an opaque per-type record
//! (`Tox_Event_Friend_Message`...) that owns its bytes; the pointers its getters return stay
//! valid until `tox_events_free`. Nothing changes a `Tox_Events` after it is built, so its
//! lists never move.
//!
//! rustox never produces conference events, but a `Tox_Events` can still hold them:
//! `tox_events_load` reads every type c-toxcore writes.
//!
//! # Wire format (c-toxcore 0.2.18 `tox_events.c`, `events/*.c`, `bin_pack.c`)
//!
//! msgpack, written by the `cmp` library in its shortest form (an unsigned integer as a
//! positive fixint, uint8, uint16, uint32 or uint64; an array header as fixarray, array16 or
//! array32; bytes as bin8, bin16 or bin32):
//!
//! | what             | msgpack                                                   |
//! |------------------|-----------------------------------------------------------|
//! | `Tox_Events`     | array of N events                                         |
//! | one event        | array of 2: `[Tox_Event value, payload]`                  |
//! | payload          | the event's fields, an array of them when there are two or more (the single-field conference connected, peer list changed and self connection status events carry the bare integer) |
//!
//! The events are written type by type in [`PACK_ORDER`] (not `Tox_Event`'s numeric order:
//! file_recv_chunk and file_recv_control come before file_recv, friend_status_message before
//! friend_status), and each type's events in the order they happened. Reading accepts the
//! events in any order and appends each to its type's list, so a save/load round trip gives
//! the same bytes. Reading follows `bin_unpack.c` and `cmp`'s readers: an integer field may
//! come in any msgpack integer form whose value fits (a non-negative signed one too), enum
//! fields are any `u32` (c-toxcore does not check them, so neither do we: the getters return
//! the raw value), bytes may come in any bin form, and bytes after the outer array are
//! ignored.

use crate::event::Event;
use crate::guard;
use crate::handle::{self, Tox};
use crate::types::{Tox_Err_Events_Iterate, Tox_Event};

// ---------------------------------------------------------------------------------------
// The per-type records
// ---------------------------------------------------------------------------------------

/// `Tox_Event_Conference_Connected`: we joined a conference.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Event_Conference_Connected {
    pub(crate) conference_number: u32,
}

/// `Tox_Event_Conference_Invite`: a friend invites us to a conference.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Event_Conference_Invite {
    pub(crate) friend_number: u32,
    /// A `Tox_Conference_Type` value, unchecked.
    pub(crate) conference_type: u32,
    pub(crate) cookie: Box<[u8]>,
}

/// `Tox_Event_Conference_Message`: a peer said something in a conference.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Event_Conference_Message {
    pub(crate) conference_number: u32,
    pub(crate) peer_number: u32,
    /// A `Tox_Message_Type` value, unchecked.
    pub(crate) message_type: u32,
    pub(crate) message: Box<[u8]>,
}

/// `Tox_Event_Conference_Peer_List_Changed`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Event_Conference_Peer_List_Changed {
    pub(crate) conference_number: u32,
}

/// `Tox_Event_Conference_Peer_Name`: a conference peer's name changed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Event_Conference_Peer_Name {
    pub(crate) conference_number: u32,
    pub(crate) peer_number: u32,
    pub(crate) name: Box<[u8]>,
}

/// `Tox_Event_Conference_Title`: a conference's title changed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Event_Conference_Title {
    pub(crate) conference_number: u32,
    pub(crate) peer_number: u32,
    pub(crate) title: Box<[u8]>,
}

/// `Tox_Event_File_Chunk_Request`: send `length` bytes at `position`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Event_File_Chunk_Request {
    pub(crate) friend_number: u32,
    pub(crate) file_number: u32,
    pub(crate) position: u64,
    pub(crate) length: u16,
}

/// `Tox_Event_File_Recv`: a friend offers a file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Event_File_Recv {
    pub(crate) friend_number: u32,
    pub(crate) file_number: u32,
    pub(crate) kind: u32,
    pub(crate) file_size: u64,
    pub(crate) filename: Box<[u8]>,
}

/// `Tox_Event_File_Recv_Chunk`: bytes of an incoming file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Event_File_Recv_Chunk {
    pub(crate) friend_number: u32,
    pub(crate) file_number: u32,
    pub(crate) position: u64,
    pub(crate) data: Box<[u8]>,
}

/// `Tox_Event_File_Recv_Control`: a friend paused, resumed or cancelled a transfer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Event_File_Recv_Control {
    pub(crate) friend_number: u32,
    pub(crate) file_number: u32,
    /// A `Tox_File_Control` value, unchecked.
    pub(crate) control: u32,
}

/// `Tox_Event_Friend_Connection_Status`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Event_Friend_Connection_Status {
    pub(crate) friend_number: u32,
    /// A `Tox_Connection` value, unchecked.
    pub(crate) connection_status: u32,
}

/// `Tox_Event_Friend_Lossless_Packet`: a custom lossless packet, id byte first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Event_Friend_Lossless_Packet {
    pub(crate) friend_number: u32,
    pub(crate) data: Box<[u8]>,
}

/// `Tox_Event_Friend_Lossy_Packet`: a custom lossy packet, id byte first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Event_Friend_Lossy_Packet {
    pub(crate) friend_number: u32,
    pub(crate) data: Box<[u8]>,
}

/// `Tox_Event_Friend_Message`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Event_Friend_Message {
    pub(crate) friend_number: u32,
    /// A `Tox_Message_Type` value, unchecked.
    pub(crate) message_type: u32,
    pub(crate) message: Box<[u8]>,
}

/// `Tox_Event_Friend_Name`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Event_Friend_Name {
    pub(crate) friend_number: u32,
    pub(crate) name: Box<[u8]>,
}

/// `Tox_Event_Friend_Read_Receipt`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Event_Friend_Read_Receipt {
    pub(crate) friend_number: u32,
    pub(crate) message_id: u32,
}

/// `Tox_Event_Friend_Request`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Event_Friend_Request {
    pub(crate) public_key: [u8; 32],
    pub(crate) message: Box<[u8]>,
}

/// `Tox_Event_Friend_Status`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Event_Friend_Status {
    pub(crate) friend_number: u32,
    /// A `Tox_User_Status` value, unchecked.
    pub(crate) status: u32,
}

/// `Tox_Event_Friend_Status_Message`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Event_Friend_Status_Message {
    pub(crate) friend_number: u32,
    pub(crate) message: Box<[u8]>,
}

/// `Tox_Event_Friend_Typing`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Event_Friend_Typing {
    pub(crate) friend_number: u32,
    pub(crate) typing: bool,
}

/// `Tox_Event_Self_Connection_Status`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Event_Self_Connection_Status {
    /// A `Tox_Connection` value, unchecked.
    pub(crate) connection_status: u32,
}

/// `Tox_Events` (tox_events.h): one iteration's events, one list per type.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tox_Events {
    pub(crate) conference_connected: Vec<Tox_Event_Conference_Connected>,
    pub(crate) conference_invite: Vec<Tox_Event_Conference_Invite>,
    pub(crate) conference_message: Vec<Tox_Event_Conference_Message>,
    pub(crate) conference_peer_list_changed: Vec<Tox_Event_Conference_Peer_List_Changed>,
    pub(crate) conference_peer_name: Vec<Tox_Event_Conference_Peer_Name>,
    pub(crate) conference_title: Vec<Tox_Event_Conference_Title>,
    pub(crate) file_chunk_request: Vec<Tox_Event_File_Chunk_Request>,
    pub(crate) file_recv: Vec<Tox_Event_File_Recv>,
    pub(crate) file_recv_chunk: Vec<Tox_Event_File_Recv_Chunk>,
    pub(crate) file_recv_control: Vec<Tox_Event_File_Recv_Control>,
    pub(crate) friend_connection_status: Vec<Tox_Event_Friend_Connection_Status>,
    pub(crate) friend_lossless_packet: Vec<Tox_Event_Friend_Lossless_Packet>,
    pub(crate) friend_lossy_packet: Vec<Tox_Event_Friend_Lossy_Packet>,
    pub(crate) friend_message: Vec<Tox_Event_Friend_Message>,
    pub(crate) friend_name: Vec<Tox_Event_Friend_Name>,
    pub(crate) friend_read_receipt: Vec<Tox_Event_Friend_Read_Receipt>,
    pub(crate) friend_request: Vec<Tox_Event_Friend_Request>,
    pub(crate) friend_status: Vec<Tox_Event_Friend_Status>,
    pub(crate) friend_status_message: Vec<Tox_Event_Friend_Status_Message>,
    pub(crate) friend_typing: Vec<Tox_Event_Friend_Typing>,
    pub(crate) self_connection_status: Vec<Tox_Event_Self_Connection_Status>,
}

/// The order in which `tox_events_pack` (tox_events.c) writes the types.
pub const PACK_ORDER: [Tox_Event; 21] = [
    Tox_Event::CONFERENCE_CONNECTED,
    Tox_Event::CONFERENCE_INVITE,
    Tox_Event::CONFERENCE_MESSAGE,
    Tox_Event::CONFERENCE_PEER_LIST_CHANGED,
    Tox_Event::CONFERENCE_PEER_NAME,
    Tox_Event::CONFERENCE_TITLE,
    Tox_Event::FILE_CHUNK_REQUEST,
    Tox_Event::FILE_RECV_CHUNK,
    Tox_Event::FILE_RECV_CONTROL,
    Tox_Event::FILE_RECV,
    Tox_Event::FRIEND_CONNECTION_STATUS,
    Tox_Event::FRIEND_LOSSLESS_PACKET,
    Tox_Event::FRIEND_LOSSY_PACKET,
    Tox_Event::FRIEND_MESSAGE,
    Tox_Event::FRIEND_NAME,
    Tox_Event::FRIEND_READ_RECEIPT,
    Tox_Event::FRIEND_REQUEST,
    Tox_Event::FRIEND_STATUS_MESSAGE,
    Tox_Event::FRIEND_STATUS,
    Tox_Event::FRIEND_TYPING,
    Tox_Event::SELF_CONNECTION_STATUS,
];

/// The bytes an event owns: at most `u32::MAX` of them, since the C API reports lengths as
/// `uint32_t` (no event of a Tox node comes near).
fn owned(mut bytes: Vec<u8>) -> Box<[u8]> {
    bytes.truncate(u32::MAX as usize);
    bytes.into_boxed_slice()
}

/// `bytes.len()` as the C API's `uint32_t` (records hold at most `u32::MAX` bytes).
fn len32(bytes: &[u8]) -> u32 {
    u32::try_from(bytes.len()).unwrap_or(u32::MAX)
}

/// A `Tox_Events` holding `events`, each appended to its type's list in the given order:
/// what `tox_events_iterate` returns for one iteration.
pub(crate) fn from_events(events: Vec<Event>) -> Box<Tox_Events> {
    let mut out = Box::<Tox_Events>::default();
    for event in events {
        out.push(event);
    }
    out
}

impl Tox_Events {
    /// Appends one event of the node to its type's list.
    fn push(&mut self, event: Event) {
        match event {
            Event::SelfConnectionStatus { status } => {
                self.self_connection_status
                    .push(Tox_Event_Self_Connection_Status {
                        connection_status: status as u32,
                    })
            }
            Event::FriendRequest {
                public_key,
                message,
            } => self.friend_request.push(Tox_Event_Friend_Request {
                public_key,
                message: owned(message),
            }),
            Event::FriendConnectionStatus {
                friend_number,
                status,
            } => self
                .friend_connection_status
                .push(Tox_Event_Friend_Connection_Status {
                    friend_number,
                    connection_status: status as u32,
                }),
            Event::FriendLossyPacket {
                friend_number,
                data,
            } => self
                .friend_lossy_packet
                .push(Tox_Event_Friend_Lossy_Packet {
                    friend_number,
                    data: owned(data),
                }),
            Event::FriendLosslessPacket {
                friend_number,
                data,
            } => self
                .friend_lossless_packet
                .push(Tox_Event_Friend_Lossless_Packet {
                    friend_number,
                    data: owned(data),
                }),
            Event::FriendName {
                friend_number,
                name,
            } => self.friend_name.push(Tox_Event_Friend_Name {
                friend_number,
                name: owned(name),
            }),
            Event::FriendStatus {
                friend_number,
                status,
            } => self.friend_status.push(Tox_Event_Friend_Status {
                friend_number,
                status: status as u32,
            }),
            Event::FriendStatusMessage {
                friend_number,
                message,
            } => self
                .friend_status_message
                .push(Tox_Event_Friend_Status_Message {
                    friend_number,
                    message: owned(message),
                }),
            Event::FriendMessage {
                friend_number,
                kind,
                message,
            } => self.friend_message.push(Tox_Event_Friend_Message {
                friend_number,
                message_type: kind as u32,
                message: owned(message),
            }),
            Event::FriendReadReceipt {
                friend_number,
                message_id,
            } => self
                .friend_read_receipt
                .push(Tox_Event_Friend_Read_Receipt {
                    friend_number,
                    message_id,
                }),
            Event::FriendTyping {
                friend_number,
                typing,
            } => self.friend_typing.push(Tox_Event_Friend_Typing {
                friend_number,
                typing,
            }),
            Event::FileChunkRequest {
                friend_number,
                file_number,
                position,
                length,
            } => self.file_chunk_request.push(Tox_Event_File_Chunk_Request {
                friend_number,
                file_number,
                position,
                length,
            }),
            Event::FileRecv {
                friend_number,
                file_number,
                kind,
                file_size,
                filename,
            } => self.file_recv.push(Tox_Event_File_Recv {
                friend_number,
                file_number,
                kind,
                file_size,
                filename: owned(filename),
            }),
            Event::FileRecvChunk {
                friend_number,
                file_number,
                position,
                data,
            } => self.file_recv_chunk.push(Tox_Event_File_Recv_Chunk {
                friend_number,
                file_number,
                position,
                data: owned(data),
            }),
            Event::FileRecvControl {
                friend_number,
                file_number,
                control,
            } => self.file_recv_control.push(Tox_Event_File_Recv_Control {
                friend_number,
                file_number,
                control: control as u32,
            }),
        }
    }

    /// How many events of all types (`tox_events_pack`'s count).
    fn len(&self) -> usize {
        self.conference_connected.len()
            + self.conference_invite.len()
            + self.conference_message.len()
            + self.conference_peer_list_changed.len()
            + self.conference_peer_name.len()
            + self.conference_title.len()
            + self.file_chunk_request.len()
            + self.file_recv.len()
            + self.file_recv_chunk.len()
            + self.file_recv_control.len()
            + self.friend_connection_status.len()
            + self.friend_lossless_packet.len()
            + self.friend_lossy_packet.len()
            + self.friend_message.len()
            + self.friend_name.len()
            + self.friend_read_receipt.len()
            + self.friend_request.len()
            + self.friend_status.len()
            + self.friend_status_message.len()
            + self.friend_typing.len()
            + self.self_connection_status.len()
    }

    /// The msgpack bytes of these events (`tox_events_get_bytes`).
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut p = Packer::default();
        p.array(u32::try_from(self.len()).unwrap_or(u32::MAX));
        for kind in PACK_ORDER {
            match kind {
                Tox_Event::CONFERENCE_CONNECTED => p.records(&self.conference_connected),
                Tox_Event::CONFERENCE_INVITE => p.records(&self.conference_invite),
                Tox_Event::CONFERENCE_MESSAGE => p.records(&self.conference_message),
                Tox_Event::CONFERENCE_PEER_LIST_CHANGED => {
                    p.records(&self.conference_peer_list_changed)
                }
                Tox_Event::CONFERENCE_PEER_NAME => p.records(&self.conference_peer_name),
                Tox_Event::CONFERENCE_TITLE => p.records(&self.conference_title),
                Tox_Event::FILE_CHUNK_REQUEST => p.records(&self.file_chunk_request),
                Tox_Event::FILE_RECV_CHUNK => p.records(&self.file_recv_chunk),
                Tox_Event::FILE_RECV_CONTROL => p.records(&self.file_recv_control),
                Tox_Event::FILE_RECV => p.records(&self.file_recv),
                Tox_Event::FRIEND_CONNECTION_STATUS => p.records(&self.friend_connection_status),
                Tox_Event::FRIEND_LOSSLESS_PACKET => p.records(&self.friend_lossless_packet),
                Tox_Event::FRIEND_LOSSY_PACKET => p.records(&self.friend_lossy_packet),
                Tox_Event::FRIEND_MESSAGE => p.records(&self.friend_message),
                Tox_Event::FRIEND_NAME => p.records(&self.friend_name),
                Tox_Event::FRIEND_READ_RECEIPT => p.records(&self.friend_read_receipt),
                Tox_Event::FRIEND_REQUEST => p.records(&self.friend_request),
                Tox_Event::FRIEND_STATUS_MESSAGE => p.records(&self.friend_status_message),
                Tox_Event::FRIEND_STATUS => p.records(&self.friend_status),
                Tox_Event::FRIEND_TYPING => p.records(&self.friend_typing),
                Tox_Event::SELF_CONNECTION_STATUS => p.records(&self.self_connection_status),
            }
        }
        p.out
    }

    /// Events read from `bytes` (`tox_events_load`), or `None` when they are not what
    /// c-toxcore 0.2.18 accepts. Never allocates more than `bytes` justifies: a count or a
    /// length larger than the bytes left is refused before anything is reserved.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Option<Tox_Events> {
        let mut r = Reader { rest: bytes };
        let mut events = Tox_Events::default();
        // tox_events_unpack: bin_unpack_array refuses a count larger than the bytes left.
        let count = r.array()?;
        for _ in 0..count {
            // tox_event_unpack: [type, payload], the type read as a `uint8_t`.
            if r.array()? != 2 {
                return None;
            }
            let kind = Tox_Event::from_raw(u32::from(r.u8()?))?;
            match kind {
                Tox_Event::CONFERENCE_CONNECTED => r.record(&mut events.conference_connected)?,
                Tox_Event::CONFERENCE_INVITE => r.record(&mut events.conference_invite)?,
                Tox_Event::CONFERENCE_MESSAGE => r.record(&mut events.conference_message)?,
                Tox_Event::CONFERENCE_PEER_LIST_CHANGED => {
                    r.record(&mut events.conference_peer_list_changed)?
                }
                Tox_Event::CONFERENCE_PEER_NAME => r.record(&mut events.conference_peer_name)?,
                Tox_Event::CONFERENCE_TITLE => r.record(&mut events.conference_title)?,
                Tox_Event::FILE_CHUNK_REQUEST => r.record(&mut events.file_chunk_request)?,
                Tox_Event::FILE_RECV_CHUNK => r.record(&mut events.file_recv_chunk)?,
                Tox_Event::FILE_RECV_CONTROL => r.record(&mut events.file_recv_control)?,
                Tox_Event::FILE_RECV => r.record(&mut events.file_recv)?,
                Tox_Event::FRIEND_CONNECTION_STATUS => {
                    r.record(&mut events.friend_connection_status)?
                }
                Tox_Event::FRIEND_LOSSLESS_PACKET => {
                    r.record(&mut events.friend_lossless_packet)?
                }
                Tox_Event::FRIEND_LOSSY_PACKET => r.record(&mut events.friend_lossy_packet)?,
                Tox_Event::FRIEND_MESSAGE => r.record(&mut events.friend_message)?,
                Tox_Event::FRIEND_NAME => r.record(&mut events.friend_name)?,
                Tox_Event::FRIEND_READ_RECEIPT => r.record(&mut events.friend_read_receipt)?,
                Tox_Event::FRIEND_REQUEST => r.record(&mut events.friend_request)?,
                Tox_Event::FRIEND_STATUS_MESSAGE => r.record(&mut events.friend_status_message)?,
                Tox_Event::FRIEND_STATUS => r.record(&mut events.friend_status)?,
                Tox_Event::FRIEND_TYPING => r.record(&mut events.friend_typing)?,
                Tox_Event::SELF_CONNECTION_STATUS => {
                    r.record(&mut events.self_connection_status)?
                }
            }
        }
        // Like bin_unpack, nothing checks that the bytes end here.
        Some(events)
    }
}

// ---------------------------------------------------------------------------------------
// msgpack, as c-toxcore's bin_pack/bin_unpack over `cmp` write and read it
// ---------------------------------------------------------------------------------------

/// Writes msgpack in `cmp`'s shortest forms (`cmp_write_uinteger`, `cmp_write_array`,
/// `cmp_write_bin`).
#[derive(Default)]
struct Packer {
    out: Vec<u8>,
}

impl Packer {
    /// `cmp_write_array`: fixarray (≤ 15), array16, array32.
    fn array(&mut self, n: u32) {
        if n <= 15 {
            self.out.push(0x90 | n as u8);
        } else if let Ok(n) = u16::try_from(n) {
            self.out.push(0xdc);
            self.out.extend_from_slice(&n.to_be_bytes());
        } else {
            self.out.push(0xdd);
            self.out.extend_from_slice(&n.to_be_bytes());
        }
    }

    /// `cmp_write_uinteger`: positive fixint (≤ 0x7f), uint8, uint16, uint32, uint64.
    fn uint(&mut self, v: u64) {
        if v <= 0x7f {
            self.out.push(v as u8);
        } else if let Ok(v) = u8::try_from(v) {
            self.out.extend_from_slice(&[0xcc, v]);
        } else if let Ok(v) = u16::try_from(v) {
            self.out.push(0xcd);
            self.out.extend_from_slice(&v.to_be_bytes());
        } else if let Ok(v) = u32::try_from(v) {
            self.out.push(0xce);
            self.out.extend_from_slice(&v.to_be_bytes());
        } else {
            self.out.push(0xcf);
            self.out.extend_from_slice(&v.to_be_bytes());
        }
    }

    /// `cmp_write_bool`: 0xc3 true, 0xc2 false.
    fn bool(&mut self, b: bool) {
        self.out.push(if b { 0xc3 } else { 0xc2 });
    }

    /// `cmp_write_bin`: bin8, bin16 or bin32 header, then the bytes.
    fn bin(&mut self, data: &[u8]) {
        let n = len32(data);
        if let Ok(n) = u8::try_from(n) {
            self.out.extend_from_slice(&[0xc4, n]);
        } else if let Ok(n) = u16::try_from(n) {
            self.out.push(0xc5);
            self.out.extend_from_slice(&n.to_be_bytes());
        } else {
            self.out.push(0xc6);
            self.out.extend_from_slice(&n.to_be_bytes());
        }
        self.out.extend_from_slice(&data[..n as usize]);
    }

    /// Every record of one type, each as `[type, payload]`.
    fn records<R: Record>(&mut self, records: &[R]) {
        for record in records {
            self.array(2);
            self.uint(R::TYPE as u64);
            record.pack(self);
        }
    }
}

/// Reads msgpack as `bin_unpack.c` does with `cmp`'s readers; every read refuses what does
/// not fit in the bytes left.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.rest.len() {
            return None;
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Some(head)
    }

    fn byte(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn be<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    /// `cmp_read_array`: a fixarray, array16 or array32 header.
    fn array_header(&mut self) -> Option<u32> {
        match self.byte()? {
            m @ 0x90..=0x9f => Some(u32::from(m & 0x0f)),
            0xdc => Some(u32::from(u16::from_be_bytes(self.be()?))),
            0xdd => Some(u32::from_be_bytes(self.be()?)),
            _ => None,
        }
    }

    /// `bin_unpack_array`: an array header whose count is no larger than the bytes left.
    fn array(&mut self) -> Option<u32> {
        let n = self.array_header()?;
        (n as usize <= self.rest.len()).then_some(n)
    }

    /// `bin_unpack_array_fixed`: an array header of exactly `n` elements.
    fn array_fixed(&mut self, n: u32) -> Option<()> {
        (self.array_header()? == n).then_some(())
    }

    /// An unsigned integer of at most `bits` bits, in any form `cmp_read_uchar`,
    /// `cmp_read_ushort`, `cmp_read_uint` or `cmp_read_ulong` (for 8, 16, 32, 64) accepts:
    /// a positive fixint, an unsigned integer of at most `bits` bits, or a non-negative
    /// signed integer of at most `bits` bits.
    fn unsigned(&mut self, bits: u32) -> Option<u64> {
        let marker = self.byte()?;
        let (width, value) = match marker {
            0x00..=0x7f => (8, Some(u64::from(marker))),
            0xcc => (8, Some(u64::from(self.byte()?))),
            0xcd => (16, Some(u64::from(u16::from_be_bytes(self.be()?)))),
            0xce => (32, Some(u64::from(u32::from_be_bytes(self.be()?)))),
            0xcf => (64, Some(u64::from_be_bytes(self.be()?))),
            0xd0 => (8, u64::try_from(i8::from_be_bytes(self.be()?)).ok()),
            0xd1 => (16, u64::try_from(i16::from_be_bytes(self.be()?)).ok()),
            0xd2 => (32, u64::try_from(i32::from_be_bytes(self.be()?)).ok()),
            0xd3 => (64, u64::try_from(i64::from_be_bytes(self.be()?)).ok()),
            _ => return None,
        };
        if width > bits {
            return None;
        }
        value
    }

    /// `bin_unpack_u08`.
    fn u8(&mut self) -> Option<u8> {
        self.unsigned(8).map(|v| v as u8)
    }

    /// `bin_unpack_u16`.
    fn u16(&mut self) -> Option<u16> {
        self.unsigned(16).map(|v| v as u16)
    }

    /// `bin_unpack_u32`, and the `tox_unpack_*` enum readers (an unchecked `u32`).
    fn u32(&mut self) -> Option<u32> {
        self.unsigned(32).map(|v| v as u32)
    }

    /// `bin_unpack_u64`.
    fn u64(&mut self) -> Option<u64> {
        self.unsigned(64)
    }

    /// `bin_unpack_bool`: msgpack true or false only.
    fn bool(&mut self) -> Option<bool> {
        match self.byte()? {
            0xc2 => Some(false),
            0xc3 => Some(true),
            _ => None,
        }
    }

    /// `cmp_read_bin_size`: a bin8, bin16 or bin32 header.
    fn bin_size(&mut self) -> Option<u32> {
        match self.byte()? {
            0xc4 => Some(u32::from(self.byte()?)),
            0xc5 => Some(u32::from(u16::from_be_bytes(self.be()?))),
            0xc6 => Some(u32::from_be_bytes(self.be()?)),
            _ => None,
        }
    }

    /// `bin_unpack_bin`: bytes, copied only once the bytes left are known to hold them.
    fn bin(&mut self) -> Option<Box<[u8]>> {
        let n = self.bin_size()?;
        Some(self.take(n as usize)?.into())
    }

    /// `bin_unpack_bin_fixed`: exactly `N` bytes.
    fn bin_fixed<const N: usize>(&mut self) -> Option<[u8; N]> {
        if self.bin_size()? as usize != N {
            return None;
        }
        self.be()
    }

    /// One payload of type `R`, appended to `list`.
    fn record<R: Record>(&mut self, list: &mut Vec<R>) -> Option<()> {
        list.push(R::unpack(self)?);
        Some(())
    }
}

/// One event type's payload, as `tox_event_<type>_pack` / `_unpack` write and read it.
trait Record: Sized {
    /// Its `Tox_Event` value, the first element of `[type, payload]`.
    const TYPE: Tox_Event;
    /// Writes the payload.
    fn pack(&self, p: &mut Packer);
    /// Reads the payload.
    fn unpack(r: &mut Reader<'_>) -> Option<Self>;
}

/// Payload: `conference_number` (a bare integer, no array).
impl Record for Tox_Event_Conference_Connected {
    const TYPE: Tox_Event = Tox_Event::CONFERENCE_CONNECTED;
    fn pack(&self, p: &mut Packer) {
        p.uint(self.conference_number.into());
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        Some(Self {
            conference_number: r.u32()?,
        })
    }
}

/// Payload: `[friend_number, type, cookie: bin]`.
impl Record for Tox_Event_Conference_Invite {
    const TYPE: Tox_Event = Tox_Event::CONFERENCE_INVITE;
    fn pack(&self, p: &mut Packer) {
        p.array(3);
        p.uint(self.friend_number.into());
        p.uint(self.conference_type.into());
        p.bin(&self.cookie);
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.array_fixed(3)?;
        Some(Self {
            friend_number: r.u32()?,
            conference_type: r.u32()?,
            cookie: r.bin()?,
        })
    }
}

/// Payload: `[conference_number, peer_number, type, message: bin]`.
impl Record for Tox_Event_Conference_Message {
    const TYPE: Tox_Event = Tox_Event::CONFERENCE_MESSAGE;
    fn pack(&self, p: &mut Packer) {
        p.array(4);
        p.uint(self.conference_number.into());
        p.uint(self.peer_number.into());
        p.uint(self.message_type.into());
        p.bin(&self.message);
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.array_fixed(4)?;
        Some(Self {
            conference_number: r.u32()?,
            peer_number: r.u32()?,
            message_type: r.u32()?,
            message: r.bin()?,
        })
    }
}

/// Payload: `conference_number` (a bare integer).
impl Record for Tox_Event_Conference_Peer_List_Changed {
    const TYPE: Tox_Event = Tox_Event::CONFERENCE_PEER_LIST_CHANGED;
    fn pack(&self, p: &mut Packer) {
        p.uint(self.conference_number.into());
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        Some(Self {
            conference_number: r.u32()?,
        })
    }
}

/// Payload: `[conference_number, peer_number, name: bin]`.
impl Record for Tox_Event_Conference_Peer_Name {
    const TYPE: Tox_Event = Tox_Event::CONFERENCE_PEER_NAME;
    fn pack(&self, p: &mut Packer) {
        p.array(3);
        p.uint(self.conference_number.into());
        p.uint(self.peer_number.into());
        p.bin(&self.name);
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.array_fixed(3)?;
        Some(Self {
            conference_number: r.u32()?,
            peer_number: r.u32()?,
            name: r.bin()?,
        })
    }
}

/// Payload: `[conference_number, peer_number, title: bin]`.
impl Record for Tox_Event_Conference_Title {
    const TYPE: Tox_Event = Tox_Event::CONFERENCE_TITLE;
    fn pack(&self, p: &mut Packer) {
        p.array(3);
        p.uint(self.conference_number.into());
        p.uint(self.peer_number.into());
        p.bin(&self.title);
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.array_fixed(3)?;
        Some(Self {
            conference_number: r.u32()?,
            peer_number: r.u32()?,
            title: r.bin()?,
        })
    }
}

/// Payload: `[friend_number, file_number, position: u64, length: u16]`.
impl Record for Tox_Event_File_Chunk_Request {
    const TYPE: Tox_Event = Tox_Event::FILE_CHUNK_REQUEST;
    fn pack(&self, p: &mut Packer) {
        p.array(4);
        p.uint(self.friend_number.into());
        p.uint(self.file_number.into());
        p.uint(self.position);
        p.uint(self.length.into());
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.array_fixed(4)?;
        Some(Self {
            friend_number: r.u32()?,
            file_number: r.u32()?,
            position: r.u64()?,
            length: r.u16()?,
        })
    }
}

/// Payload: `[friend_number, file_number, kind, file_size: u64, filename: bin]`.
impl Record for Tox_Event_File_Recv {
    const TYPE: Tox_Event = Tox_Event::FILE_RECV;
    fn pack(&self, p: &mut Packer) {
        p.array(5);
        p.uint(self.friend_number.into());
        p.uint(self.file_number.into());
        p.uint(self.kind.into());
        p.uint(self.file_size);
        p.bin(&self.filename);
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.array_fixed(5)?;
        Some(Self {
            friend_number: r.u32()?,
            file_number: r.u32()?,
            kind: r.u32()?,
            file_size: r.u64()?,
            filename: r.bin()?,
        })
    }
}

/// Payload: `[friend_number, file_number, position: u64, data: bin]`.
impl Record for Tox_Event_File_Recv_Chunk {
    const TYPE: Tox_Event = Tox_Event::FILE_RECV_CHUNK;
    fn pack(&self, p: &mut Packer) {
        p.array(4);
        p.uint(self.friend_number.into());
        p.uint(self.file_number.into());
        p.uint(self.position);
        p.bin(&self.data);
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.array_fixed(4)?;
        Some(Self {
            friend_number: r.u32()?,
            file_number: r.u32()?,
            position: r.u64()?,
            data: r.bin()?,
        })
    }
}

/// Payload: `[friend_number, file_number, control]`.
impl Record for Tox_Event_File_Recv_Control {
    const TYPE: Tox_Event = Tox_Event::FILE_RECV_CONTROL;
    fn pack(&self, p: &mut Packer) {
        p.array(3);
        p.uint(self.friend_number.into());
        p.uint(self.file_number.into());
        p.uint(self.control.into());
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.array_fixed(3)?;
        Some(Self {
            friend_number: r.u32()?,
            file_number: r.u32()?,
            control: r.u32()?,
        })
    }
}

/// Payload: `[friend_number, connection_status]`.
impl Record for Tox_Event_Friend_Connection_Status {
    const TYPE: Tox_Event = Tox_Event::FRIEND_CONNECTION_STATUS;
    fn pack(&self, p: &mut Packer) {
        p.array(2);
        p.uint(self.friend_number.into());
        p.uint(self.connection_status.into());
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.array_fixed(2)?;
        Some(Self {
            friend_number: r.u32()?,
            connection_status: r.u32()?,
        })
    }
}

/// Payload: `[friend_number, data: bin]`.
impl Record for Tox_Event_Friend_Lossless_Packet {
    const TYPE: Tox_Event = Tox_Event::FRIEND_LOSSLESS_PACKET;
    fn pack(&self, p: &mut Packer) {
        p.array(2);
        p.uint(self.friend_number.into());
        p.bin(&self.data);
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.array_fixed(2)?;
        Some(Self {
            friend_number: r.u32()?,
            data: r.bin()?,
        })
    }
}

/// Payload: `[friend_number, data: bin]`.
impl Record for Tox_Event_Friend_Lossy_Packet {
    const TYPE: Tox_Event = Tox_Event::FRIEND_LOSSY_PACKET;
    fn pack(&self, p: &mut Packer) {
        p.array(2);
        p.uint(self.friend_number.into());
        p.bin(&self.data);
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.array_fixed(2)?;
        Some(Self {
            friend_number: r.u32()?,
            data: r.bin()?,
        })
    }
}

/// Payload: `[friend_number, type, message: bin]`.
impl Record for Tox_Event_Friend_Message {
    const TYPE: Tox_Event = Tox_Event::FRIEND_MESSAGE;
    fn pack(&self, p: &mut Packer) {
        p.array(3);
        p.uint(self.friend_number.into());
        p.uint(self.message_type.into());
        p.bin(&self.message);
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.array_fixed(3)?;
        Some(Self {
            friend_number: r.u32()?,
            message_type: r.u32()?,
            message: r.bin()?,
        })
    }
}

/// Payload: `[friend_number, name: bin]`.
impl Record for Tox_Event_Friend_Name {
    const TYPE: Tox_Event = Tox_Event::FRIEND_NAME;
    fn pack(&self, p: &mut Packer) {
        p.array(2);
        p.uint(self.friend_number.into());
        p.bin(&self.name);
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.array_fixed(2)?;
        Some(Self {
            friend_number: r.u32()?,
            name: r.bin()?,
        })
    }
}

/// Payload: `[friend_number, message_id]`.
impl Record for Tox_Event_Friend_Read_Receipt {
    const TYPE: Tox_Event = Tox_Event::FRIEND_READ_RECEIPT;
    fn pack(&self, p: &mut Packer) {
        p.array(2);
        p.uint(self.friend_number.into());
        p.uint(self.message_id.into());
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.array_fixed(2)?;
        Some(Self {
            friend_number: r.u32()?,
            message_id: r.u32()?,
        })
    }
}

/// Payload: `[public_key: bin of exactly 32, message: bin]`.
impl Record for Tox_Event_Friend_Request {
    const TYPE: Tox_Event = Tox_Event::FRIEND_REQUEST;
    fn pack(&self, p: &mut Packer) {
        p.array(2);
        p.bin(&self.public_key);
        p.bin(&self.message);
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.array_fixed(2)?;
        Some(Self {
            public_key: r.bin_fixed()?,
            message: r.bin()?,
        })
    }
}

/// Payload: `[friend_number, status]`.
impl Record for Tox_Event_Friend_Status {
    const TYPE: Tox_Event = Tox_Event::FRIEND_STATUS;
    fn pack(&self, p: &mut Packer) {
        p.array(2);
        p.uint(self.friend_number.into());
        p.uint(self.status.into());
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.array_fixed(2)?;
        Some(Self {
            friend_number: r.u32()?,
            status: r.u32()?,
        })
    }
}

/// Payload: `[friend_number, message: bin]`.
impl Record for Tox_Event_Friend_Status_Message {
    const TYPE: Tox_Event = Tox_Event::FRIEND_STATUS_MESSAGE;
    fn pack(&self, p: &mut Packer) {
        p.array(2);
        p.uint(self.friend_number.into());
        p.bin(&self.message);
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.array_fixed(2)?;
        Some(Self {
            friend_number: r.u32()?,
            message: r.bin()?,
        })
    }
}

/// Payload: `[friend_number, typing: bool]`.
impl Record for Tox_Event_Friend_Typing {
    const TYPE: Tox_Event = Tox_Event::FRIEND_TYPING;
    fn pack(&self, p: &mut Packer) {
        p.array(2);
        p.uint(self.friend_number.into());
        p.bool(self.typing);
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.array_fixed(2)?;
        Some(Self {
            friend_number: r.u32()?,
            typing: r.bool()?,
        })
    }
}

/// Payload: `connection_status` (a bare integer).
impl Record for Tox_Event_Self_Connection_Status {
    const TYPE: Tox_Event = Tox_Event::SELF_CONNECTION_STATUS;
    fn pack(&self, p: &mut Packer) {
        p.uint(self.connection_status.into());
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        Some(Self {
            connection_status: r.u32()?,
        })
    }
}

// ---------------------------------------------------------------------------------------
// The C API: lifecycle and serialisation
// ---------------------------------------------------------------------------------------

/// The events behind a pointer from C, or `None` for NULL.
///
/// # Safety
/// A non-NULL `events` must come from `tox_events_iterate` or `tox_events_load` and not
/// have been passed to `tox_events_free`.
pub(crate) unsafe fn events_ref<'a>(events: *const Tox_Events) -> Option<&'a Tox_Events> {
    // SAFETY: the caller's contract.
    unsafe { events.as_ref() }
}

/// `tox_events_init`: c-toxcore registers its own event collectors as the instance's
/// tox.h callbacks, which `tox_events_iterate` then needs. Here `tox_events_iterate` takes
/// the iteration's events from the node directly, so there is nothing to register and the
/// client's own callbacks stay as they were.
#[no_mangle]
pub unsafe extern "C" fn tox_events_init(tox: *mut Tox) {
    guard::call((), || {
        let _ = tox;
    })
}

/// `tox_events_iterate`: runs one iteration of `tox` (as `tox_iterate`) and returns its
/// events, to be freed with `tox_events_free`. As c-toxcore 0.2.18 (which allocates the
/// `Tox_Events` at the first event), an iteration without events returns NULL with `error`
/// OK. Collecting events cannot fail here, so `fail_hard` changes nothing; a NULL `tox`
/// (c-toxcore would crash) returns NULL with OK, and an internal failure NULL with MALLOC,
/// the only failure tox_events.h has.
#[no_mangle]
pub unsafe extern "C" fn tox_events_iterate(
    tox: *mut Tox,
    fail_hard: bool,
    error: *mut Tox_Err_Events_Iterate,
) -> *mut Tox_Events {
    let _ = fail_hard;
    let events = guard::call(None, || {
        // SAFETY: tox.h: a non-NULL `tox` comes from `tox_new` and is still alive.
        let Some(tox) = (unsafe { handle::tox_ref(tox) }) else {
            return Some(std::ptr::null_mut());
        };
        let events = tox.iterate_events();
        if events.is_empty() {
            return Some(std::ptr::null_mut());
        }
        Some(Box::into_raw(from_events(events)))
    });
    match events {
        Some(events) => {
            guard::set(error, Tox_Err_Events_Iterate::OK);
            events
        }
        None => guard::fail(error, Tox_Err_Events_Iterate::MALLOC, std::ptr::null_mut()),
    }
}

/// `tox_events_free`: frees events from `tox_events_iterate` or `tox_events_load`, and
/// with them every event pointer and byte pointer read from them. NULL is ignored (as
/// c-toxcore).
#[no_mangle]
pub unsafe extern "C" fn tox_events_free(events: *mut Tox_Events) {
    guard::call((), || {
        if !events.is_null() {
            // SAFETY: tox_events.h: non-NULL events come from `Box::into_raw` in
            // `tox_events_iterate` or `tox_events_load` and are freed once.
            drop(unsafe { Box::from_raw(events) });
        }
    })
}

/// `tox_events_bytes_size`: the length of `tox_events_get_bytes`'s output. NULL counts as
/// no events (one byte, the empty msgpack array), as in c-toxcore, whose per-type sizes
/// are 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn tox_events_bytes_size(events: *const Tox_Events) -> u32 {
    guard::call(0, || {
        // SAFETY: see `events_ref`; tox_events.h's contract for `events`.
        let bytes = match unsafe { events_ref(events) } {
            Some(events) => events.to_bytes(),
            None => Tox_Events::default().to_bytes(),
        };
        len32(&bytes)
    })
}

/// `tox_events_get_bytes`: writes the events' msgpack serialisation, c-toxcore 0.2.18's
/// format byte for byte (see the module's documentation), to `bytes`, which must hold
/// `tox_events_bytes_size(events)` bytes. NULL events write the empty array; a NULL
/// `bytes` writes nothing (c-toxcore then only counts).
#[no_mangle]
pub unsafe extern "C" fn tox_events_get_bytes(events: *const Tox_Events, bytes: *mut u8) {
    guard::call((), || {
        // SAFETY: see `events_ref`; tox_events.h's contract for `events`.
        let out = match unsafe { events_ref(events) } {
            Some(events) => events.to_bytes(),
            None => Tox_Events::default().to_bytes(),
        };
        let out = &out[..len32(&out) as usize];
        // SAFETY: tox_events.h: `bytes` holds `tox_events_bytes_size(events)` bytes, which
        // is `out.len()`; NULL writes nothing.
        unsafe { guard::copy_out(out, bytes) };
    })
}

/// `tox_events_load`: events read from `bytes_size` bytes of `tox_events_get_bytes`'s
/// format, or NULL when c-toxcore 0.2.18 would refuse them (a wrong type, a short read, a
/// count or length the bytes cannot hold, an unknown event type). Accepts what
/// c-toxcore's reader accepts: integers in any form that fits, unchecked enum values,
/// trailing bytes. NULL `bytes` returns NULL (c-toxcore asserts).
#[no_mangle]
pub unsafe extern "C" fn tox_events_load(bytes: *const u8, bytes_size: u32) -> *mut Tox_Events {
    guard::call(std::ptr::null_mut(), || {
        if bytes.is_null() {
            return std::ptr::null_mut();
        }
        // SAFETY: tox_events.h: `bytes` points to `bytes_size` readable bytes.
        let Some(bytes) = (unsafe { guard::bytes(bytes, bytes_size as usize) }) else {
            return std::ptr::null_mut();
        };
        match Tox_Events::from_bytes(bytes) {
            Some(events) => Box::into_raw(Box::new(events)),
            None => std::ptr::null_mut(),
        }
    })
}

/// `tox_events_equal`: whether two events serialise to the same bytes, which is how
/// c-toxcore 0.2.18 compares them (so NULL equals an empty `Tox_Events`, and the order
/// between types does not count).
#[no_mangle]
pub unsafe extern "C" fn tox_events_equal(a: *const Tox_Events, b: *const Tox_Events) -> bool {
    guard::call(false, || {
        let empty = Tox_Events::default();
        // SAFETY: see `events_ref`; tox_events.h's contract for `a` and `b`.
        let (a, b) = unsafe { (events_ref(a), events_ref(b)) };
        a.unwrap_or(&empty).to_bytes() == b.unwrap_or(&empty).to_bytes()
    })
}

// ---------------------------------------------------------------------------------------
// The C API: per-type counts and entries
// ---------------------------------------------------------------------------------------

/// Defines `tox_events_get_<type>_size` and `tox_events_get_<type>` over the list `field`.
macro_rules! accessors {
    ($field:ident: $record:ident, $size:ident, $get:ident) => {
        #[doc = concat!(
                    "`", stringify!($size), "`: how many `", stringify!($record),
                    "` events `events` holds; 0 for NULL events, as in c-toxcore."
                )]
        #[no_mangle]
        pub unsafe extern "C" fn $size(events: *const Tox_Events) -> u32 {
            guard::call(0, || {
                // SAFETY: see `events_ref`; tox_events.h's contract for `events`.
                unsafe { events_ref(events) }
                    .map_or(0, |e| u32::try_from(e.$field.len()).unwrap_or(u32::MAX))
            })
        }

        #[doc = concat!(
                    "`", stringify!($get), "`: the `index`-th `", stringify!($record),
                    "` event, valid until `tox_events_free`. NULL events or an index out of range ",
                    "return NULL (c-toxcore asserts instead)."
                )]
        #[no_mangle]
        pub unsafe extern "C" fn $get(events: *const Tox_Events, index: u32) -> *const $record {
            guard::call(std::ptr::null(), || {
                // SAFETY: see `events_ref`; tox_events.h's contract for `events`.
                unsafe { events_ref(events) }
                    .and_then(|e| e.$field.get(index as usize))
                    .map_or(std::ptr::null(), |record| record as *const $record)
            })
        }
    };
}

accessors!(conference_connected: Tox_Event_Conference_Connected,
    tox_events_get_conference_connected_size, tox_events_get_conference_connected);
accessors!(conference_invite: Tox_Event_Conference_Invite,
    tox_events_get_conference_invite_size, tox_events_get_conference_invite);
accessors!(conference_message: Tox_Event_Conference_Message,
    tox_events_get_conference_message_size, tox_events_get_conference_message);
accessors!(conference_peer_list_changed: Tox_Event_Conference_Peer_List_Changed,
    tox_events_get_conference_peer_list_changed_size, tox_events_get_conference_peer_list_changed);
accessors!(conference_peer_name: Tox_Event_Conference_Peer_Name,
    tox_events_get_conference_peer_name_size, tox_events_get_conference_peer_name);
accessors!(conference_title: Tox_Event_Conference_Title,
    tox_events_get_conference_title_size, tox_events_get_conference_title);
accessors!(file_chunk_request: Tox_Event_File_Chunk_Request,
    tox_events_get_file_chunk_request_size, tox_events_get_file_chunk_request);
accessors!(file_recv: Tox_Event_File_Recv,
    tox_events_get_file_recv_size, tox_events_get_file_recv);
accessors!(file_recv_chunk: Tox_Event_File_Recv_Chunk,
    tox_events_get_file_recv_chunk_size, tox_events_get_file_recv_chunk);
accessors!(file_recv_control: Tox_Event_File_Recv_Control,
    tox_events_get_file_recv_control_size, tox_events_get_file_recv_control);
accessors!(friend_connection_status: Tox_Event_Friend_Connection_Status,
    tox_events_get_friend_connection_status_size, tox_events_get_friend_connection_status);
accessors!(friend_lossless_packet: Tox_Event_Friend_Lossless_Packet,
    tox_events_get_friend_lossless_packet_size, tox_events_get_friend_lossless_packet);
accessors!(friend_lossy_packet: Tox_Event_Friend_Lossy_Packet,
    tox_events_get_friend_lossy_packet_size, tox_events_get_friend_lossy_packet);
accessors!(friend_message: Tox_Event_Friend_Message,
    tox_events_get_friend_message_size, tox_events_get_friend_message);
accessors!(friend_name: Tox_Event_Friend_Name,
    tox_events_get_friend_name_size, tox_events_get_friend_name);
accessors!(friend_read_receipt: Tox_Event_Friend_Read_Receipt,
    tox_events_get_friend_read_receipt_size, tox_events_get_friend_read_receipt);
accessors!(friend_request: Tox_Event_Friend_Request,
    tox_events_get_friend_request_size, tox_events_get_friend_request);
accessors!(friend_status: Tox_Event_Friend_Status,
    tox_events_get_friend_status_size, tox_events_get_friend_status);
accessors!(friend_status_message: Tox_Event_Friend_Status_Message,
    tox_events_get_friend_status_message_size, tox_events_get_friend_status_message);
accessors!(friend_typing: Tox_Event_Friend_Typing,
    tox_events_get_friend_typing_size, tox_events_get_friend_typing);
accessors!(self_connection_status: Tox_Event_Self_Connection_Status,
    tox_events_get_self_connection_status_size, tox_events_get_self_connection_status);

// ---------------------------------------------------------------------------------------
// The C API: the events' fields
// ---------------------------------------------------------------------------------------

/// Defines a getter `name` of a `record`: `|e| body` reads the field of a non-NULL record; a
/// NULL record gives `null` (c-toxcore asserts a non-NULL event). The caller's doc comment
/// says what the field is.
macro_rules! getter {
    ($(#[$doc:meta])* $name:ident: $record:ident -> $ret:ty = |$e:ident| $body:expr, null: $null:expr;) => {
        $(#[$doc])*
        ///
        /// c-toxcore asserts a non-NULL event; a NULL one gives 0, false or NULL here.
        #[no_mangle]
        pub unsafe extern "C" fn $name(event: *const $record) -> $ret {
            guard::call($null, || {
                // SAFETY: tox_events.h: a non-NULL event comes from a `tox_events_get_*`
                // accessor (or a dispatch callback) of events not yet freed.
                match unsafe { event.as_ref() } {
                    Some($e) => $body,
                    None => $null,
                }
            })
        }
    };
}

getter! {
    /// `tox_event_conference_connected_get_conference_number`: the conference joined.
    tox_event_conference_connected_get_conference_number: Tox_Event_Conference_Connected -> u32
        = |e| e.conference_number, null: 0;
}
getter! {
    /// `tox_event_conference_invite_get_cookie`: the invitation's cookie, for
    /// `tox_conference_join`; valid until `tox_events_free`.
    tox_event_conference_invite_get_cookie: Tox_Event_Conference_Invite -> *const u8
        = |e| e.cookie.as_ptr(), null: std::ptr::null();
}
getter! {
    /// `tox_event_conference_invite_get_cookie_length`: the cookie's length.
    tox_event_conference_invite_get_cookie_length: Tox_Event_Conference_Invite -> u32
        = |e| len32(&e.cookie), null: 0;
}
getter! {
    /// `tox_event_conference_invite_get_type`: the `Tox_Conference_Type` value, as stored
    /// (c-toxcore does not check loaded values).
    tox_event_conference_invite_get_type: Tox_Event_Conference_Invite -> crate::types::Tox_Conference_Type_Value
        = |e| e.conference_type, null: 0;
}
getter! {
    /// `tox_event_conference_invite_get_friend_number`: the inviting friend.
    tox_event_conference_invite_get_friend_number: Tox_Event_Conference_Invite -> u32
        = |e| e.friend_number, null: 0;
}
getter! {
    /// `tox_event_conference_message_get_message`: the text; valid until `tox_events_free`.
    tox_event_conference_message_get_message: Tox_Event_Conference_Message -> *const u8
        = |e| e.message.as_ptr(), null: std::ptr::null();
}
getter! {
    /// `tox_event_conference_message_get_message_length`: the text's length.
    tox_event_conference_message_get_message_length: Tox_Event_Conference_Message -> u32
        = |e| len32(&e.message), null: 0;
}
getter! {
    /// `tox_event_conference_message_get_type`: the `Tox_Message_Type` value, as stored.
    tox_event_conference_message_get_type: Tox_Event_Conference_Message -> crate::types::Tox_Message_Type_Value
        = |e| e.message_type, null: 0;
}
getter! {
    /// `tox_event_conference_message_get_conference_number`: the conference.
    tox_event_conference_message_get_conference_number: Tox_Event_Conference_Message -> u32
        = |e| e.conference_number, null: 0;
}
getter! {
    /// `tox_event_conference_message_get_peer_number`: the peer who spoke.
    tox_event_conference_message_get_peer_number: Tox_Event_Conference_Message -> u32
        = |e| e.peer_number, null: 0;
}
getter! {
    /// `tox_event_conference_peer_list_changed_get_conference_number`: the conference.
    tox_event_conference_peer_list_changed_get_conference_number:
        Tox_Event_Conference_Peer_List_Changed -> u32 = |e| e.conference_number, null: 0;
}
getter! {
    /// `tox_event_conference_peer_name_get_name`: the new name; valid until
    /// `tox_events_free`.
    tox_event_conference_peer_name_get_name: Tox_Event_Conference_Peer_Name -> *const u8
        = |e| e.name.as_ptr(), null: std::ptr::null();
}
getter! {
    /// `tox_event_conference_peer_name_get_name_length`: the name's length.
    tox_event_conference_peer_name_get_name_length: Tox_Event_Conference_Peer_Name -> u32
        = |e| len32(&e.name), null: 0;
}
getter! {
    /// `tox_event_conference_peer_name_get_conference_number`: the conference.
    tox_event_conference_peer_name_get_conference_number: Tox_Event_Conference_Peer_Name -> u32
        = |e| e.conference_number, null: 0;
}
getter! {
    /// `tox_event_conference_peer_name_get_peer_number`: the renamed peer.
    tox_event_conference_peer_name_get_peer_number: Tox_Event_Conference_Peer_Name -> u32
        = |e| e.peer_number, null: 0;
}
getter! {
    /// `tox_event_conference_title_get_title`: the new title; valid until `tox_events_free`.
    tox_event_conference_title_get_title: Tox_Event_Conference_Title -> *const u8
        = |e| e.title.as_ptr(), null: std::ptr::null();
}
getter! {
    /// `tox_event_conference_title_get_title_length`: the title's length.
    tox_event_conference_title_get_title_length: Tox_Event_Conference_Title -> u32
        = |e| len32(&e.title), null: 0;
}
getter! {
    /// `tox_event_conference_title_get_conference_number`: the conference.
    tox_event_conference_title_get_conference_number: Tox_Event_Conference_Title -> u32
        = |e| e.conference_number, null: 0;
}
getter! {
    /// `tox_event_conference_title_get_peer_number`: the peer who set it.
    tox_event_conference_title_get_peer_number: Tox_Event_Conference_Title -> u32
        = |e| e.peer_number, null: 0;
}
getter! {
    /// `tox_event_file_chunk_request_get_length`: how many bytes to send (0: the file is
    /// done).
    tox_event_file_chunk_request_get_length: Tox_Event_File_Chunk_Request -> u16
        = |e| e.length, null: 0;
}
getter! {
    /// `tox_event_file_chunk_request_get_file_number`: the transfer.
    tox_event_file_chunk_request_get_file_number: Tox_Event_File_Chunk_Request -> u32
        = |e| e.file_number, null: 0;
}
getter! {
    /// `tox_event_file_chunk_request_get_friend_number`: the receiving friend.
    tox_event_file_chunk_request_get_friend_number: Tox_Event_File_Chunk_Request -> u32
        = |e| e.friend_number, null: 0;
}
getter! {
    /// `tox_event_file_chunk_request_get_position`: where the requested bytes start.
    tox_event_file_chunk_request_get_position: Tox_Event_File_Chunk_Request -> u64
        = |e| e.position, null: 0;
}
getter! {
    /// `tox_event_file_recv_get_filename`: the offered file's name; valid until
    /// `tox_events_free`.
    tox_event_file_recv_get_filename: Tox_Event_File_Recv -> *const u8
        = |e| e.filename.as_ptr(), null: std::ptr::null();
}
getter! {
    /// `tox_event_file_recv_get_filename_length`: the name's length.
    tox_event_file_recv_get_filename_length: Tox_Event_File_Recv -> u32
        = |e| len32(&e.filename), null: 0;
}
getter! {
    /// `tox_event_file_recv_get_file_number`: the transfer.
    tox_event_file_recv_get_file_number: Tox_Event_File_Recv -> u32
        = |e| e.file_number, null: 0;
}
getter! {
    /// `tox_event_file_recv_get_file_size`: the file's size (`UINT64_MAX`: unknown).
    tox_event_file_recv_get_file_size: Tox_Event_File_Recv -> u64
        = |e| e.file_size, null: 0;
}
getter! {
    /// `tox_event_file_recv_get_friend_number`: the offering friend.
    tox_event_file_recv_get_friend_number: Tox_Event_File_Recv -> u32
        = |e| e.friend_number, null: 0;
}
getter! {
    /// `tox_event_file_recv_get_kind`: `TOX_FILE_KIND_DATA`, `TOX_FILE_KIND_AVATAR` or a
    /// client's own kind.
    tox_event_file_recv_get_kind: Tox_Event_File_Recv -> u32 = |e| e.kind, null: 0;
}
getter! {
    /// `tox_event_file_recv_chunk_get_data`: the chunk's bytes; valid until
    /// `tox_events_free`.
    tox_event_file_recv_chunk_get_data: Tox_Event_File_Recv_Chunk -> *const u8
        = |e| e.data.as_ptr(), null: std::ptr::null();
}
getter! {
    /// `tox_event_file_recv_chunk_get_length`: the chunk's length (0: the file is complete).
    tox_event_file_recv_chunk_get_length: Tox_Event_File_Recv_Chunk -> u32
        = |e| len32(&e.data), null: 0;
}
getter! {
    /// `tox_event_file_recv_chunk_get_file_number`: the transfer.
    tox_event_file_recv_chunk_get_file_number: Tox_Event_File_Recv_Chunk -> u32
        = |e| e.file_number, null: 0;
}
getter! {
    /// `tox_event_file_recv_chunk_get_friend_number`: the sending friend.
    tox_event_file_recv_chunk_get_friend_number: Tox_Event_File_Recv_Chunk -> u32
        = |e| e.friend_number, null: 0;
}
getter! {
    /// `tox_event_file_recv_chunk_get_position`: where the chunk goes in the file.
    tox_event_file_recv_chunk_get_position: Tox_Event_File_Recv_Chunk -> u64
        = |e| e.position, null: 0;
}
getter! {
    /// `tox_event_file_recv_control_get_control`: the `Tox_File_Control` value, as stored.
    tox_event_file_recv_control_get_control: Tox_Event_File_Recv_Control -> crate::types::Tox_File_Control_Value
        = |e| e.control, null: 0;
}
getter! {
    /// `tox_event_file_recv_control_get_file_number`: the transfer.
    tox_event_file_recv_control_get_file_number: Tox_Event_File_Recv_Control -> u32
        = |e| e.file_number, null: 0;
}
getter! {
    /// `tox_event_file_recv_control_get_friend_number`: the friend who sent the control.
    tox_event_file_recv_control_get_friend_number: Tox_Event_File_Recv_Control -> u32
        = |e| e.friend_number, null: 0;
}
getter! {
    /// `tox_event_friend_connection_status_get_connection_status`: the `Tox_Connection`
    /// value, as stored.
    tox_event_friend_connection_status_get_connection_status:
        Tox_Event_Friend_Connection_Status -> crate::types::Tox_Connection_Value = |e| e.connection_status, null: 0;
}
getter! {
    /// `tox_event_friend_connection_status_get_friend_number`: the friend.
    tox_event_friend_connection_status_get_friend_number:
        Tox_Event_Friend_Connection_Status -> u32 = |e| e.friend_number, null: 0;
}
getter! {
    /// `tox_event_friend_lossless_packet_get_data`: the packet, id byte first; valid until
    /// `tox_events_free`.
    tox_event_friend_lossless_packet_get_data: Tox_Event_Friend_Lossless_Packet -> *const u8
        = |e| e.data.as_ptr(), null: std::ptr::null();
}
getter! {
    /// `tox_event_friend_lossless_packet_get_data_length`: the packet's length.
    tox_event_friend_lossless_packet_get_data_length: Tox_Event_Friend_Lossless_Packet -> u32
        = |e| len32(&e.data), null: 0;
}
getter! {
    /// `tox_event_friend_lossless_packet_get_friend_number`: the sender.
    tox_event_friend_lossless_packet_get_friend_number: Tox_Event_Friend_Lossless_Packet -> u32
        = |e| e.friend_number, null: 0;
}
getter! {
    /// `tox_event_friend_lossy_packet_get_data`: the packet, id byte first; valid until
    /// `tox_events_free`.
    tox_event_friend_lossy_packet_get_data: Tox_Event_Friend_Lossy_Packet -> *const u8
        = |e| e.data.as_ptr(), null: std::ptr::null();
}
getter! {
    /// `tox_event_friend_lossy_packet_get_data_length`: the packet's length.
    tox_event_friend_lossy_packet_get_data_length: Tox_Event_Friend_Lossy_Packet -> u32
        = |e| len32(&e.data), null: 0;
}
getter! {
    /// `tox_event_friend_lossy_packet_get_friend_number`: the sender.
    tox_event_friend_lossy_packet_get_friend_number: Tox_Event_Friend_Lossy_Packet -> u32
        = |e| e.friend_number, null: 0;
}
getter! {
    /// `tox_event_friend_message_get_friend_number`: the sender.
    tox_event_friend_message_get_friend_number: Tox_Event_Friend_Message -> u32
        = |e| e.friend_number, null: 0;
}
getter! {
    /// `tox_event_friend_message_get_type`: the `Tox_Message_Type` value, as stored.
    tox_event_friend_message_get_type: Tox_Event_Friend_Message -> crate::types::Tox_Message_Type_Value
        = |e| e.message_type, null: 0;
}
getter! {
    /// `tox_event_friend_message_get_message_length`: the text's length.
    tox_event_friend_message_get_message_length: Tox_Event_Friend_Message -> u32
        = |e| len32(&e.message), null: 0;
}
getter! {
    /// `tox_event_friend_message_get_message`: the text (not NUL-terminated, as in
    /// c-toxcore); valid until `tox_events_free`.
    tox_event_friend_message_get_message: Tox_Event_Friend_Message -> *const u8
        = |e| e.message.as_ptr(), null: std::ptr::null();
}
getter! {
    /// `tox_event_friend_name_get_name`: the friend's new name; valid until
    /// `tox_events_free`.
    tox_event_friend_name_get_name: Tox_Event_Friend_Name -> *const u8
        = |e| e.name.as_ptr(), null: std::ptr::null();
}
getter! {
    /// `tox_event_friend_name_get_name_length`: the name's length.
    tox_event_friend_name_get_name_length: Tox_Event_Friend_Name -> u32
        = |e| len32(&e.name), null: 0;
}
getter! {
    /// `tox_event_friend_name_get_friend_number`: the friend.
    tox_event_friend_name_get_friend_number: Tox_Event_Friend_Name -> u32
        = |e| e.friend_number, null: 0;
}
getter! {
    /// `tox_event_friend_read_receipt_get_friend_number`: the friend who received it.
    tox_event_friend_read_receipt_get_friend_number: Tox_Event_Friend_Read_Receipt -> u32
        = |e| e.friend_number, null: 0;
}
getter! {
    /// `tox_event_friend_read_receipt_get_message_id`: the id `tox_friend_send_message`
    /// returned.
    tox_event_friend_read_receipt_get_message_id: Tox_Event_Friend_Read_Receipt -> u32
        = |e| e.message_id, null: 0;
}
getter! {
    /// `tox_event_friend_request_get_message`: the request's message; valid until
    /// `tox_events_free`.
    tox_event_friend_request_get_message: Tox_Event_Friend_Request -> *const u8
        = |e| e.message.as_ptr(), null: std::ptr::null();
}
getter! {
    /// `tox_event_friend_request_get_public_key`: the requester's long-term key,
    /// `TOX_PUBLIC_KEY_SIZE` bytes; valid until `tox_events_free`.
    tox_event_friend_request_get_public_key: Tox_Event_Friend_Request -> *const u8
        = |e| e.public_key.as_ptr(), null: std::ptr::null();
}
getter! {
    /// `tox_event_friend_request_get_message_length`: the message's length.
    tox_event_friend_request_get_message_length: Tox_Event_Friend_Request -> u32
        = |e| len32(&e.message), null: 0;
}
getter! {
    /// `tox_event_friend_status_get_status`: the `Tox_User_Status` value, as stored.
    tox_event_friend_status_get_status: Tox_Event_Friend_Status -> crate::types::Tox_User_Status_Value
        = |e| e.status, null: 0;
}
getter! {
    /// `tox_event_friend_status_get_friend_number`: the friend.
    tox_event_friend_status_get_friend_number: Tox_Event_Friend_Status -> u32
        = |e| e.friend_number, null: 0;
}
getter! {
    /// `tox_event_friend_status_message_get_message`: the new status message; valid until
    /// `tox_events_free`.
    tox_event_friend_status_message_get_message: Tox_Event_Friend_Status_Message -> *const u8
        = |e| e.message.as_ptr(), null: std::ptr::null();
}
getter! {
    /// `tox_event_friend_status_message_get_message_length`: its length.
    tox_event_friend_status_message_get_message_length: Tox_Event_Friend_Status_Message -> u32
        = |e| len32(&e.message), null: 0;
}
getter! {
    /// `tox_event_friend_status_message_get_friend_number`: the friend.
    tox_event_friend_status_message_get_friend_number: Tox_Event_Friend_Status_Message -> u32
        = |e| e.friend_number, null: 0;
}
getter! {
    /// `tox_event_friend_typing_get_typing`: whether the friend is typing now.
    tox_event_friend_typing_get_typing: Tox_Event_Friend_Typing -> bool
        = |e| e.typing, null: false;
}
getter! {
    /// `tox_event_friend_typing_get_friend_number`: the friend.
    tox_event_friend_typing_get_friend_number: Tox_Event_Friend_Typing -> u32
        = |e| e.friend_number, null: 0;
}
getter! {
    /// `tox_event_self_connection_status_get_connection_status`: the `Tox_Connection`
    /// value, as stored.
    tox_event_self_connection_status_get_connection_status:
        Tox_Event_Self_Connection_Status -> crate::types::Tox_Connection_Value = |e| e.connection_status, null: 0;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Tox_Connection, Tox_File_Control, Tox_Message_Type, Tox_User_Status};

    /// Events c-toxcore 0.2.18 (Debian's libtoxcore.so.2) produced: two instances on
    /// loopback, one befriending the other, then a message, an action, a typing
    /// notification, custom packets, a file offer and a status change; each line is what
    /// `tox_events_get_bytes` returned for one `tox_events_iterate`.
    const C_TOXCORE_ITERATIONS: [&str; 6] = [
        "91920001",
        "91920192c420a7fbbb3b2e0b5edf6dad446df75b9d10feefdf53d01f012fa117225dd3eb3146c40661\
         6464206d65",
        "95920292000292059200c405616c69636592079200c40868692074686572659206920000920a9200c2",
        "9492059200c40092079200c4009206920000920a9200c2",
        "97920c9500ce000100000003c405662e74787492049200c404aa01020392039200c403c80908920893\
         0000c40968656c6c6f20626f629208930001c40577617665739206920001920a9200c3",
        "9292099200019209920002",
    ];

    /// One event of every kind the node produces, in the order they "happened".
    fn every_event() -> Vec<Event> {
        vec![
            Event::FriendMessage {
                friend_number: 1,
                kind: Tox_Message_Type::ACTION,
                message: b"waves".to_vec(),
            },
            Event::SelfConnectionStatus {
                status: Tox_Connection::UDP,
            },
            Event::FriendRequest {
                public_key: [7; 32],
                message: b"let me in".to_vec(),
            },
            Event::FriendConnectionStatus {
                friend_number: 2,
                status: Tox_Connection::TCP,
            },
            Event::FriendLossyPacket {
                friend_number: 3,
                data: vec![200, 1, 2],
            },
            Event::FriendLosslessPacket {
                friend_number: 4,
                data: vec![170; 300],
            },
            Event::FriendName {
                friend_number: 5,
                name: b"alice".to_vec(),
            },
            Event::FriendStatus {
                friend_number: 6,
                status: Tox_User_Status::BUSY,
            },
            Event::FriendStatusMessage {
                friend_number: 7,
                message: Vec::new(),
            },
            Event::FriendMessage {
                friend_number: 8,
                kind: Tox_Message_Type::NORMAL,
                message: b"hello".to_vec(),
            },
            Event::FriendReadReceipt {
                friend_number: 9,
                message_id: 0xdead_beef,
            },
            Event::FriendTyping {
                friend_number: 10,
                typing: true,
            },
            Event::FileChunkRequest {
                friend_number: 11,
                file_number: 3,
                position: 1 << 40,
                length: 1371,
            },
            Event::FileRecv {
                friend_number: 12,
                file_number: 65536,
                kind: 1,
                file_size: u64::MAX,
                filename: b"avatar.png".to_vec(),
            },
            Event::FileRecvChunk {
                friend_number: 13,
                file_number: 65537,
                position: 300,
                data: vec![1, 2, 3],
            },
            Event::FileRecvControl {
                friend_number: 14,
                file_number: 65538,
                control: Tox_File_Control::CANCEL,
            },
        ]
    }

    /// [`every_event`]'s serialisation, checked against Debian's libtoxcore.so.2: its
    /// `tox_events_load` accepts these bytes, its getters return the values above, and its
    /// `tox_events_get_bytes` gives these bytes back.
    const EVERY_EVENT_BYTES: &str = "\
        dc0010\
        920b94 0b 03 cf0000010000000000 cd055b\
        920d94 0d ce00010001 cd012c c403010203\
        920e93 0e ce00010002 02\
        920c95 0c ce00010000 01 cfffffffffffffffff c40a6176617461722e706e67\
        920292 02 01\
        920492 04 c5012c" /* 300 × aa follow */;

    fn from_hex(hex: &str) -> Vec<u8> {
        let clean: String = hex.chars().filter(|c| c.is_ascii_hexdigit()).collect();
        hex::decode(clean).expect("test hex")
    }

    fn load(bytes: &[u8]) -> *mut Tox_Events {
        let size = u32::try_from(bytes.len()).expect("small test input");
        // SAFETY: `bytes` is a live slice of `size` bytes.
        unsafe { tox_events_load(bytes.as_ptr(), size) }
    }

    fn save(events: *const Tox_Events) -> Vec<u8> {
        // SAFETY: `events` is NULL or from `Box::into_raw` and alive; the buffer holds
        // `tox_events_bytes_size` bytes.
        unsafe {
            let mut out = vec![0u8; tox_events_bytes_size(events) as usize];
            tox_events_get_bytes(events, out.as_mut_ptr());
            out
        }
    }

    /// The `len` bytes at `ptr`, as a test reads a getter's result.
    fn slice<'a>(ptr: *const u8, len: u32) -> &'a [u8] {
        assert!(!ptr.is_null());
        // SAFETY: the getters return pointers to `len` bytes owned by events the test
        // keeps alive.
        unsafe { std::slice::from_raw_parts(ptr, len as usize) }
    }

    #[test]
    fn every_getter_returns_what_went_in() {
        let events = Box::into_raw(from_events(every_event()));
        // SAFETY: `events` is alive until the `tox_events_free` at the end; every event
        // pointer comes from its accessors.
        unsafe {
            assert_eq!(tox_events_get_friend_message_size(events), 2);
            let m = tox_events_get_friend_message(events, 0);
            assert_eq!(tox_event_friend_message_get_friend_number(m), 1);
            assert_eq!(
                tox_event_friend_message_get_type(m),
                Tox_Message_Type::ACTION as u32
            );
            let text = tox_event_friend_message_get_message(m);
            assert_eq!(
                slice(text, tox_event_friend_message_get_message_length(m)),
                b"waves"
            );
            let m = tox_events_get_friend_message(events, 1);
            assert_eq!(tox_event_friend_message_get_friend_number(m), 8);
            assert_eq!(tox_event_friend_message_get_type(m), 0);
            let text = tox_event_friend_message_get_message(m);
            assert_eq!(
                slice(text, tox_event_friend_message_get_message_length(m)),
                b"hello"
            );

            assert_eq!(tox_events_get_self_connection_status_size(events), 1);
            let e = tox_events_get_self_connection_status(events, 0);
            assert_eq!(tox_event_self_connection_status_get_connection_status(e), 2);

            let e = tox_events_get_friend_request(events, 0);
            assert_eq!(
                slice(tox_event_friend_request_get_public_key(e), 32),
                &[7; 32]
            );
            let text = tox_event_friend_request_get_message(e);
            assert_eq!(
                slice(text, tox_event_friend_request_get_message_length(e)),
                b"let me in"
            );

            let e = tox_events_get_friend_connection_status(events, 0);
            assert_eq!(tox_event_friend_connection_status_get_friend_number(e), 2);
            assert_eq!(
                tox_event_friend_connection_status_get_connection_status(e),
                1
            );

            let e = tox_events_get_friend_lossy_packet(events, 0);
            assert_eq!(tox_event_friend_lossy_packet_get_friend_number(e), 3);
            let data = tox_event_friend_lossy_packet_get_data(e);
            assert_eq!(
                slice(data, tox_event_friend_lossy_packet_get_data_length(e)),
                [200, 1, 2]
            );

            let e = tox_events_get_friend_lossless_packet(events, 0);
            assert_eq!(tox_event_friend_lossless_packet_get_friend_number(e), 4);
            let data = tox_event_friend_lossless_packet_get_data(e);
            let len = tox_event_friend_lossless_packet_get_data_length(e);
            assert_eq!(slice(data, len), &[170; 300][..]);

            let e = tox_events_get_friend_name(events, 0);
            assert_eq!(tox_event_friend_name_get_friend_number(e), 5);
            let name = tox_event_friend_name_get_name(e);
            assert_eq!(
                slice(name, tox_event_friend_name_get_name_length(e)),
                b"alice"
            );

            let e = tox_events_get_friend_status(events, 0);
            assert_eq!(tox_event_friend_status_get_friend_number(e), 6);
            assert_eq!(
                tox_event_friend_status_get_status(e),
                Tox_User_Status::BUSY as u32
            );

            let e = tox_events_get_friend_status_message(events, 0);
            assert_eq!(tox_event_friend_status_message_get_friend_number(e), 7);
            assert_eq!(tox_event_friend_status_message_get_message_length(e), 0);
            // An empty message is still a valid (non-NULL) pointer, as c-toxcore's malloc(0).
            assert!(!tox_event_friend_status_message_get_message(e).is_null());

            let e = tox_events_get_friend_read_receipt(events, 0);
            assert_eq!(tox_event_friend_read_receipt_get_friend_number(e), 9);
            assert_eq!(tox_event_friend_read_receipt_get_message_id(e), 0xdead_beef);

            let e = tox_events_get_friend_typing(events, 0);
            assert_eq!(tox_event_friend_typing_get_friend_number(e), 10);
            assert!(tox_event_friend_typing_get_typing(e));

            let e = tox_events_get_file_chunk_request(events, 0);
            assert_eq!(tox_event_file_chunk_request_get_friend_number(e), 11);
            assert_eq!(tox_event_file_chunk_request_get_file_number(e), 3);
            assert_eq!(tox_event_file_chunk_request_get_position(e), 1 << 40);
            assert_eq!(tox_event_file_chunk_request_get_length(e), 1371);

            let e = tox_events_get_file_recv(events, 0);
            assert_eq!(tox_event_file_recv_get_friend_number(e), 12);
            assert_eq!(tox_event_file_recv_get_file_number(e), 65536);
            assert_eq!(tox_event_file_recv_get_kind(e), 1);
            assert_eq!(tox_event_file_recv_get_file_size(e), u64::MAX);
            let name = tox_event_file_recv_get_filename(e);
            assert_eq!(
                slice(name, tox_event_file_recv_get_filename_length(e)),
                b"avatar.png"
            );

            let e = tox_events_get_file_recv_chunk(events, 0);
            assert_eq!(tox_event_file_recv_chunk_get_friend_number(e), 13);
            assert_eq!(tox_event_file_recv_chunk_get_file_number(e), 65537);
            assert_eq!(tox_event_file_recv_chunk_get_position(e), 300);
            let data = tox_event_file_recv_chunk_get_data(e);
            assert_eq!(
                slice(data, tox_event_file_recv_chunk_get_length(e)),
                [1, 2, 3]
            );

            let e = tox_events_get_file_recv_control(events, 0);
            assert_eq!(tox_event_file_recv_control_get_friend_number(e), 14);
            assert_eq!(tox_event_file_recv_control_get_file_number(e), 65538);
            assert_eq!(tox_event_file_recv_control_get_control(e), 2);

            assert_eq!(tox_events_get_conference_connected_size(events), 0);
            assert_eq!(tox_events_get_conference_invite_size(events), 0);
            assert_eq!(tox_events_get_conference_message_size(events), 0);
            assert_eq!(tox_events_get_conference_peer_list_changed_size(events), 0);
            assert_eq!(tox_events_get_conference_peer_name_size(events), 0);
            assert_eq!(tox_events_get_conference_title_size(events), 0);
            tox_events_free(events);
        }
    }

    #[test]
    fn conference_events_from_bytes_have_working_getters() {
        // [cc 9], [invite 1 AV "ck"], [message 2 3 ACTION "hi"], [peer list 4],
        // [peer name 5 6 "pn"], [title 7 8 "t"].
        let bytes = from_hex(
            "96 921009 920f9301 01 c402636b 92149402 03 01 c4026869 921104 \
             92129305 06 c402706e 92139307 08 c40174",
        );
        let events = load(&bytes);
        assert!(!events.is_null());
        // SAFETY: `events` is alive until `tox_events_free`; event pointers come from it.
        unsafe {
            let e = tox_events_get_conference_connected(events, 0);
            assert_eq!(tox_event_conference_connected_get_conference_number(e), 9);
            let e = tox_events_get_conference_invite(events, 0);
            assert_eq!(tox_event_conference_invite_get_friend_number(e), 1);
            assert_eq!(tox_event_conference_invite_get_type(e), 1);
            let cookie = tox_event_conference_invite_get_cookie(e);
            assert_eq!(
                slice(cookie, tox_event_conference_invite_get_cookie_length(e)),
                b"ck"
            );
            let e = tox_events_get_conference_message(events, 0);
            assert_eq!(tox_event_conference_message_get_conference_number(e), 2);
            assert_eq!(tox_event_conference_message_get_peer_number(e), 3);
            assert_eq!(tox_event_conference_message_get_type(e), 1);
            let text = tox_event_conference_message_get_message(e);
            assert_eq!(
                slice(text, tox_event_conference_message_get_message_length(e)),
                b"hi"
            );
            let e = tox_events_get_conference_peer_list_changed(events, 0);
            assert_eq!(
                tox_event_conference_peer_list_changed_get_conference_number(e),
                4
            );
            let e = tox_events_get_conference_peer_name(events, 0);
            assert_eq!(tox_event_conference_peer_name_get_conference_number(e), 5);
            assert_eq!(tox_event_conference_peer_name_get_peer_number(e), 6);
            let name = tox_event_conference_peer_name_get_name(e);
            assert_eq!(
                slice(name, tox_event_conference_peer_name_get_name_length(e)),
                b"pn"
            );
            let e = tox_events_get_conference_title(events, 0);
            assert_eq!(tox_event_conference_title_get_conference_number(e), 7);
            assert_eq!(tox_event_conference_title_get_peer_number(e), 8);
            let title = tox_event_conference_title_get_title(e);
            assert_eq!(
                slice(title, tox_event_conference_title_get_title_length(e)),
                b"t"
            );
            // Written back in tox_events_pack's order: connected, invite, message, peer
            // list, peer name, title.
            let again = from_hex(
                "96 921009 920f9301 01 c402636b 92149402 03 01 c4026869 921104 \
                 92129305 06 c402706e 92139307 08 c40174",
            );
            assert_eq!(save(events), again);
            tox_events_free(events);
        }
    }

    #[test]
    fn out_of_range_index_and_null_events_give_null_and_zero() {
        let events = Box::into_raw(from_events(every_event()));
        // SAFETY: `events` is alive until `tox_events_free`; NULL is a valid argument.
        unsafe {
            assert!(tox_events_get_friend_message(events, 2).is_null());
            assert!(tox_events_get_friend_message(events, u32::MAX).is_null());
            assert!(tox_events_get_conference_title(events, 0).is_null());
            assert!(tox_events_get_friend_typing(std::ptr::null(), 0).is_null());
            assert_eq!(tox_events_get_friend_typing_size(std::ptr::null()), 0);
            assert_eq!(
                tox_event_friend_message_get_friend_number(std::ptr::null()),
                0
            );
            assert!(tox_event_friend_message_get_message(std::ptr::null()).is_null());
            assert!(!tox_event_friend_typing_get_typing(std::ptr::null()));
            tox_events_free(events);
            tox_events_free(std::ptr::null_mut());
        }
    }

    #[test]
    fn event_pointers_stay_put_until_free() {
        let events = Box::into_raw(from_events(every_event()));
        // SAFETY: `events` is alive until `tox_events_free`.
        unsafe {
            let first = tox_events_get_friend_message(events, 0);
            let text = tox_event_friend_message_get_message(first);
            let _ = save(events);
            let _ = tox_events_equal(events, events);
            assert_eq!(tox_events_get_friend_message(events, 0), first);
            assert_eq!(tox_event_friend_message_get_message(first), text);
            tox_events_free(events);
        }
    }

    #[test]
    fn bytes_are_what_c_toxcore_writes() {
        let events = Box::into_raw(from_events(every_event()));
        let bytes = save(events);
        // The head of the serialisation, through the lossless packet's bin16 header.
        let head = from_hex(EVERY_EVENT_BYTES);
        assert_eq!(&bytes[..head.len()], &head[..]);
        assert_eq!(&bytes[head.len()..head.len() + 300], &[170; 300][..]);
        let tail = from_hex(
            "920392 03 c403c80102\
             920893 01 01 c40577617665739208930800c40568656c6c6f\
             920592 05 c405616c696365\
             920992 09 cedeadbeef\
             920192 c420 0707070707070707070707070707070707070707070707070707070707070707\
             c4096c6574206d6520696e\
             920792 07 c400\
             920692 06 02\
             920a92 0a c3\
             920002",
        );
        assert_eq!(&bytes[head.len() + 300..], &tail[..]);
        // SAFETY: from `Box::into_raw`, freed once.
        unsafe { tox_events_free(events) };
    }

    #[test]
    fn c_toxcore_iterations_load_and_save_byte_exact() {
        for hex in C_TOXCORE_ITERATIONS {
            let bytes = from_hex(hex);
            let events = load(&bytes);
            assert!(!events.is_null(), "{hex}");
            assert_eq!(save(events), bytes, "{hex}");
            // SAFETY: from `tox_events_load`, freed once.
            unsafe { tox_events_free(events) };
        }
        // The friend request c-toxcore wrote: key and message as it delivered them.
        let events = load(&from_hex(C_TOXCORE_ITERATIONS[1]));
        // SAFETY: `events` is alive until `tox_events_free`.
        unsafe {
            let e = tox_events_get_friend_request(events, 0);
            let text = tox_event_friend_request_get_message(e);
            assert_eq!(
                slice(text, tox_event_friend_request_get_message_length(e)),
                b"add me"
            );
            tox_events_free(events);
        }
    }

    #[test]
    fn save_load_round_trip_is_byte_exact() {
        let events = Box::into_raw(from_events(every_event()));
        let bytes = save(events);
        let loaded = load(&bytes);
        assert!(!loaded.is_null());
        assert_eq!(save(loaded), bytes);
        // SAFETY: both alive until freed here, once each.
        unsafe {
            assert!(tox_events_equal(events, loaded));
            assert_eq!(*events, *loaded);
            tox_events_free(events);
            tox_events_free(loaded);
        }
    }

    #[test]
    fn types_are_written_in_c_toxcores_pack_order_each_in_happening_order() {
        let events = from_events(vec![
            Event::SelfConnectionStatus {
                status: Tox_Connection::TCP,
            },
            Event::FriendStatus {
                friend_number: 1,
                status: Tox_User_Status::AWAY,
            },
            Event::FriendStatusMessage {
                friend_number: 1,
                message: b"x".to_vec(),
            },
            Event::FriendReadReceipt {
                friend_number: 0,
                message_id: 2,
            },
            Event::FriendReadReceipt {
                friend_number: 0,
                message_id: 1,
            },
        ]);
        let expected =
            from_hex("95 920992 00 02 920992 00 01 920792 01 c40178 920692 01 01 920001");
        assert_eq!(events.to_bytes(), expected);
    }

    #[test]
    fn empty_and_null_events_are_the_empty_array() {
        assert_eq!(save(std::ptr::null()), [0x90]);
        let empty = load(&[0x90]);
        assert!(!empty.is_null());
        // SAFETY: `empty` is alive until freed; NULL is a valid argument.
        unsafe {
            assert_eq!(tox_events_bytes_size(empty), 1);
            assert!(tox_events_equal(empty, std::ptr::null()));
            assert!(tox_events_equal(std::ptr::null(), std::ptr::null()));
            tox_events_free(empty);
        }
    }

    #[test]
    fn equal_compares_serialisations() {
        let a = Box::into_raw(from_events(every_event()));
        let mut reordered = every_event();
        // Swapping events of different types keeps the bytes; of one type, it does not.
        reordered.swap(1, 2);
        let b = Box::into_raw(from_events(reordered.clone()));
        reordered.swap(0, 9);
        let c = Box::into_raw(from_events(reordered));
        // SAFETY: all three alive until freed here, once each.
        unsafe {
            assert!(tox_events_equal(a, b));
            assert!(!tox_events_equal(a, c));
            assert!(!tox_events_equal(a, std::ptr::null()));
            for events in [a, b, c] {
                tox_events_free(events);
            }
        }
    }

    #[test]
    fn load_accepts_what_c_toxcores_reader_accepts() {
        // Type as uint32 and int8, fields as int8/int16/uint32/int64, bin16 for 2 bytes,
        // an out-of-range message type, trailing bytes: all accepted by cmp's readers, and
        // written back in the shortest forms.
        let cases = [
            (
                "91 92 cc08 93 d005 d10007 c50002 6869",
                "91 92 08 93 05 07 c402 6869",
            ),
            ("91 92 d00a 92 01 c2", "91 92 0a 92 01 c2"),
            (
                "91 92 08 93 01 ceffffffff c40178",
                "91 92 08 93 01 ceffffffff c40178",
            ),
            ("91 920002 ffff", "91 920002"),
            (
                "91 92 0b 94 d200000005 d201000000 d30000000000000007 d10100",
                "91 92 0b 94 05 ce01000000 07 cd0100",
            ),
        ];
        for (input, output) in cases {
            let events = load(&from_hex(input));
            assert!(!events.is_null(), "{input}");
            assert_eq!(save(events), from_hex(output), "{input}");
            // SAFETY: from `tox_events_load`, freed once.
            unsafe { tox_events_free(events) };
        }
    }

    #[test]
    fn load_refuses_what_c_toxcores_reader_refuses() {
        let cases = [
            "",                                    // no array
            "dc00",                                // short array16 header
            "92 920002",                           // count larger than the events
            "dd ffffffff 00000000",                // count larger than the bytes left
            "91 92 cd0008 93 01 00 c40178",        // type as uint16
            "91 92 ce00000008 93 01 00 c40178",    // type as uint32
            "91 92 15 00",                         // unknown type 21
            "91 92 0b 94 00 00 00 ce00000005",     // uint32 for the u16 length
            "91 92 08 93 ff 00 c40178",            // negative fixint
            "91 92 08 93 d0ff 00 c40178",          // negative int8
            "91 92 08 92 01 c40178",               // friend message with 2 fields
            "91 93 00 01 02",                      // event as a 3-array
            "91 92 0a 92 01 01",                   // typing as an integer
            "91 92 01 92 c41f 00 c400",            // 31-byte public key
            "91 92 08 93 01 00 a178",              // str instead of bin
            "91 92 00 cf0000000000000001",         // uint64 for a u32
            "91 92 00 d30000000000000001",         // int64 for a u32
            "91 92 08 93 01 00 c6ffffffff 616263", // bin longer than the bytes left
        ];
        for input in cases {
            let bytes = from_hex(input);
            assert!(Tox_Events::from_bytes(&bytes).is_none(), "{input}");
            assert!(load(&bytes).is_null(), "{input}");
        }
        // SAFETY: NULL bytes are refused before they are read.
        assert!(unsafe { tox_events_load(std::ptr::null(), 10) }.is_null());
    }

    #[test]
    fn every_truncation_is_refused_and_garbage_never_panics() {
        let bytes = from_events(every_event()).to_bytes();
        for end in 0..bytes.len() {
            assert!(
                Tox_Events::from_bytes(&bytes[..end]).is_none(),
                "prefix {end}"
            );
        }
        // Mutations of a valid serialisation (xorshift, fixed seed): whatever loads must
        // serialise to bytes that load to the same events.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..20_000 {
            let mut input = bytes.clone();
            for _ in 0..1 + next() % 3 {
                let at = (next() % input.len() as u64) as usize;
                match next() % 3 {
                    0 => input[at] = next() as u8,
                    1 => {
                        input.truncate(at);
                    }
                    _ => input.insert(at, next() as u8),
                }
                if input.is_empty() {
                    break;
                }
            }
            if let Some(events) = Tox_Events::from_bytes(&input) {
                let again = Tox_Events::from_bytes(&events.to_bytes());
                assert_eq!(again.as_ref(), Some(&events));
            }
        }
    }

    #[test]
    fn iterate_without_an_instance_returns_null_and_ok() {
        let mut error = Tox_Err_Events_Iterate::MALLOC;
        // SAFETY: NULL `tox` is checked; `error` is a live out-parameter.
        let events = unsafe { tox_events_iterate(std::ptr::null_mut(), true, &mut error) };
        assert!(events.is_null());
        assert_eq!(error, Tox_Err_Events_Iterate::OK);
        // SAFETY: NULL is ignored.
        unsafe { tox_events_init(std::ptr::null_mut()) };
    }
}
