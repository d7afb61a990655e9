#![allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::receiver::{DISMISSED_FIRST_FRAMES, WORK_BUFFERS};
use super::*;
use proptest::prelude::*;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rustox_net_crypto::Timestamp;

const NOW: Timestamp = Timestamp::ZERO;

fn sample_header() -> RtpHeader {
    RtpHeader {
        version: 2,
        padding: true,
        extension: false,
        csrc_count: 5,
        marker: true,
        payload_type: 65,
        sequence: 0x1234,
        timestamp: 0xdead_beef,
        ssrc: 0x0102_0304,
        flags: 3,
        offset_full: 0x0001_0203,
        data_length_full: 0x0a0b_0c0d,
        received_length_full: 0x1112_1314,
        offset_lower: 0x0203,
        data_length_lower: 0xffff,
    }
}

/// The bytes `rtp_header_pack` writes for [`sample_header`], field by field.
fn sample_bytes() -> Vec<u8> {
    let mut b = vec![
        0b1010_0101, // ve=2 (10), pe=1, xe=0, cc=5 (0101)
        0b1100_0001, // ma=1, pt=65 (1000001)
        0x12,
        0x34, // sequnum
        0xde,
        0xad,
        0xbe,
        0xef, // timestamp
        0x01,
        0x02,
        0x03,
        0x04, // ssrc
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        3, // flags
        0x00,
        0x01,
        0x02,
        0x03, // offset_full
        0x0a,
        0x0b,
        0x0c,
        0x0d, // data_length_full
        0x11,
        0x12,
        0x13,
        0x14, // received_length_full
    ];
    b.extend_from_slice(&[0; 44]); // RTP_PADDING_FIELDS
    b.extend_from_slice(&[0x02, 0x03, 0xff, 0xff]); // offset_lower, data_length_lower
    b
}

#[test]
fn header_bytes_are_rtp_header_pack() {
    let bytes = sample_bytes();
    assert_eq!(bytes.len(), RTP_HEADER_LEN);
    assert_eq!(sample_header().encode().to_vec(), bytes);
    assert_eq!(RtpHeader::parse(&bytes), Ok(sample_header()));
}

#[test]
fn padding_is_ignored_and_bit_fields_masked() {
    let mut bytes = sample_bytes();
    for b in &mut bytes[32..76] {
        *b = 0xaa;
    }
    assert_eq!(RtpHeader::parse(&bytes), Ok(sample_header()));
    let wide = RtpHeader {
        version: 0xff,
        csrc_count: 0xff,
        payload_type: 0xff,
        ..RtpHeader::default()
    };
    let enc = wide.encode();
    assert_eq!(enc[0], 0b1100_1111);
    assert_eq!(enc[1], 0x7f);
}

#[test]
fn every_truncated_header_is_refused() {
    let bytes = sample_bytes();
    for n in 0..RTP_HEADER_LEN {
        assert_eq!(RtpHeader::parse(&bytes[..n]), Err(RtpError::TooShort(n)));
    }
}

fn any_header() -> impl Strategy<Value = RtpHeader> {
    (
        (
            0u8..4,
            any::<bool>(),
            any::<bool>(),
            0u8..16,
            any::<bool>(),
            0u8..128,
        ),
        (any::<u16>(), any::<u32>(), any::<u32>(), any::<u64>()),
        (
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<u16>(),
            any::<u16>(),
        ),
    )
        .prop_map(
            |((ve, pe, xe, cc, ma, pt), (sq, ts, ss, fl), (of, dl, rl, ol, dll))| RtpHeader {
                version: ve,
                padding: pe,
                extension: xe,
                csrc_count: cc,
                marker: ma,
                payload_type: pt,
                sequence: sq,
                timestamp: ts,
                ssrc: ss,
                flags: fl,
                offset_full: of,
                data_length_full: dl,
                received_length_full: rl,
                offset_lower: ol,
                data_length_lower: dll,
            },
        )
}

