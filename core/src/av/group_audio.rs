//! Group audio (groupav.c): Opus frames in the conferences' lossy packet 199, decoded per
//! peer.
//!
//! Inside a conference's lossy packet (whose own header the conference layer removes) a
//! group audio packet is the handler id [`GROUP_AUDIO_PACKET_ID`], a 16-bit sequence number
//! (big-endian, `net_pack_u16`) and one Opus packet (`send_audio_packet`). The sender
//! encodes at the rate and channel count the application hands it, 32 kbit/s mono or
//! 64 kbit/s stereo (`group_send_audio`). Each receiving peer has a jitter buffer of six
//! frames (`GROUP_JBUF_SIZE`) that is drained whenever a packet arrives: frames in order are
//! decoded at 48 kHz with as many channels as the packet says, and a frame missing once
//! six wait behind it is concealed (`decode_audio_packet`). There is no playout
//! timer: groupav.c has none either.
//!
//! Sans-IO: [`GroupAudio`] returns packets to send and decoded frames; the node carries
//! them (`node/av_ops.rs`).

use std::collections::HashMap;
use std::time::Duration;

use rustox_net_crypto::wire::Reader;
use rustox_net_crypto::Timestamp;

use super::codec::{AudioDecoder, AudioEncoder, CodecFactory};

/// `GROUP_AUDIO_PACKET_ID`: the lossy handler id of group audio.
pub const GROUP_AUDIO_PACKET_ID: u8 = 192;
/// The rate every received frame is decoded at (`decode_audio_packet`'s `sample_rate`).
pub const DECODE_SAMPLING_RATE: u32 = 48_000;
/// The rates `group_send_audio` accepts (Opus's).
pub const SAMPLING_RATES: [u32; 5] = [8_000, 12_000, 16_000, 24_000, 48_000];
/// `group_send_audio`'s bit rate for mono.
pub const MONO_BIT_RATE: u32 = 32_000;
/// `group_send_audio`'s bit rate for stereo.
pub const STEREO_BIT_RATE: u32 = 64_000;
/// `group_send_audio`'s `encoded[1024]`: the largest Opus packet sent.
pub const MAX_ENCODED: usize = 1024;
/// `GROUP_JBUF_SIZE`: frames the jitter buffer waits for before it skips a missing one.
const JITTER_CAPACITY: u16 = 6;
/// The buffer's slots: the power of two above the capacity (`create_queue`).
const JITTER_SLOTS: u16 = 8;
/// `GROUP_JBUF_DEAD_SECONDS`: after this long without a frame the buffer takes any
/// sequence number, so a peer that restarted its count is heard again.
const JITTER_DEAD: Duration = Duration::from_secs(4);
/// The longest Opus packet, in samples per channel at 48 kHz (120 ms).
const MAX_PACKET_SAMPLES: usize = 5_760;
/// Peers whose decoders one conference keeps; beyond it new peers are not decoded.
const MAX_PEERS: usize = 1_024;

/// A group audio packet that does not parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum GroupAudioParseError {
    /// The first byte is not [`GROUP_AUDIO_PACKET_ID`].
    #[error("not a group audio packet")]
    WrongId,
    /// No sequence number, or no Opus byte after it (`length <= sizeof(uint16_t)`).
    #[error("group audio packet too short")]
    TooShort,
}

/// One group audio packet, borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupAudioPacket<'a> {
    /// The sender's frame counter.
    pub sequence: u16,
    /// The Opus packet.
    pub opus: &'a [u8],
}

impl<'a> GroupAudioPacket<'a> {
    /// Parses a packet as the conference layer hands it over: id first.
    pub fn parse(data: &'a [u8]) -> Result<Self, GroupAudioParseError> {
        let mut r = Reader::new(data);
        if r.u8().map_err(|_| GroupAudioParseError::TooShort)? != GROUP_AUDIO_PACKET_ID {
            return Err(GroupAudioParseError::WrongId);
        }
        let sequence = r.u16_be().map_err(|_| GroupAudioParseError::TooShort)?;
        let opus = r.rest();
        if opus.is_empty() {
            return Err(GroupAudioParseError::TooShort);
        }
        Ok(Self { sequence, opus })
    }

