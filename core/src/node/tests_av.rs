//! Calls and group audio between real nodes joined in memory, in virtual time (the harness
//! of `tests_conference.rs`): how the node routes the calls' packets with calls on and
//! off, its checks before a command reaches the engine, and group audio among the three
//! peers of an AV conference.

use std::time::Duration;

use super::tests_conference::{conference_of_three, three, Net};
use super::*;
use crate::av::codec::{
    AudioDecoder, AudioEncoder, CodecError, CodecFactory, DecodedPicture, EncodedVideo,
    VideoDecoder, VideoEncoder, YuvFrame,
};
use crate::av::{CallControl, FriendCallState};
use crate::conference::{ConferenceNumber, ConferenceType, PeerList};

/// Samples a [`MarkCodecs`] packet carries from the start of its frame.
const MARKS: usize = 8;

/// A codec for routing tests: a packet is an Opus table-of-contents byte saying "SILK,
/// 20 ms" (so group audio's shape check passes) and the frame's first [`MARKS`] samples;
/// the decoder gives them back followed by silence.
struct MarkCodecs;

struct MarkEncoder {
    channels: u8,
}

struct MarkDecoder {
    channels: u8,
}

/// SILK-only, 20 ms (RFC 6716 config 1), mono; `| 0x04` for stereo.
const TOC_SILK_20MS: u8 = 0x08;

impl AudioEncoder for MarkEncoder {
    fn encode(&mut self, pcm: &[i16], out: &mut [u8]) -> Result<usize, CodecError> {
        let stereo = if self.channels == 2 { 0x04 } else { 0 };
        out[0] = TOC_SILK_20MS | stereo;
        for (i, s) in pcm.iter().take(MARKS).enumerate() {
            out[1 + 2 * i..3 + 2 * i].copy_from_slice(&s.to_be_bytes());
        }
        Ok(1 + 2 * MARKS.min(pcm.len()))
    }

    fn set_bit_rate(&mut self, _: u32) -> Result<(), CodecError> {
        Ok(())
    }
}

impl AudioDecoder for MarkDecoder {
    fn decode(
        &mut self,
        packet: Option<&[u8]>,
        _fec: bool,
        frame_samples: usize,
        out: &mut Vec<i16>,
    ) -> Result<usize, CodecError> {
        let start = out.len();
        if let Some(p) = packet {
            for pair in p.get(1..).unwrap_or_default().chunks_exact(2) {
                out.push(i16::from_be_bytes([pair[0], pair[1]]));
            }
        }
        out.resize(start + frame_samples * usize::from(self.channels), 0);
        Ok(frame_samples)
    }
}

impl CodecFactory for MarkCodecs {
    fn audio_encoder(
        &self,
        _bit_rate: u32,
        _sampling_rate: u32,
        channels: u8,
    ) -> Result<Box<dyn AudioEncoder>, CodecError> {
        Ok(Box::new(MarkEncoder { channels }))
    }

    fn audio_decoder(
        &self,
        _sampling_rate: u32,
        channels: u8,
    ) -> Result<Box<dyn AudioDecoder>, CodecError> {
        Ok(Box::new(MarkDecoder { channels }))
    }

    fn video_encoder(
        &self,
        _bit_rate: u32,
        _width: u16,
        _height: u16,
    ) -> Result<Box<dyn VideoEncoder>, CodecError> {
        Ok(Box::new(MarkVideo))
    }

    fn video_decoder(&self) -> Result<Box<dyn VideoDecoder>, CodecError> {
        Ok(Box::new(MarkVideo))
    }
}

/// Video as the calls need it to exist (toxav makes both codecs for every call): a frame is
/// its size and its first luma byte, decoded into a flat picture.
struct MarkVideo;

impl VideoEncoder for MarkVideo {
    fn encode(
        &mut self,
        picture: &YuvFrame<'_>,
        keyframe: bool,
        out: &mut Vec<EncodedVideo>,
    ) -> Result<(), CodecError> {
        let mut data = Vec::with_capacity(5);
        data.extend_from_slice(&picture.width.to_be_bytes());
        data.extend_from_slice(&picture.height.to_be_bytes());
        data.push(picture.y.first().copied().unwrap_or(0));
        out.push(EncodedVideo { data, keyframe });
        Ok(())
    }

