//! [`Msi`]: msi.c's `MSISession` without its mutex and callbacks — one call per friend, the
//! transitions of `handle_init`, `handle_push` and `handle_pop`, the error replies of
//! `send_error`, and msi.h's callbacks as [`MsiEvent`]s (docs/protocol.md §13.1).
//!
//! Sans-IO: the node hands in friend packet 69 ([`Msi::handle_packet`]) and friends going
//! offline; the packets to send come out of [`Msi::poll_send`], the events out of
//! [`Msi::poll_event`].
//!
//! Where rustox differs from c-toxcore (the wire is unchanged):
//! * At most [`MAX_CALLS`] calls at once; an invitation beyond that is answered with
//!   `MSI_E_SYSTEM`, which is what c-toxcore answers when it cannot allocate a call.
//! * c-toxcore answers every message for a call it does not have, except an invitation, with
//!   `MSI_E_STRAY_MESSAGE` — also an error message, so two peers that both hang up at once
//!   can bounce stray errors forever. rustox does not answer a stray message that carries an
//!   error itself; it still answers a stray hang-up or push as c-toxcore does.
//! * When msi.c ends a call because of the peer's bad message (`kill_call` after
//!   `send_error`), it tells no one, and toxav's call is left behind; [`Msi`] reports an
//!   [`MsiEvent::Error`] with the error it sent when the call was one the layer above knew.
//! * The layer above accepts every event; a refusal (msi.c's failing callback, answered with
//!   `MSI_E_HANDLE`) is [`Msi::fail`].
//! * The output queues hold at most [`MAX_QUEUED`] entries each; beyond that the newest is
//!   dropped and counted (a driver that polls after every input never gets there).
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use std::collections::{BTreeMap, VecDeque};

use super::{MsiErrorCode, MsiMessage, MsiParseError, MsiRequest};

/// The most calls at once: well above what any client runs (each call also costs codecs),
/// low enough that a flood of invitations from many friends stays small.
pub const MAX_CALLS: usize = 1024;

/// The most packets, and separately the most events, waiting to be polled.
pub const MAX_QUEUED: usize = 4096;

/// `MSICallState` (msi.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MsiCallState {
    /// `MSI_CALL_INACTIVE`: no call.
    #[default]
    Inactive,
    /// `MSI_CALL_ACTIVE`: answered; media flows.
    Active,
    /// `MSI_CALL_REQUESTING`: we invited, no answer yet.
    Requesting,
    /// `MSI_CALL_REQUESTED`: the friend invited us, we have not answered.
    Requested,
}

/// msi.h's callbacks (`MSICallbackID`); every `caps` is the peer's capabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MsiEvent {
    /// `MSI_ON_INVITE`: the friend calls us.
    Invite { friend: u32, caps: u8 },
    /// `MSI_ON_START`: the friend answered our call.
    Start { friend: u32, caps: u8 },
    /// `MSI_ON_END`: the friend hung up, rejected our call or cancelled theirs.
    End { friend: u32 },
    /// `MSI_ON_ERROR`: the friend reported an error (or we ended the call over the friend's
    /// bad message, see the module comment); the call is gone.
    Error { friend: u32, code: MsiErrorCode },
    /// `MSI_ON_PEERTIMEOUT`: the friend went offline; the call is gone.
    PeerTimeout { friend: u32 },
    /// `MSI_ON_CAPABILITIES`: the friend changed capabilities during the call.
    Capabilities { friend: u32, caps: u8 },
}

/// Why a command of the layer above was refused (msi.c's `return -1`s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MsiUseError {
    /// `msi_invite`: there is a call with this friend already.
    #[error("already in a call with this friend")]
    AlreadyInCall,
    /// There is no call with this friend.
    #[error("no call with this friend")]
    NoCall,
    /// The call is not in the state the command needs (`answer` needs `Requested`,
    /// `change_capabilities` needs `Active`).
    #[error("the call is in the wrong state")]
    InvalidState,
    /// [`MAX_CALLS`] calls exist.
    #[error("too many calls")]
    TooManyCalls,
}

