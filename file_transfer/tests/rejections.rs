//! Every rejection path: bad input from the peer or a bad API call gets a typed error and
//! leaves every transfer exactly as it was (docs/protocol.md §3.3–§3.5, §9).

mod common;

use common::{content, Pair};
use rustox_file_transfer::packet::{ControlKind, ControlPacket, Direction};
use rustox_file_transfer::testing::PacketClass;
use rustox_file_transfer::{
    FileControl, FileControlError, FileError, FileKind, FileNumber, FileSeekError,
    FileSendChunkError, FileSendError, MAX_CONCURRENT_FILE_PIPES,
};

const INCOMING_0: u32 = 1 << 16;

/// A pair with one 30 000-byte transfer a → b half done, so every test can check that it
/// still completes byte-exact after the bad input.
fn half_done() -> (Pair, Vec<u8>) {
    let mut p = Pair::new();
    let data = content(30_000, 42);
    p.a.send(p.now, data.clone(), b"victim");
    p.run_until(2, 1000, |p| {
        p.b.app.received.get(&INCOMING_0).map_or(0, Vec::len) > 10_000
    });
    (p, data)
}

fn finish(mut p: Pair, data: &[u8]) {
    p.run_until(2, 1000, |p| !p.a.app.sent_complete.is_empty());
    assert_eq!(
        p.b.app.received[&INCOMING_0], data,
        "the good transfer was disturbed"
    );
}

fn snapshot(p: &Pair) -> String {
    format!(
        "{:?}{:?}{:?}{:?}",
        p.a.ft.transfer(0),
        p.b.ft.transfer(INCOMING_0),
        p.a.ft.active(),
        p.b.ft.active()
    )
}

#[test]
fn data_for_an_unknown_transfer_is_rejected() {
    let (mut p, data) = half_done();
    let before = snapshot(&p);
    assert_eq!(
        p.b.ft.handle_packet(p.now, &[82, 9, 1, 2, 3]),
        Err(FileError::UnknownTransfer(FileNumber::Incoming(9)))
    );
    assert_eq!(p.b.ft.poll_event(), None);
    assert_eq!(snapshot(&p), before);
    finish(p, &data);
}

#[test]
fn data_before_accept_is_rejected() {
    let mut p = Pair::new();
    p.b.app.auto_accept = false;
    p.a.send(p.now, content(5000, 1), b"x");
    p.step(0);
    assert_eq!(
        p.b.ft.handle_packet(p.now, &[82, 0, 1, 2, 3]),
        Err(FileError::WrongState(FileNumber::Incoming(0)))
    );
    assert_eq!(p.b.ft.transfer(INCOMING_0).unwrap().transferred, 0);
}

#[test]
fn data_beyond_the_announced_size_is_rejected_without_touching_the_transfer() {
    let mut p = Pair::new();
    // 2000 bytes: after one full chunk, 629 remain; 630 is one too many.
    p.a.send(p.now, content(2000, 2), b"x");
    p.a.app.answer_requests = false;
    p.step(0);
    p.step(0);
    let mut chunk = vec![82, 0];
    chunk.extend_from_slice(&[0; 1371]);
    p.b.ft.handle_packet(p.now, &chunk).unwrap();
    let mut too_long = vec![82, 0];
    too_long.extend_from_slice(&[0; 630]);
    assert_eq!(
        p.b.ft.handle_packet(p.now, &too_long),
        Err(FileError::BeyondSize(FileNumber::Incoming(0)))
    );
    assert_eq!(p.b.ft.transfer(INCOMING_0).unwrap().transferred, 1371);
    let mut exact = vec![82, 0];
    exact.extend_from_slice(&[0; 629]);
    p.b.ft.handle_packet(p.now, &exact).unwrap();
    assert_eq!(
        p.b.ft.active(),
        (0, 0),
        "the exact remainder completes the file"
    );
}

#[test]
fn malformed_packets_are_typed_errors() {
    let (mut p, data) = half_done();
    let before = snapshot(&p);
    for bad in [
        &[][..],
        &[82][..],
        &[81, 0, 0][..],
        &[81, 7, 0, 0][..],
        &[81, 0, 0, 9][..],
        &[81, 1, 0, 3, 1][..],
        &[80, 0, 0][..],
        &[64, 1][..],
    ] {
        assert!(
            matches!(
                p.b.ft.handle_packet(p.now, bad),
                Err(FileError::Malformed(_))
            ),
            "{bad:?}"
        );
    }
    let mut long_name = vec![80u8; 46];
    long_name.extend_from_slice(&[b'n'; 256]);
    assert!(matches!(
        p.b.ft.handle_packet(p.now, &long_name),
        Err(FileError::Malformed(_))
    ));
    assert_eq!(snapshot(&p), before);
    assert!(
        p.b.session.outbox.is_empty(),
        "no answer to malformed packets"
    );
    finish(p, &data);
}

