//! What the Tox's state keeps for toxav: the live session's link, the call events the node
//! produced and the client has not been handed yet, and group audio's callbacks and
//! frames. `tox_iterate` (handle/, lifecycle.rs) fills it; the session's functions and
//! the end of `tox_iterate` empty it.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use rustox_core::av::AvEvent;

pub use super::link::UserData;
use super::link::{toxav_audio_data_cb, AvLink};

/// Decoded frames (audio or video) kept at most for a client that does not iterate its
/// session: about 2 s of 20 ms audio frames for two calls. Older ones are dropped as a
/// late jitter buffer would drop them; signalling events are always kept.
pub const MAX_PENDING_FRAMES: usize = 200;

/// Group audio frames kept at most between two `tox_iterate`s (each conference peer sends
/// 50 a second; a client iterates at least 5 times a second).
pub const MAX_PENDING_GROUP_FRAMES: usize = 400;

/// A conference's audio callback (`toxav_add_av_groupchat`'s `audio_callback`, userdata).
#[derive(Debug, Clone, Copy)]
pub struct GroupCallback {
    /// The client's function (NULL: frames are decoded and dropped, as in groupav.c).
    pub callback: Option<toxav_audio_data_cb>,
    /// Its userdata.
    pub user_data: UserData,
}

/// A decoded group audio frame waiting for its callback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupFrame {
    /// Conference number.
    pub conference: u32,
    /// Peer number.
    pub peer: u32,
    /// Interleaved samples.
    pub pcm: Vec<i16>,
    /// Channels.
    pub channels: u8,
    /// Hz.
    pub sampling_rate: u32,
}

/// Which of a session's iterate functions hands over an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventClass {
    /// Calls, state changes, bit rates: handed over at the end of `tox_iterate`.
    Signal,
    /// Decoded audio: `toxav_audio_iterate`.
    Audio,
    /// Decoded video: `toxav_video_iterate`.
    Video,
}

/// The class of `event`.
pub fn class_of(event: &AvEvent) -> EventClass {
    match event {
        AvEvent::AudioFrame { .. } => EventClass::Audio,
        AvEvent::VideoFrame { .. } => EventClass::Video,
        AvEvent::Call { .. }
        | AvEvent::State { .. }
        | AvEvent::AudioBitRate { .. }
        | AvEvent::VideoBitRate { .. } => EventClass::Signal,
    }
}

/// toxav's part of the Tox's state.
#[derive(Default)]
pub struct AvHub {
    /// The live session, if any.
    link: Option<Arc<AvLink>>,
    /// The node's call events not yet handed over, in order.
    events: VecDeque<AvEvent>,
    /// Each A/V conference's audio callback.
    group_callbacks: HashMap<u32, GroupCallback>,
    /// Group audio frames not yet handed over.
    group_frames: VecDeque<GroupFrame>,
}

impl AvHub {
    /// The session that now owns the Tox's calls.
    pub fn attach(&mut self, link: Arc<AvLink>) {
        self.link = Some(link);
        self.events.clear();
    }

    /// Forgets `link` (its session is being killed) and what was waiting for it.
    pub fn detach(&mut self, link: &Arc<AvLink>) {
        if self.link.as_ref().is_some_and(|l| Arc::ptr_eq(l, link)) {
            self.link = None;
            self.events.clear();
        }
    }

    /// The live session's link.
    pub fn link(&self) -> Option<Arc<AvLink>> {
        self.link.clone()
    }

    /// The Tox is being killed: the session is told (it must never reach the Tox again).
    pub fn take_link(&mut self) -> Option<Arc<AvLink>> {
        self.events.clear();
        self.link.take()
    }

    /// A call event from the node; dropped when no session would hear it. Frames beyond
    /// [`MAX_PENDING_FRAMES`] push out the oldest frame of theirs.
    pub fn push(&mut self, event: AvEvent) {
        if self.link.is_none() {
            return;
        }
        let class = class_of(&event);
        if class != EventClass::Signal {
            let frames = self.events.iter().filter(|e| class_of(e) == class).count();
            if frames >= MAX_PENDING_FRAMES {
                if let Some(at) = self.events.iter().position(|e| class_of(e) == class) {
                    self.events.remove(at);
                }
            }
        }
        self.events.push_back(event);
    }