/// What [`Msi`] dropped or refused, by reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MsiStats {
    /// Packets that did not parse (answered with `MSI_E_INVALID_MESSAGE` unless empty).
    pub malformed: u64,
    /// Messages for a call we did not have.
    pub stray: u64,
    /// Invitations refused because [`MAX_CALLS`] calls existed.
    pub refused_full: u64,
    /// Packets or events dropped because a queue was full.
    pub queue_overflow: u64,
}

/// One call (msi.c's `MSICall`).
#[derive(Debug, Clone, Copy)]
struct Call {
    state: MsiCallState,
    peer_capabilities: u8,
    self_capabilities: u8,
}

/// Every call's signalling state; see the module comment.
#[derive(Debug, Default)]
pub struct Msi {
    calls: BTreeMap<u32, Call>,
    sends: VecDeque<(u32, Vec<u8>)>,
    events: VecDeque<MsiEvent>,
    stats: MsiStats,
}

impl Msi {
    /// No calls (`msi_new`).
    pub fn new() -> Msi {
        Msi::default()
    }

    /// `msi_invite`: calls `friend`, offering `caps`.
    pub fn invite(&mut self, friend: u32, caps: u8) -> Result<(), MsiUseError> {
        if self.calls.contains_key(&friend) {
            return Err(MsiUseError::AlreadyInCall);
        }
        if self.calls.len() >= MAX_CALLS {
            return Err(MsiUseError::TooManyCalls);
        }
        self.calls.insert(
            friend,
            Call {
                state: MsiCallState::Requesting,
                peer_capabilities: 0,
                self_capabilities: caps,
            },
        );
        self.send(
            friend,
            MsiMessage::with_capabilities(MsiRequest::Init, caps),
        );
        Ok(())
    }

    /// `msi_answer`: accepts the friend's invitation with `caps`.
    pub fn answer(&mut self, friend: u32, caps: u8) -> Result<(), MsiUseError> {
        let call = self.calls.get_mut(&friend).ok_or(MsiUseError::NoCall)?;
        if call.state != MsiCallState::Requested {
            return Err(MsiUseError::InvalidState);
        }
        call.self_capabilities = caps;
        call.state = MsiCallState::Active;
        self.send(
            friend,
            MsiMessage::with_capabilities(MsiRequest::Push, caps),
        );
        Ok(())
    }

    /// `msi_hangup`: ends the call in whatever state (hang up, reject, cancel).
    pub fn hangup(&mut self, friend: u32) -> Result<(), MsiUseError> {
        self.calls.remove(&friend).ok_or(MsiUseError::NoCall)?;
        self.send(friend, MsiMessage::request(MsiRequest::Pop));
        Ok(())
    }

    /// `msi_change_capabilities`: tells the friend our new capabilities during a call.
    pub fn change_capabilities(&mut self, friend: u32, caps: u8) -> Result<(), MsiUseError> {
        let call = self.calls.get_mut(&friend).ok_or(MsiUseError::NoCall)?;
        if call.state != MsiCallState::Active {
            return Err(MsiUseError::InvalidState);
        }
        call.self_capabilities = caps;
        self.send(
            friend,
            MsiMessage::with_capabilities(MsiRequest::Push, caps),
        );
        Ok(())
    }

    /// Ends the call with an error sent to the friend: what msi.c does when a callback
    /// refuses an event (`invoke_callback` failing: `send_error` then `kill_call`), e.g.
    /// `MsiErrorCode::Handle` when there is no one to take an invitation.
    pub fn fail(&mut self, friend: u32, code: MsiErrorCode) -> Result<(), MsiUseError> {
        self.calls.remove(&friend).ok_or(MsiUseError::NoCall)?;
        self.send(friend, MsiMessage::error(code));
        Ok(())
    }