#[test]
fn a_request_for_a_busy_slot_is_ignored() {
    let (mut p, data) = half_done();
    let mut req = vec![80, 0, 0, 0, 0, 1];
    req.extend_from_slice(&5u64.to_be_bytes());
    req.extend_from_slice(&[1; 32]);
    let before = snapshot(&p);
    assert_eq!(
        p.b.ft.handle_packet(p.now, &req),
        Err(FileError::SlotInUse(0))
    );
    assert_eq!(snapshot(&p), before);
    assert_eq!(p.b.ft.file_id(INCOMING_0), Ok([7; 32]));
    finish(p, &data);
}

#[test]
fn control_for_an_unknown_transfer_is_answered_with_kill_direction_flipped() {
    let (mut p, data) = half_done();
    let before = snapshot(&p);
    // "Pause the file I am receiving, number 5" = our outgoing 5, which does not exist.
    let pause = ControlPacket {
        direction: Direction::SenderIsReceiving,
        file_number: 5,
        control: ControlKind::Pause,
    };
    assert_eq!(
        p.a.ft.handle_packet(p.now, &pause.encode()),
        Err(FileError::UnknownTransfer(FileNumber::Outgoing(5)))
    );
    assert_eq!(snapshot(&p), before);
    p.a.session.grant(0);
    p.a.ft.poll_send(p.now, &mut p.a.session);
    let sent: Vec<_> =
        p.a.session
            .outbox
            .iter()
            .map(|(_, c, b)| (*c, b.clone()))
            .collect();
    assert_eq!(sent, [(PacketClass::Control, vec![81, 0, 5, 2])]);
    assert_eq!(p.a.ft.stats().kills_answered, 1);
    finish(p, &data);
}

#[test]
fn peer_controls_in_the_wrong_state_are_rejected() {
    let (mut p, data) = half_done();
    let before = snapshot(&p);
    let ctl = |direction, control| {
        ControlPacket {
            direction,
            file_number: 0,
            control,
        }
        .encode()
    };
    let wrong = Err(FileError::WrongState(FileNumber::Outgoing(0)));
    // ACCEPT of a transferring file that the peer has not paused.
    assert_eq!(
        p.a.ft.handle_packet(
            p.now,
            &ctl(Direction::SenderIsReceiving, ControlKind::Accept)
        ),
        wrong
    );
    // SEEK after accepting.
    assert_eq!(
        p.a.ft.handle_packet(
            p.now,
            &ctl(Direction::SenderIsReceiving, ControlKind::Seek(5))
        ),
        wrong
    );
    // SEEK about a file the peer sends (only receivers seek).
    assert_eq!(
        p.b.ft.handle_packet(
            p.now,
            &ctl(Direction::SenderIsSending, ControlKind::Seek(5))
        ),
        Err(FileError::WrongState(FileNumber::Incoming(0)))
    );
    // ACCEPT about a file the peer sends, which we have not paused... from the peer.
    assert_eq!(
        p.b.ft
            .handle_packet(p.now, &ctl(Direction::SenderIsSending, ControlKind::Accept)),
        Err(FileError::WrongState(FileNumber::Incoming(0)))
    );
    // PAUSE twice.
    p.a.ft
        .handle_packet(
            p.now,
            &ctl(Direction::SenderIsReceiving, ControlKind::Pause),
        )
        .unwrap();
    assert_eq!(
        p.a.ft.handle_packet(
            p.now,
            &ctl(Direction::SenderIsReceiving, ControlKind::Pause)
        ),
        wrong
    );
    p.a.ft
        .handle_packet(
            p.now,
            &ctl(Direction::SenderIsReceiving, ControlKind::Accept),
        )
        .unwrap();
    while p.a.ft.poll_event().is_some() {}
    assert_eq!(snapshot(&p), before);
    finish(p, &data);
}