proptest! {
    #[test]
    fn header_round_trip(h in any_header()) {
        prop_assert_eq!(RtpHeader::parse(&h.encode()), Ok(h));
    }

    #[test]
    fn frames_round_trip(len in 0usize..20_000, video: bool, key: bool, seq: u16, ts: u32) {
        let kind = if video { MediaKind::Video } else { MediaKind::Audio };
        let frame: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
        let mut tx = RtpSender::new(kind, 1);
        tx.sequence = seq;
        let mut rx = RtpReceiver::new(kind);
        let mut got = Vec::new();
        for p in tx.packetize(&frame, ts, key) {
            prop_assert!(p.len() <= MAX_PACKET_LEN);
            if let Ok(Some(f)) = rx.handle_packet(NOW, &p) {
                got.push(f);
            }
        }
        if len == 0 {
            // c-toxcore's receivers refuse an empty frame (offset 0 >= length 0).
            prop_assert!(got.is_empty());
        } else {
            prop_assert_eq!(got.len(), 1);
            prop_assert_eq!(&got[0].data, &frame);
            prop_assert_eq!(got[0].sequence, seq);
            prop_assert_eq!(got[0].timestamp, ts);
            prop_assert_eq!(got[0].keyframe, key);
        }
    }
}

#[test]
fn audio_frame_in_one_packet() {
    let mut tx = RtpSender::new(MediaKind::Audio, 0x0a0b_0c0d);
    let packets = tx.packetize(&[9; 100], 777, false);
    assert_eq!(packets.len(), 1);
    let p = &packets[0];
    assert_eq!(p.len(), 1 + 80 + 100);
    assert_eq!(p[0], PACKET_ID_AUDIO);
    let h = RtpHeader::parse(&p[1..]).unwrap();
    assert_eq!(
        h,
        RtpHeader {
            version: 2,
            payload_type: 64,
            sequence: 0,
            timestamp: 777,
            ssrc: 0x0a0b_0c0d,
            flags: 0,
            offset_full: 0,
            data_length_full: 100,
            data_length_lower: 100,
            ..RtpHeader::default()
        }
    );
    // Header bytes 0..2 as c-toxcore writes them for audio: ve=2, pt=64.
    assert_eq!(&p[1..3], &[0x80, 0x40]);
    assert_eq!(tx.next_sequence(), 1);
    assert_eq!(
        RtpHeader::parse(&tx.packetize(&[1], 0, false)[0][1..])
            .unwrap()
            .sequence,
        1
    );
}

#[test]
fn split_points_match_rtp_send_data() {
    let mut tx = RtpSender::new(MediaKind::Video, 0);
    // 1291 + 81 < 1373: one packet.
    let p = tx.packetize(&[0; 1291], 0, false);
    assert_eq!(p.iter().map(Vec::len).collect::<Vec<_>>(), [1372]);
    let p = tx.packetize(&[0; 1292], 0, false);
    assert_eq!(p.iter().map(Vec::len).collect::<Vec<_>>(), [1373]);
    let p = tx.packetize(&[0; 1293], 0, false);
    assert_eq!(p.iter().map(Vec::len).collect::<Vec<_>>(), [1373, 82]);
    let p = tx.packetize(&[], 0, false);
    assert_eq!(p.iter().map(Vec::len).collect::<Vec<_>>(), [81]);
}

#[test]
fn large_video_frame_headers() {
    let mut tx = RtpSender::new(MediaKind::Video, 0);
    let frame = vec![5u8; 100_000];
    let packets = tx.packetize(&frame, 4242, true);
    assert_eq!(packets.len(), 100_000usize.div_ceil(1292));
    for (i, p) in packets.iter().enumerate() {
        assert!(p.len() <= MAX_PACKET_LEN);
        assert_eq!(p[0], PACKET_ID_VIDEO);
        let h = RtpHeader::parse(&p[1..]).unwrap();
        let offset = (i * 1292) as u32;
        assert_eq!(h.flags, FLAG_LARGE_FRAME | FLAG_KEY_FRAME);
        assert_eq!(h.payload_type, 65);
        assert_eq!(h.offset_full, offset);
        assert_eq!(h.offset_lower, offset as u16, "the 16-bit offset wraps");
        assert_eq!(h.data_length_full, 100_000);
        assert_eq!(h.data_length_lower, 0xffff, "clamped");
        assert_eq!((h.sequence, h.timestamp), (0, 4242));
    }
}

/// Packets of `count` video frames of `len` bytes, one every 33 ms, frame 0 a key frame.
fn video_frames(count: usize, len: usize) -> (Vec<Vec<u8>>, Vec<Vec<Vec<u8>>>) {
    let mut tx = RtpSender::new(MediaKind::Video, 0);
    let mut frames = Vec::new();
    let mut packets = Vec::new();
    for i in 0..count {
        let frame: Vec<u8> = (0..len).map(|j| (i * 31 + j * 7) as u8).collect();
        packets.push(tx.packetize(&frame, 1000 + 33 * i as u32, i == 0));
        frames.push(frame);
    }
    (frames, packets)
}

