//! The C API's enums with c-toxcore 0.2.18's values (docs/protocol.md §9): their values are
//! ABI. One file per header: tox.h, toxencryptsave.h, tox_events.h with tox_dispatch.h, and
//! toxav.h.
//!
//! The error enums are only ever written by this library, so they are Rust enums with a C
//! layout. Enums a client passes in (message type, file control, user status, proxy and
//! savedata type) arrive as plain integers and are checked before use, since C may pass any
//! value: their `from_raw` says which values exist.

#![allow(non_camel_case_types, clippy::upper_case_acronyms)]

mod tox;
mod tox_events;
mod toxav;
mod toxencryptsave;

pub use tox::*;
pub use tox_events::*;
pub use toxav::*;
pub use toxencryptsave::*;
