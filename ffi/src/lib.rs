//! rustox-ffi: c-toxcore 0.2.18's C API over the rustox node, built as `libtoxcore.so.2`
//! (and `libtoxcore.a`) so that chat clients written for c-toxcore run on rustox unchanged
//! (docs/protocol.md §9).
//!
//! Every function Debian's libtoxcore.so.2 exports is exported here, with the same
//! signature, struct layout and enum values. The C boundary's rules:
//! * every entry point checks its pointers and sets its error out-parameter as tox.h
//!   documents; no panic crosses the boundary ([`guard`]);
//! * `tox_iterate` drives the node through core's step driver, with no hidden threads; the
//!   callbacks fire from it after the node's lock is released, so they may call back in
//!   ([`handle`]);
//! * a `Tox` may be called from several threads: its state sits behind a mutex.
//!
//! This is the only crate of the workspace with `unsafe` code: raw pointers from C.

#![allow(non_camel_case_types)]
// Every `extern "C"` function here dereferences the caller's pointers after checking them
// for NULL; their safety contract is tox.h's documentation, not a Rust `# Safety` section.
#![allow(clippy::missing_safety_doc)]

pub mod av;
pub mod callbacks;
pub mod conference;
pub mod constants;
pub mod dispatch;
pub mod encryptsave;
pub mod event;
pub mod events;
pub mod files;
pub mod friends;
pub mod guard;
pub mod handle;
pub mod lifecycle;
pub mod options;
pub mod proxy;
pub mod self_info;
#[cfg(test)]
mod tests;
pub mod types;