#[test]
fn video_frame_out_of_order_with_duplicates() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(193);
    let (frames, packets) = video_frames(1, 100_000);
    let mut shuffled = packets[0].clone();
    let dups: Vec<Vec<u8>> = shuffled.choose_multiple(&mut rng, 20).cloned().collect();
    shuffled.extend(dups);
    shuffled.shuffle(&mut rng);
    let mut rx = RtpReceiver::new(MediaKind::Video);
    let mut got = Vec::new();
    for p in &shuffled {
        match rx.handle_packet(NOW, p) {
            Ok(Some(f)) => got.push(f),
            Ok(None) => {}
            // Repeats after the frame finished are stale.
            Err(e) => assert_eq!(e, RtpError::Stale),
        }
    }
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].data, frames[0]);
    assert!(got[0].keyframe);
    assert_eq!(rx.stats().frames, 1);
    assert_eq!(rx.stats().frames_incomplete, 0);
}

#[test]
fn lost_piece_drops_the_frame_and_counts_the_bytes() {
    let (frames, packets) = video_frames(14, 5000);
    let mut rx = RtpReceiver::new(MediaKind::Video);
    let mut got = Vec::new();
    for (i, frame_packets) in packets.iter().enumerate() {
        for (j, p) in frame_packets.iter().enumerate() {
            // Frame 12 loses its second piece (1292 bytes).
            if i == 12 && j == 1 {
                continue;
            }
            if let Some(f) = rx.handle_packet(NOW, p).unwrap() {
                got.push(f);
            }
        }
    }
    let seqs: Vec<u16> = got.iter().map(|f| f.sequence).collect();
    let expect: Vec<u16> = (0..14).filter(|&s| s != 12).collect();
    assert_eq!(seqs, expect);
    for f in &got {
        assert_eq!(f.data, frames[f.sequence as usize]);
    }
    assert_eq!(rx.stats().frames_incomplete, 1);
    assert_eq!(rx.stats().bytes_missing, 1292);
    // The first frames are left out of the loss counts (DISMISS_FIRST_LOST_VIDEO_PACKET_COUNT).
    let counted = 14 - (DISMISSED_FIRST_FRAMES as u32 - 1);
    assert_eq!(rx.take_loss_counts(), (1292, counted * 5000));
    assert_eq!(rx.take_loss_counts(), (0, 0));
}

fn header_for(kind: MediaKind, seq: u16, ts: u32, full: u32, offset: u32, key: bool) -> RtpHeader {
    let mut flags = if kind == MediaKind::Video {
        FLAG_LARGE_FRAME
    } else {
        0
    };
    if key {
        flags |= FLAG_KEY_FRAME;
    }
    RtpHeader {
        version: 2,
        payload_type: kind.payload_type(),
        sequence: seq,
        timestamp: ts,
        flags,
        offset_full: offset,
        data_length_full: full,
        offset_lower: offset as u16,
        data_length_lower: full.min(0xffff) as u16,
        ..RtpHeader::default()
    }
}

fn packet(kind: MediaKind, h: &RtpHeader, piece: &[u8]) -> Vec<u8> {
    let mut p = vec![kind.packet_id()];
    p.extend_from_slice(&h.encode());
    p.extend_from_slice(piece);
    p
}

fn video(seq: u16, ts: u32, full: u32, offset: u32, key: bool, len: usize) -> Vec<u8> {
    let h = header_for(MediaKind::Video, seq, ts, full, offset, key);
    packet(MediaKind::Video, &h, &vec![seq as u8; len])
}

#[test]
fn old_incomplete_frame_is_dropped_when_a_newer_key_frame_completes() {
    let mut rx = RtpReceiver::new(MediaKind::Video);
    // Frame 1: half of it.
    assert_eq!(
        rx.handle_packet(NOW, &video(1, 100, 200, 0, false, 100)),
        Ok(None)
    );
    // Frame 2, a key frame, whole in two pieces.
    assert_eq!(
        rx.handle_packet(NOW, &video(2, 133, 300, 0, true, 150)),
        Ok(None)
    );
    let f = rx
        .handle_packet(NOW, &video(2, 133, 300, 150, true, 150))
        .unwrap()
        .unwrap();
    assert_eq!((f.sequence, f.keyframe, f.data.len()), (2, true, 300));
    assert_eq!(rx.stats().frames_incomplete, 1);
    // Frame 1's last piece now comes too late.
    assert_eq!(
        rx.handle_packet(NOW, &video(1, 100, 200, 100, false, 100)),
        Err(RtpError::Stale)
    );
}

