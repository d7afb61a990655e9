//! One call (toxav.c's `ToxAVCall`): the application's bit rates, our capabilities as last
//! sent over MSI, and — once the call is active (toxav.c `call_prepare_transmission`) — its
//! media paths, loss reporting and rate control.

use rustox_net_crypto::Timestamp;

use crate::av::bwc::BwcMonitor;
use crate::av::codec::CodecFactory;
use crate::av::msi::{CAP_RECV_AUDIO, CAP_RECV_VIDEO, CAP_SEND_AUDIO, CAP_SEND_VIDEO};
use crate::av::rtp::{MediaKind, RtpReceiver};

use super::audio_path::{AudioReceiver, AudioSender};
use super::rate::RateControl;
use super::video_path::{VideoReceiver, VideoSender};

/// The media of an active call.
pub(super) struct Media {
    pub audio_tx: AudioSender,
    pub audio_rtp: RtpReceiver,
    pub audio_rx: AudioReceiver,
    pub video_tx: VideoSender,
    pub video_rtp: RtpReceiver,
    pub video_rx: VideoReceiver,
    pub bwc: BwcMonitor,
}

/// One call.
pub(super) struct Call {
    /// Application's audio bit rate, kbit/s (0: not sending audio).
    pub audio_kbps: u32,
    /// Application's video bit rate, kbit/s (0: not sending video).
    pub video_kbps: u32,
    /// Our capabilities as last sent (msi.c `MSICall::self_capabilities`).
    pub self_caps: u8,
    /// Capabilities to restore on resume (toxav.c `previous_self_capabilities`).
    pub previous_self_caps: u8,
    /// Present once the call is active (answered, or started by the peer's answer).
    pub media: Option<Media>,
    pub rate: RateControl,
    /// When the loss counts are next moved into the report monitor.
    pub next_report_check: Timestamp,
}

/// Our capabilities for the given bit rates (toxav.c `toxav_call`/`toxav_answer`): we
/// always receive both kinds, and send a kind whose bit rate is not 0.
pub(super) fn capabilities_for(audio_kbps: u32, video_kbps: u32) -> u8 {
    let mut caps = CAP_RECV_AUDIO | CAP_RECV_VIDEO;
    if audio_kbps > 0 {
        caps |= CAP_SEND_AUDIO;
    }
    if video_kbps > 0 {
        caps |= CAP_SEND_VIDEO;
    }
    caps
}

impl Call {
    pub fn new(audio_kbps: u32, video_kbps: u32) -> Self {
        let caps = capabilities_for(audio_kbps, video_kbps);
        let mut rate = RateControl::default();
        rate.note_requested_video(video_kbps);
        Self {
            audio_kbps,
            video_kbps,
            self_caps: caps,
            previous_self_caps: caps,
            media: None,
            rate,
            next_report_check: Timestamp::ZERO,
        }
    }

    /// Whether the call's media are set up (toxav.c `ToxAVCall::active`).
    pub fn active(&self) -> bool {
        self.media.is_some()
    }

    /// toxav.c `call_prepare_transmission`: creates the decoders, RTP sessions and the loss
    /// monitor; the encoders come with the first frame. `ssrc` seeds the audio stream's
    /// source id (rtp.c: random for audio, 0 for video).
    pub fn prepare(&mut self, now: Timestamp, codecs: &dyn CodecFactory, ssrc: u32) -> bool {
        if self.media.is_some() {
            return true;
        }
        let (Ok(audio_rx), Ok(video_rx)) = (AudioReceiver::new(codecs), VideoReceiver::new(codecs))
        else {
            return false;
        };
        self.media = Some(Media {
            audio_tx: AudioSender::new(ssrc),
            audio_rtp: RtpReceiver::new(MediaKind::Audio),
            audio_rx,
            video_tx: VideoSender::new(0),
            video_rtp: RtpReceiver::new(MediaKind::Video),
            video_rx,
            bwc: BwcMonitor::new(now),
        });
        true
    }

    /// Whether audio from the peer is taken (toxav.c `rtp_allow_receiving` /
    /// `rtp_stop_receiving`: off while we are muted or paused, or the peer does not send).
    pub fn receives_audio(&self, peer_caps: u8) -> bool {
        self.self_caps & CAP_RECV_AUDIO != 0 && peer_caps & CAP_SEND_AUDIO != 0
    }

    /// See [`Call::receives_audio`].
    pub fn receives_video(&self, peer_caps: u8) -> bool {
        self.self_caps & CAP_RECV_VIDEO != 0 && peer_caps & CAP_SEND_VIDEO != 0
    }
}
