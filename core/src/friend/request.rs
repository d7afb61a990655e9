//! Friend requests (docs/protocol.md §6.5; c-toxcore 0.2.18 `friend_requests.c`,
//! `send_friend_request_packet` in `friend_connection.c`, `do_friends` and
//! `check_friend_request_timed_out` in `Messenger.c`).
//!
//! The body is the same on both routes:
//!
//! | length   | content                                          |
//! |----------|--------------------------------------------------|
//! | 4        | nospam, the recipient's, copied from its Tox ID  |
//! | 1..=1016 | message (no NUL on the wire)                     |
//!
//! It is preceded by id 32 (`CRYPTO_PACKET_FRIEND_REQ`) when it travels as onion data
//! (§6.3, to the nodes where the friend is announced), or by id 18
//! (`PACKET_ID_FRIEND_REQUESTS`) when a friend_connection to the peer is already up (§4).
//!
//! Limits. 0.2.18 accepts a packet (id included) of 6..=1021 bytes
//! (`ONION_CLIENT_MAX_DATA_SIZE`), so messages of 1..=1016 bytes. But a 0.2.18 receiver drops
//! onion data above 948 bytes (§6.3), so a message over 943 bytes never arrives through the
//! onion; we send at most [`MAX_SENT_MESSAGE_LEN`] = 921, the limit later c-toxcore adopted.

use std::time::Duration;

use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::wire::Reader;
use rustox_net_crypto::Timestamp;

pub use crate::dht::wire::crypto_request::CRYPTO_PACKET_FRIEND_REQ;

use super::tox_id::{NoSpam, NOSPAM_SIZE};

/// `PACKET_ID_FRIEND_REQUESTS`: a friend request inside a friend_connection session (§4).
pub const PACKET_ID_FRIEND_REQUESTS: u8 = 18;
/// `ONION_CLIENT_MAX_DATA_SIZE` (1069 − 48): the largest friend request packet, id included,
/// that `friendreq_handlepacket` accepts.
pub const MAX_RECEIVED_PACKET_LEN: usize = 1021;
/// `MAX_FRIEND_REQUEST_DATA_SIZE` (= `TOX_MAX_FRIEND_REQUEST_LENGTH` in 0.2.18): the largest
/// message a 0.2.18 peer accepts.
pub const MAX_FRIEND_REQUEST_DATA_SIZE: usize = MAX_RECEIVED_PACKET_LEN - 1 - NOSPAM_SIZE;
/// The largest message we send: docs/protocol.md §6.5 (TokTok/c-toxcore#2719 on GitHub; HEAD's
/// `TOX_MAX_FRIEND_REQUEST_LENGTH`). Longer ones would be lost on the onion route.
pub const MAX_SENT_MESSAGE_LEN: usize = 921;
/// `MAX_RECEIVED_STORED`: the ring of recent request senders whose repeats are dropped.
pub const MAX_RECEIVED_STORED: usize = 32;
/// `FRIENDREQUEST_TIMEOUT` (`Messenger.h`, seconds): the first wait after a routed request
/// for a connection to follow; it doubles on each retry.
pub const FRIENDREQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// Ours: how often an unrouted request is retried when nothing else prompts the Node.
/// c-toxcore retries on every `tox_iterate` (~50 ms) until the onion has a node where the
/// friend is announced; a failed attempt costs nothing on the wire, so the Node may also
/// retry earlier (for example when the onion finds such a node): [`RequestSchedule::due`]
/// stays true.
pub const UNROUTED_RETRY_INTERVAL: Duration = Duration::from_secs(1);

/// Why a friend request body could not be built or parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// The message is empty (`FAERR_NOMESSAGE`; on receipt, a body of exactly the nospam).
    #[error("friend request message is empty")]
    Empty,
    /// The message is longer than `max`.
    #[error("friend request message of {len} bytes exceeds {max}")]
    TooLong {
        /// The message length.
        len: usize,
        /// The limit that applied.
        max: usize,
    },
    /// The body is shorter than the nospam.
    #[error("friend request body of {0} bytes is shorter than the nospam")]
    Truncated(usize),
    /// The first byte is neither 32 (onion data) nor 18 (net_crypto).
    #[error("not a friend request packet id: {0}")]
    BadId(u8),
}