    /// Takes the waiting events of the classes `wanted` accepts, in order.
    pub fn take(&mut self, wanted: impl Fn(EventClass) -> bool) -> Vec<AvEvent> {
        let (taken, kept): (Vec<AvEvent>, Vec<AvEvent>) =
            self.events.drain(..).partition(|e| wanted(class_of(e)));
        self.events = kept.into();
        taken
    }

    /// Whether events of `class` wait.
    pub fn has(&self, class: EventClass) -> bool {
        self.events.iter().any(|e| class_of(e) == class)
    }

    /// Sets (or, with `None`, removes) a conference's audio callback.
    pub fn set_group_callback(&mut self, conference: u32, callback: Option<GroupCallback>) {
        match callback {
            Some(callback) => {
                self.group_callbacks.insert(conference, callback);
            }
            None => {
                self.group_callbacks.remove(&conference);
                self.group_frames.retain(|f| f.conference != conference);
            }
        }
    }

    /// A decoded group audio frame; dropped unless its conference has audio on here.
    pub fn push_group(&mut self, frame: GroupFrame) {
        if !self.group_callbacks.contains_key(&frame.conference) {
            return;
        }
        if self.group_frames.len() >= MAX_PENDING_GROUP_FRAMES {
            self.group_frames.pop_front();
        }
        self.group_frames.push_back(frame);
    }

    /// The waiting group frames with their callbacks.
    pub fn take_group(&mut self) -> Vec<(GroupFrame, GroupCallback)> {
        let frames = std::mem::take(&mut self.group_frames);
        frames
            .into_iter()
            .filter_map(|f| {
                let cb = *self.group_callbacks.get(&f.conference)?;
                Some((f, cb))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rustox_core::av::AvEvent;

    use crate::av::hub::{AvHub, EventClass, GroupCallback, GroupFrame, MAX_PENDING_FRAMES};
    use crate::av::link::{AvLink, UserData};

    fn frame(n: i16) -> AvEvent {
        AvEvent::AudioFrame {
            friend: 0,
            pcm: vec![n],
            channels: 1,
            sampling_rate: 48000,
        }
    }

    #[test]
    fn events_wait_only_for_a_session_and_frames_are_bounded() {
        let mut hub = AvHub::default();
        hub.push(frame(1));
        assert!(!hub.has(EventClass::Audio), "no session: dropped");
        let link = Arc::new(AvLink::new());
        hub.attach(link.clone());
        hub.push(AvEvent::Call {
            friend: 0,
            audio: true,
            video: false,
        });
        for n in 0..(MAX_PENDING_FRAMES as i16 + 5) {
            hub.push(frame(n));
        }
        let audio = hub.take(|c| c == EventClass::Audio);
        assert_eq!(audio.len(), MAX_PENDING_FRAMES);
        assert_eq!(audio[0], frame(5), "the oldest frames went");
        assert!(hub.has(EventClass::Signal));
        assert!(!hub.has(EventClass::Audio));
        hub.detach(&link);
        assert!(!hub.has(EventClass::Signal));
    }

    #[test]
    fn group_frames_need_a_callback() {
        let mut hub = AvHub::default();
        let f = GroupFrame {
            conference: 3,
            peer: 1,
            pcm: vec![0; 960],
            channels: 1,
            sampling_rate: 48000,
        };
        hub.push_group(f.clone());
        assert!(hub.take_group().is_empty());
        hub.set_group_callback(
            3,
            Some(GroupCallback {
                callback: None,
                user_data: UserData(7),
            }),
        );
        hub.push_group(f.clone());
        let taken = hub.take_group();
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].0, f);
        assert_eq!(taken[0].1.user_data, UserData(7));
        hub.set_group_callback(3, None);
        hub.push_group(f);
        assert!(hub.take_group().is_empty());
    }
}