    fn set_bit_rate(&mut self, _: u32) -> Result<(), CodecError> {
        Ok(())
    }
}

impl VideoDecoder for MarkVideo {
    fn decode(&mut self, data: &[u8], out: &mut Vec<DecodedPicture>) -> Result<(), CodecError> {
        let [w0, w1, h0, h1, y] = *data else {
            return Err(CodecError("not a mark frame".into()));
        };
        let (width, height) = (u16::from_be_bytes([w0, w1]), u16::from_be_bytes([h0, h1]));
        let (w, h) = (usize::from(width), usize::from(height));
        let chroma = w.div_ceil(2) * h.div_ceil(2);
        out.push(DecodedPicture {
            width,
            height,
            y: vec![y; w * h],
            u: vec![128; chroma],
            v: vec![128; chroma],
        });
        Ok(())
    }
}

#[test]
fn with_calls_off_msi_reaches_the_application_and_call_media_is_dropped() {
    let (mut net, f) = three();
    let (ab, ba) = (f[0], f[1]);
    let now = net.now;
    let from = net.mark(1);
    // toxav's signalling id, sent as a custom lossless packet (tox.h allows 69).
    net.nodes[0]
        .send_lossless_packet(now, ab, &[69, 0, 1, 2])
        .unwrap();
    // An RTP audio packet and a loss report, on the session as toxav would send them.
    let ignored_before = net.nodes[1].stats().packets_ignored;
    {
        let (conn, _) = net.nodes[0].online_session(ab).unwrap();
        conn.send_lossy(now, &[192, 1, 2, 3]).unwrap();
        conn.send_lossy(now, &[196, 0, 0, 0, 0, 0, 0, 0, 0])
            .unwrap();
    }
    assert!(
        net.run(Duration::from_secs(2), |n| n.saw(1, from, |e| matches!(
            e,
            NodeEvent::CustomPacket { lossless: true, data, friend } if data == &[69, 0, 1, 2] && *friend == ba
        ))),
        "the MSI packet arrived as a custom packet"
    );
    net.run(Duration::from_millis(100), |_| false);
    assert!(
        !net.saw(1, from, |e| matches!(
            e,
            NodeEvent::CustomPacket {
                lossless: false,
                ..
            } | NodeEvent::Av(_)
        )),
        "no lossy call packet reached the application"
    );
    assert!(net.nodes[1].stats().packets_ignored >= ignored_before + 2);
}

#[test]
fn a_command_reaches_the_engine_only_with_calls_on_for_an_existing_online_friend() {
    let (mut net, f) = three();
    let now = net.now;
    let a = &mut net.nodes[0];
    let ran = |_: &mut crate::av::Calls, _: u32| true;
    assert_eq!(a.av_command(now, f[0], ran), Err(AvAccessError::Disabled));
    assert!(a.calls().is_none());
    assert!(a.enable_av(Box::new(MarkCodecs)));
    assert!(!a.enable_av(Box::new(MarkCodecs)), "calls are on already");
    assert!(a.calls().is_some());
    assert_eq!(
        a.av_command(now, FriendNumber(77), ran),
        Err(AvAccessError::FriendNotFound)
    );
    let stranger = PublicKey([9; 32]);
    let offline = a.add_friend_norequest(now, stranger).unwrap();
    assert_eq!(
        a.av_command(now, offline, ran),
        Err(AvAccessError::FriendNotConnected)
    );
    assert_eq!(
        a.av_command_any(now, FriendNumber(77), ran),
        Err(AvAccessError::FriendNotFound)
    );
}

/// A 20 ms frame at 48 kHz mono whose first samples say who sent it and which frame it is.
fn marked_frame(sender: usize, frame: u16) -> Vec<i16> {
    let mut pcm = vec![0i16; 960];
    pcm[0] = 1000 + sender as i16;
    pcm[1] = frame as i16;
    pcm
}

