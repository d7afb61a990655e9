//! Transfers between two `FileTransfers` through an in-memory lossless pipe: the happy
//! paths of docs/protocol.md §3 (send, accept, pause, resume, cancel, seek, streaming, avatars).

mod common;

use common::{content, Pair};
use rustox_file_transfer::{FileControl, FileEvent, FileKind, UNKNOWN_FILE_SIZE};

const INCOMING_0: u32 = 1 << 16;

fn received(p: &Pair, file: u32) -> usize {
    p.b.app.received.get(&file).map_or(0, Vec::len)
}

#[test]
fn send_accept_complete_is_byte_exact_and_frees_both_slots() {
    for len in [100_000usize, 1371 * 3, 1, 1370, 1372] {
        let mut p = Pair::new();
        let data = content(len, 1);
        let file = p.a.send(p.now, data.clone(), b"photo.jpg");
        assert_eq!(file, 0, "first outgoing file is number 0");
        p.run_until(4, 10_000, |p| !p.a.app.sent_complete.is_empty());
        assert_eq!(p.b.app.received[&INCOMING_0], data, "len {len}");
        assert_eq!(p.b.app.recv_complete, [INCOMING_0]);
        assert_eq!(p.a.app.sent_complete, [0]);
        match &p.b.app.offers[0] {
            FileEvent::FileRecv {
                file,
                kind,
                size,
                file_id,
                name,
            } => {
                assert_eq!(*file, INCOMING_0);
                assert_eq!(*kind, FileKind::Data);
                assert_eq!(*size, len as u64);
                assert_eq!(*file_id, [7; 32]);
                assert_eq!(name, b"photo.jpg");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(p.a.ft.active(), (0, 0));
        assert_eq!(p.b.ft.active(), (0, 0));
        assert!(p.a.app.chunk_errors.is_empty() && p.b.app.packet_errors.is_empty());
        // Every chunk but the last was exactly 1371 bytes.
        let lens: Vec<usize> = p.a.app.requests.iter().map(|r| r.2).collect();
        let (last, body) = lens.split_last().unwrap();
        assert_eq!(*last, 0);
        assert!(body[..body.len() - 1].iter().all(|&l| l == 1371));
    }
}

#[test]
fn empty_file_sends_one_empty_chunk_and_completes() {
    let mut p = Pair::new();
    p.a.send(p.now, Vec::new(), b"empty");
    p.run_until(4, 100, |p| !p.a.app.sent_complete.is_empty());
    assert_eq!(p.b.app.recv_complete, [INCOMING_0]);
    assert!(!p.b.app.received.contains_key(&INCOMING_0));
    assert_eq!(p.a.ft.stats().chunks_sent, 1);
}

#[test]
fn sender_is_not_asked_for_data_before_accept() {
    let mut p = Pair::new();
    p.b.app.auto_accept = false;
    p.a.send(p.now, content(50_000, 2), b"x");
    for _ in 0..20 {
        p.step(8);
    }
    assert!(p.a.app.requests.is_empty());
    assert!(!p.b.ft.transfer(INCOMING_0).unwrap().transferring);
    p.b.ft
        .control(p.now, &mut p.b.session, INCOMING_0, FileControl::Resume)
        .unwrap();
    p.run_until(8, 1000, |p| !p.a.app.sent_complete.is_empty());
    assert_eq!(p.a.app.controls, [(0, FileControl::Resume)]);
    assert_eq!(p.b.app.received[&INCOMING_0], content(50_000, 2));
}

fn pause_and_resume(pause_by_receiver: bool) {
    let mut p = Pair::new();
    let data = content(200_000, 3);
    p.a.send(p.now, data.clone(), b"big");
    p.run_until(2, 1000, |p| received(p, INCOMING_0) > 20_000);
    let now = p.now;
    if pause_by_receiver {
        p.b.ft
            .control(now, &mut p.b.session, INCOMING_0, FileControl::Pause)
            .unwrap();
    } else {
        p.a.ft
            .control(now, &mut p.a.session, 0, FileControl::Pause)
            .unwrap();
    }
    // Chunks already in the pipe land; after that nothing moves.
    p.step(2);
    p.step(2);
    let frozen = received(&p, INCOMING_0);
    for _ in 0..50 {
        p.step(2);
    }
    assert_eq!(received(&p, INCOMING_0), frozen, "data moved while paused");
    assert!(frozen < data.len());
    if pause_by_receiver {
        // The accept itself was reported as a RESUME first (c-toxcore's control callback).
        assert_eq!(
            p.a.app.controls,
            [(0, FileControl::Resume), (0, FileControl::Pause)]
        );
        // The sender cannot resume what the receiver paused.
        assert_eq!(
            p.a.ft
                .control(p.now, &mut p.a.session, 0, FileControl::Resume),
            Err(rustox_file_transfer::FileControlError::Denied)
        );
        p.b.ft
            .control(p.now, &mut p.b.session, INCOMING_0, FileControl::Resume)
            .unwrap();
    } else {
        assert_eq!(p.b.app.controls, [(INCOMING_0, FileControl::Pause)]);
        p.a.ft
            .control(p.now, &mut p.a.session, 0, FileControl::Resume)
            .unwrap();
    }
    p.run_until(2, 10_000, |p| !p.a.app.sent_complete.is_empty());
    assert_eq!(p.b.app.received[&INCOMING_0], data);
}

#[test]
fn pause_and_resume_by_receiver() {
    pause_and_resume(true);
}

#[test]
fn pause_and_resume_by_sender() {
    pause_and_resume(false);
}

#[test]
fn paused_by_both_needs_both_resumes() {
    let mut p = Pair::new();
    let data = content(100_000, 4);
    p.a.send(p.now, data.clone(), b"f");
    p.run_until(2, 1000, |p| received(p, INCOMING_0) > 10_000);
    let now = p.now;
    p.a.ft
        .control(now, &mut p.a.session, 0, FileControl::Pause)
        .unwrap();
    p.b.ft
        .control(now, &mut p.b.session, INCOMING_0, FileControl::Pause)
        .unwrap();
    p.step(2);
    p.a.ft
        .control(p.now, &mut p.a.session, 0, FileControl::Resume)
        .unwrap();
    p.step(2);
    p.step(2);
    let frozen = received(&p, INCOMING_0);
    for _ in 0..20 {
        p.step(2);
    }
    assert_eq!(
        received(&p, INCOMING_0),
        frozen,
        "still paused by the receiver"
    );
    p.b.ft
        .control(p.now, &mut p.b.session, INCOMING_0, FileControl::Resume)
        .unwrap();
    p.run_until(2, 10_000, |p| !p.a.app.sent_complete.is_empty());
    assert_eq!(p.b.app.received[&INCOMING_0], data);
}

fn cancel(by_receiver: bool) {
    let mut p = Pair::new();
    p.a.send(p.now, content(100_000, 5), b"f");
    p.run_until(2, 1000, |p| received(p, INCOMING_0) > 10_000);
    if by_receiver {
        p.b.ft
            .control(p.now, &mut p.b.session, INCOMING_0, FileControl::Cancel)
            .unwrap();
    } else {
        p.a.ft
            .control(p.now, &mut p.a.session, 0, FileControl::Cancel)
            .unwrap();
    }
    for _ in 0..10 {
        p.step(2);
    }
    assert_eq!(p.a.ft.active(), (0, 0));
    assert_eq!(p.b.ft.active(), (0, 0));
    if by_receiver {
        assert_eq!(
            p.a.app.controls,
            [(0, FileControl::Resume), (0, FileControl::Cancel)]
        );
    } else {
        assert_eq!(p.b.app.controls, [(INCOMING_0, FileControl::Cancel)]);
    }
    assert!(p.a.app.sent_complete.is_empty());
    assert!(p.b.app.recv_complete.is_empty());
    // The freed slot is reused by the next file.
    assert_eq!(p.a.send(p.now, content(10, 6), b"g"), 0);
    p.run_until(2, 1000, |p| !p.a.app.sent_complete.is_empty());
    assert_eq!(p.b.app.received[&INCOMING_0][..10], content(10, 6)[..]);
}

#[test]
fn cancel_by_receiver() {
    cancel(true);
}

#[test]
fn cancel_by_sender() {
    cancel(false);
}

#[test]
fn seek_then_accept_resumes_from_the_offset_byte_exact() {
    let mut p = Pair::new();
    p.b.app.auto_accept = false;
    let data = content(50_000, 8);
    p.a.send(p.now, data.clone(), b"resume.bin");
    p.step(0);
    // Bob already holds the first 20 000 bytes from an earlier, broken transfer.
    let offset = 20_000u64;
    p.b.app
        .received
        .insert(INCOMING_0, data[..offset as usize].to_vec());
    p.b.ft
        .seek(p.now, &mut p.b.session, INCOMING_0, offset)
        .unwrap();
    p.b.ft
        .control(p.now, &mut p.b.session, INCOMING_0, FileControl::Resume)
        .unwrap();
    p.run_until(3, 1000, |p| !p.a.app.sent_complete.is_empty());
    assert_eq!(
        p.a.app.requests[0],
        (0, offset, 1371),
        "first request starts at the offset"
    );
    assert_eq!(p.b.app.received[&INCOMING_0], data);
    let sent: u64 = p.a.app.requests.iter().map(|r| r.2 as u64).sum();
    assert_eq!(
        sent,
        data.len() as u64 - offset,
        "nothing before the offset was sent"
    );
}

#[test]
fn unknown_size_streams_until_a_short_chunk() {
    for stream_len in [10_000usize, 1371 * 4] {
        let mut p = Pair::new();
        let data = content(stream_len, 9);
        let file =
            p.a.ft
                .file_send(
                    p.now,
                    &mut p.a.session,
                    FileKind::Data,
                    UNKNOWN_FILE_SIZE,
                    [1; 32],
                    b"live",
                )
                .unwrap();
        p.a.app.contents.insert(file, data.clone());
        p.a.app.stream_ends.insert(file, stream_len);
        p.run_until(3, 1000, |p| !p.a.app.sent_complete.is_empty());
        assert_eq!(p.b.app.received[&INCOMING_0], data, "len {stream_len}");
        assert_eq!(p.b.app.recv_complete, [INCOMING_0]);
        match &p.b.app.offers[0] {
            FileEvent::FileRecv { size, .. } => assert_eq!(*size, u64::MAX),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn avatar_kind_and_hash_id_reach_the_receiver() {
    let mut p = Pair::new();
    let image = content(3000, 10);
    let id = [0xAA; 32];
    let file =
        p.a.ft
            .file_send(p.now, &mut p.a.session, FileKind::Avatar, 3000, id, b"")
            .unwrap();
    p.a.app.contents.insert(file, image.clone());
    p.run_until(2, 100, |p| !p.a.app.sent_complete.is_empty());
    match &p.b.app.offers[0] {
        FileEvent::FileRecv {
            kind,
            file_id,
            name,
            ..
        } => {
            assert_eq!(*kind, FileKind::Avatar);
            assert_eq!(*file_id, id);
            assert!(name.is_empty());
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        p.b.ft.file_id(INCOMING_0),
        Err(rustox_file_transfer::FileGetError::NotFound)
    );
    assert_eq!(p.b.app.received[&INCOMING_0], image);
}

#[test]
fn transfers_in_both_directions_at_once() {
    let mut p = Pair::new();
    p.a.app.auto_accept = true;
    let ab = content(30_000, 11);
    let ba = content(40_000, 12);
    p.a.send(p.now, ab.clone(), b"ab");
    p.b.send(p.now, ba.clone(), b"ba");
    p.run_until(3, 1000, |p| {
        !p.a.app.sent_complete.is_empty() && !p.b.app.sent_complete.is_empty()
    });
    assert_eq!(p.b.app.received[&INCOMING_0], ab);
    assert_eq!(p.a.app.received[&INCOMING_0], ba);
}

#[test]
fn friend_offline_resets_every_transfer_silently() {
    let mut p = Pair::new();
    p.a.send(p.now, content(100_000, 13), b"1");
    p.a.send(p.now, content(100_000, 14), b"2");
    p.run_until(2, 1000, |p| received(p, INCOMING_0) > 5000);
    p.a.ft.friend_offline();
    p.b.ft.friend_offline();
    assert_eq!(p.a.ft.active(), (0, 0));
    assert_eq!(p.b.ft.active(), (0, 0));
    let controls_before = p.a.app.controls.len();
    for _ in 0..5 {
        p.step(2);
    }
    assert_eq!(
        p.a.app.controls.len(),
        controls_before,
        "no callback on reset"
    );
    assert!(
        p.a.app.requests.iter().all(|r| r.2 != 0),
        "no completion reported"
    );
}