    /// The packet, id first.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(3 + self.opus.len());
        out.push(GROUP_AUDIO_PACKET_ID);
        out.extend_from_slice(&self.sequence.to_be_bytes());
        out.extend_from_slice(self.opus);
        out
    }
}

/// What an Opus packet's table-of-contents byte says (RFC 6716 §3.1; libopus's
/// `opus_packet_get_nb_channels` and `opus_packet_get_nb_samples` at 48 kHz), or `None` for
/// a packet libopus would call invalid.
pub fn opus_packet_shape(packet: &[u8]) -> Option<(u8, usize)> {
    let toc = *packet.first()?;
    let channels = if toc & 0x04 != 0 { 2 } else { 1 };
    let per_frame: usize = if toc & 0x80 != 0 {
        // CELT-only: 2.5, 5, 10, 20 ms.
        120 << ((toc >> 3) & 3)
    } else if toc & 0x60 == 0x60 {
        // Hybrid: 10 or 20 ms.
        if toc & 0x08 != 0 {
            960
        } else {
            480
        }
    } else {
        // SILK-only: 10, 20, 40, 60 ms.
        match (toc >> 3) & 3 {
            3 => 2_880,
            size => 480 << size,
        }
    };
    let frames: usize = match toc & 3 {
        0 => 1,
        1 | 2 => 2,
        _ => usize::from(*packet.get(1)? & 0x3f),
    };
    let samples = per_frame.checked_mul(frames)?;
    (frames > 0 && samples <= MAX_PACKET_SAMPLES).then_some((channels, samples))
}

/// What the jitter buffer hands out next (`dequeue`'s three outcomes).
#[derive(Debug, PartialEq, Eq)]
enum Dequeued {
    /// Nothing to play yet.
    Nothing,
    /// The next frame in order.
    Frame(Vec<u8>),
    /// The next frame is missing and enough wait behind it: conceal it.
    Lost,
}

/// groupav.c's `Group_JitterBuffer`: frames by sequence number in a ring of
/// [`JITTER_SLOTS`], `bottom` the next to play, `top` one past the newest.
#[derive(Debug, Default)]
struct JitterBuffer {
    slots: [Option<Vec<u8>>; JITTER_SLOTS as usize],
    bottom: u16,
    top: u16,
    last_queued: Option<Timestamp>,
}

impl JitterBuffer {
    fn slot(&mut self, sequence: u16) -> &mut Option<Vec<u8>> {
        &mut self.slots[usize::from(sequence % JITTER_SLOTS)]
    }

    fn clear(&mut self) {
        self.slots = Default::default();
        self.bottom = self.top;
    }

    /// `queue`: false when the frame is dropped (old, or a duplicate).
    fn queue(&mut self, now: Timestamp, sequence: u16, frame: Vec<u8>) -> bool {
        let alive = self
            .last_queued
            .is_some_and(|t| now.saturating_duration_since(t) < JITTER_DEAD);
        let ahead = sequence.wrapping_sub(self.bottom);
        if alive && ahead > 1 << 15 {
            return false; // behind what was played
        }
        // groupav.c starts over only beyond `size` ahead, where a frame `size` ahead lands
        // in the slot of the one to play next; from `size` on keeps every slot to one frame.
        if ahead >= JITTER_SLOTS {
            // Far ahead: start over, the frame the newest of a full buffer.
            self.clear();
            self.bottom = sequence.wrapping_sub(JITTER_CAPACITY);
            *self.slot(sequence) = Some(frame);
            self.top = sequence.wrapping_add(1);
            self.last_queued = Some(now);
            return true;
        }
        if self.slot(sequence).is_some() {
            return false;
        }
        *self.slot(sequence) = Some(frame);
        if ahead >= self.top.wrapping_sub(self.bottom) {
            self.top = sequence.wrapping_add(1);
        }
        self.last_queued = Some(now);
        true
    }

    /// `dequeue`.
    fn dequeue(&mut self) -> Dequeued {
        if self.top == self.bottom {
            return Dequeued::Nothing;
        }
        let bottom = self.bottom;
        if let Some(frame) = self.slot(bottom).take() {
            self.bottom = bottom.wrapping_add(1);
            return Dequeued::Frame(frame);
        }
        if self.top.wrapping_sub(self.bottom) > JITTER_CAPACITY {
            self.bottom = bottom.wrapping_add(1);
            return Dequeued::Lost;
        }
        Dequeued::Nothing
    }
}

