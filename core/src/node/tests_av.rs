//! Calls and group audio between real nodes joined in memory, in virtual time (the harness
//! of `tests_conference.rs`): how the node routes the calls' packets with calls on and
//! off, its checks before a command reaches the engine, and group audio among the three
//! peers of an AV conference.

use std::time::Duration;

use super::tests_conference::{conference_of_three, three};
use super::*;
use crate::av::codec::{
    AudioDecoder, AudioEncoder, CodecError, CodecFactory, VideoDecoder, VideoEncoder,
};
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
        Err(CodecError("no video in routing tests".into()))
    }

    fn video_decoder(&self) -> Result<Box<dyn VideoDecoder>, CodecError> {
        Err(CodecError("no video in routing tests".into()))
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
