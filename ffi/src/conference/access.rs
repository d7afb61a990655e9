//! What every conference entry point needs first: the instance behind its `Tox *`, locked,
//! and the limits tox.h's conference functions check before the engine sees a call.

use rustox_core::conference::{ConferenceNumber, INVITE_COOKIE_LEN, MAX_TITLE_LEN};
use rustox_core::node::Node;

use crate::handle::{tox_ref, State, Tox};

/// `MAX_GROUP_MESSAGE_DATA_LEN` of group.c: `MAX_CRYPTO_DATA_SIZE` (1373) less the message
/// header and the packet id (`1 + MIN_MESSAGE_PACKET_LEN`, 10) = 1363 bytes. Longer
/// messages are `TOO_LONG`.
pub const MAX_MESSAGE_LEN: usize = 1363;
/// `MAX_NAME_LENGTH`: the longest title `tox_conference_set_title` takes.
pub const MAX_TITLE: usize = MAX_TITLE_LEN;
/// The cookie `tox_conference_invite_cb` hands out and `tox_conference_join` takes: the
/// inviter's conference number (2 bytes), the type byte, the conference id.
pub const COOKIE_LENGTH: usize = INVITE_COOKIE_LEN;

/// Runs `body` on the locked state of the instance behind `tox`; `None` for a NULL
/// instance (c-toxcore asserts it is not NULL; the caller answers as for an unknown
/// conference) or one being killed.
///
/// # Safety
/// A non-NULL `tox` comes from `tox_new` and is not killed.
pub unsafe fn with_state<T>(tox: *const Tox, body: impl FnOnce(&mut State) -> T) -> Option<T> {
    // SAFETY: the caller's contract.
    let entered = unsafe { tox_ref(tox) }?;
    let mut state = entered.lock();
    Some(body(&mut state))
}

/// Whether `conference` designates a conference (c-toxcore's `get_group_c` succeeds): the
/// conference is looked up before anything else is checked, as group.c does.
pub fn exists(node: &Node, conference: u32) -> bool {
    node.conferences()
        .kind(ConferenceNumber(conference))
        .is_ok()
}