/// One peer's receiving side (`Group_Peer_AV`).
#[derive(Default)]
struct PeerAudio {
    jitter: JitterBuffer,
    decoder: Option<(u8, Box<dyn AudioDecoder>)>,
    /// Samples per channel of the last frame decoded: what a concealed frame lasts.
    last_samples: usize,
}

/// A frame decoded from a peer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupAudioFrame {
    /// The peer (the conference's peer number).
    pub peer: u32,
    /// Interleaved samples.
    pub pcm: Vec<i16>,
    /// Samples per channel.
    pub samples: usize,
    /// 1 or 2.
    pub channels: u8,
    /// Always [`DECODE_SAMPLING_RATE`].
    pub sampling_rate: u32,
}

/// Why a frame could not be sent (`group_send_audio`'s -1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum GroupAudioSendError {
    /// Bad channel count, rate or sample count, or fewer samples than it says.
    #[error("invalid audio frame")]
    Invalid,
    /// The encoder could not be made or failed.
    #[error("encoding failed")]
    Encode,
}

/// The sending encoder and its shape.
struct Encoder {
    channels: u8,
    sampling_rate: u32,
    codec: Box<dyn AudioEncoder>,
}

/// One conference's group audio (`Group_AV`).
#[derive(Default)]
pub struct GroupAudio {
    encoder: Option<Encoder>,
    /// `audio_sequnum`: the next packet's number.
    sequence: u16,
    peers: HashMap<u32, PeerAudio>,
}

impl std::fmt::Debug for GroupAudio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupAudio")
            .field("sequence", &self.sequence)
            .field("peers", &self.peers.len())
            .finish_non_exhaustive()
    }
}

impl GroupAudio {
    /// Audio on, nothing sent or heard yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Encodes one frame of interleaved `pcm` into the packet to send (`group_send_audio`);
    /// the sequence number advances once it was sent ([`GroupAudio::on_sent`]). The
    /// encoder is (re)made when the channels or rate change.
    pub fn encode(
        &mut self,
        codecs: &dyn CodecFactory,
        pcm: &[i16],
        samples: usize,
        channels: u8,
        sampling_rate: u32,
    ) -> Result<Vec<u8>, GroupAudioSendError> {
        if !(1..=2).contains(&channels) || !SAMPLING_RATES.contains(&sampling_rate) {
            return Err(GroupAudioSendError::Invalid);
        }
        // Opus's frame durations: 2.5, 5, 10, 20, 40, 60 ms.
        let unit = (sampling_rate / 400) as usize;
        if samples == 0
            || !samples.is_multiple_of(unit)
            || ![1, 2, 4, 8, 16, 24].contains(&(samples / unit))
            || pcm.len() < samples * usize::from(channels)
        {
            return Err(GroupAudioSendError::Invalid);
        }
        let reuse = self
            .encoder
            .as_ref()
            .is_some_and(|e| e.channels == channels && e.sampling_rate == sampling_rate);
        if !reuse {
            let bit_rate = if channels == 1 {
                MONO_BIT_RATE
            } else {
                STEREO_BIT_RATE
            };
            self.encoder = None;
            let codec = codecs
                .audio_encoder(bit_rate, sampling_rate, channels)
                .map_err(|_| GroupAudioSendError::Encode)?;
            self.encoder = Some(Encoder {
                channels,
                sampling_rate,
                codec,
            });
        }
        let encoder = self.encoder.as_mut().ok_or(GroupAudioSendError::Encode)?;
        let mut out = [0u8; MAX_ENCODED];
        let len = encoder
            .codec
            .encode(&pcm[..samples * usize::from(channels)], &mut out)
            .map_err(|_| GroupAudioSendError::Encode)?;
        let opus = out.get(..len).filter(|o| !o.is_empty());
        let opus = opus.ok_or(GroupAudioSendError::Encode)?;
        Ok(GroupAudioPacket {
            sequence: self.sequence,
            opus,
        }
        .encode())
    }