#[test]
fn peer_seek_beyond_the_size_is_rejected() {
    let mut p = Pair::new();
    p.b.app.auto_accept = false;
    p.a.send(p.now, content(1000, 3), b"x");
    let seek = |pos| {
        ControlPacket {
            direction: Direction::SenderIsReceiving,
            file_number: 0,
            control: ControlKind::Seek(pos),
        }
        .encode()
    };
    assert_eq!(
        p.a.ft.handle_packet(p.now, &seek(1000)),
        Err(FileError::InvalidPosition(FileNumber::Outgoing(0)))
    );
    assert_eq!(p.a.ft.transfer(0).unwrap().transferred, 0);
    p.a.ft.handle_packet(p.now, &seek(999)).unwrap();
    assert_eq!(p.a.ft.transfer(0).unwrap().transferred, 999);
}

#[test]
fn send_chunk_rejections() {
    let mut p = Pair::new();
    p.a.app.answer_requests = false;
    let data = content(5000, 4);
    p.a.send(p.now, data.clone(), b"x");
    let now = p.now;
    let s = &mut p.a.session;
    // Not accepted yet.
    assert_eq!(
        p.a.ft.send_chunk(now, s, 0, 0, &data[..1371]),
        Err(FileSendChunkError::NotTransferring)
    );
    // Unknown numbers.
    for n in [1, 255, 256, 65535, INCOMING_0, u32::MAX] {
        assert_eq!(
            p.a.ft.send_chunk(now, s, n, 0, &data[..1371]),
            Err(FileSendChunkError::NotFound),
            "{n}"
        );
    }
    p.step(1); // request goes out; accept comes back
    p.step(1); // one chunk [0, 1371) requested
    assert_eq!(p.a.app.requests, [(0, 0, 1371)]);
    let now = p.now;
    let s = &mut p.a.session;
    s.grant(10);
    assert_eq!(
        p.a.ft.send_chunk(now, s, 0, 0, &[0; 1372]),
        Err(FileSendChunkError::InvalidLength)
    );
    assert_eq!(
        p.a.ft.send_chunk(now, s, 0, 0, &data[..1000]),
        Err(FileSendChunkError::InvalidLength),
        "short, not last"
    );
    assert_eq!(
        p.a.ft.send_chunk(now, s, 0, 1371, &data[1371..2742]),
        Err(FileSendChunkError::WrongPosition),
        "not requested"
    );
    assert_eq!(
        p.a.ft.send_chunk(now, s, 0, 5, &data[5..1376]),
        Err(FileSendChunkError::WrongPosition)
    );
    assert!(
        p.a.session.outbox.is_empty(),
        "nothing sent by a rejected chunk"
    );
    assert_eq!(p.a.ft.transfer(0).unwrap().transferred, 0);
    p.a.app.answer_requests = true;
    p.a.ft
        .send_chunk(p.now, &mut p.a.session, 0, 0, &data[..1371])
        .unwrap();
    p.run_until(2, 100, |p| !p.a.app.sent_complete.is_empty());
    assert_eq!(p.b.app.received[&INCOMING_0], data);
}

#[test]
fn send_chunk_beyond_the_size_is_invalid_length() {
    let mut p = Pair::new();
    p.a.app.answer_requests = false;
    p.a.send(p.now, content(100, 5), b"x");
    p.step(1);
    p.step(1);
    p.a.session.grant(1);
    assert_eq!(
        p.a.ft.send_chunk(p.now, &mut p.a.session, 0, 0, &[0; 101]),
        Err(FileSendChunkError::InvalidLength)
    );
    assert_eq!(
        p.a.ft.send_chunk(p.now, &mut p.a.session, 0, 0, &[0; 99]),
        Err(FileSendChunkError::InvalidLength)
    );
}

#[test]
fn sendq_rewinds_so_the_chunk_is_requested_again() {
    let mut p = Pair::new();
    p.a.app.answer_requests = false;
    let data = content(10_000, 6);
    p.a.send(p.now, data.clone(), b"x");
    p.step(1);
    p.step(2);
    assert_eq!(p.a.app.requests, [(0, 0, 1371), (0, 1371, 1371)]);
    p.a.session.grant(0);
    assert_eq!(
        p.a.ft
            .send_chunk(p.now, &mut p.a.session, 0, 0, &data[..1371]),
        Err(FileSendChunkError::SendQ)
    );
    p.a.app.answer_requests = true;
    p.step(2);
    assert_eq!(
        p.a.app.requests[2],
        (0, 0, 1371),
        "re-requested from the last byte sent"
    );
    p.run_until(2, 100, |p| !p.a.app.sent_complete.is_empty());
    assert_eq!(p.b.app.received[&INCOMING_0], data);
}