#[test]
fn group_audio_crosses_an_av_conference_of_three_with_each_peer_named() {
    let (mut net, _, confs) = conference_of_three(ConferenceType::Av);
    let now = net.now;
    for node in net.nodes.iter_mut() {
        node.set_group_audio_codecs(Box::new(MarkCodecs));
    }
    // A made the conference with conference_new: its audio is off until turned on. B and
    // C joined with conference_join_av: theirs is on.
    assert!(!net.nodes[0].conference_audio_enabled(confs[0]));
    assert_eq!(
        net.nodes[0].conference_send_audio(now, confs[0], &marked_frame(0, 0), 960, 1, 48_000),
        Err(GroupAudioError::NotAv)
    );
    net.nodes[0]
        .conference_set_audio(now, confs[0], true)
        .unwrap();
    assert_eq!(
        net.nodes[0].conference_set_audio(now, confs[0], true),
        Err(GroupAudioError::NotAv),
        "audio on twice"
    );
    for (i, node) in net.nodes.iter().enumerate() {
        assert!(node.conference_audio_enabled(confs[i]), "node {i}");
    }
    assert_eq!(
        net.nodes[1].conference_send_audio(now, confs[1], &[0; 100], 100, 1, 48_000),
        Err(GroupAudioError::Invalid),
        "100 samples is no Opus frame"
    );
    assert_eq!(
        net.nodes[1].conference_send_audio(now, confs[1], &[0; 960], 960, 1, 44_100),
        Err(GroupAudioError::Invalid),
        "44.1 kHz is no Opus rate"
    );
    assert_eq!(
        net.nodes[1].conference_send_audio(now, ConferenceNumber(9), &[0; 960], 960, 1, 48_000),
        Err(GroupAudioError::NotFound)
    );

    let marks: Vec<usize> = (0..3).map(|i| net.mark(i)).collect();
    const FRAMES: u16 = 10;
    for frame in 0..FRAMES {
        let now = net.now;
        for (i, node) in net.nodes.iter_mut().enumerate() {
            node.conference_send_audio(now, confs[i], &marked_frame(i, frame), 960, 1, 48_000)
                .unwrap();
        }
        net.run(Duration::from_millis(20), |_| false);
    }
    net.run(Duration::from_millis(200), |_| false);

    let pks: Vec<PublicKey> = net.nodes.iter().map(|n| n.public_key()).collect();
    for to in 0..3 {
        for from in (0..3).filter(|f| *f != to) {
            let frames: Vec<(u32, Vec<i16>)> = net.events[to][marks[to]..]
                .iter()
                .filter_map(|e| match e {
                    NodeEvent::ConferenceAudio {
                        conference,
                        peer,
                        pcm,
                        channels: 1,
                        sampling_rate: 48_000,
                    } if *conference == confs[to] && pcm.first() == Some(&(1000 + from as i16)) => {
                        Some((*peer, pcm.clone()))
                    }
                    _ => None,
                })
                .collect();
            let order: Vec<i16> = frames.iter().map(|(_, pcm)| pcm[1]).collect();
            // Conference lossy packets are never resent, and the conference layer may lose
            // one on its way (here B's first never reaches C, directly or relayed): every
            // other frame arrives, in order, none twice.
            assert!(
                order.windows(2).all(|w| w[0] < w[1])
                    && order.len() >= usize::from(FRAMES) - 1
                    && order.last() == Some(&(FRAMES as i16 - 1)),
                "node {to} heard node {from}'s frames in order: {order:?} (unsent: {})",
                net.nodes[from].stats().conference_unsent
            );
            for (peer, pcm) in &frames {
                assert_eq!(pcm.len(), 960);
                let pk = net.nodes[to]
                    .conferences()
                    .peer_public_key(confs[to], PeerList::Online, *peer)
                    .unwrap();
                assert_eq!(
                    pk, pks[from],
                    "node {to} names node {from} by its peer number"
                );
            }
        }
        // Group audio is not handed over as a raw lossy conference packet too.
        assert!(!net.saw(to, marks[to], |e| matches!(
            e,
            NodeEvent::Conference(crate::conference::ConferenceEvent::Lossy { .. })
        )));
    }
}

