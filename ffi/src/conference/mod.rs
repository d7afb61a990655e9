//! tox.h's conferences (c-toxcore's old group chats, `toxcore/group.c`): the C entry points
//! over the node's conferences (`rustox_core::conference`).
//!
//! Calls flow from C into `commands` (create, delete, invite, join, send, set the title
//! and the offline bound), which checks arguments in c-toxcore 0.2.18's order and hands
//! each call to the node, and `queries` (peers, titles, the list, types and ids), which
//! reads the node's conferences. `errors` turns the engine's errors into each function's
//! `Tox_Err_Conference_*` code; `access` finds the instance and holds the limits. Events
//! flow the other way: the node's conference events become tox.h's six callbacks
//! (handle/mod.rs translates them, callbacks/ registers and calls them, from `tox_iterate`
//! in the order they happened) and `Tox_Events` records (events/).
//!
//! A callback that queries the conference sees its state after the whole iteration's
//! packets, not at the moment the event happened as in c-toxcore (whose callbacks run in
//! the middle of packet handling): a peer number a callback names is the one it had when
//! the event happened, and it is the same afterwards unless a peer left later in the same
//! iteration.

mod access;
mod commands;
mod errors;
mod queries;
#[cfg(test)]
mod tests;

pub use access::{COOKIE_LENGTH, MAX_MESSAGE_LEN};
pub use commands::*;
pub use queries::*;