#[test]
fn control_rejections_follow_c_toxcore() {
    let mut p = Pair::new();
    p.b.app.auto_accept = false;
    p.a.send(p.now, content(100_000, 7), b"x");
    p.step(0);
    let now = p.now;
    for n in [1, 256, 65535, 2 << 16, 257 << 16, u32::MAX] {
        assert_eq!(
            p.a.ft.control(now, &mut p.a.session, n, FileControl::Pause),
            Err(FileControlError::NotFound),
            "{n}"
        );
    }
    // The sender cannot accept its own offer; nobody can pause before accepting.
    assert_eq!(
        p.a.ft
            .control(now, &mut p.a.session, 0, FileControl::Resume),
        Err(FileControlError::Denied)
    );
    assert_eq!(
        p.a.ft.control(now, &mut p.a.session, 0, FileControl::Pause),
        Err(FileControlError::AlreadyPaused)
    );
    assert_eq!(
        p.b.ft
            .control(now, &mut p.b.session, INCOMING_0, FileControl::Pause),
        Err(FileControlError::AlreadyPaused)
    );
    p.b.ft
        .control(now, &mut p.b.session, INCOMING_0, FileControl::Resume)
        .unwrap();
    p.step(1);
    let now = p.now;
    // Resume of a transfer nobody paused.
    assert_eq!(
        p.a.ft
            .control(now, &mut p.a.session, 0, FileControl::Resume),
        Err(FileControlError::NotPaused)
    );
    p.a.ft
        .control(now, &mut p.a.session, 0, FileControl::Pause)
        .unwrap();
    assert_eq!(
        p.a.ft.control(now, &mut p.a.session, 0, FileControl::Pause),
        Err(FileControlError::AlreadyPaused)
    );
    // A refused packet changes nothing.
    p.a.session.refuse_control = true;
    assert_eq!(
        p.a.ft
            .control(now, &mut p.a.session, 0, FileControl::Resume),
        Err(FileControlError::SendQ)
    );
    assert!(p.a.ft.transfer(0).unwrap().paused_by_us);
    assert_eq!(
        p.a.ft
            .control(now, &mut p.a.session, 0, FileControl::Cancel),
        Err(FileControlError::SendQ)
    );
    assert!(p.a.ft.transfer(0).is_some());
}

#[test]
fn seek_rejections() {
    let mut p = Pair::new();
    p.b.app.auto_accept = false;
    p.a.send(p.now, content(5000, 8), b"x");
    p.step(0);
    let now = p.now;
    assert_eq!(
        p.a.ft.seek(now, &mut p.a.session, 0, 10),
        Err(FileSeekError::Denied),
        "senders do not seek"
    );
    assert_eq!(
        p.a.ft.seek(now, &mut p.a.session, 1, 10),
        Err(FileSeekError::NotFound)
    );
    assert_eq!(
        p.b.ft.seek(now, &mut p.b.session, 2 << 16, 10),
        Err(FileSeekError::NotFound)
    );
    assert_eq!(
        p.b.ft.seek(now, &mut p.b.session, 300, 10),
        Err(FileSeekError::NotFound)
    );
    assert_eq!(
        p.b.ft.seek(now, &mut p.b.session, INCOMING_0, 5000),
        Err(FileSeekError::InvalidPosition)
    );
    p.b.session.refuse_control = true;
    assert_eq!(
        p.b.ft.seek(now, &mut p.b.session, INCOMING_0, 10),
        Err(FileSeekError::SendQ)
    );
    assert_eq!(p.b.ft.transfer(INCOMING_0).unwrap().transferred, 0);
    p.b.session.refuse_control = false;
    p.b.ft
        .control(now, &mut p.b.session, INCOMING_0, FileControl::Resume)
        .unwrap();
    assert_eq!(
        p.b.ft.seek(now, &mut p.b.session, INCOMING_0, 10),
        Err(FileSeekError::Denied),
        "after accepting"
    );
}

