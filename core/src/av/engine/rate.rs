//! The call's sending rates: what the encoders actually use, and what the engine suggests to
//! the application through the bit-rate events.
//!
//! c-toxcore 0.2.18 (toxav.c `callback_bwc`) reacts to loss alone: when the receiver's
//! report (bwcontroller.c, lossy 196) says 10 % or more of the bytes were lost, it suggests
//! the video rate lowered by the loss ratio (the audio rate when no video is sent), and the
//! encoders keep whatever the application sets. Loss is a late signal on a path whose queue
//! is deep: by the time packets drop, audio has already waited behind video.
//!
//! The rule here adds what the transport's congestion controller measures of the path
//! ([`PathEstimate`]: bandwidth and RTT):
//!
//! * The audio frames' share of the link is their bit rate plus the per-packet overhead
//!   ([`AUDIO_PACKET_OVERHEAD_BYTES`] at [`AUDIO_PACKETS_PER_SECOND`]); audio keeps the
//!   application's rate unless the link cannot carry it (bandwidth × [`AUDIO_HEADROOM`]
//!   below that share), and then takes [`LINK_SHARE`] of the link, not below Opus' 6 kbit/s.
//!   Speech is what a call cannot lose, and it needs little.
//! * Video gets ([`LINK_SHARE`] of) what audio leaves: `(bandwidth − audio) × 0.8`, and the
//!   encoder runs at the smaller of that and the application's rate, not below
//!   [`MIN_VIDEO_KBPS`]. The 20 % left over keeps the path's queue short, so audio frames do
//!   not wait behind video frames and a file transfer on the same link still moves.
//! * The same cap is suggested to the application (`VideoBitRate`) when it is below the rate
//!   asked for, and again when it moves by more than [`SUGGESTION_STEP`]; a suggestion back up
//!   never exceeds the highest rate the application asked for in this call.
//! * The loss reports are still honoured as c-toxcore does ([`RateControl::loss_suggestion`]),
//!   so a c-toxcore receiver's reports slow a rustox sender down as they would a c-toxcore one.
//!
//! Rates are in kbit/s, toxav.h's unit for every bit rate of its API.

use super::PathEstimate;

/// Fraction of the measured bandwidth a call's media may use (the rest keeps queues short).
pub const LINK_SHARE: f64 = 0.8;
/// Audio is cut only when bandwidth × this is below what audio needs.
pub const AUDIO_HEADROOM: f64 = 0.9;
/// Overhead of one audio packet on the wire: RTP header (80, rtp.h `RTP_HEADER_SIZE`), the
/// lossy packet id (1), net_crypto's packet overhead (1 + 2 + 16 MAC, net_crypto.c
/// `crypto_packet`'s framing plus its nonce bytes) and IPv4 + UDP (28).
pub const AUDIO_PACKET_OVERHEAD_BYTES: u64 = 80 + 1 + 19 + 28;
/// Audio packets per second at c-toxcore's usual 20 ms frames.
pub const AUDIO_PACKETS_PER_SECOND: u64 = 50;
/// Opus' lowest bit rate (toxav.c `audio_bit_rate_invalid`, RFC 6716 §2.1.1).
pub const MIN_AUDIO_KBPS: u32 = 6;
/// The lowest video rate the encoder is set to: below it VP8 gives nothing recognisable,
/// and the application is told (by the suggestions) to stop video instead.
pub const MIN_VIDEO_KBPS: u32 = 16;
/// A new suggestion is made when the cap moved by more than this fraction.
pub const SUGGESTION_STEP: f64 = 0.1;
/// toxav.c `callback_bwc`: loss below this is ignored.
pub const LOSS_THRESHOLD: f32 = 0.1;

/// A suggestion for the application (toxav's bit-rate callbacks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Suggestion {
    Audio(u32),
    Video(u32),
}