/// A friend request: the nospam it claims and its message.
#[derive(Clone, PartialEq, Eq)]
pub struct FriendRequest {
    nospam: NoSpam,
    message: Vec<u8>,
}

// Wire code: the request body comes from the network, so no indexing, slicing or arithmetic
// that could panic or wrap (the filter and schedule below are not held to it).
#[deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
impl FriendRequest {
    /// A request to send: the message must be 1..=[`MAX_SENT_MESSAGE_LEN`] bytes.
    pub fn new(nospam: NoSpam, message: &[u8]) -> Result<Self, RequestError> {
        if message.is_empty() {
            return Err(RequestError::Empty);
        }
        if message.len() > MAX_SENT_MESSAGE_LEN {
            return Err(RequestError::TooLong {
                len: message.len(),
                max: MAX_SENT_MESSAGE_LEN,
            });
        }
        Ok(FriendRequest {
            nospam,
            message: message.to_vec(),
        })
    }

    /// The nospam the sender put in front.
    pub fn nospam(&self) -> NoSpam {
        self.nospam
    }

    /// The message (1..=1016 bytes received, 1..=921 built).
    pub fn message(&self) -> &[u8] {
        &self.message
    }

    /// `[nospam 4][message]`, without an id.
    pub fn encode_body(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(NOSPAM_SIZE.saturating_add(self.message.len()));
        self.encode_body_into(&mut out);
        out
    }

    /// Appends `[nospam 4][message]` to `out`.
    pub fn encode_body_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.nospam.0);
        out.extend_from_slice(&self.message);
    }

    /// The onion-data form `[32][nospam][message]` (§6.3, §6.5).
    pub fn encode_onion_data(&self) -> Vec<u8> {
        self.encode_with_id(CRYPTO_PACKET_FRIEND_REQ)
    }

    /// The net_crypto payload `[18][nospam][message]` (§4).
    pub fn encode_net_crypto(&self) -> Vec<u8> {
        self.encode_with_id(PACKET_ID_FRIEND_REQUESTS)
    }

    fn encode_with_id(&self, id: u8) -> Vec<u8> {
        let mut out = Vec::with_capacity((1 + NOSPAM_SIZE).saturating_add(self.message.len()));
        out.push(id);
        self.encode_body_into(&mut out);
        out
    }

    /// Parses a body (after the id) with 0.2.18's receive limits: a message of
    /// 1..=[`MAX_FRIEND_REQUEST_DATA_SIZE`] bytes.
    pub fn decode_body(body: &[u8]) -> Result<Self, RequestError> {
        let mut r = Reader::new(body);
        let nospam = NoSpam(r.array().map_err(|_| RequestError::Truncated(body.len()))?);
        let message = r.rest();
        if message.is_empty() {
            return Err(RequestError::Empty);
        }
        if message.len() > MAX_FRIEND_REQUEST_DATA_SIZE {
            return Err(RequestError::TooLong {
                len: message.len(),
                max: MAX_FRIEND_REQUEST_DATA_SIZE,
            });
        }
        Ok(FriendRequest {
            nospam,
            message: message.to_vec(),
        })
    }

    /// Parses a whole packet whose first byte is 32 or 18. (c-toxcore does not look at the
    /// id in `friendreq_handlepacket`; its dispatcher already did.)
    pub fn decode_packet(packet: &[u8]) -> Result<Self, RequestError> {
        match packet.split_first() {
            Some((&(CRYPTO_PACKET_FRIEND_REQ | PACKET_ID_FRIEND_REQUESTS), body)) => {
                Self::decode_body(body)
            }
            Some((&id, _)) => Err(RequestError::BadId(id)),
            None => Err(RequestError::Truncated(0)),
        }
    }
}

impl std::fmt::Debug for FriendRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FriendRequest")
            .field("nospam", &self.nospam)
            .field("message_len", &self.message.len())
            .finish()
    }
}

/// Why a received friend request was not passed to the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The body does not parse.
    #[error("malformed friend request: {0}")]
    Malformed(RequestError),
    /// The sender is among the last [`MAX_RECEIVED_STORED`] request senders.
    #[error("repeated friend request")]
    Repeated,
    /// The nospam is not ours.
    #[error("nospam does not match")]
    NospamMismatch,
    /// The sender is already a friend (Messenger's `friend_already_added` filter).
    #[error("sender is already a friend")]
    AlreadyFriend,
}