#[test]
fn file_send_rejections() {
    let mut p = Pair::new();
    let now = p.now;
    let s = &mut p.a.session;
    assert_eq!(
        p.a.ft
            .file_send(now, s, FileKind::Data, 1, [0; 32], &[b'n'; 256]),
        Err(FileSendError::NameTooLong)
    );
    assert_eq!(
        p.a.ft
            .file_send(now, s, FileKind::Data, 1, [0; 32], &[b'n'; 255]),
        Ok(0)
    );
    s.refuse_control = true;
    assert_eq!(
        p.a.ft.file_send(now, s, FileKind::Data, 1, [0; 32], b"x"),
        Err(FileSendError::FriendNotConnected)
    );
    assert_eq!(p.a.ft.active(), (1, 0), "a refused request takes no slot");
    s.refuse_control = false;
    for i in 1..MAX_CONCURRENT_FILE_PIPES {
        assert_eq!(
            p.a.ft.file_send(now, s, FileKind::Data, 1, [0; 32], b"x"),
            Ok(i as u32)
        );
    }
    assert_eq!(
        p.a.ft.file_send(now, s, FileKind::Data, 1, [0; 32], b"x"),
        Err(FileSendError::TooMany)
    );
    assert_eq!(p.a.ft.active(), (256, 0));
}

#[test]
fn two_hundred_fifty_six_incoming_offers_fill_the_table() {
    let mut p = Pair::new();
    p.b.app.auto_accept = false;
    let now = p.now;
    for _ in 0..256 {
        p.a.ft
            .file_send(now, &mut p.a.session, FileKind::Data, 10, [0; 32], b"x")
            .unwrap();
    }
    p.step(0);
    assert_eq!(p.b.ft.active(), (0, 256));
    let last = FileNumber::Incoming(255).to_u32();
    assert_eq!(last, 16_777_216);
    assert!(p.b.ft.transfer(last).is_some());
}

#[test]
fn data_after_friend_offline_is_for_an_unknown_transfer() {
    let (mut p, _) = half_done();
    p.b.ft.friend_offline();
    let mut chunk = vec![82, 0];
    chunk.extend_from_slice(&[0; 1371]);
    assert_eq!(
        p.b.ft.handle_packet(p.now, &chunk),
        Err(FileError::UnknownTransfer(FileNumber::Incoming(0)))
    );
}

#[test]
fn an_application_that_never_polls_gets_its_transfer_killed_not_corrupted() {
    use rustox_file_transfer::MAX_PENDING_EVENTS;
    use rustox_file_transfer::{FileEvent, FileTransfers};
    let mut rx = FileTransfers::new();
    let mut session = rustox_file_transfer::testing::MockSession::new();
    let now = rustox_net_crypto::Timestamp::ZERO;
    let mut req = vec![80, 0, 0, 0, 0, 0];
    req.extend_from_slice(&u64::MAX.to_be_bytes());
    req.extend_from_slice(&[0; 32]);
    rx.handle_packet(now, &req).unwrap();
    rx.control(now, &mut session, INCOMING_0, FileControl::Resume)
        .unwrap();
    let mut chunk = vec![82, 0];
    chunk.extend_from_slice(&[1; 1371]);
    let mut accepted = 0;
    let overflow = loop {
        match rx.handle_packet(now, &chunk) {
            Ok(()) => accepted += 1,
            Err(e) => break e,
        }
        assert!(accepted <= MAX_PENDING_EVENTS, "queue grew past its bound");
    };
    assert_eq!(overflow, FileError::EventQueueFull);
    assert_eq!(rx.stats().transfers_killed_on_overflow, 1);
    assert_eq!(rx.active(), (0, 0), "the transfer with a hole is gone");
    let mut last = None;
    while let Some(e) = rx.poll_event() {
        last = Some(e);
    }
    assert_eq!(
        last,
        Some(FileEvent::RecvControl {
            file: INCOMING_0,
            control: FileControl::Cancel
        })
    );
    // With the queue drained, the next chunk cannot land at the wrong offset.
    assert_eq!(
        rx.handle_packet(now, &chunk),
        Err(FileError::UnknownTransfer(FileNumber::Incoming(0)))
    );
    session.outbox.clear();
    rx.poll_send(now, &mut session);
    let sent: Vec<Vec<u8>> = session.outbox.iter().map(|(_, _, b)| b.clone()).collect();
    assert_eq!(sent, [vec![81, 1, 0, 2]], "the sender is told to stop");
}

#[test]
fn a_kill_for_an_unknown_transfer_is_not_answered() {
    let (mut p, data) = half_done();
    let kill = ControlPacket {
        direction: Direction::SenderIsSending,
        file_number: 9,
        control: ControlKind::Kill,
    };
    assert_eq!(
        p.b.ft.handle_packet(p.now, &kill.encode()),
        Err(FileError::UnknownTransfer(FileNumber::Incoming(9)))
    );
    p.b.session.grant(0);
    p.b.ft.poll_send(p.now, &mut p.b.session);
    assert!(p.b.session.outbox.is_empty(), "no KILL ping-pong");
    finish(p, &data);
}