/// One call's rate state.
#[derive(Debug, Default)]
pub(super) struct RateControl {
    path: PathEstimate,
    /// The highest video rate the application asked for in this call.
    ceiling_video_kbps: u32,
    last_video_suggestion: Option<u32>,
    last_audio_suggestion: Option<u32>,
}

/// What the encoders run at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Targets {
    pub audio_kbps: u32,
    pub video_kbps: u32,
}

impl RateControl {
    /// The application asked for `video_kbps`.
    pub fn note_requested_video(&mut self, video_kbps: u32) {
        self.ceiling_video_kbps = self.ceiling_video_kbps.max(video_kbps);
    }

    /// The path's latest estimate.
    pub fn set_path(&mut self, path: PathEstimate) {
        self.path = path;
    }

    fn audio_overhead_kbps() -> f64 {
        (AUDIO_PACKET_OVERHEAD_BYTES * 8 * AUDIO_PACKETS_PER_SECOND) as f64 / 1000.0
    }

    /// The audio rate the link can carry, if it cannot carry `audio_kbps`.
    fn audio_cap(&self, audio_kbps: u32) -> Option<u32> {
        if self.path.bandwidth_bps == 0 || audio_kbps == 0 {
            return None;
        }
        let link_kbps = self.path.bandwidth_bps as f64 / 1000.0;
        let needs = f64::from(audio_kbps) + Self::audio_overhead_kbps();
        if link_kbps * AUDIO_HEADROOM >= needs {
            return None;
        }
        let fits = link_kbps * LINK_SHARE - Self::audio_overhead_kbps();
        // max then min, not clamp: never a panic whatever the rates.
        Some((fits.max(0.0) as u32).max(MIN_AUDIO_KBPS).min(audio_kbps))
    }

    /// The video rate the link leaves after audio (None: no estimate yet).
    fn video_cap(&self, audio_kbps: u32) -> Option<u32> {
        if self.path.bandwidth_bps == 0 {
            return None;
        }
        let link_kbps = self.path.bandwidth_bps as f64 / 1000.0;
        let audio = if audio_kbps == 0 {
            0.0
        } else {
            f64::from(audio_kbps) + Self::audio_overhead_kbps()
        };
        let left = ((link_kbps - audio) * LINK_SHARE).max(0.0);
        Some((left as u32).max(MIN_VIDEO_KBPS))
    }

    /// The rates the encoders use for the application's `audio_kbps` and `video_kbps`.
    pub fn targets(&self, audio_kbps: u32, video_kbps: u32) -> Targets {
        let audio = self.audio_cap(audio_kbps).unwrap_or(audio_kbps);
        let video = match self.video_cap(audio) {
            Some(cap) if video_kbps > cap => cap,
            _ => video_kbps,
        };
        Targets {
            audio_kbps: audio,
            video_kbps: video,
        }
    }

    /// Suggestions after a new path estimate, for the application's current rates.
    pub fn path_suggestions(&mut self, audio_kbps: u32, video_kbps: u32) -> Vec<Suggestion> {
        let mut out = Vec::new();
        if let Some(cap) = self.audio_cap(audio_kbps) {
            if moved(self.last_audio_suggestion, cap) {
                self.last_audio_suggestion = Some(cap);
                out.push(Suggestion::Audio(cap));
            }
        }
        let audio = self.audio_cap(audio_kbps).unwrap_or(audio_kbps);
        if video_kbps > 0 || self.last_video_suggestion.is_some() {
            if let Some(cap) = self.video_cap(audio) {
                let suggest = cap.min(self.ceiling_video_kbps.max(video_kbps));
                let differs = (f64::from(suggest) - f64::from(video_kbps)).abs()
                    > f64::from(video_kbps) * SUGGESTION_STEP;
                if suggest > 0 && differs && moved(self.last_video_suggestion, suggest) {
                    self.last_video_suggestion = Some(suggest);
                    out.push(Suggestion::Video(suggest));
                }
            }
        }
        out
    }

