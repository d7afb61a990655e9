//! The per-type records a `Tox_Events` holds, and the `Tox_Events` itself: built from an
//! iteration's events, written to and read from msgpack.

use super::msgpack::{Field, Packer, Reader, Record};
use crate::event::Event;
use crate::types::Tox_Event;

/// Defines each event type's record from its fields, in payload order: the struct C reads
/// through the getters, its [`Record`] codec, and `Tox_Events` with one list per type.
macro_rules! records {
    ($(
        $(#[$doc:meta])*
        $record:ident = $kind:ident in $list:ident {
            $($(#[$field_doc:meta])* $field:ident: $ty:ty,)+
        }
    )*) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, PartialEq, Eq, Default)]
            pub struct $record {
                $($(#[$field_doc])* pub(crate) $field: $ty,)+
            }

            impl Record for $record {
                const TYPE: Tox_Event = Tox_Event::$kind;
                const FIELDS: u32 = [$(stringify!($field)),+].len() as u32;
                fn pack_fields(&self, p: &mut Packer) {
                    $(self.$field.pack(p);)+
                }
                fn unpack_fields(r: &mut Reader<'_>) -> Option<Self> {
                    Some(Self { $($field: Field::unpack(r)?,)+ })
                }
            }
        )*

        /// Every event type, in the table's order: their names' alphabetical order, in
        /// which `tox_dispatch_invoke` (tox_dispatch.c) calls the types' callbacks.
        pub(crate) const TYPES: [Tox_Event; [$(stringify!($kind)),*].len()] = [$(Tox_Event::$kind),*];

        /// `Tox_Events` (tox_events.h): one iteration's events, one list per type.
        #[derive(Debug, Clone, PartialEq, Eq, Default)]
        pub struct Tox_Events {
            $(pub(crate) $list: Vec<$record>,)*
        }

        impl Tox_Events {
            /// How many events of all types (`tox_events_pack`'s count).
            fn len(&self) -> usize {
                0 $(+ self.$list.len())*
            }

            /// Writes every event of type `kind`.
            fn pack_type(&self, kind: Tox_Event, p: &mut Packer) {
                match kind {
                    $(Tox_Event::$kind => p.records(&self.$list),)*
                }
            }

            /// Reads one payload of type `kind` into its list.
            fn unpack_type(&mut self, kind: Tox_Event, r: &mut Reader<'_>) -> Option<()> {
                match kind {
                    $(Tox_Event::$kind => r.record(&mut self.$list),)*
                }
            }
        }
    };
}

records! {
    /// `Tox_Event_Conference_Connected`: we joined a conference.
    Tox_Event_Conference_Connected = CONFERENCE_CONNECTED in conference_connected {
        conference_number: u32,
    }

    /// `Tox_Event_Conference_Invite`: a friend invites us to a conference.
    Tox_Event_Conference_Invite = CONFERENCE_INVITE in conference_invite {
        friend_number: u32,
        /// A `Tox_Conference_Type` value, unchecked.
        conference_type: u32,
        cookie: Box<[u8]>,
    }

    /// `Tox_Event_Conference_Message`: a peer said something in a conference.
    Tox_Event_Conference_Message = CONFERENCE_MESSAGE in conference_message {
        conference_number: u32,
        peer_number: u32,
        /// A `Tox_Message_Type` value, unchecked.
        message_type: u32,
        message: Box<[u8]>,
    }

    /// `Tox_Event_Conference_Peer_List_Changed`.
    Tox_Event_Conference_Peer_List_Changed = CONFERENCE_PEER_LIST_CHANGED
        in conference_peer_list_changed {
        conference_number: u32,
    }

    /// `Tox_Event_Conference_Peer_Name`: a conference peer's name changed.
    Tox_Event_Conference_Peer_Name = CONFERENCE_PEER_NAME in conference_peer_name {
        conference_number: u32,
        peer_number: u32,
        name: Box<[u8]>,
    }

    /// `Tox_Event_Conference_Title`: a conference's title changed.
    Tox_Event_Conference_Title = CONFERENCE_TITLE in conference_title {
        conference_number: u32,
        peer_number: u32,
        title: Box<[u8]>,
    }

    /// `Tox_Event_File_Chunk_Request`: send `length` bytes at `position`.
    Tox_Event_File_Chunk_Request = FILE_CHUNK_REQUEST in file_chunk_request {
        friend_number: u32,
        file_number: u32,
        position: u64,
        length: u16,
    }

    /// `Tox_Event_File_Recv`: a friend offers a file.
    Tox_Event_File_Recv = FILE_RECV in file_recv {
        friend_number: u32,
        file_number: u32,
        kind: u32,
        file_size: u64,
        filename: Box<[u8]>,
    }

    /// `Tox_Event_File_Recv_Chunk`: bytes of an incoming file.
    Tox_Event_File_Recv_Chunk = FILE_RECV_CHUNK in file_recv_chunk {
        friend_number: u32,
        file_number: u32,
        position: u64,
        data: Box<[u8]>,
    }

    /// `Tox_Event_File_Recv_Control`: a friend paused, resumed or cancelled a transfer.
    Tox_Event_File_Recv_Control = FILE_RECV_CONTROL in file_recv_control {
        friend_number: u32,
        file_number: u32,
        /// A `Tox_File_Control` value, unchecked.
        control: u32,
    }

    /// `Tox_Event_Friend_Connection_Status`.
    Tox_Event_Friend_Connection_Status = FRIEND_CONNECTION_STATUS in friend_connection_status {
        friend_number: u32,
        /// A `Tox_Connection` value, unchecked.
        connection_status: u32,
    }

    /// `Tox_Event_Friend_Lossless_Packet`: a custom lossless packet, id byte first.
    Tox_Event_Friend_Lossless_Packet = FRIEND_LOSSLESS_PACKET in friend_lossless_packet {
        friend_number: u32,
        data: Box<[u8]>,
    }

    /// `Tox_Event_Friend_Lossy_Packet`: a custom lossy packet, id byte first.
    Tox_Event_Friend_Lossy_Packet = FRIEND_LOSSY_PACKET in friend_lossy_packet {
        friend_number: u32,
        data: Box<[u8]>,
    }

    /// `Tox_Event_Friend_Message`.
    Tox_Event_Friend_Message = FRIEND_MESSAGE in friend_message {
        friend_number: u32,
        /// A `Tox_Message_Type` value, unchecked.
        message_type: u32,
        message: Box<[u8]>,
    }

    /// `Tox_Event_Friend_Name`.
    Tox_Event_Friend_Name = FRIEND_NAME in friend_name {
        friend_number: u32,
        name: Box<[u8]>,
    }

    /// `Tox_Event_Friend_Read_Receipt`.
    Tox_Event_Friend_Read_Receipt = FRIEND_READ_RECEIPT in friend_read_receipt {
        friend_number: u32,
        message_id: u32,
    }

    /// `Tox_Event_Friend_Request`.
    Tox_Event_Friend_Request = FRIEND_REQUEST in friend_request {
        public_key: [u8; 32],
        message: Box<[u8]>,
    }

    /// `Tox_Event_Friend_Status`.
    Tox_Event_Friend_Status = FRIEND_STATUS in friend_status {
        friend_number: u32,
        /// A `Tox_User_Status` value, unchecked.
        status: u32,
    }

    /// `Tox_Event_Friend_Status_Message`.
    Tox_Event_Friend_Status_Message = FRIEND_STATUS_MESSAGE in friend_status_message {
        friend_number: u32,
        message: Box<[u8]>,
    }

    /// `Tox_Event_Friend_Typing`.
    Tox_Event_Friend_Typing = FRIEND_TYPING in friend_typing {
        friend_number: u32,
        typing: bool,
    }

    /// `Tox_Event_Self_Connection_Status`.
    Tox_Event_Self_Connection_Status = SELF_CONNECTION_STATUS in self_connection_status {
        /// A `Tox_Connection` value, unchecked.
        connection_status: u32,
    }
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
                filename: name,
            } => self.file_recv.push(Tox_Event_File_Recv {
                friend_number,
                file_number,
                kind,
                file_size,
                filename: owned(name),
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
            Event::ConferenceInvite {
                friend_number,
                kind,
                cookie,
            } => self.conference_invite.push(Tox_Event_Conference_Invite {
                friend_number,
                conference_type: kind as u32,
                cookie: owned(cookie),
            }),
            Event::ConferenceConnected { conference_number } => self
                .conference_connected
                .push(Tox_Event_Conference_Connected { conference_number }),
            Event::ConferenceMessage {
                conference_number,
                peer_number,
                kind,
                message,
            } => self.conference_message.push(Tox_Event_Conference_Message {
                conference_number,
                peer_number,
                message_type: kind as u32,
                message: owned(message),
            }),
            Event::ConferenceTitle {
                conference_number,
                peer_number,
                title,
            } => self.conference_title.push(Tox_Event_Conference_Title {
                conference_number,
                peer_number,
                title: owned(title),
            }),
            Event::ConferencePeerName {
                conference_number,
                peer_number,
                name,
            } => self
                .conference_peer_name
                .push(Tox_Event_Conference_Peer_Name {
                    conference_number,
                    peer_number,
                    name: owned(name),
                }),
            Event::ConferencePeerListChanged { conference_number } => self
                .conference_peer_list_changed
                .push(Tox_Event_Conference_Peer_List_Changed { conference_number }),
        }
    }

    /// The msgpack bytes of these events (`tox_events_get_bytes`).
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut p = Packer::default();
        p.array(u32::try_from(self.len()).unwrap_or(u32::MAX));
        for kind in PACK_ORDER {
            self.pack_type(kind, &mut p);
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
            events.unpack_type(kind, &mut r)?;
        }
        // Like bin_unpack, nothing checks that the bytes end here.
        Some(events)
    }
}