    /// `msi_kill`: hangs up every call (the session is going away).
    pub fn hangup_all(&mut self) {
        let friends: Vec<u32> = self.calls.keys().copied().collect();
        for friend in friends {
            let _ = self.hangup(friend);
        }
    }

    /// `on_peer_status` with status 0: the friend went offline; its call ends.
    pub fn handle_friend_offline(&mut self, friend: u32) {
        if self.calls.remove(&friend).is_some() {
            self.event(MsiEvent::PeerTimeout { friend });
        }
    }

    /// `handle_msi_packet`: one friend packet 69, id byte first.
    pub fn handle_packet(&mut self, friend: u32, packet: &[u8]) {
        let message = match MsiMessage::parse(packet) {
            Ok(message) => message,
            // Messenger.c drops an empty packet 69 before MSI sees it; a wrong id is the
            // caller's mistake, not the friend's.
            Err(MsiParseError::Empty | MsiParseError::WrongId) => {
                self.stats.malformed = self.stats.malformed.saturating_add(1);
                return;
            }
            Err(_) => {
                self.stats.malformed = self.stats.malformed.saturating_add(1);
                self.send(friend, MsiMessage::error(MsiErrorCode::InvalidMessage));
                return;
            }
        };
        // `parse` refuses a message without a request.
        let Some(request) = message.request else {
            return;
        };
        let known = self.calls.contains_key(&friend);
        if !known {
            if request != MsiRequest::Init {
                self.stats.stray = self.stats.stray.saturating_add(1);
                if message.error.is_none() {
                    self.send(friend, MsiMessage::error(MsiErrorCode::StrayMessage));
                }
                return;
            }
            if self.calls.len() >= MAX_CALLS {
                self.stats.refused_full = self.stats.refused_full.saturating_add(1);
                self.send(friend, MsiMessage::error(MsiErrorCode::System));
                return;
            }
            self.calls.insert(
                friend,
                Call {
                    state: MsiCallState::Inactive,
                    peer_capabilities: 0,
                    self_capabilities: 0,
                },
            );
        }
        match request {
            MsiRequest::Init => self.handle_init(friend, message),
            MsiRequest::Push => self.handle_push(friend, message),
            MsiRequest::Pop => self.handle_pop(friend, message),
        }
    }

    /// `handle_init`.
    fn handle_init(&mut self, friend: u32, message: MsiMessage) {
        let Some(call) = self.calls.get_mut(&friend) else {
            return;
        };
        let Some(caps) = message.capabilities else {
            return self.kill_with_error(friend, MsiErrorCode::InvalidMessage);
        };
        match call.state {
            MsiCallState::Inactive => {
                call.peer_capabilities = caps;
                call.state = MsiCallState::Requested;
                self.event(MsiEvent::Invite { friend, caps });
            }
            // The friend calls again while we still think the call is on (it restarted,
            // say): answer again with our capabilities; the call goes on.
            MsiCallState::Active => {
                let ours = call.self_capabilities;
                self.send(
                    friend,
                    MsiMessage::with_capabilities(MsiRequest::Push, ours),
                );
            }
            // Both invited at once, or the friend invited twice.
            MsiCallState::Requested | MsiCallState::Requesting => {
                self.kill_with_error(friend, MsiErrorCode::InvalidState);
            }
        }
    }

    /// `handle_push`.
    fn handle_push(&mut self, friend: u32, message: MsiMessage) {
        let Some(call) = self.calls.get_mut(&friend) else {
            return;
        };
        let Some(caps) = message.capabilities else {
            return self.kill_with_error(friend, MsiErrorCode::InvalidMessage);
        };
        match call.state {
            MsiCallState::Active => {
                if call.peer_capabilities != caps {
                    call.peer_capabilities = caps;
                    self.event(MsiEvent::Capabilities { friend, caps });
                }
            }
            MsiCallState::Requesting => {
                call.peer_capabilities = caps;
                call.state = MsiCallState::Active;
                self.event(MsiEvent::Start { friend, caps });
            }
            // A push before our answer: msi.c ignores it.
            MsiCallState::Inactive | MsiCallState::Requested => {}
        }
    }