    /// toxav.c `callback_bwc`: on a loss report of `loss` (0..=1), suggest the video rate
    /// lowered by that ratio, or the audio rate when no video is sent; nothing under 10 %.
    pub fn loss_suggestion(loss: f32, audio_kbps: u32, video_kbps: u32) -> Option<Suggestion> {
        if loss.is_nan() || loss < LOSS_THRESHOLD {
            return None;
        }
        let loss = f64::from(loss.min(1.0));
        let lowered = |rate: u32| (f64::from(rate) - f64::from(rate) * loss) as u32;
        if video_kbps != 0 {
            Some(Suggestion::Video(lowered(video_kbps)))
        } else if audio_kbps != 0 {
            Some(Suggestion::Audio(lowered(audio_kbps)))
        } else {
            None
        }
    }
}

/// Whether `new` differs from the last suggestion by more than [`SUGGESTION_STEP`].
fn moved(last: Option<u32>, new: u32) -> bool {
    match last {
        None => true,
        Some(last) => {
            (f64::from(new) - f64::from(last)).abs() > f64::from(last.max(1)) * SUGGESTION_STEP
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_bandwidth(kbps: u64) -> RateControl {
        let mut r = RateControl::default();
        r.set_path(PathEstimate {
            rtt: std::time::Duration::from_millis(40),
            bandwidth_bps: kbps * 1000,
        });
        r
    }

    #[test]
    fn no_estimate_keeps_the_applications_rates() {
        let r = RateControl::default();
        assert_eq!(
            r.targets(48, 5000),
            Targets {
                audio_kbps: 48,
                video_kbps: 5000
            }
        );
    }

    #[test]
    fn video_is_capped_at_what_audio_leaves_times_the_share() {
        let r = with_bandwidth(2000);
        let t = r.targets(48, 5000);
        assert_eq!(t.audio_kbps, 48);
        // (2000 − 48 − 51.2) × 0.8 = 1520.64
        assert_eq!(t.video_kbps, 1520);
        // An application asking for less keeps its rate.
        assert_eq!(r.targets(48, 500).video_kbps, 500);
    }

    #[test]
    fn audio_is_cut_only_when_the_link_cannot_carry_it() {
        assert_eq!(with_bandwidth(200).targets(64, 0).audio_kbps, 64);
        let t = with_bandwidth(80).targets(64, 100);
        // 80 × 0.8 − 51.2 = 12.8
        assert_eq!(t.audio_kbps, 12);
        assert_eq!(t.video_kbps, MIN_VIDEO_KBPS);
        assert_eq!(with_bandwidth(10).targets(64, 0).audio_kbps, MIN_AUDIO_KBPS);
    }

    #[test]
    fn suggestions_follow_the_cap_without_repeating() {
        let mut r = with_bandwidth(1000);
        r.note_requested_video(5000);
        let s = r.path_suggestions(48, 5000);
        assert_eq!(s, vec![Suggestion::Video(720)]);
        assert!(r.path_suggestions(48, 5000).is_empty(), "no repeat");
        // The application took the suggestion; the link grows: suggest up, below the ceiling.
        r.set_path(PathEstimate {
            rtt: std::time::Duration::from_millis(40),
            bandwidth_bps: 100_000_000,
        });
        assert_eq!(r.path_suggestions(48, 720), vec![Suggestion::Video(5000)]);
    }

    #[test]
    fn loss_suggestions_as_toxav() {
        assert_eq!(RateControl::loss_suggestion(0.05, 48, 1000), None);
        assert_eq!(
            RateControl::loss_suggestion(0.25, 48, 1000),
            Some(Suggestion::Video(750))
        );
        assert_eq!(
            RateControl::loss_suggestion(0.5, 48, 0),
            Some(Suggestion::Audio(24))
        );
        assert_eq!(RateControl::loss_suggestion(f32::NAN, 48, 0), None);
    }
}
