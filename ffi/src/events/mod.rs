//! tox_events.h: the events of one iteration as an owned object (`Tox_Events`), read through
//! per-type accessors, and its msgpack serialisation (`tox_events_get_bytes`,
//! `tox_events_load`), byte for byte c-toxcore 0.2.18's.
//!
//! A `Tox_Events` keeps its events grouped by type, in one list per type, as c-toxcore's
//! does: `tox_events_get_friend_message(events, i)` is the i-th friend message of the
//! iteration, and the order between types is lost. Each entry is an opaque per-type record
//! (`Tox_Event_Friend_Message`...) that owns its bytes; the pointers its getters return stay
//! valid until `tox_events_free`. Nothing changes a `Tox_Events` after it is built, so its
//! lists never move.
//!
//! # Wire format (c-toxcore 0.2.18 `tox_events.c`, `events/*.c`, `bin_pack.c`)
//!
//! msgpack, written by the `cmp` library in its shortest form (an unsigned integer as a
//! positive fixint, uint8, uint16, uint32 or uint64; an array header as fixarray, array16 or
//! array32; bytes as bin8, bin16 or bin32):
//!
//! | what             | msgpack                                                   |
//! |------------------|-----------------------------------------------------------|
//! | `Tox_Events`     | array of N events                                         |
//! | one event        | array of 2: `[Tox_Event value, payload]`                  |
//! | payload          | the event's fields, an array of them when there are two or more (the single-field conference connected, peer list changed and self connection status events carry the bare integer) |
//!
//! The events are written type by type in [`PACK_ORDER`] (not `Tox_Event`'s numeric order:
//! file_recv_chunk and file_recv_control come before file_recv, friend_status_message before
//! friend_status), and each type's events in the order they happened. Reading accepts the
//! events in any order and appends each to its type's list, so a save/load round trip gives
//! the same bytes. Reading follows `bin_unpack.c` and `cmp`'s readers: an integer field may
//! come in any msgpack integer form whose value fits (a non-negative signed one too), enum
//! fields are any `u32` (c-toxcore does not check them, so neither do we: the getters return
//! the raw value), bytes may come in any bin form, and bytes after the outer array are
//! ignored.
//!
//! The records and `Tox_Events` are in `records`, the msgpack reader and writer in
//! `msgpack`, and the C entry points in `api` (the events as a whole) and `getters` (the
//! records' fields).

mod api;
mod getters;
mod msgpack;
mod records;
#[cfg(test)]
mod tests;

pub use api::*;
pub use getters::*;
pub use records::*;