#[test]
fn frames_behind_an_unfinished_key_frame_wait_for_it() {
    let mut rx = RtpReceiver::new(MediaKind::Video);
    assert_eq!(
        rx.handle_packet(NOW, &video(1, 100, 200, 0, true, 100)),
        Ok(None)
    );
    // Two whole interframes wait behind the key frame.
    assert_eq!(
        rx.handle_packet(NOW, &video(2, 133, 50, 0, false, 50)),
        Ok(None)
    );
    assert_eq!(
        rx.handle_packet(NOW, &video(3, 166, 50, 0, false, 50)),
        Ok(None)
    );
    let f = rx
        .handle_packet(NOW, &video(1, 100, 200, 100, true, 100))
        .unwrap()
        .unwrap();
    assert_eq!(f.sequence, 1);
    assert_eq!(rx.poll_frame().map(|f| f.sequence), Some(2));
    assert_eq!(rx.poll_frame().map(|f| f.sequence), Some(3));
    assert_eq!(rx.poll_frame(), None);
}

#[test]
fn full_buffers_keep_a_young_key_frame_then_give_it_up() {
    let mut rx = RtpReceiver::new(MediaKind::Video);
    rx.handle_packet(NOW, &video(1, 100, 200, 0, true, 100))
        .unwrap();
    rx.handle_packet(NOW, &video(2, 105, 200, 0, false, 100))
        .unwrap();
    rx.handle_packet(NOW, &video(3, 110, 200, 0, false, 100))
        .unwrap();
    // All WORK_BUFFERS taken; an interframe less than 15 ms after the key frame is dropped.
    assert_eq!(WORK_BUFFERS, 3);
    assert_eq!(
        rx.handle_packet(NOW, &video(4, 114, 200, 0, false, 100)),
        Err(RtpError::Stale)
    );
    // 15 ms after it, the key frame is given up for the new frame.
    assert_eq!(
        rx.handle_packet(NOW, &video(5, 115, 200, 0, false, 100)),
        Ok(None)
    );
    assert_eq!(rx.stats().frames_incomplete, 1);
    // A new key frame always takes the oldest buffer.
    assert_eq!(
        rx.handle_packet(NOW, &video(6, 116, 10, 0, true, 10))
            .unwrap()
            .unwrap()
            .sequence,
        6
    );
    // ...which gave up frame 2, and frame 6's completion passed frames 3 and 5.
    assert_eq!(rx.stats().frames_incomplete, 4);
}

#[test]
fn a_frame_older_than_the_newest_in_assembly_is_dropped() {
    let mut rx = RtpReceiver::new(MediaKind::Video);
    rx.handle_packet(NOW, &video(2, 200, 200, 0, false, 100))
        .unwrap();
    assert_eq!(
        rx.handle_packet(NOW, &video(1, 150, 200, 0, false, 100)),
        Err(RtpError::Stale)
    );
}

#[test]
fn bad_video_pieces_are_refused_and_change_nothing() {
    let mut rx = RtpReceiver::new(MediaKind::Video);
    rx.handle_packet(NOW, &video(1, 100, 300, 0, false, 100))
        .unwrap();
    let cases = [
        // Past the frame's end (c-toxcore would write past its buffer).
        (
            video(1, 100, 300, 250, false, 100),
            RtpError::PieceOutOfBounds,
        ),
        // Another length for the same frame.
        (
            video(1, 100, 400, 100, false, 100),
            RtpError::LengthMismatch,
        ),
        (video(1, 100, 300, 50, false, 100), RtpError::Overlap),
        (video(1, 100, 300, 300, false, 1), RtpError::BadOffset),
        (
            video(9, 900, MAX_VIDEO_FRAME_LEN + 1, 0, true, 10),
            RtpError::FrameTooLarge(MAX_VIDEO_FRAME_LEN + 1),
        ),
    ];
    for (p, e) in cases {
        assert_eq!(rx.handle_packet(NOW, &p), Err(e));
    }
    rx.handle_packet(NOW, &video(1, 100, 300, 100, false, 100))
        .unwrap();
    let f = rx
        .handle_packet(NOW, &video(1, 100, 300, 200, false, 100))
        .unwrap()
        .unwrap();
    assert_eq!(f.data, vec![1u8; 300]);
    assert_eq!(rx.stats().packets_refused, 5);
}