/// How many requests the filter passed and refused, by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FilterStats {
    /// Passed to the user.
    pub accepted: u64,
    /// [`Refusal::Malformed`].
    pub malformed: u64,
    /// [`Refusal::Repeated`].
    pub repeated: u64,
    /// [`Refusal::NospamMismatch`].
    pub nospam_mismatch: u64,
    /// [`Refusal::AlreadyFriend`].
    pub already_friend: u64,
}

/// The receive side of friend requests (`friendreq_handlepacket`), the same for both routes.
///
/// Checks in 0.2.18's order: length, then the ring of recent senders, then the nospam
/// (byte for byte), then whether the sender is already a friend. Only a request that passes
/// all of them enters the ring, so a request with a wrong nospam does not block a later
/// correct one. The ring holds the last 32 senders; c-toxcore's starts as 32 all-zero keys
/// (so a sender whose key is all zeros is always refused there); ours starts empty.
#[derive(Debug, Clone)]
pub struct RequestFilter {
    nospam: NoSpam,
    recent: [Option<PublicKey>; MAX_RECEIVED_STORED],
    next: usize,
    stats: FilterStats,
}

impl RequestFilter {
    /// A filter accepting requests that carry `nospam`.
    pub fn new(nospam: NoSpam) -> Self {
        RequestFilter {
            nospam,
            recent: [None; MAX_RECEIVED_STORED],
            next: 0,
            stats: FilterStats::default(),
        }
    }

    /// The nospam requests must carry.
    pub fn nospam(&self) -> NoSpam {
        self.nospam
    }

    /// `tox_self_set_nospam`.
    pub fn set_nospam(&mut self, nospam: NoSpam) {
        self.nospam = nospam;
    }

    /// Counters by outcome.
    pub fn stats(&self) -> FilterStats {
        self.stats
    }

    /// Checks a request body (after its id byte) from `sender`'s real key. `is_friend` is
    /// asked only when every other check has passed.
    pub fn check(
        &mut self,
        sender: &PublicKey,
        body: &[u8],
        is_friend: impl FnOnce(&PublicKey) -> bool,
    ) -> Result<FriendRequest, Refusal> {
        match FriendRequest::decode_body(body) {
            Ok(request) => self.check_request(sender, request, is_friend),
            Err(e) => {
                self.stats.malformed = self.stats.malformed.saturating_add(1);
                Err(Refusal::Malformed(e))
            }
        }
    }

    /// [`Self::check`] for a request already parsed (a FRIEND_REQUESTS packet that
    /// `FriendConnection::on_packet` decoded).
    pub fn check_request(
        &mut self,
        sender: &PublicKey,
        request: FriendRequest,
        is_friend: impl FnOnce(&PublicKey) -> bool,
    ) -> Result<FriendRequest, Refusal> {
        let result = self.admit(sender, request, is_friend);
        let counter = match &result {
            Ok(_) => &mut self.stats.accepted,
            Err(Refusal::Malformed(_)) => &mut self.stats.malformed,
            Err(Refusal::Repeated) => &mut self.stats.repeated,
            Err(Refusal::NospamMismatch) => &mut self.stats.nospam_mismatch,
            Err(Refusal::AlreadyFriend) => &mut self.stats.already_friend,
        };
        *counter = counter.saturating_add(1);
        result
    }

    fn admit(
        &mut self,
        sender: &PublicKey,
        request: FriendRequest,
        is_friend: impl FnOnce(&PublicKey) -> bool,
    ) -> Result<FriendRequest, Refusal> {
        if self.recent.contains(&Some(*sender)) {
            return Err(Refusal::Repeated);
        }
        if request.nospam != self.nospam {
            return Err(Refusal::NospamMismatch);
        }
        if is_friend(sender) {
            return Err(Refusal::AlreadyFriend);
        }
        self.recent[self.next] = Some(*sender);
        self.next = (self.next + 1) % MAX_RECEIVED_STORED;
        Ok(request)
    }