    /// The packet [`GroupAudio::encode`] made went out: the next one gets the next number.
    pub fn on_sent(&mut self) {
        self.sequence = self.sequence.wrapping_add(1);
    }

    /// A group audio packet from `peer` (`handle_group_audio_packet`): queued, then every
    /// frame ready is decoded and returned. Bad packets and frames are dropped.
    pub fn handle_packet(
        &mut self,
        now: Timestamp,
        codecs: &dyn CodecFactory,
        peer: u32,
        data: &[u8],
    ) -> Vec<GroupAudioFrame> {
        let Ok(packet) = GroupAudioPacket::parse(data) else {
            return Vec::new();
        };
        if !self.peers.contains_key(&peer) && self.peers.len() >= MAX_PEERS {
            return Vec::new();
        }
        let state = self.peers.entry(peer).or_default();
        if !state
            .jitter
            .queue(now, packet.sequence, packet.opus.to_vec())
        {
            return Vec::new();
        }
        let mut frames = Vec::new();
        loop {
            let decoded = match state.jitter.dequeue() {
                Dequeued::Nothing => break,
                Dequeued::Frame(opus) => decode_frame(state, codecs, &opus),
                Dequeued::Lost => conceal_frame(state),
            };
            if let Some((pcm, samples, channels)) = decoded {
                frames.push(GroupAudioFrame {
                    peer,
                    pcm,
                    samples,
                    channels,
                    sampling_rate: DECODE_SAMPLING_RATE,
                });
            }
        }
        frames
    }

    /// The conference's peer list changed: peer numbers name others now, so every peer's
    /// decoder and buffer start over (groupav.c's `group_av_peer_delete`).
    pub fn reset_peers(&mut self) {
        self.peers.clear();
    }
}

/// Decodes one frame as `decode_audio_packet` does: the decoder follows the channel count
/// the packet says, at 48 kHz.
fn decode_frame(
    state: &mut PeerAudio,
    codecs: &dyn CodecFactory,
    opus: &[u8],
) -> Option<(Vec<i16>, usize, u8)> {
    let (channels, samples) = opus_packet_shape(opus)?;
    if state.decoder.as_ref().map(|d| d.0) != Some(channels) {
        state.decoder = None;
        let decoder = codecs.audio_decoder(DECODE_SAMPLING_RATE, channels).ok()?;
        state.decoder = Some((channels, decoder));
    }
    let (_, decoder) = state.decoder.as_mut()?;
    let mut pcm = Vec::with_capacity(samples * usize::from(channels));
    let got = decoder.decode(Some(opus), false, samples, &mut pcm).ok()?;
    if got == 0 {
        return None;
    }
    state.last_samples = got;
    Some((pcm, got, channels))
}