#[test]
fn packet_checks_of_handle_rtp_packet() {
    let mut rx = RtpReceiver::new(MediaKind::Audio);
    let good = RtpSender::new(MediaKind::Audio, 0)
        .packetize(&[1; 10], 0, false)
        .remove(0);
    assert_eq!(rx.handle_packet(NOW, &[]), Err(RtpError::TooShort(0)));
    assert_eq!(
        rx.handle_packet(NOW, &good[..80]),
        Err(RtpError::TooShort(80))
    );
    let mut wrong = good.clone();
    wrong[0] = PACKET_ID_VIDEO;
    assert_eq!(
        rx.handle_packet(NOW, &wrong),
        Err(RtpError::WrongId(PACKET_ID_VIDEO))
    );
    let mut pt = good.clone();
    pt[2] = 65;
    assert_eq!(rx.handle_packet(NOW, &pt), Err(RtpError::PayloadType(65)));
    // Header only: a frame of 0 bytes has no valid offset.
    let empty = RtpSender::new(MediaKind::Audio, 0)
        .packetize(&[], 0, false)
        .remove(0);
    assert_eq!(rx.handle_packet(NOW, &empty), Err(RtpError::BadOffset));
    assert_eq!(
        rx.handle_packet(NOW, &good).unwrap().unwrap().data,
        vec![1; 10]
    );
}

#[test]
fn audio_multipart_and_its_loss_counts() {
    let mut tx = RtpSender::new(MediaKind::Audio, 0);
    let frame: Vec<u8> = (0..3000u32).map(|i| i as u8).collect();
    let packets = tx.packetize(&frame, 50, false);
    assert_eq!(packets.len(), 3);
    let mut rx = RtpReceiver::new(MediaKind::Audio);
    assert_eq!(rx.handle_packet(NOW, &packets[2]), Ok(None));
    assert_eq!(rx.handle_packet(NOW, &packets[0]), Ok(None));
    let f = rx.handle_packet(NOW, &packets[1]).unwrap().unwrap();
    assert_eq!(f.data, frame);
    // bwc_add_recv(length): header and piece of every packet; audio never counts loss.
    assert_eq!(rx.take_loss_counts(), (0, 3 * 80 + 3000));

    // A newer frame replaces an unfinished one; an older piece is dropped.
    let a = tx.packetize(&frame, 60, false);
    let b = tx.packetize(&[7; 20], 70, false);
    rx.handle_packet(NOW, &a[0]).unwrap();
    assert_eq!(
        rx.handle_packet(NOW, &b[0]).unwrap().unwrap().data,
        vec![7; 20]
    );
    assert_eq!(rx.stats().frames_incomplete, 1);
    let c = tx.packetize(&frame, 80, false);
    rx.handle_packet(NOW, &c[0]).unwrap();
    assert_eq!(rx.handle_packet(NOW, &a[1]), Err(RtpError::Stale));
}

#[test]
fn random_input_never_panics_and_memory_stays_bounded() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(192);
    for kind in [MediaKind::Audio, MediaKind::Video] {
        let mut rx = RtpReceiver::new(kind);
        let mut tx = RtpSender::new(kind, 3);
        let base: Vec<Vec<u8>> = (0..8)
            .flat_map(|i| tx.packetize(&vec![i as u8; 3000], i * 10, i % 3 == 0))
            .collect();
        for _ in 0..20_000 {
            let mut p = base.choose(&mut rng).unwrap().clone();
            for _ in 0..rng.gen_range(0..6) {
                let at = rng.gen_range(0..p.len());
                p[at] = rng.gen();
            }
            if rng.gen_bool(0.2) {
                p.truncate(rng.gen_range(0..p.len()));
            }
            if let Ok(Some(f)) = rx.handle_packet(NOW, &p) {
                assert!(f.data.len() as u32 <= MAX_VIDEO_FRAME_LEN);
            }
            while rx.poll_frame().is_some() {}
        }
    }
}

#[test]
fn timestamps_compare_across_the_wrap() {
    let mut tx = RtpSender::new(MediaKind::Video, 0);
    let mut rx = RtpReceiver::new(MediaKind::Video);
    let mut seqs = Vec::new();
    for ts in [u32::MAX - 40, u32::MAX - 7, 26, 59] {
        for p in tx.packetize(&[1; 3000], ts, false) {
            if let Some(f) = rx.handle_packet(NOW, &p).unwrap() {
                seqs.push(f.sequence);
            }
        }
    }
    assert_eq!(seqs, [0, 1, 2, 3]);
    // A frame from before the wrap is now old.
    let late = tx.packetize(&[1; 10], u32::MAX - 100, false).remove(0);
    assert_eq!(rx.handle_packet(NOW, &late), Err(RtpError::Stale));
}