    /// Forgets `sender` (c-toxcore `remove_request_received`, called on friend delete), so
    /// that a new request from them is shown again.
    pub fn forget(&mut self, sender: &PublicKey) {
        for slot in &mut self.recent {
            if *slot == Some(*sender) {
                *slot = None;
            }
        }
    }
}

/// Where a request stands in [`RequestSchedule`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestState {
    /// Not routed yet (c-toxcore `FRIEND_ADDED`); `last_attempt` is the last failed try.
    Unsent {
        /// When the last attempt failed to route, if one did.
        last_attempt: Option<Timestamp>,
    },
    /// Routed at `at`, waiting for the friend to come online (`FRIEND_REQUESTED`).
    Sent {
        /// When it was routed.
        at: Timestamp,
    },
    /// The friend came online: no more requests (`FRIEND_ONLINE`).
    Done,
}

/// The sender side: when to (re)send one friend's request.
///
/// 0.2.18 (`do_friends`): while `FRIEND_ADDED` it tries on every iteration; an attempt
/// "succeeds" when the onion routed it to at least one node where the friend is announced,
/// or — with a friend_connection up — whenever it was handed to net_crypto (even if that
/// write failed). Then `FRIEND_REQUESTED`; if the friend has not come online
/// `friendrequest_timeout` seconds later, back to `FRIEND_ADDED` with the timeout doubled:
/// 5, 10, 20, 40 s, … It never gives up; it stops only when the friend's ONLINE packet
/// arrives (or the friend is deleted). c-toxcore's timeout is a `uint32_t` that would wrap
/// after ~30 doublings (about 170 years); ours saturates. On load from savedata c-toxcore
/// re-adds pending requests, so the timeout starts again at 5 s: make a new schedule.
#[derive(Debug, Clone)]
pub struct RequestSchedule {
    state: RequestState,
    timeout: Duration,
}

impl Default for RequestSchedule {
    fn default() -> Self {
        Self::new()
    }
}

impl RequestSchedule {
    /// A request not yet sent, with the first timeout of [`FRIENDREQUEST_TIMEOUT`].
    pub fn new() -> Self {
        RequestSchedule {
            state: RequestState::Unsent { last_attempt: None },
            timeout: FRIENDREQUEST_TIMEOUT,
        }
    }

    /// The current state.
    pub fn state(&self) -> RequestState {
        self.state
    }

    /// The wait after the next successful send.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Whether the Node should try to send the request now. Always true while unsent (the
    /// Node may try at any moment; [`Self::poll_timeout`] paces the fallback retries).
    pub fn due(&self, now: Timestamp) -> bool {
        match self.state {
            RequestState::Unsent { .. } => true,
            RequestState::Sent { at } => now >= at + self.timeout,
            RequestState::Done => false,
        }
    }