fn call_event(e: &NodeEvent, who: FriendNumber) -> bool {
    matches!(e, NodeEvent::Av(crate::av::AvEvent::Call { friend, audio: true, video: false }) if *friend == who.0)
}

fn state_has(e: &NodeEvent, who: FriendNumber, bits: u32) -> bool {
    matches!(e, NodeEvent::Av(crate::av::AvEvent::State { friend, state }) if *friend == who.0 && state.0 & bits != 0)
}

/// The marks of the audio frames node `i` got from `who` since event `from`.
fn heard(net: &Net, i: usize, from: usize, who: FriendNumber) -> Vec<i16> {
    net.events[i][from..]
        .iter()
        .filter_map(|e| match e {
            NodeEvent::Av(crate::av::AvEvent::AudioFrame { friend, pcm, .. })
                if *friend == who.0 =>
            {
                pcm.get(1).copied().filter(|_| pcm.first() == Some(&777))
            }
            _ => None,
        })
        .collect()
}

/// A and B (friends in [`three`]) with calls on, A calling B with audio at 48 kbit/s and B
/// answering: the net, A's number for B, B's for A.
fn call_up() -> (Net, FriendNumber, FriendNumber) {
    let (mut net, f) = three();
    let (ab, ba) = (f[0], f[1]);
    for node in net.nodes.iter_mut() {
        assert!(node.enable_av(Box::new(MarkCodecs)));
    }
    let now = net.now;
    let from_b = net.mark(1);
    net.nodes[0]
        .av_command(now, ab, |c, f| c.call(now, f, 48, 0))
        .unwrap()
        .unwrap();
    assert!(
        net.run(Duration::from_secs(2), |n| n.saw(
            1,
            from_b,
            |e| call_event(e, ba)
        )),
        "B hears the call"
    );
    let now = net.now;
    let from_a = net.mark(0);
    net.nodes[1]
        .av_command(now, ba, |c, f| c.answer(now, f, 48, 0))
        .unwrap()
        .unwrap();
    let both = FriendCallState::SENDING_A | FriendCallState::ACCEPTING_A;
    assert!(
        net.run(Duration::from_secs(2), |n| n
            .saw(0, from_a, |e| state_has(e, ab, both))),
        "A hears the answer: {:?}",
        &net.events[0][from_a..]
    );
    // Signalling went to the engines, not to the application.
    for i in 0..2 {
        assert!(!net.saw(i, 0, |e| matches!(e, NodeEvent::CustomPacket { .. })));
    }
    (net, ab, ba)
}

#[test]
fn an_answered_call_carries_audio_both_ways_and_a_hang_up_ends_it() {
    let (mut net, ab, ba) = call_up();
    let (mark_a, mark_b) = (net.mark(0), net.mark(1));
    const FRAMES: i16 = 25;
    for n in 0..FRAMES {
        let now = net.now;
        let mut pcm = vec![0i16; 960];
        pcm[0] = 777;
        pcm[1] = n;
        for (i, friend) in [(0, ab), (1, ba)] {
            net.nodes[i]
                .av_command(now, friend, |c, f| {
                    c.send_audio_frame(now, f, &pcm, 960, 1, 48_000)
                })
                .unwrap()
                .unwrap();
        }
        net.run(Duration::from_millis(20), |_| false);
    }
    net.run(Duration::from_millis(500), |_| false);
    for (i, from, who) in [(0, mark_a, ab), (1, mark_b, ba)] {
        let marks = heard(&net, i, from, who);
        assert!(
            marks.windows(2).all(|w| w[0] < w[1]) && marks.len() >= FRAMES as usize - 2,
            "node {i} heard {marks:?}"
        );
        let stats = net.nodes[i].calls().unwrap().stats();
        assert!(stats.audio_frames_sent >= FRAMES as u64, "{stats:?}");
    }
    // A hangs up: B's call ends, and A's.
    let now = net.now;
    let from_b = net.mark(1);
    net.nodes[0]
        .av_command(now, ab, |c, f| c.control(now, f, CallControl::Cancel))
        .unwrap()
        .unwrap();
    assert!(
        net.run(Duration::from_secs(2), |n| n.saw(1, from_b, |e| state_has(
            e,
            ba,
            FriendCallState::FINISHED
        ))),
        "B's call finished"
    );
    assert!(!net.nodes[0].calls().unwrap().in_call(ab.0));
    assert!(!net.nodes[1].calls().unwrap().in_call(ba.0));
}

