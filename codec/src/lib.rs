//! Opus and VP8 for calls, on the system's libopus and libvpx, configured as c-toxcore
//! 0.2.18's toxav configures them (`toxav/audio.c`, `toxav/video.c`).
//!
//! This crate is the one place besides the C ABI where `unsafe` is allowed: libvpx has no
//! maintained safe wrapper, so [`vp8`] wraps its raw bindings, every call documented. Opus goes
//! through the maintained `opus` crate and needs no `unsafe` here.
//!
//! Every decoder takes untrusted bytes from the network: a frame libopus or libvpx rejects is
//! an [`Error`], never a panic, and a VP8 key frame that declares a picture larger than
//! [`vp8::MAX_PICTURE_PIXELS`] is refused before libvpx allocates for it.

pub mod audio;
mod error;
pub mod vp8;

pub use audio::{AudioDecoder, AudioEncoder};
pub use error::Error;
pub use vp8::{Picture, Planes, Vp8Decoder, Vp8Encoder, Vp8Frame};
