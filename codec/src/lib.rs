//! Opus and VP8 for calls, on the system's libopus and libvpx, configured as c-toxcore
//! 0.2.18's toxav configures them (`toxav/audio.c`, `toxav/video.c`).
//!
//! This crate is the one place besides the C ABI where `unsafe` is allowed: libvpx has no
//! maintained safe wrapper, so [`vp8`] wraps its raw bindings, every call documented.
