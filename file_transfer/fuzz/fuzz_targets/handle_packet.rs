//! Fuzz the whole state machine: a sequence of peer payloads (each prefixed by a length
//! byte) mixed with sends and polls must never panic, and the transfer table must stay
//! within its 256 + 256 slots.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rustox_file_transfer::testing::MockSession;
use rustox_file_transfer::{FileKind, FileTransfers};
use rustox_net_crypto::Timestamp;

fuzz_target!(|bytes: &[u8]| {
    let mut ft = FileTransfers::new();
    let mut session = MockSession::new();
    let now = Timestamp::ZERO;
    let _ = ft.file_send(now, &mut session, FileKind::Data, 5000, [0; 32], b"f");
    let mut rest = bytes;
    while let Some((&len, tail)) = rest.split_first() {
        let len = usize::from(len).min(tail.len());
        let (payload, tail) = tail.split_at(len);
        rest = tail;
        let _ = ft.handle_packet(now, payload);
        session.grant(usize::from(len % 4));
        ft.poll_send(now, &mut session);
        while let Some(_event) = ft.poll_event() {}
        session.drain();
        let (out, inc) = ft.active();
        assert!(out <= 256 && inc <= 256);
    }
});