#[test]
fn a_friend_going_offline_ends_its_call_and_disabling_calls_hangs_up() {
    let (mut net, ab, ba) = call_up();
    assert!(net.nodes[0].calls().unwrap().in_call(ab.0));
    // B leaves A (deleting A as a friend sends OFFLINE): A's call with B ends.
    let now = net.now;
    let from_a = net.mark(0);
    net.nodes[1].delete_friend(now, ba).unwrap();
    assert!(!net.nodes[1].calls().unwrap().in_call(ba.0));
    assert!(
        net.run(Duration::from_secs(5), |n| n.saw(0, from_a, |e| state_has(
            e,
            ab,
            FriendCallState::ERROR | FriendCallState::FINISHED
        ))),
        "A's call ended: {:?}",
        &net.events[0][from_a..]
    );
    assert!(!net.nodes[0].calls().unwrap().in_call(ab.0));
    assert_eq!(net.nodes[0].calls().unwrap().call_count(), 0);

    // B calls C and turns calls off: the hang-up reaches C.
    let (bc, cb) = (FriendNumber(1), FriendNumber(0));
    let now = net.now;
    let from_c = net.mark(2);
    net.nodes[1]
        .av_command(now, bc, |c, f| c.call(now, f, 48, 0))
        .unwrap()
        .unwrap();
    assert!(
        net.run(Duration::from_secs(2), |n| n.saw(
            2,
            from_c,
            |e| call_event(e, cb)
        )),
        "C hears B's call"
    );
    let now = net.now;
    net.nodes[1].disable_av(now);
    assert!(net.nodes[1].calls().is_none());
    assert!(
        net.run(Duration::from_secs(2), |n| n.saw(2, from_c, |e| state_has(
            e,
            cb,
            FriendCallState::FINISHED
        ))),
        "C's call finished"
    );
    assert_eq!(net.nodes[2].calls().unwrap().call_count(), 0);
}

