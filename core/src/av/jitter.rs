//! The audio jitter buffer: frames by RTP sequence number, played out in order, a lost
//! frame concealed (by the next frame's FEC when it is there).
//!
//! c-toxcore's buffer (audio.c, `jbuf_*`) holds 3 frames and plays whatever is there each
//! time the client iterates, so its delay follows the client's loop, not the link. This one
//! schedules each frame at a playout time instead: the sender stamps every frame with its
//! clock in milliseconds (rtp.c's `rtp_send_data`: `current_time_monotonic`), so
//! `arrival − timestamp` is the one-way transit plus a constant clock offset. The smallest
//! transit of a recent window stands for the fixed part of the path; a frame plays at its
//! timestamp + that minimum + the window's 95th-percentile excess (the jitter) + a small
//! margin. On a clean link a frame waits only the margin; on a jittery one the delay grows
//! to cover 95 % of the frames, and shrinks again when the jitter goes.
//!
//! A frame missing at its playout time is concealed: with the following frame's in-band FEC
//! when that frame has arrived ([`Playout::Fec`], Opus carries a coarse copy of the previous
//! frame), else by the decoder's packet-loss concealment ([`Playout::Conceal`]). A frame
//! arriving after its slot was played or concealed is late: dropped and counted.
//! Everything is bounded: [`JITTER_CAPACITY`] frames, [`TRANSIT_WINDOW`] samples.

use std::collections::{BTreeMap, VecDeque};

use rustox_net_crypto::Timestamp;

/// Frames held at most (about 1.3 s of 20 ms frames). c-toxcore holds 3
/// (`AUDIO_JITTERBUFFER_COUNT`); this buffer delays by time, so it needs room for the
/// frames of its largest delay, [`MAX_DELAY_MS`].
pub const JITTER_CAPACITY: usize = 64;
/// Transit samples the delay is computed from (about 2.5 s of 20 ms frames): long enough for
/// a stable 95th percentile, short enough to follow a change of path within seconds.
pub const TRANSIT_WINDOW: usize = 128;
/// The margin added to the measured jitter: covers the receiver's timer granularity.
pub const MARGIN_MS: u64 = 5;
/// The largest playout delay beyond the minimum transit; frames later than that are lost
/// anyway for a conversation (ITU-T G.114 puts the limit of one-way delay near 400 ms).
pub const MAX_DELAY_MS: u64 = 400;
/// Consecutive missing frames concealed at most; a longer gap (the peer paused, a long
/// outage) is skipped, not filled with seconds of concealment.
pub const MAX_CONCEALED_RUN: u64 = 10;
/// Frame duration assumed until the decoder reports one (c-toxcore's audio default, 20 ms).
const DEFAULT_FRAME_MS: u64 = 20;
/// Extended sequence numbers start here, so unwrapping backwards never goes below zero.
const SEQUENCE_BASE: u64 = 1 << 32;

/// What the buffer hands to the decoder next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Playout {
    /// The frame itself.
    Frame(Vec<u8>),
    /// The frame was lost; this is the following frame, whose in-band FEC recovers it.
    Fec(Vec<u8>),
    /// The frame was lost and nothing recovers it: packet-loss concealment.
    Conceal,
}

/// Why [`JitterBuffer::insert`] refused a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum JitterError {
    /// Its slot was already played or concealed.
    #[error("frame arrived after its playout time")]
    Late,
    /// The same sequence number is already buffered.
    #[error("duplicate frame")]
    Duplicate,
}

/// The buffer's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct JitterStats {
    /// Frames played as they arrived.
    pub played: u64,
    /// Frames recovered from the next frame's FEC.
    pub fec: u64,
    /// Frames concealed by packet-loss concealment.
    pub concealed: u64,
    /// Frames skipped in a gap longer than [`MAX_CONCEALED_RUN`].
    pub skipped: u64,
    /// Frames that arrived after their slot.
    pub late: u64,
    /// Duplicates.
    pub duplicate: u64,
    /// Times the buffer restarted on a jump of the sequence numbers.
    pub resets: u64,
}

#[derive(Debug)]
struct Entry {
    /// The sender's timestamp, unwrapped, in microseconds.
    sent_us: i64,
    data: Vec<u8>,
}

/// The jitter buffer of one call's audio.
#[derive(Debug)]
pub struct JitterBuffer {
    frames: BTreeMap<u64, Entry>,
    /// The extended sequence number played next (None: nothing received yet).
    next: Option<u64>,
    /// The highest extended sequence number seen.
    highest: u64,
    /// The last unwrapped sender timestamp (ms), the reference for unwrapping.
    last_sent_ms: i64,
    /// Recent `arrival − sent` samples, microseconds.
    transits: VecDeque<i64>,
    /// Minimum of `transits`.
    base_transit_us: i64,
    /// Playout delay beyond `base_transit_us`, microseconds.
    delay_us: i64,
    frame_ms: u64,
    fec: bool,
    stats: JitterStats,
}

impl Default for JitterBuffer {
    fn default() -> Self {
        Self::new()
    }
}

impl JitterBuffer {
    /// An empty buffer using FEC to recover a lost frame.
    pub fn new() -> Self {
        Self {
            frames: BTreeMap::new(),
            next: None,
            highest: 0,
            last_sent_ms: 0,
            transits: VecDeque::with_capacity(TRANSIT_WINDOW),
            base_transit_us: 0,
            delay_us: (MARGIN_MS * 1000) as i64,
            frame_ms: DEFAULT_FRAME_MS,
            fec: true,
            stats: JitterStats::default(),
        }
    }

    /// Whether a lost frame is recovered from the next frame's FEC (on by default).
    pub fn set_fec(&mut self, fec: bool) {
        self.fec = fec;
    }