    /// `handle_pop`: the call ends, with the friend's error if it sent one.
    fn handle_pop(&mut self, friend: u32, message: MsiMessage) {
        if self.calls.remove(&friend).is_none() {
            return;
        }
        match message.error {
            Some(code) => self.event(MsiEvent::Error { friend, code }),
            None => self.event(MsiEvent::End { friend }),
        }
    }

    /// `send_error` then `kill_call`; the layer above hears of it unless the call was the
    /// one this very message would have created.
    fn kill_with_error(&mut self, friend: u32, code: MsiErrorCode) {
        self.send(friend, MsiMessage::error(code));
        if let Some(call) = self.calls.remove(&friend) {
            if call.state != MsiCallState::Inactive {
                self.event(MsiEvent::Error { friend, code });
            }
        }
    }

    /// The state of the call with `friend` (`Inactive` when there is none).
    pub fn call_state(&self, friend: u32) -> MsiCallState {
        self.calls
            .get(&friend)
            .map_or(MsiCallState::Inactive, |c| c.state)
    }

    /// The friend's capabilities as it last sent them (0 when there is no call).
    pub fn peer_capabilities(&self, friend: u32) -> u8 {
        self.calls.get(&friend).map_or(0, |c| c.peer_capabilities)
    }

    /// Our capabilities as we last sent them (0 when there is no call).
    pub fn self_capabilities(&self, friend: u32) -> u8 {
        self.calls.get(&friend).map_or(0, |c| c.self_capabilities)
    }

    /// How many calls exist, in any state.
    pub fn call_count(&self) -> usize {
        self.calls.len()
    }

    /// What was dropped or refused so far.
    pub fn stats(&self) -> MsiStats {
        self.stats
    }

    /// The next packet 69 to send: the friend, and the packet with its id byte.
    pub fn poll_send(&mut self) -> Option<(u32, Vec<u8>)> {
        self.sends.pop_front()
    }

    /// The next event for the layer above.
    pub fn poll_event(&mut self) -> Option<MsiEvent> {
        self.events.pop_front()
    }

    fn send(&mut self, friend: u32, message: MsiMessage) {
        if self.sends.len() >= MAX_QUEUED {
            self.stats.queue_overflow = self.stats.queue_overflow.saturating_add(1);
            return;
        }
        self.sends.push_back((friend, message.encode()));
    }