/// Conceals a lost frame (`opus_decode` with no data) as long as the last one decoded.
fn conceal_frame(state: &mut PeerAudio) -> Option<(Vec<i16>, usize, u8)> {
    let samples = state.last_samples;
    let (channels, decoder) = state.decoder.as_mut()?;
    if samples == 0 {
        return None;
    }
    let mut pcm = Vec::with_capacity(samples * usize::from(*channels));
    let got = decoder.decode(None, false, samples, &mut pcm).ok()?;
    (got > 0).then_some((pcm, got, *channels))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_round_trips_and_short_ones_are_refused() {
        let p = GroupAudioPacket {
            sequence: 0x1234,
            opus: &[0x78, 1, 2],
        };
        let bytes = p.encode();
        assert_eq!(bytes, [192, 0x12, 0x34, 0x78, 1, 2]);
        assert_eq!(GroupAudioPacket::parse(&bytes), Ok(p));
        assert_eq!(
            GroupAudioPacket::parse(&[192, 0, 1]),
            Err(GroupAudioParseError::TooShort)
        );
        assert_eq!(
            GroupAudioPacket::parse(&[192]),
            Err(GroupAudioParseError::TooShort)
        );
        assert_eq!(
            GroupAudioPacket::parse(&[193, 0, 1, 2]),
            Err(GroupAudioParseError::WrongId)
        );
        assert_eq!(
            GroupAudioPacket::parse(&[]),
            Err(GroupAudioParseError::TooShort)
        );
    }

    #[test]
    fn opus_toc_gives_channels_and_duration() {
        // SILK 20 ms mono, one frame (config 1: 0x08).
        assert_eq!(opus_packet_shape(&[0x08]), Some((1, 960)));
        // CELT 20 ms stereo (config 31 = 0xf8, stereo bit 0x04), two frames (code 1).
        assert_eq!(opus_packet_shape(&[0xfc | 1]), Some((2, 1920)));
        // Hybrid 10 ms (config 12 = 0x60).
        assert_eq!(opus_packet_shape(&[0x60]), Some((1, 480)));
        // Code 3 with 3 frames of SILK 60 ms = 180 ms: too long.
        assert_eq!(opus_packet_shape(&[0x18 | 3, 3]), None);
        // Code 3 without its count byte, or with no frames.
        assert_eq!(opus_packet_shape(&[0x03]), None);
        assert_eq!(opus_packet_shape(&[0x03, 0]), None);
        assert_eq!(opus_packet_shape(&[]), None);
    }

    fn at(ms: u64) -> Timestamp {
        Timestamp::from_millis(ms)
    }

    #[test]
    fn jitter_buffer_plays_in_order_and_waits_for_a_late_frame() {
        let mut j = JitterBuffer::default();
        assert!(j.queue(at(0), 0, vec![0]));
        assert_eq!(j.dequeue(), Dequeued::Frame(vec![0]));
        assert!(j.queue(at(0), 10, vec![10]));
        // Far ahead: the buffer starts over with it as its newest, six frames late.
        assert_eq!(j.dequeue(), Dequeued::Lost);
        assert_eq!(j.dequeue(), Dequeued::Nothing);
        for s in 5..=9u16 {
            assert!(j.queue(at(0), s, vec![s as u8]));
        }
        for s in 5..=10u8 {
            assert_eq!(j.dequeue(), Dequeued::Frame(vec![s]));
        }
        assert_eq!(j.dequeue(), Dequeued::Nothing);
        // 11 is late: 12 waits for it.
        assert!(j.queue(at(20), 12, vec![12]));
        assert_eq!(j.dequeue(), Dequeued::Nothing);
        assert!(j.queue(at(25), 11, vec![11]));
        assert_eq!(j.dequeue(), Dequeued::Frame(vec![11]));
        assert_eq!(j.dequeue(), Dequeued::Frame(vec![12]));
        // A duplicate, and an old frame, are dropped.
        assert!(!j.queue(at(30), 11, vec![11]));
        assert!(j.queue(at(40), 13, vec![13]));
        assert!(!j.queue(at(41), 13, vec![13]));
    }

    #[test]
    fn jitter_buffer_skips_a_lost_frame_once_six_wait_behind_it() {
        let mut j = JitterBuffer::default();
        assert!(j.queue(at(0), 0, vec![0]));
        assert_eq!(j.dequeue(), Dequeued::Frame(vec![0]));
        // 1 never comes; 2..=6 wait (five frames: not yet).
        for s in 2..=6u16 {
            assert!(j.queue(at(u64::from(s) * 20), s, vec![s as u8]));
            assert_eq!(j.dequeue(), Dequeued::Nothing);
        }
        assert!(j.queue(at(140), 7, vec![7]));
        assert_eq!(j.dequeue(), Dequeued::Lost);
        for s in 2..=7u8 {
            assert_eq!(j.dequeue(), Dequeued::Frame(vec![s]));
        }
        assert_eq!(j.dequeue(), Dequeued::Nothing);
    }

    #[test]
    fn jitter_buffer_takes_a_restarted_sender_after_the_dead_time() {
        let mut j = JitterBuffer::default();
        assert!(j.queue(at(0), 0, vec![0]));
        assert_eq!(j.dequeue(), Dequeued::Frame(vec![0]));
        // Behind what was played: dropped while the sender is alive...
        assert!(!j.queue(at(1000), 60_000, vec![1]));
        // ...taken after four seconds of silence.
        assert!(j.queue(at(5000), 60_000, vec![1]));
        assert_eq!(j.dequeue(), Dequeued::Lost);
        assert_eq!(j.dequeue(), Dequeued::Nothing);
    }
}