/// Every audio sample node `i` got since event `from`, from a call with `who` or from
/// conference peers (`who` = None), concatenated.
#[cfg(feature = "codecs")]
fn received_pcm(net: &Net, i: usize, from: usize, who: Option<FriendNumber>) -> Vec<i16> {
    net.events[i][from..]
        .iter()
        .filter_map(|e| match (e, who) {
            (NodeEvent::Av(crate::av::AvEvent::AudioFrame { friend, pcm, .. }), Some(w))
                if *friend == w.0 =>
            {
                Some(pcm.clone())
            }
            (NodeEvent::ConferenceAudio { pcm, .. }, None) => Some(pcm.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

#[cfg(feature = "codecs")]
#[test]
fn on_libopus_a_tone_crosses_a_call_and_an_av_conference_at_its_frequency() {
    use crate::av::codec::SystemCodecs;
    use crate::av::signal::{estimate_frequency, Tone};
    const HZ: f64 = 440.0;

    // A call, A to B.
    let (mut net, f) = three();
    let (ab, ba) = (f[0], f[1]);
    for node in net.nodes.iter_mut() {
        node.enable_av(Box::new(SystemCodecs));
    }
    let now = net.now;
    net.nodes[0]
        .av_command(now, ab, |c, f| c.call(now, f, 48, 0))
        .unwrap()
        .unwrap();
    assert!(net.run(Duration::from_secs(2), |n| n
        .saw(1, 0, |e| call_event(e, ba))));
    let now = net.now;
    net.nodes[1]
        .av_command(now, ba, |c, f| c.answer(now, f, 48, 0))
        .unwrap()
        .unwrap();
    net.run(Duration::from_millis(100), |_| false);
    let from = net.mark(1);
    let mut tone = Tone::new(HZ, 48_000, 1, 8_000);
    for _ in 0..50 {
        let now = net.now;
        let pcm = tone.frame(960);
        net.nodes[0]
            .av_command(now, ab, |c, f| {
                c.send_audio_frame(now, f, &pcm, 960, 1, 48_000)
            })
            .unwrap()
            .unwrap();
        net.run(Duration::from_millis(20), |_| false);
    }
    net.run(Duration::from_millis(300), |_| false);
    let pcm = received_pcm(&net, 1, from, Some(ba));
    assert!(pcm.len() >= 40 * 960, "B got {} samples", pcm.len());
    // The codec's start-up is past after the first quarter second.
    let got = estimate_frequency(&pcm[12_000..], 1, 48_000).expect("a tone");
    assert!((got - HZ).abs() < 10.0, "the call carried {got} Hz");

    // An AV conference of three on the default codecs: A's tone reaches B and C.
    let (mut net, _, confs) = conference_of_three(ConferenceType::Av);
    let now = net.now;
    net.nodes[0]
        .conference_set_audio(now, confs[0], true)
        .unwrap();
    let marks = [net.mark(1), net.mark(2)];
    let mut tone = Tone::new(HZ, 48_000, 1, 8_000);
    for _ in 0..50 {
        let now = net.now;
        let pcm = tone.frame(960);
        net.nodes[0]
            .conference_send_audio(now, confs[0], &pcm, 960, 1, 48_000)
            .unwrap();
        net.run(Duration::from_millis(20), |_| false);
    }
    net.run(Duration::from_millis(300), |_| false);
    for (k, i) in [1, 2].into_iter().enumerate() {
        let pcm = received_pcm(&net, i, marks[k], None);
        assert!(pcm.len() >= 40 * 960, "node {i} got {} samples", pcm.len());
        let got = estimate_frequency(&pcm[12_000..], 1, 48_000).expect("a tone");
        assert!((got - HZ).abs() < 10.0, "node {i} heard {got} Hz");
    }
}

/// net_crypto's data packet id (docs/protocol.md §2.5).
const PACKET_ID_CRYPTO_DATA: u8 = 27;

/// A call's audio during a file transfer between the same friends: every media datagram is
/// the very next session datagram the sender puts out, though file data is queued or in
/// flight beside it, and the file completes. (That the file yields the call its rate is
/// net_crypto's test: `transport_lossy_priority.rs`, pacer.rs.)
#[test]
fn call_audio_goes_ahead_of_a_file_on_the_same_session_and_the_file_still_completes() {
    use sha2::{Digest, Sha256};
    use std::io::Cursor;

    let (mut net, ab, ba) = call_up();
    let size = 20_000_000usize;
    let data: Vec<u8> = (0..size).map(|i| (i % 253) as u8).collect();
    let now = net.now;
    let from_b = net.mark(1);
    net.nodes[0]
        .send_file(
            now,
            ab,
            PreparedFile {
                source: Box::new(Cursor::new(data.clone())),
                size: size as u64,
                sha256: Sha256::digest(&data).into(),
            },
            b"big.bin",
        )
        .unwrap();
    assert!(net.run(Duration::from_secs(2), |n| n
        .saw(1, from_b, |e| matches!(e, NodeEvent::FileOffered(_)))));
    let offer = net.events[1][from_b..]
        .iter()
        .find_map(|e| match e {
            NodeEvent::FileOffered(o) => Some(o.clone()),
            _ => None,
        })
        .unwrap();
    let now = net.now;
    net.nodes[1]
        .accept_file(now, ba, offer.file, Box::new(Cursor::new(Vec::new())), None)
        .unwrap();
    let a_addr = SocketAddr::from(([10, 0, 2, 1], 33445));
    let (mut behind_backlog, mut first_out) = (0, 0);
    const FRAMES: usize = 50;
    for n in 0..FRAMES {
        let now = net.now;
        let session = net.nodes[0].online_session_id(ab).unwrap();
        let stats = net.nodes[0]
            .endpoint()
            .connection(session)
            .unwrap()
            .transport()
            .stats();
        behind_backlog += usize::from(stats.send_queue_len + stats.bytes_in_flight > 0);
        let mut pcm = vec![0i16; 960];
        pcm[0] = 777;
        pcm[1] = n as i16;
        net.nodes[0]
            .av_command(now, ab, |c, f| {
                c.send_audio_frame(now, f, &pcm, 960, 1, 48_000)
            })
            .unwrap()
            .unwrap();
        // The next session datagram out (net_crypto data, 27; the DHT's and the onion's go
        // first by design): the audio (a mark frame is a few dozen bytes; file chunks fill
        // a datagram). Delivered at once.
        loop {
            let t = net.nodes[0]
                .poll_transmit(now)
                .expect("a datagram leaves now");
            net.nodes[1].handle_datagram(now, a_addr, &t.payload);
            if t.payload.first() == Some(&PACKET_ID_CRYPTO_DATA) {
                first_out += usize::from(t.payload.len() < 300);
                break;
            }
        }
        net.run(Duration::from_millis(20), |_| false);
    }
    assert_eq!(first_out, FRAMES, "every frame went out first");
    // The memory wire has no bottleneck: the transfer is over within a few hundred
    // milliseconds, and the frames of that time are the ones that had file data beside them.
    assert!(
        behind_backlog >= 5,
        "frames sent with file data queued or in flight: {behind_backlog}"
    );
    let marks = heard(&net, 1, from_b, ba);
    assert!(marks.len() >= FRAMES - 2, "B heard {marks:?}");
    assert!(
        net.run(Duration::from_secs(60), |n| n.saw(1, from_b, |e| matches!(
            e,
            NodeEvent::FileReceived { bytes, .. } if *bytes == size as u64
        ))),
        "the file completed"
    );
}

#[test]
fn video_frames_cross_a_call_on_packet_193() {
    let (mut net, f) = three();
    let (ab, ba) = (f[0], f[1]);
    for node in net.nodes.iter_mut() {
        node.enable_av(Box::new(MarkCodecs));
    }
    let now = net.now;
    net.nodes[0]
        .av_command(now, ab, |c, f| c.call(now, f, 0, 500))
        .unwrap()
        .unwrap();
    assert!(
        net.run(Duration::from_secs(2), |n| n.saw(1, 0, |e| matches!(
            e,
            NodeEvent::Av(crate::av::AvEvent::Call { video: true, .. })
        )))
    );
    let now = net.now;
    net.nodes[1]
        .av_command(now, ba, |c, f| c.answer(now, f, 0, 500))
        .unwrap()
        .unwrap();
    net.run(Duration::from_millis(100), |_| false);
    let from = net.mark(1);
    let (w, h) = (64u16, 48u16);
    for n in 0..10u8 {
        let now = net.now;
        let y = vec![n + 1; 64 * 48];
        let uv = vec![128; 32 * 24];
        let frame = YuvFrame {
            width: w,
            height: h,
            y: &y,
            u: &uv,
            v: &uv,
        };
        net.nodes[0]
            .av_command(now, ab, |c, f| c.send_video_frame(now, f, &frame))
            .unwrap()
            .unwrap();
        net.run(Duration::from_millis(40), |_| false);
    }
    net.run(Duration::from_millis(300), |_| false);
    let lumas: Vec<u8> = net.events[1][from..]
        .iter()
        .filter_map(|e| match e {
            NodeEvent::Av(crate::av::AvEvent::VideoFrame {
                friend,
                width: 64,
                height: 48,
                y,
                ..
            }) if *friend == ba.0 => y.first().copied(),
            _ => None,
        })
        .collect();
    assert_eq!(
        lumas,
        (1..=10).collect::<Vec<u8>>(),
        "B saw every picture in order"
    );
}