    /// When to look again: the end of the wait, or the next fallback retry.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        match self.state {
            RequestState::Unsent { last_attempt: None } => Some(Timestamp::ZERO),
            RequestState::Unsent {
                last_attempt: Some(t),
            } => Some(t + UNROUTED_RETRY_INTERVAL),
            RequestState::Sent { at } => Some(at + self.timeout),
            RequestState::Done => None,
        }
    }

    /// Applies an expired wait: back to unsent, timeout doubled (`check_friend_request_timed_out`).
    pub fn handle_timeout(&mut self, now: Timestamp) {
        if let RequestState::Sent { at } = self.state {
            if now >= at + self.timeout {
                self.timeout = self.timeout.saturating_mul(2);
                self.state = RequestState::Unsent { last_attempt: None };
            }
        }
    }

    /// The request was routed (onion: ≥ 1 node; net_crypto: handed to the session).
    pub fn on_sent(&mut self, now: Timestamp) {
        self.handle_timeout(now);
        if matches!(self.state, RequestState::Unsent { .. }) {
            self.state = RequestState::Sent { at: now };
        }
    }

    /// An attempt found no route; retry later.
    pub fn on_send_failed(&mut self, now: Timestamp) {
        self.handle_timeout(now);
        if matches!(self.state, RequestState::Unsent { .. }) {
            self.state = RequestState::Unsent {
                last_attempt: Some(now),
            };
        }
    }

    /// The friend came online (its ONLINE packet arrived): the request has done its job.
    pub fn on_friend_online(&mut self) {
        self.state = RequestState::Done;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const US: NoSpam = NoSpam([1, 2, 3, 4]);

    fn body(nospam: NoSpam, message: &[u8]) -> Vec<u8> {
        FriendRequest::new(nospam, message).unwrap().encode_body()
    }

    #[test]
    fn byte_layout_on_both_routes() {
        let req = FriendRequest::new(US, b"hello").unwrap();
        assert_eq!(req.encode_body(), b"\x01\x02\x03\x04hello");
        assert_eq!(req.encode_onion_data(), b"\x20\x01\x02\x03\x04hello");
        assert_eq!(req.encode_net_crypto(), b"\x12\x01\x02\x03\x04hello");
        assert_eq!(
            FriendRequest::decode_packet(&req.encode_onion_data()),
            Ok(req.clone())
        );
        assert_eq!(
            FriendRequest::decode_packet(&req.encode_net_crypto()),
            Ok(req)
        );
        assert_eq!(
            FriendRequest::decode_packet(b"\x13\x01\x02\x03\x04x"),
            Err(RequestError::BadId(0x13))
        );
    }

    #[test]
    fn send_limits() {
        assert_eq!(FriendRequest::new(US, b""), Err(RequestError::Empty));
        assert!(FriendRequest::new(US, &[0; 921]).is_ok());
        assert_eq!(
            FriendRequest::new(US, &[0; 922]),
            Err(RequestError::TooLong { len: 922, max: 921 })
        );
    }

    #[test]
    fn receive_limits_match_friendreq_handlepacket() {
        // Packet length (id included) must be > 5 and <= 1021.
        assert_eq!(
            FriendRequest::decode_body(&[1, 2, 3]),
            Err(RequestError::Truncated(3))
        );
        assert_eq!(
            FriendRequest::decode_body(&[1, 2, 3, 4]),
            Err(RequestError::Empty)
        );
        assert!(FriendRequest::decode_body(&[0; 5]).is_ok());
        let mut max = vec![0u8; 4 + 1016];
        assert_eq!(
            FriendRequest::decode_body(&max).unwrap().message().len(),
            1016
        );
        max.push(0);
        assert_eq!(
            FriendRequest::decode_body(&max),
            Err(RequestError::TooLong {
                len: 1017,
                max: 1016
            })
        );
    }

    #[test]
    fn filter_accepts_once_then_refuses_repeats() {
        let mut f = RequestFilter::new(US);
        let a = PublicKey([0xa; 32]);
        let req = f.check(&a, &body(US, b"hi"), |_| false).unwrap();
        assert_eq!(req.message(), b"hi");
        assert_eq!(
            f.check(&a, &body(US, b"hi"), |_| false),
            Err(Refusal::Repeated)
        );
        f.forget(&a);
        assert!(f.check(&a, &body(US, b"again"), |_| false).is_ok());
        assert_eq!(f.stats().accepted, 2);
        assert_eq!(f.stats().repeated, 1);
    }

    #[test]
    fn filter_refusals_are_typed_and_do_not_fill_the_ring() {
        let mut f = RequestFilter::new(US);
        let a = PublicKey([0xa; 32]);
        assert_eq!(
            f.check(&a, &body(NoSpam([1, 2, 3, 5]), b"hi"), |_| false),
            Err(Refusal::NospamMismatch)
        );
        assert_eq!(
            f.check(&a, &body(US, b"hi"), |_| true),
            Err(Refusal::AlreadyFriend)
        );
        assert_eq!(
            f.check(&a, &[1, 2, 3, 4], |_| false),
            Err(Refusal::Malformed(RequestError::Empty))
        );
        // None of those entered the ring: a correct request still passes.
        assert!(f.check(&a, &body(US, b"hi"), |_| false).is_ok());
        let s = f.stats();
        assert_eq!(
            (s.nospam_mismatch, s.already_friend, s.malformed),
            (1, 1, 1)
        );
    }

    #[test]
    fn filter_asks_is_friend_only_after_the_other_checks() {
        let mut f = RequestFilter::new(US);
        let a = PublicKey([0xa; 32]);
        let mut asked = false;
        let _ = f.check(&a, &body(NoSpam([0; 4]), b"x"), |_| {
            asked = true;
            false
        });
        assert!(!asked);
    }

    #[test]
    fn ring_remembers_exactly_the_last_32_senders() {
        let mut f = RequestFilter::new(US);
        let key = |i: u8| PublicKey([i; 32]);
        for i in 0..33u8 {
            assert!(f.check(&key(i), &body(US, b"x"), |_| false).is_ok());
        }
        // Sender 0 was pushed out by sender 32; 1..=32 are still remembered.
        assert!(f.check(&key(0), &body(US, b"x"), |_| false).is_ok());
        assert_eq!(
            f.check(&key(5), &body(US, b"x"), |_| false),
            Err(Refusal::Repeated)
        );
        assert_eq!(
            f.check(&key(32), &body(US, b"x"), |_| false),
            Err(Refusal::Repeated)
        );
    }

    #[test]
    fn nospam_change_applies_to_the_next_request() {
        let mut f = RequestFilter::new(US);
        f.set_nospam(NoSpam::from_u32(7));
        let a = PublicKey([1; 32]);
        assert_eq!(
            f.check(&a, &body(US, b"x"), |_| false),
            Err(Refusal::NospamMismatch)
        );
        assert!(f
            .check(&a, &body(NoSpam([0, 0, 0, 7]), b"x"), |_| false)
            .is_ok());
    }

    #[test]
    fn retry_schedule_doubles_from_five_seconds() {
        let t = Timestamp::from_secs;
        let mut s = RequestSchedule::new();
        assert!(s.due(t(0)));
        s.on_send_failed(t(0));
        assert_eq!(s.poll_timeout(), Some(t(1)));
        assert!(
            s.due(t(0)),
            "an unrouted request may be retried at any time"
        );
        s.on_sent(t(1));
        assert_eq!(s.state(), RequestState::Sent { at: t(1) });
        let mut sent_at = t(1);
        for expected in [5, 10, 20, 40, 80] {
            let wait = Duration::from_secs(expected);
            assert_eq!(s.poll_timeout(), Some(sent_at + wait));
            assert!(!s.due(sent_at + wait - Duration::from_millis(1)));
            assert!(s.due(sent_at + wait));
            sent_at += wait;
            s.on_sent(sent_at);
        }
        s.on_friend_online();
        assert!(!s.due(t(100_000)));
        assert_eq!(s.poll_timeout(), None);
    }

    #[test]
    fn expiry_doubles_once_even_if_the_resend_fails() {
        let t = Timestamp::from_secs;
        let mut s = RequestSchedule::new();
        s.on_sent(t(0));
        s.handle_timeout(t(5));
        assert_eq!(s.state(), RequestState::Unsent { last_attempt: None });
        assert_eq!(s.timeout(), Duration::from_secs(10));
        s.on_send_failed(t(5));
        s.on_send_failed(t(6));
        s.on_sent(t(7));
        assert_eq!(s.timeout(), Duration::from_secs(10));
        assert_eq!(s.poll_timeout(), Some(t(17)));
    }

    #[test]
    fn doubling_saturates() {
        let mut s = RequestSchedule::new();
        let mut now = Timestamp::ZERO;
        for _ in 0..200 {
            s.on_sent(now);
            now = s.poll_timeout().unwrap();
            s.handle_timeout(now);
        }
        assert!(s.timeout() >= Duration::from_secs(u64::MAX / 2));
    }

    proptest! {
        #[test]
        fn body_round_trip(ns in any::<[u8; 4]>(), msg in proptest::collection::vec(any::<u8>(), 1..=921)) {
            let req = FriendRequest::new(NoSpam(ns), &msg).unwrap();
            prop_assert_eq!(FriendRequest::decode_body(&req.encode_body()), Ok(req.clone()));
            prop_assert_eq!(FriendRequest::decode_packet(&req.encode_onion_data()), Ok(req));
        }

        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..1100)) {
            if let Ok(req) = FriendRequest::decode_packet(&bytes) {
                prop_assert_eq!(req.encode_body(), &bytes[1..]);
            }
            let mut f = RequestFilter::new(US);
            let _ = f.check(&PublicKey([0; 32]), &bytes, |_| false);
        }
    }
}