    fn event(&mut self, event: MsiEvent) {
        if self.events.len() >= MAX_QUEUED {
            self.stats.queue_overflow = self.stats.queue_overflow.saturating_add(1);
            return;
        }
        self.events.push_back(event);
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::super::{CAP_RECV_AUDIO, CAP_RECV_VIDEO, CAP_SEND_AUDIO, CAP_SEND_VIDEO};
    use super::*;

    const AUDIO: u8 = CAP_SEND_AUDIO | CAP_RECV_AUDIO;
    const AV: u8 = AUDIO | CAP_SEND_VIDEO | CAP_RECV_VIDEO;

    /// Alice is friend 1 of Bob, Bob is friend 0 of Alice.
    struct Pair {
        alice: Msi,
        bob: Msi,
    }

    impl Pair {
        fn new() -> Pair {
            Pair {
                alice: Msi::new(),
                bob: Msi::new(),
            }
        }

        /// Delivers every queued packet both ways until both are quiet; returns how many.
        fn exchange(&mut self) -> usize {
            let mut n = 0;
            loop {
                let mut moved = false;
                while let Some((friend, p)) = self.alice.poll_send() {
                    assert_eq!(friend, 0);
                    self.bob.handle_packet(1, &p);
                    moved = true;
                    n += 1;
                }
                while let Some((friend, p)) = self.bob.poll_send() {
                    assert_eq!(friend, 1);
                    self.alice.handle_packet(0, &p);
                    moved = true;
                    n += 1;
                }
                if !moved {
                    return n;
                }
                assert!(n < 100, "packets bounce forever");
            }
        }
    }

    fn events(m: &mut Msi) -> Vec<MsiEvent> {
        std::iter::from_fn(|| m.poll_event()).collect()
    }

    #[test]
    fn invite_answer_hangup() {
        let mut p = Pair::new();
        p.alice.invite(0, AV).unwrap();
        assert_eq!(p.alice.call_state(0), MsiCallState::Requesting);
        p.exchange();
        assert_eq!(
            events(&mut p.bob),
            [MsiEvent::Invite {
                friend: 1,
                caps: AV
            }]
        );
        assert_eq!(p.bob.call_state(1), MsiCallState::Requested);
        assert_eq!(p.bob.peer_capabilities(1), AV);
        p.bob.answer(1, AUDIO).unwrap();
        p.exchange();
        assert_eq!(
            events(&mut p.alice),
            [MsiEvent::Start {
                friend: 0,
                caps: AUDIO
            }]
        );
        assert_eq!(p.alice.call_state(0), MsiCallState::Active);
        assert_eq!(p.bob.call_state(1), MsiCallState::Active);
        p.bob.hangup(1).unwrap();
        p.exchange();
        assert_eq!(events(&mut p.alice), [MsiEvent::End { friend: 0 }]);
        assert_eq!(p.alice.call_count() + p.bob.call_count(), 0);
        assert!(events(&mut p.bob).is_empty());
    }

    #[test]
    fn reject_and_cancel_end_the_call_on_the_other_side() {
        let mut p = Pair::new();
        p.alice.invite(0, AUDIO).unwrap();
        p.exchange();
        p.bob.hangup(1).unwrap(); // reject
        p.exchange();
        assert_eq!(events(&mut p.alice), [MsiEvent::End { friend: 0 }]);

        p.alice.invite(0, AUDIO).unwrap();
        p.exchange();
        events(&mut p.bob);
        p.alice.hangup(0).unwrap(); // cancel
        p.exchange();
        assert_eq!(events(&mut p.bob), [MsiEvent::End { friend: 1 }]);
        assert_eq!(p.bob.call_state(1), MsiCallState::Inactive);
    }

    #[test]
    fn both_hang_up_at_once_settles() {
        let mut p = Pair::new();
        p.alice.invite(0, AUDIO).unwrap();
        p.exchange();
        p.bob.answer(1, AUDIO).unwrap();
        p.exchange();
        events(&mut p.alice);
        events(&mut p.bob);
        p.alice.hangup(0).unwrap();
        p.bob.hangup(1).unwrap();
        // Each pop meets no call: each side answers stray once, and the stray errors are
        // not answered again.
        assert_eq!(p.exchange(), 4);
        assert!(events(&mut p.alice).is_empty());
        assert!(events(&mut p.bob).is_empty());
        assert_eq!(p.alice.stats().stray, 2);
    }

    #[test]
    fn capabilities_change_during_the_call() {
        let mut p = Pair::new();
        p.alice.invite(0, AV).unwrap();
        p.exchange();
        p.bob.answer(1, AV).unwrap();
        p.exchange();
        events(&mut p.alice);
        events(&mut p.bob);
        p.alice.change_capabilities(0, AUDIO).unwrap();
        p.exchange();
        assert_eq!(
            events(&mut p.bob),
            [MsiEvent::Capabilities {
                friend: 1,
                caps: AUDIO
            }]
        );
        // The same capabilities again: no event.
        p.alice.change_capabilities(0, AUDIO).unwrap();
        p.exchange();
        assert!(events(&mut p.bob).is_empty());
        assert_eq!(p.alice.self_capabilities(0), AUDIO);
    }

    #[test]
    fn stray_push_is_answered_with_an_error() {
        let mut bob = Msi::new();
        bob.handle_packet(
            1,
            &MsiMessage::with_capabilities(MsiRequest::Push, 4).encode(),
        );
        assert_eq!(bob.poll_send(), Some((1, vec![69, 1, 1, 2, 2, 1, 4, 0])));
        assert!(bob.poll_event().is_none());
        assert_eq!(bob.call_state(1), MsiCallState::Inactive);
        // A stray error is not answered.
        bob.handle_packet(1, &MsiMessage::error(MsiErrorCode::StrayMessage).encode());
        assert!(bob.poll_send().is_none());
    }

    #[test]
    fn a_push_before_our_answer_is_ignored() {
        let mut p = Pair::new();
        p.alice.invite(0, AUDIO).unwrap();
        p.exchange();
        events(&mut p.bob);
        p.bob.handle_packet(
            1,
            &MsiMessage::with_capabilities(MsiRequest::Push, 60).encode(),
        );
        assert!(p.bob.poll_send().is_none());
        assert!(events(&mut p.bob).is_empty());
        assert_eq!(p.bob.call_state(1), MsiCallState::Requested);
    }

    #[test]
    fn friend_offline_times_the_call_out() {
        let mut p = Pair::new();
        p.alice.invite(0, AUDIO).unwrap();
        p.exchange();
        p.bob.answer(1, AUDIO).unwrap();
        p.exchange();
        events(&mut p.alice);
        p.alice.handle_friend_offline(0);
        assert_eq!(events(&mut p.alice), [MsiEvent::PeerTimeout { friend: 0 }]);
        assert_eq!(p.alice.call_state(0), MsiCallState::Inactive);
        assert!(p.alice.poll_send().is_none());
        // A friend without a call going offline is nothing.
        p.alice.handle_friend_offline(7);
        assert!(p.alice.poll_event().is_none());
    }

    #[test]
    fn glare_both_invite_at_once() {
        let mut p = Pair::new();
        p.alice.invite(0, AUDIO).unwrap();
        p.bob.invite(1, AUDIO).unwrap();
        p.exchange();
        // Each meets an invitation while inviting: both end with MSI_E_INVALID_STATE.
        assert_eq!(
            events(&mut p.alice),
            [MsiEvent::Error {
                friend: 0,
                code: MsiErrorCode::InvalidState
            }]
        );
        assert_eq!(
            events(&mut p.bob),
            [MsiEvent::Error {
                friend: 1,
                code: MsiErrorCode::InvalidState
            }]
        );
        assert_eq!(p.alice.call_count() + p.bob.call_count(), 0);
    }

    #[test]
    fn reinvite_during_a_call_is_answered_again() {
        let mut p = Pair::new();
        p.alice.invite(0, AUDIO).unwrap();
        p.exchange();
        p.bob.answer(1, AV).unwrap();
        p.exchange();
        events(&mut p.alice);
        p.alice.handle_packet(
            0,
            &MsiMessage::with_capabilities(MsiRequest::Init, AUDIO).encode(),
        );
        assert_eq!(
            p.alice.poll_send(),
            Some((
                0,
                MsiMessage::with_capabilities(MsiRequest::Push, AUDIO).encode()
            ))
        );
        assert_eq!(p.alice.call_state(0), MsiCallState::Active);
    }

    #[test]
    fn invite_without_capabilities_is_refused() {
        let mut bob = Msi::new();
        bob.handle_packet(1, &MsiMessage::request(MsiRequest::Init).encode());
        assert_eq!(
            bob.poll_send(),
            Some((1, MsiMessage::error(MsiErrorCode::InvalidMessage).encode()))
        );
        assert!(bob.poll_event().is_none());
        assert_eq!(bob.call_count(), 0);
    }

    #[test]
    fn malformed_packet_is_answered_and_changes_nothing() {
        let mut p = Pair::new();
        p.alice.invite(0, AUDIO).unwrap();
        p.exchange();
        events(&mut p.bob);
        p.bob.handle_packet(1, &[69, 9, 9, 9, 0]);
        assert_eq!(
            p.bob.poll_send(),
            Some((1, MsiMessage::error(MsiErrorCode::InvalidMessage).encode()))
        );
        assert_eq!(p.bob.call_state(1), MsiCallState::Requested);
        // An empty packet 69 is dropped silently, as Messenger.c drops it.
        p.bob.handle_packet(1, &[69]);
        assert!(p.bob.poll_send().is_none());
        assert_eq!(p.bob.stats().malformed, 2);
    }

    #[test]
    fn peer_error_ends_the_call_with_its_code() {
        let mut p = Pair::new();
        p.alice.invite(0, AUDIO).unwrap();
        p.exchange();
        events(&mut p.bob);
        p.bob.fail(1, MsiErrorCode::Handle).unwrap();
        p.exchange();
        assert_eq!(
            events(&mut p.alice),
            [MsiEvent::Error {
                friend: 0,
                code: MsiErrorCode::Handle
            }]
        );
    }

    #[test]
    fn commands_in_the_wrong_state_are_refused() {
        let mut m = Msi::new();
        assert_eq!(m.answer(3, AUDIO), Err(MsiUseError::NoCall));
        assert_eq!(m.hangup(3), Err(MsiUseError::NoCall));
        assert_eq!(m.change_capabilities(3, AUDIO), Err(MsiUseError::NoCall));
        m.invite(3, AUDIO).unwrap();
        assert_eq!(m.invite(3, AUDIO), Err(MsiUseError::AlreadyInCall));
        assert_eq!(m.answer(3, AUDIO), Err(MsiUseError::InvalidState));
        assert_eq!(
            m.change_capabilities(3, AUDIO),
            Err(MsiUseError::InvalidState)
        );
        assert_eq!(m.poll_send().map(|s| s.0), Some(3));
        assert!(m.poll_send().is_none());
    }

    #[test]
    fn calls_are_bounded() {
        let mut m = Msi::new();
        for f in 0..MAX_CALLS as u32 {
            m.invite(f, AUDIO).unwrap();
        }
        assert_eq!(m.invite(9999, AUDIO), Err(MsiUseError::TooManyCalls));
        while m.poll_send().is_some() {}
        m.handle_packet(
            9999,
            &MsiMessage::with_capabilities(MsiRequest::Init, 4).encode(),
        );
        assert_eq!(
            m.poll_send(),
            Some((9999, MsiMessage::error(MsiErrorCode::System).encode()))
        );
        assert_eq!(m.call_count(), MAX_CALLS);
        m.hangup_all();
        assert_eq!(m.call_count(), 0);
        assert_eq!(std::iter::from_fn(|| m.poll_send()).count(), MAX_CALLS);
    }

    #[test]
    fn random_packets_never_panic_and_queues_stay_bounded() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(6969);
        let mut m = Msi::new();
        for i in 0..20_000u32 {
            let len = rng.gen_range(0..12);
            let mut bytes: Vec<u8> = (0..len).map(|_| rng.gen_range(0..4)).collect();
            if let Some(b) = bytes.first_mut() {
                *b = PACKET_ID;
            }
            m.handle_packet(rng.gen_range(0..4), &bytes);
            if i % 7 == 0 {
                let _ = m.invite(rng.gen_range(0..4), AUDIO);
            }
            if i % 1000 == 0 {
                while m.poll_send().is_some() {}
                while m.poll_event().is_some() {}
            }
            assert!(m.sends.len() <= MAX_QUEUED && m.events.len() <= MAX_QUEUED);
            assert!(m.call_count() <= 4);
        }
    }

    const PACKET_ID: u8 = super::super::PACKET_ID_MSI;
}
