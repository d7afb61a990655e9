//! toxav.h: audio/video calls and group audio over the node's calls engine
//! (`rustox_core::av::Calls`, reached through `Node::av_command`).
//!
//! A `ToxAV` session ([`session`]) turns calls on for its Tox (`Node::enable_av`) and off
//! again at `toxav_kill`. Every entry point locks the Tox's state as tox.h's functions do
//! ([`session::with_state`]), so a client may run `toxav_iterate` on one thread and
//! `tox_iterate` on another (qTox does).
//!
//! Events reach the client on the threads c-toxcore uses: the node produces them while
//! `tox_iterate` steps it and parks them in the Tox's state ([`hub::AvHub`]); the
//! signalling ones (a call, a state change, a bit-rate suggestion) are handed to the
//! callbacks at the end of that `tox_iterate`, as c-toxcore's MSI and bandwidth-controller
//! callbacks run from Messenger's packet handlers; decoded audio waits for
//! `toxav_audio_iterate` and decoded video for `toxav_video_iterate` (toxav.c's
//! `ac_iterate`/`vc_iterate`), `toxav_iterate` running both. Callbacks are called with no
//! lock held, so they may call any function of the library.
//!
//! Group audio ([`group`]) needs no session (toxav_old.c's functions take a `Tox *`): its
//! frames are decoded as their packets arrive and handed to the conference's audio callback
//! at the end of `tox_iterate`, as groupav.c's `handle_group_audio_packet` does from inside
//! `tox_iterate`.

pub(crate) mod callbacks;
mod calls;
mod errors;
mod frames;
pub(crate) mod group;
pub(crate) mod hub;
mod iterate;
mod link;
mod session;

pub use callbacks::*;
pub use calls::*;
pub use frames::*;
pub use group::*;
pub use iterate::*;
pub use session::*;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod thread_tests;
