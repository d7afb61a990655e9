use super::*;
use crate::event::Event;
use crate::types::{
    Tox_Connection, Tox_Err_Events_Iterate, Tox_File_Control, Tox_Message_Type, Tox_User_Status,
};

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
    let expected = from_hex("95 920992 00 02 920992 00 01 920792 01 c40178 920692 01 01 920001");
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

#[test]
fn the_nodes_conference_events_serialise_as_c_toxcores() {
    use crate::types::Tox_Conference_Type;
    // The events of `conference_events_from_bytes_have_working_getters`, as an iteration
    // of ours produces them (in another order: each type keeps its own list).
    let events = from_events(vec![
        Event::ConferenceTitle {
            conference_number: 7,
            peer_number: 8,
            title: b"t".to_vec(),
        },
        Event::ConferenceInvite {
            friend_number: 1,
            kind: Tox_Conference_Type::AV,
            cookie: b"ck".to_vec(),
        },
        Event::ConferencePeerName {
            conference_number: 5,
            peer_number: 6,
            name: b"pn".to_vec(),
        },
        Event::ConferenceMessage {
            conference_number: 2,
            peer_number: 3,
            kind: Tox_Message_Type::ACTION,
            message: b"hi".to_vec(),
        },
        Event::ConferencePeerListChanged {
            conference_number: 4,
        },
        Event::ConferenceConnected {
            conference_number: 9,
        },
    ]);
    assert_eq!(
        events.to_bytes(),
        from_hex(
            "96 921009 920f9301 01 c402636b 92149402 03 01 c4026869 921104 \
             92129305 06 c402706e 92139307 08 c40174",
        )
    );
}