    /// The duration of the frames (the decoder learns it); clamped to Opus' 2.5..=120 ms.
    pub fn set_frame_duration_ms(&mut self, ms: u64) {
        self.frame_ms = ms.clamp(2, 120);
    }

    /// The counters.
    pub fn stats(&self) -> JitterStats {
        self.stats
    }

    /// Frames buffered.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Whether no frame is buffered.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// The current playout delay beyond the minimum transit.
    pub fn delay(&self) -> std::time::Duration {
        std::time::Duration::from_micros(self.delay_us.max(0) as u64)
    }

    /// Forgets every frame and measurement (the peer restarted its stream).
    pub fn clear(&mut self) {
        let stats = self.stats;
        let fec = self.fec;
        *self = Self::new();
        self.stats = stats;
        self.fec = fec;
    }

    /// A frame arrived at `now`: sequence number and timestamp from its RTP header.
    pub fn insert(
        &mut self,
        now: Timestamp,
        sequence: u16,
        timestamp: u32,
        data: Vec<u8>,
    ) -> Result<(), JitterError> {
        let Some(next) = self.next else {
            let ext = SEQUENCE_BASE + u64::from(sequence);
            self.next = Some(ext);
            self.highest = ext;
            self.last_sent_ms = i64::from(timestamp);
            return self.store(now, ext, data);
        };
        let ext = unwrap_u16(self.highest, sequence);
        if ext < next {
            self.stats.late += 1;
            return Err(JitterError::Late);
        }
        if self.frames.contains_key(&ext) {
            self.stats.duplicate += 1;
            return Err(JitterError::Duplicate);
        }
        if ext >= next + JITTER_CAPACITY as u64 {
            // The stream jumped far ahead (a sender restart, a long outage): start over
            // from this frame rather than conceal or hold a gap the buffer cannot span.
            self.stats.resets += 1;
            self.stats.skipped += ext - next;
            self.frames.clear();
            self.next = Some(ext);
            self.transits.clear();
        }
        self.highest = self.highest.max(ext);
        self.last_sent_ms = unwrap_u32(self.last_sent_ms, timestamp);
        self.store(now, ext, data)
    }

    fn store(&mut self, now: Timestamp, ext: u64, data: Vec<u8>) -> Result<(), JitterError> {
        let sent_us = self.last_sent_ms.saturating_mul(1000);
        let transit = (now.as_micros() as i64).saturating_sub(sent_us);
        if self.transits.len() == TRANSIT_WINDOW {
            self.transits.pop_front();
        }
        self.transits.push_back(transit);
        self.recompute_delay();
        self.frames.insert(ext, Entry { sent_us, data });
        Ok(())
    }

    fn recompute_delay(&mut self) {
        let mut sorted: Vec<i64> = self.transits.iter().copied().collect();
        sorted.sort_unstable();
        let Some(&min) = sorted.first() else {
            return;
        };
        let p95 = sorted[(sorted.len() * 95 / 100).min(sorted.len() - 1)];
        self.base_transit_us = min;
        let jitter = p95.saturating_sub(min);
        let margin = (MARGIN_MS * 1000) as i64;
        self.delay_us = jitter
            .saturating_add(margin)
            .min((MAX_DELAY_MS * 1000) as i64);
    }

    /// When the frame at `ext` plays (microseconds in the receiver's time).
    fn due_us(&self, sent_us: i64) -> i64 {
        sent_us
            .saturating_add(self.base_transit_us)
            .saturating_add(self.delay_us)
    }

    /// When the next [`JitterBuffer::poll`] has something (None: nothing buffered).
    pub fn next_due(&self) -> Option<Timestamp> {
        let next = self.next?;
        let (&head, entry) = self.frames.iter().next()?;
        let gap = head.saturating_sub(next) as i64;
        let due = self
            .due_us(entry.sent_us)
            .saturating_sub(gap.saturating_mul(self.frame_ms as i64 * 1000));
        Some(Timestamp::from_micros(due.max(0) as u64))
    }

    /// The next frame (or concealment) due at `now`.
    pub fn poll(&mut self, now: Timestamp) -> Option<Playout> {
        let due = self.next_due()?;
        if due > now {
            return None;
        }
        let next = self.next?;
        let head = *self.frames.keys().next()?;
        if head == next {
            let entry = self.frames.remove(&head)?;
            self.next = Some(next + 1);
            self.stats.played += 1;
            return Some(Playout::Frame(entry.data));
        }
        let gap = head - next;
        if gap > MAX_CONCEALED_RUN {
            // Skip what cannot usefully be concealed; conceal the last few before `head`.
            let skip = gap - MAX_CONCEALED_RUN;
            self.stats.skipped += skip;
            self.next = Some(next + skip);
            return self.poll(now);
        }
        self.next = Some(next + 1);
        if gap == 1 && self.fec {
            self.stats.fec += 1;
            let data = self.frames.get(&head).map(|e| e.data.clone())?;
            return Some(Playout::Fec(data));
        }
        self.stats.concealed += 1;
        Some(Playout::Conceal)
    }
}

/// The extended value of 16-bit `value` nearest to `reference`.
fn unwrap_u16(reference: u64, value: u16) -> u64 {
    let delta = value.wrapping_sub(reference as u16) as i16;
    reference.saturating_add_signed(i64::from(delta))
}

/// The extended value of 32-bit `value` nearest to `reference`.
fn unwrap_u32(reference: i64, value: u32) -> i64 {
    let delta = value.wrapping_sub(reference as u32) as i32;
    reference.saturating_add(i64::from(delta))
}

#[cfg(test)]
#[path = "jitter_tests.rs"]
mod tests;
