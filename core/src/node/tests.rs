//! Two nodes joined in memory, in virtual time: the glue between DHT, endpoint, friends,
//! chat and file streams, without sockets or a runtime.

use std::io::{Cursor, Seek, SeekFrom, Write};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rustox_file_transfer::FileKind;
use rustox_net_crypto::{CloseReason, ControllerKind};
use sha2::{Digest, Sha256};

use super::messenger::{MAX_CUSTOM_PACKET_LEN, MAX_MESSAGE_LEN};
use super::presence::{MAX_NAME_LEN, PACKET_ID_NICKNAME, PACKET_ID_TYPING, PACKET_ID_USERSTATUS};
use super::*;

const ONE_WAY: Duration = Duration::from_millis(1);

fn addr_a() -> SocketAddr {
    "10.0.0.1:33445".parse().unwrap()
}
fn addr_b() -> SocketAddr {
    "10.0.0.2:33445".parse().unwrap()
}

/// A node seeded with `seed`: BBR, no LAN discovery (also for `tests_relay`).
pub(super) fn node(seed: u64, accept_strangers: bool) -> Node {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let keys = KeyPair::generate(&mut rng);
    let options = NodeOptions {
        transport: TransportConfig {
            controller: ControllerKind::Bbr,
            ..Default::default()
        },
        dht: DhtConfig {
            lan_discovery: false,
            ..DhtConfig::default()
        },
        accept_strangers,
        ..NodeOptions::default()
    };
    Node::new(Timestamp::ZERO, keys, options, Box::new(rng))
}

type React<'a> = &'a mut dyn FnMut(&mut Node, Timestamp, &NodeEvent);
/// Decides whether the wire loses a datagram: called with `true` for a → b.
type Loss<'a> = &'a mut dyn FnMut(bool, &[u8]) -> bool;

/// Two nodes on a wire of 1 ms one way, and the virtual clock.
struct Pair {
    a: Node,
    b: Node,
    now: Timestamp,
    wire: Vec<(Timestamp, bool, Vec<u8>)>,
}

impl Pair {
    fn new(a: Node, b: Node) -> Self {
        Pair {
            a,
            b,
            now: Timestamp::ZERO,
            wire: Vec::new(),
        }
    }

    /// Moves datagrams both ways except those `lose` picks, lets each side react to its
    /// events, and stops when `done` holds or `limit` more virtual time passes. Returns
    /// each side's events.
    /// [`Pair::run`] on a wire that loses nothing.
    fn run_lossless(
        &mut self,
        on_a: React,
        on_b: React,
        limit: Duration,
        done: impl Fn(&[NodeEvent], &[NodeEvent]) -> bool,
    ) -> (Vec<NodeEvent>, Vec<NodeEvent>) {
        self.run(on_a, on_b, &mut no_loss(), limit, done)
    }

    fn run(
        &mut self,
        on_a: React,
        on_b: React,
        lose: Loss,
        limit: Duration,
        done: impl Fn(&[NodeEvent], &[NodeEvent]) -> bool,
    ) -> (Vec<NodeEvent>, Vec<NodeEvent>) {
        let (a, b) = (&mut self.a, &mut self.b);
        let mut now = self.now;
        let (mut ev_a, mut ev_b) = (Vec::new(), Vec::new());
        let end = now + limit;
        while now < end && !done(&ev_a, &ev_b) {
            while let Some(e) = a.poll_event() {
                on_a(a, now, &e);
                ev_a.push(e);
            }
            while let Some(e) = b.poll_event() {
                on_b(b, now, &e);
                ev_b.push(e);
            }
            while let Some(t) = a.poll_transmit(now) {
                if t.destination == addr_b() && !lose(true, &t.payload) {
                    self.wire.push((now + ONE_WAY, true, t.payload));
                }
            }
            while let Some(t) = b.poll_transmit(now) {
                if t.destination == addr_a() && !lose(false, &t.payload) {
                    self.wire.push((now + ONE_WAY, false, t.payload));
                }
            }
            let next = [
                self.wire.iter().map(|(t, _, _)| *t).min(),
                a.poll_timeout(),
                b.poll_timeout(),
            ]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(now + ONE_WAY);
            now = next.max(now).min(end);
            let (due, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.wire)
                .into_iter()
                .partition(|(t, _, _)| *t <= now);
            self.wire = rest;
            for (_, to_b, bytes) in due {
                if to_b {
                    b.handle_datagram(now, addr_a(), &bytes);
                } else {
                    a.handle_datagram(now, addr_b(), &bytes);
                }
            }
            a.handle_timeout(now);
            b.handle_timeout(now);
        }
        self.now = now;
        (ev_a, ev_b)
    }

    /// [`Pair::run`] without reactions or loss.
    fn idle(
        &mut self,
        limit: Duration,
        done: impl Fn(&[NodeEvent], &[NodeEvent]) -> bool,
    ) -> (Vec<NodeEvent>, Vec<NodeEvent>) {
        self.run(
            &mut |_, _, _| {},
            &mut |_, _, _| {},
            &mut no_loss(),
            limit,
            done,
        )
    }
}

fn no_loss() -> impl FnMut(bool, &[u8]) -> bool {
    |_, _| false
}

/// An in-memory sink that hashes what it is given and, on flush, leaves the digest in its
/// slot — what the drivers' writer thread does on disk.
#[derive(Clone)]
struct MemorySink {
    data: Arc<Mutex<Cursor<Vec<u8>>>>,
    digest: DigestSlot,
}

impl MemorySink {
    fn new() -> Self {
        MemorySink {
            data: Arc::default(),
            digest: Arc::default(),
        }
    }
    fn bytes(&self) -> Vec<u8> {
        self.data.lock().unwrap().get_ref().clone()
    }
    /// `b` accepts `offer` into this sink, which reports its digest when flushed.
    fn accept(&self, b: &mut Node, now: Timestamp, offer: &FileOffer) {
        b.accept_file(
            now,
            offer.friend,
            offer.file,
            Box::new(self.clone()),
            Some(self.digest.clone()),
        )
        .unwrap();
    }
}

impl Write for MemorySink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.data.lock().unwrap().write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        let digest: [u8; 32] = Sha256::digest(self.bytes()).into();
        *self.digest.lock().unwrap() = Some(digest);
        Ok(())
    }
}

impl Seek for MemorySink {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.data.lock().unwrap().seek(pos)
    }
}

fn prepared(content: &[u8]) -> PreparedFile {
    PreparedFile {
        source: Box::new(Cursor::new(content.to_vec())),
        size: content.len() as u64,
        sha256: Sha256::digest(content).into(),
    }
}

fn content(len: usize) -> Vec<u8> {
    (0..len as u32)
        .map(|i| (i % 251) as u8 ^ (i >> 11) as u8)
        .collect()
}

fn online(events: &[NodeEvent]) -> bool {
    events
        .iter()
        .any(|e| matches!(e, NodeEvent::FriendConnection { online: true, .. }))
}

/// a adds b as a friend it reaches directly at `addr_b()`, at time zero.
fn dial(a: &mut Node, b: &Node) -> FriendNumber {
    a.add_friend_direct(
        Timestamp::ZERO,
        b.public_key(),
        b.dht_public_key(),
        addr_b(),
    )
    .unwrap()
}

/// Dials b directly from a; b accepts strangers.
fn direct_pair() -> (Pair, FriendNumber) {
    let mut a = node(1, false);
    let b = node(2, true);
    let friend = dial(&mut a, &b);
    (Pair::new(a, b), friend)
}

/// Nodes 1 and 2, each the other's friend (a dials b directly), neither accepting strangers:
/// the pair and a's and b's friend numbers for each other.
fn mutual_pair() -> (Pair, FriendNumber, FriendNumber) {
    let mut a = node(1, false);
    let mut b = node(2, false);
    let fa = dial(&mut a, &b);
    let fb = b
        .add_friend_norequest(Timestamp::ZERO, a.public_key())
        .unwrap();
    (Pair::new(a, b), fa, fb)
}

#[test]
fn a_message_and_a_verified_file_cross_between_two_nodes() {
    let (mut pair, friend) = direct_pair();
    let data = content(300_000);
    let source = data.clone();
    let mut on_a = |a: &mut Node, now: Timestamp, e: &NodeEvent| {
        if matches!(e, NodeEvent::FriendConnection { online: true, .. }) {
            a.send_message(now, friend, b"hello").unwrap();
            a.send_file(now, friend, prepared(&source), b"x.bin")
                .unwrap();
        }
    };
    let sink = MemorySink::new();
    let sink_b = sink.clone();
    let mut on_b = |b: &mut Node, now: Timestamp, e: &NodeEvent| {
        if let NodeEvent::FileOffered(offer) = e {
            assert_eq!(offer.size, 300_000);
            assert_eq!(offer.name, b"x.bin");
            sink_b.accept(b, now, offer);
        }
    };
    let (ev_a, ev_b) = pair.run_lossless(
        &mut on_a,
        &mut on_b,
        Duration::from_secs(60),
        |ev_a, ev_b| {
            ev_a.iter().any(|e| matches!(e, NodeEvent::FileSent { .. }))
                && ev_b
                    .iter()
                    .any(|e| matches!(e, NodeEvent::FileReceived { .. }))
        },
    );
    assert!(ev_b
        .iter()
        .any(|e| matches!(e, NodeEvent::FriendAdded { .. })));
    assert!(ev_b
        .iter()
        .any(|e| matches!(e, NodeEvent::Message { text, .. } if text == b"hello")));
    assert!(ev_b.iter().any(|e| matches!(
        e,
        NodeEvent::FileReceived {
            bytes: 300_000,
            verification: FileVerification::Sha256FileId,
            ..
        }
    )));
    assert!(ev_a
        .iter()
        .any(|e| matches!(e, NodeEvent::FileSent { bytes: 300_000, .. })));
    assert!(sink.bytes() == data, "the file arrived altered");
}

/// A file whose SHA-256 differs from its file id (a c-toxcore client's random id) is kept
/// whole and reported unverified, with the SHA-256 of what arrived.
#[test]
fn a_file_whose_hash_differs_from_its_id_is_kept_unverified() {
    let (mut pair, friend) = direct_pair();
    let data = content(50_000);
    let mut on_a = |a: &mut Node, now: Timestamp, e: &NodeEvent| {
        if matches!(e, NodeEvent::FriendConnection { online: true, .. }) {
            let mut file = prepared(&data);
            file.sha256 = [0x5a; 32];
            a.send_file(now, friend, file, b"x.bin").unwrap();
        }
    };
    let sink = MemorySink::new();
    let mut on_b = accept_into(&sink);
    let (_, ev_b) = pair.run_lossless(&mut on_a, &mut on_b, Duration::from_secs(60), |_, ev_b| {
        ev_b.iter().any(|e| {
            matches!(
                e,
                NodeEvent::FileReceived { .. } | NodeEvent::FileFailed { .. }
            )
        })
    });
    let sha256: [u8; 32] = Sha256::digest(&data).into();
    assert!(
        ev_b.iter().any(|e| matches!(
            e,
            NodeEvent::FileReceived {
                bytes: 50_000,
                sha256: Some(d),
                verification: FileVerification::OpaqueFileId,
                ..
            } if *d == sha256
        )),
        "{ev_b:?}"
    );
    assert!(sink.bytes() == data, "the file arrived altered");
}

/// Messages wait for Messenger's ONLINE: before it, sending is refused; so are empty
/// messages, unknown friends and our own key.
#[test]
fn api_calls_that_cannot_work_are_refused() {
    let (mut pair, friend) = direct_pair();
    let a = &mut pair.a;
    assert!(matches!(
        a.send_message(Timestamp::ZERO, friend, b"early"),
        Err(NodeError::FriendOffline)
    ));
    assert!(matches!(
        a.send_message(Timestamp::ZERO, FriendNumber(9), b"x"),
        Err(NodeError::UnknownFriend)
    ));
    assert!(matches!(
        a.send_message(Timestamp::ZERO, friend, b""),
        Err(NodeError::EmptyMessage)
    ));
    assert!(matches!(
        a.send_message(Timestamp::ZERO, friend, &[b'x'; MAX_MESSAGE_LEN + 1]),
        Err(NodeError::MessageTooLong)
    ));
    let own = a.public_key();
    assert!(matches!(
        a.add_friend_norequest(Timestamp::ZERO, own),
        Err(NodeError::OwnKey)
    ));
}

/// A cookie request from UDP port 0 is dropped unread and counted; from a real port the
/// same request is answered. A refused send is recorded, not raised.
#[test]
fn a_datagram_from_port_zero_is_dropped_and_counted() {
    let (mut pair, _) = direct_pair();
    let (a, b) = (&mut pair.a, &mut pair.b);
    let request = std::iter::from_fn(|| a.poll_transmit(Timestamp::ZERO))
        .find(|t| t.payload.first() == Some(&0x18))
        .expect("a cookie request");
    b.handle_datagram(
        Timestamp::ZERO,
        "10.0.0.1:0".parse().unwrap(),
        &request.payload,
    );
    assert!(std::iter::from_fn(|| b.poll_transmit(Timestamp::ZERO))
        .all(|t| t.payload.first() != Some(&0x19)));
    assert_eq!(b.io_counters().from_port_zero, 1);
    b.handle_datagram(Timestamp::ZERO, addr_a(), &request.payload);
    let reply = std::iter::from_fn(|| b.poll_transmit(Timestamp::ZERO))
        .find(|t| t.payload.first() == Some(&0x19))
        .expect("a cookie response");
    assert_eq!(reply.destination, addr_a());
    let refused = std::io::Error::from_raw_os_error(101);
    b.record_send_error(reply.destination, &refused);
    assert_eq!(b.io_counters().send_errors, 1);
}

/// A node that accepts only friends never gives a stranger a session; the stranger's
/// handshake times out, and it redials no faster than the handshake's own retries.
#[test]
fn a_stranger_never_gets_a_session() {
    let mut a = node(1, false);
    let b = node(2, false);
    dial(&mut a, &b);
    let mut pair = Pair::new(a, b);
    let (mut cookie_requests, mut handshakes) = (0, 0);
    let mut count = |to_b: bool, bytes: &[u8]| {
        match (to_b, bytes.first()) {
            (true, Some(0x18)) => cookie_requests += 1,
            (true, Some(0x1a)) => handshakes += 1,
            _ => {}
        }
        false
    };
    let (ev_a, ev_b) = pair.run(
        &mut |_, _, _| {},
        &mut |_, _, _| {},
        &mut count,
        Duration::from_secs(30),
        |_, _| false,
    );
    assert!(!online(&ev_a) && !online(&ev_b), "{ev_b:?}");
    assert!(pair.b.friends().is_empty());
    let timeouts = ev_a
        .iter()
        .filter(|e| {
            matches!(
                e,
                NodeEvent::SessionClosed {
                    reason: CloseReason::Timeout,
                    ..
                }
            )
        })
        .count();
    // b answers cookie requests statelessly and drops the handshakes: each dial is one
    // cookie request and 8 handshakes a second apart (docs/protocol.md §2.3), then a redial.
    assert!(
        (3..=4).contains(&timeouts),
        "{timeouts} handshake time-outs"
    );
    assert!(
        cookie_requests <= timeouts + 1,
        "{cookie_requests} cookie requests for {timeouts} dials"
    );
    assert!(
        handshakes <= 8 * (timeouts + 1),
        "{handshakes} handshakes for {timeouts} dials"
    );
}

/// Once both sides are friends, the session comes up; after b deletes a, a goes offline
/// (b's OFFLINE, then the kill) and cannot get a new session.
#[test]
fn a_deleted_friend_goes_offline_and_stays_out() {
    let (mut pair, fa, fb) = mutual_pair();
    let (ev_a, ev_b) = pair.idle(Duration::from_secs(10), |ev_a, ev_b| {
        presence_done(ev_a) && presence_done(ev_b)
    });
    assert!(online(&ev_a) && online(&ev_b));
    assert!(pair.a.is_friend_online(fa) && pair.b.is_friend_online(fb));
    let now = pair.now;
    pair.b.delete_friend(now, fb).unwrap();
    assert!(pair.b.friends().is_empty());
    let (ev_a, ev_b) = pair.idle(Duration::from_secs(30), |_, _| false);
    assert!(!pair.a.is_friend_online(fa));
    assert!(ev_a
        .iter()
        .any(|e| matches!(e, NodeEvent::FriendConnection { online: false, .. })));
    assert!(!online(&ev_a), "a came back: {ev_a:?}");
    assert!(ev_b.is_empty(), "b heard from a deleted friend: {ev_b:?}");
}

/// Issue #10: a sender that closes the session on `FileSent` (as `rustox send` and the demo
/// do) must not strand the receiver with a hole. The wire loses one full data datagram a
/// few packets before the file's last one, and its first repairs; the receiver then holds
/// the last packet while the lost one is still missing, and its request packets (which
/// name the hole) acknowledge the last one. `FileSent` must wait for the hole: the file
/// layer asks net_crypto whether the file's last packet is delivered, which holds only once
/// every packet before it is too (docs/protocol.md §2.8). Each of the last eight full chunks is
/// lost in turn.
#[test]
fn file_sent_waits_until_the_receiver_has_every_packet() {
    const SIZE: usize = 300_000;
    // 218 full chunks, then one of 1122 bytes.
    let full_chunks = SIZE / 1371;
    let data = content(SIZE);
    let mut failures = Vec::new();
    for before_end in 0..8 {
        let lost = full_chunks - before_end;
        let (ev_a, ev_b, received) = send_closing_on_file_sent(&data, lost);
        let sent = ev_a.iter().find(|e| ended(e));
        let got = ev_b.iter().find(|e| ended(e));
        let whole = matches!(sent, Some(NodeEvent::FileSent { bytes, .. }) if *bytes == SIZE as u64)
            && matches!(
                got,
                Some(NodeEvent::FileReceived {
                    verification: FileVerification::Sha256FileId,
                    ..
                })
            )
            && received == data;
        if !whole {
            failures.push(format!(
                "full chunk {lost} of {full_chunks} lost: the sender ended with {sent:?}, \
                 the receiver with {got:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Repairs lost after the file's last chunk (see [`send_closing_on_file_sent`]).
const REPAIRS_LOST: usize = 3;

/// The first event that ends a side's part in a transfer.
fn ended(e: &NodeEvent) -> bool {
    matches!(
        e,
        NodeEvent::FileSent { .. }
            | NodeEvent::FileReceived { .. }
            | NodeEvent::FileFailed { .. }
            | NodeEvent::FriendConnection { online: false, .. }
    )
}

/// `data` from a to b, a deleting b (which kills the session) on `FileSent`. The wire loses
/// the `lost`-th full data datagram a → b (counting from 1), then, once the file's last
/// (short) chunk has passed, the first [`REPAIRS_LOST`] full datagrams after it: the repairs
/// of the hole, so the receiver holds the last chunk without the lost one for several round
/// trips, whatever the transport's repair timing. Panics when the wire lost nothing.
fn send_closing_on_file_sent(
    data: &[u8],
    lost: usize,
) -> (Vec<NodeEvent>, Vec<NodeEvent>, Vec<u8>) {
    /// Only a FILE_DATA datagram with a full chunk (1371 file bytes) is this large;
    /// handshakes, the offer, requests and acknowledgements are far smaller.
    const FULL_CHUNK_DATAGRAM: usize = 1371;
    /// The last chunk (1122 file bytes) makes the only datagram between these sizes.
    const LAST_CHUNK_DATAGRAM: std::ops::Range<usize> = 1122..FULL_CHUNK_DATAGRAM;
    let (mut pair, friend) = direct_pair();
    let mut on_a = |a: &mut Node, now: Timestamp, e: &NodeEvent| match e {
        NodeEvent::FriendConnection { online: true, .. } => {
            a.send_file(now, friend, prepared(data), b"x.bin").unwrap();
        }
        // What `rustox send` does: the file is delivered, so the session can go.
        NodeEvent::FileSent { .. } => a.delete_friend(now, friend).unwrap(),
        _ => {}
    };
    let sink = MemorySink::new();
    let mut on_b = accept_into(&sink);
    let mut full_datagrams = 0;
    let mut last_chunk_passed = false;
    let mut repairs_lost = 0;
    let mut lose = |to_b: bool, datagram: &[u8]| {
        if !to_b {
            return false;
        }
        if LAST_CHUNK_DATAGRAM.contains(&datagram.len()) {
            last_chunk_passed = true;
        }
        if datagram.len() < FULL_CHUNK_DATAGRAM {
            return false;
        }
        full_datagrams += 1;
        if last_chunk_passed && repairs_lost < REPAIRS_LOST {
            repairs_lost += 1;
            return true;
        }
        full_datagrams == lost
    };
    let (ev_a, ev_b) = pair.run(
        &mut on_a,
        &mut on_b,
        &mut lose,
        Duration::from_secs(60),
        |ev_a, ev_b| ev_a.iter().any(ended) && ev_b.iter().any(ended),
    );
    assert!(full_datagrams >= lost, "the wire lost no data datagram");
    assert!(last_chunk_passed, "the last chunk never left");
    (ev_a, ev_b, sink.bytes())
}

/// friend_connection keeps a session only while ALIVE packets arrive (docs/protocol.md §4): when
/// everything from b is lost, a declares the session dead after 32 s, and once the path
/// heals the two find each other again on their own.
#[test]
fn a_silent_friend_times_out_and_the_session_comes_back() {
    let (mut pair, fa, fb) = mutual_pair();
    pair.idle(Duration::from_secs(10), |ev_a, ev_b| {
        online(ev_a) && online(ev_b)
    });
    assert!(pair.a.is_friend_online(fa) && pair.b.is_friend_online(fb));
    let outage_start = pair.now;
    let (ev_a, _) = pair.run(
        &mut |_, _, _| {},
        &mut |_, _, _| {},
        &mut |to_b, _| !to_b,
        Duration::from_secs(40),
        |ev_a, _| {
            ev_a.iter()
                .any(|e| matches!(e, NodeEvent::FriendConnection { online: false, .. }))
        },
    );
    let went_offline = pair.now - outage_start;
    assert!(
        ev_a.iter()
            .any(|e| matches!(e, NodeEvent::FriendConnection { online: false, .. })),
        "a never gave up on a silent friend: {ev_a:?}"
    );
    assert!(
        (Duration::from_secs(24)..Duration::from_secs(34)).contains(&went_offline),
        "a gave up after {went_offline:?}: 32 s after the last ALIVE, which left up to 8 s before the outage"
    );
    let (ev_a, _) = pair.idle(Duration::from_secs(30), |ev_a, _| online(ev_a));
    assert!(online(&ev_a), "no reconnection: {ev_a:?}");
    assert!(pair.a.is_friend_online(fa));
}

/// Online, and the friend's presence (sent once on ONLINE, status last) has arrived.
fn presence_done(events: &[NodeEvent]) -> bool {
    online(events)
        && events
            .iter()
            .any(|e| matches!(e, NodeEvent::FriendStatus { .. }))
}

/// Both nodes online to each other, presence exchanged: a dials b directly, b accepts
/// strangers.
fn online_pair() -> (Pair, FriendNumber, FriendNumber) {
    let (mut pair, friend) = direct_pair();
    let (_, ev_b) = pair.idle(Duration::from_secs(10), |a, b| {
        presence_done(a) && presence_done(b)
    });
    let back = ev_b
        .iter()
        .find_map(|e| match e {
            NodeEvent::FriendConnection {
                friend,
                online: true,
                ..
            } => Some(*friend),
            _ => None,
        })
        .expect("b sees a online");
    (pair, friend, back)
}

#[test]
fn name_status_message_and_status_reach_a_friend_on_connect_and_on_change() {
    let (mut a, b) = (node(1, false), node(2, true));
    a.set_name(Timestamp::ZERO, b"Alice").unwrap();
    a.set_status_message(Timestamp::ZERO, b"out for lunch")
        .unwrap();
    a.set_status(Timestamp::ZERO, UserStatus::Away);
    assert!(matches!(
        a.set_name(Timestamp::ZERO, &[b'x'; MAX_NAME_LEN + 1]),
        Err(NodeError::TooLong(MAX_NAME_LEN))
    ));
    assert_eq!(a.self_presence().name, b"Alice");
    let friend = dial(&mut a, &b);
    let mut pair = Pair::new(a, b);
    let (_, ev_b) = pair.idle(Duration::from_secs(10), |_, b| {
        b.iter()
            .any(|e| matches!(e, NodeEvent::FriendStatus { .. }))
    });
    assert!(ev_b
        .iter()
        .any(|e| matches!(e, NodeEvent::FriendName { name, .. } if name == b"Alice")));
    assert!(ev_b.iter().any(
        |e| matches!(e, NodeEvent::FriendStatusMessage { text, .. } if text == b"out for lunch")
    ));
    assert!(ev_b.iter().any(|e| matches!(
        e,
        NodeEvent::FriendStatus {
            status: UserStatus::Away,
            ..
        }
    )));
    let back = pair.b.friends()[0];
    assert_eq!(pair.b.friend_presence(back).unwrap().name, b"Alice");

    // A change while online, and typing.
    let now = pair.now;
    pair.a.set_name(now, b"Alice B.").unwrap();
    pair.a.set_typing(now, friend, true).unwrap();
    let (_, ev_b) = pair.idle(Duration::from_secs(5), |_, b| {
        b.iter()
            .any(|e| matches!(e, NodeEvent::FriendTyping { typing: true, .. }))
    });
    assert!(ev_b
        .iter()
        .any(|e| matches!(e, NodeEvent::FriendName { name, .. } if name == b"Alice B.")));
    assert!(pair.b.friend_presence(back).unwrap().typing);
}

#[test]
fn messages_and_actions_get_ids_from_1_and_receipts_once_acknowledged_even_under_loss() {
    let (mut pair, friend, _) = online_pair();
    let now = pair.now;
    let ids: Vec<u32> = (0..20)
        .map(|i| {
            let kind = if i % 2 == 0 {
                MessageKind::Normal
            } else {
                MessageKind::Action
            };
            pair.a
                .send_message_kind(now, friend, kind, format!("m{i}").as_bytes())
                .unwrap()
        })
        .collect();
    assert_eq!(ids, (1..=20).collect::<Vec<u32>>());
    let mut n = 0u32;
    // Every third a → b datagram is lost: receipts wait for the resends.
    let mut lose = |to_b: bool, _: &[u8]| {
        n += 1;
        to_b && n.is_multiple_of(3)
    };
    let (ev_a, ev_b) = pair.run(
        &mut |_, _, _| {},
        &mut |_, _, _| {},
        &mut lose,
        Duration::from_secs(30),
        |a, _| {
            a.iter()
                .filter(|e| matches!(e, NodeEvent::ReadReceipt { .. }))
                .count()
                == 20
        },
    );
    let receipts: Vec<u32> = ev_a
        .iter()
        .filter_map(|e| match e {
            NodeEvent::ReadReceipt { message_id, .. } => Some(*message_id),
            _ => None,
        })
        .collect();
    assert_eq!(
        receipts,
        (1..=20).collect::<Vec<u32>>(),
        "each receipt once, in order"
    );
    let got: Vec<(MessageKind, Vec<u8>)> = ev_b
        .iter()
        .filter_map(|e| match e {
            NodeEvent::Message { kind, text, .. } => Some((*kind, text.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(got.len(), 20);
    for (i, (kind, text)) in got.iter().enumerate() {
        assert_eq!(text, format!("m{i}").as_bytes());
        assert_eq!(
            *kind == MessageKind::Action,
            i % 2 == 1,
            "message {i} kept its kind"
        );
    }
}

#[test]
fn custom_packets_arrive_in_their_ranges_and_bad_ids_are_refused() {
    let (mut pair, friend, _) = online_pair();
    let now = pair.now;
    pair.a
        .send_lossless_packet(now, friend, b"\xa0lossless")
        .unwrap();
    pair.a.send_lossy_packet(now, friend, b"\xc8lossy").unwrap();
    for bad in [&b"\x40text"[..], b"\xc8x", b""] {
        assert!(matches!(
            pair.a.send_lossless_packet(now, friend, bad),
            Err(NodeError::BadPacketId)
        ));
    }
    assert!(matches!(
        pair.a.send_lossy_packet(now, friend, b"\xa0x"),
        Err(NodeError::BadPacketId)
    ));
    assert!(matches!(
        pair.a
            .send_lossless_packet(now, friend, &[0xa0; MAX_CUSTOM_PACKET_LEN + 1]),
        Err(NodeError::TooLong(MAX_CUSTOM_PACKET_LEN))
    ));
    let (_, ev_b) = pair.idle(Duration::from_secs(5), |_, b| {
        b.iter()
            .filter(|e| matches!(e, NodeEvent::CustomPacket { .. }))
            .count()
            == 2
    });
    assert!(ev_b.iter().any(|e| matches!(
        e,
        NodeEvent::CustomPacket { lossless: true, data, .. } if data == b"\xa0lossless"
    )));
    assert!(ev_b.iter().any(|e| matches!(
        e,
        NodeEvent::CustomPacket { lossless: false, data, .. } if data == b"\xc8lossy"
    )));
}

#[test]
fn presence_packets_that_break_c_toxcore_limits_are_ignored() {
    let (mut pair, friend, back) = online_pair();
    let now = pair.now;
    let id = pair.a.friends.get(friend).unwrap().session.unwrap();
    let conn = pair.a.endpoint.connection_mut(id).unwrap();
    let mut long_name = vec![PACKET_ID_NICKNAME];
    long_name.extend([b'n'; MAX_NAME_LEN + 1]);
    for bad in [
        long_name,
        vec![PACKET_ID_USERSTATUS, 3],
        vec![PACKET_ID_USERSTATUS, 1, 1],
        vec![PACKET_ID_TYPING],
    ] {
        conn.send_lossless(now, &bad).unwrap();
    }
    conn.send_lossless(now, &[PACKET_ID_USERSTATUS, 2]).unwrap();
    let ignored_before = pair.b.stats().packets_ignored;
    let (_, ev_b) = pair.idle(Duration::from_secs(5), |_, b| {
        b.iter()
            .any(|e| matches!(e, NodeEvent::FriendStatus { .. }))
    });
    assert_eq!(pair.b.stats().packets_ignored - ignored_before, 4);
    let statuses: Vec<UserStatus> = ev_b
        .iter()
        .filter_map(|e| match e {
            NodeEvent::FriendStatus { status, .. } => Some(*status),
            _ => None,
        })
        .collect();
    assert_eq!(statuses, vec![UserStatus::Busy]);
    assert!(ev_b
        .iter()
        .all(|e| !matches!(e, NodeEvent::FriendName { .. })));
    assert_eq!(
        pair.b.friend_presence(back).unwrap().status,
        UserStatus::Busy
    );
}

/// Runs `pair` until `done` holds on b's events, a reacting with `on_a`.
fn accept_into(sink: &MemorySink) -> impl FnMut(&mut Node, Timestamp, &NodeEvent) + '_ {
    move |b: &mut Node, now: Timestamp, e: &NodeEvent| {
        if let NodeEvent::FileOffered(offer) = e {
            sink.accept(b, now, offer);
        }
    }
}

#[test]
fn a_paused_transfer_stops_and_resumes_to_a_verified_file() {
    let (mut pair, friend, _) = online_pair();
    let data = content(2_000_000);
    let now = pair.now;
    let file = pair
        .a
        .send_file(now, friend, prepared(&data), b"big.bin")
        .unwrap();
    let sink = MemorySink::new();
    // Until some bytes moved, not all.
    let probe = sink.clone();
    let (_, _) = pair.run_lossless(
        &mut |_, _, _| {},
        &mut accept_into(&sink),
        Duration::from_secs(10),
        move |_, _| probe.bytes().len() > 100_000,
    );
    assert!(sink.bytes().len() < data.len(), "paused before the end");
    let now = pair.now;
    pair.a.pause_file(now, friend, file).unwrap();
    assert!(matches!(
        pair.a.pause_file(now, friend, file),
        Err(NodeError::FileControl(
            rustox_file_transfer::FileControlError::AlreadyPaused
        ))
    ));
    let (_, ev_b) = pair.idle(Duration::from_secs(2), |_, _| false);
    assert!(
        ev_b.iter().any(|e| matches!(
            e,
            NodeEvent::FileControl {
                control: rustox_file_transfer::FileControl::Pause,
                ..
            }
        )),
        "b hears of the pause: {ev_b:?}"
    );
    let paused_at = sink.bytes().len();
    let _ = pair.idle(Duration::from_secs(3), |_, _| false);
    assert_eq!(sink.bytes().len(), paused_at, "nothing moves while paused");
    let now = pair.now;
    pair.a.resume_file(now, friend, file).unwrap();
    let (_, ev_b) = pair.idle(Duration::from_secs(60), |_, b| {
        b.iter()
            .any(|e| matches!(e, NodeEvent::FileReceived { .. }))
    });
    assert!(ev_b.iter().any(|e| matches!(
        e,
        NodeEvent::FileReceived {
            bytes: 2_000_000,
            verification: FileVerification::Sha256FileId,
            ..
        }
    )));
    assert!(sink.bytes() == data);
}

#[test]
fn a_receiver_with_half_a_file_seeks_and_gets_only_the_rest_verified() {
    let (mut pair, friend, _) = online_pair();
    let data = content(1_000_000);
    let half = 400_000;
    let now = pair.now;
    pair.a
        .send_file_kind(now, friend, FileKind::Data, prepared(&data), b"resume.bin")
        .unwrap();
    let partial = Arc::new(Mutex::new(Cursor::new(data[..half].to_vec())));
    #[derive(Clone)]
    struct Shared(Arc<Mutex<Cursor<Vec<u8>>>>);
    impl std::io::Read for Shared {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().read(buf)
        }
    }
    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().write(buf)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    impl Seek for Shared {
        fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
            self.0.lock().unwrap().seek(pos)
        }
    }
    let store = Shared(partial.clone());
    let mut on_b = |b: &mut Node, now: Timestamp, e: &NodeEvent| {
        if let NodeEvent::FileOffered(offer) = e {
            b.accept_file_from(
                now,
                offer.friend,
                offer.file,
                store.clone(),
                half as u64,
                true,
            )
            .unwrap();
        }
    };
    let (ev_a, ev_b) = pair.run_lossless(
        &mut |_, _, _| {},
        &mut on_b,
        Duration::from_secs(60),
        |_, b| {
            b.iter()
                .any(|e| matches!(e, NodeEvent::FileReceived { .. }))
        },
    );
    assert!(
        ev_b.iter().any(|e| matches!(
            e,
            NodeEvent::FileReceived {
                bytes: 1_000_000,
                verification: FileVerification::Sha256FileId,
                ..
            }
        )),
        "{ev_b:?}"
    );
    assert!(partial.lock().unwrap().get_ref() == &data);
    // Only the rest crossed: a's session carried well under the whole file again.
    let sent = pair.a.session_stats(friend).unwrap().bytes_sent;
    assert!(
        sent < (data.len() - half) as u64 + 200_000,
        "{sent} bytes sent for {} missing",
        data.len() - half
    );
    let _ = ev_a;
}

#[test]
fn an_avatar_offer_carries_its_kind_and_hash() {
    let (mut pair, friend, _) = online_pair();
    let image = content(5_000);
    let now = pair.now;
    pair.a
        .send_file_kind(now, friend, FileKind::Avatar, prepared(&image), b"")
        .unwrap();
    let (_, ev_b) = pair.idle(Duration::from_secs(5), |_, b| {
        b.iter().any(|e| matches!(e, NodeEvent::FileOffered(_)))
    });
    let offer = ev_b
        .iter()
        .find_map(|e| match e {
            NodeEvent::FileOffered(o) => Some(o),
            _ => None,
        })
        .unwrap();
    assert_eq!(offer.kind, FileKind::Avatar);
    assert_eq!(offer.size, 5_000);
    let hash: [u8; 32] = Sha256::digest(&image).into();
    assert_eq!(offer.file_id, hash);
}

#[test]
fn a_node_saved_to_a_profile_and_loaded_keeps_identity_presence_and_friends() {
    let mut a = node(1, false);
    let now = Timestamp::ZERO;
    a.set_name(now, b"Alice").unwrap();
    a.set_status_message(now, b"here").unwrap();
    a.set_status(now, UserStatus::Busy);
    let b = node(2, false);
    let c = node(3, false);
    a.add_friend_norequest(now, b.public_key()).unwrap();
    a.add_friend(now, &c.tox_id(), b"let's be friends").unwrap();
    let bytes = a.to_profile(now).to_bytes();
    let profile = crate::savedata::Profile::parse(&bytes).unwrap();
    assert_eq!(profile.tox_id(), a.tox_id());
    let loaded = Node::from_profile(
        now,
        &profile,
        NodeOptions::default(),
        Box::new(ChaCha20Rng::seed_from_u64(9)),
    );
    assert_eq!(loaded.tox_id(), a.tox_id());
    assert_eq!(loaded.self_presence(), a.self_presence());
    let pks: Vec<PublicKey> = loaded
        .friends()
        .iter()
        .filter_map(|f| loaded.friend_public_key(*f))
        .collect();
    assert_eq!(pks, vec![b.public_key(), c.public_key()]);
    let pending = loaded.friends.get(loaded.friends()[1]).unwrap();
    assert_eq!(
        pending
            .request
            .as_ref()
            .map(|r| r.request.message().to_vec()),
        Some(b"let's be friends".to_vec()),
        "the pending request is resent"
    );
    assert!(loaded
        .friends
        .get(loaded.friends()[0])
        .unwrap()
        .request
        .is_none());
    // Saving the loaded node gives the same file.
    assert_eq!(loaded.to_profile(now).to_bytes(), bytes);
}

#[test]
fn friends_loaded_from_profiles_come_online_and_remember_names() {
    let now = Timestamp::ZERO;
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let keys = KeyPair::generate(&mut rng);
    let mut a = Node::new(
        now,
        keys,
        NodeOptions {
            dht: DhtConfig {
                lan_discovery: false,
                ..DhtConfig::default()
            },
            unix_time: 1_700_000_000,
            ..NodeOptions::default()
        },
        Box::new(rng),
    );
    let mut b = node(2, false);
    b.set_name(now, b"Bob").unwrap();
    a.add_friend_direct(now, b.public_key(), b.dht_public_key(), addr_b())
        .unwrap();
    b.add_friend_norequest(now, a.public_key()).unwrap();
    let mut pair = Pair::new(a, b);
    let _ = pair.idle(Duration::from_secs(10), |a, b| {
        presence_done(a) && presence_done(b)
    });
    let now = pair.now;
    let saved_a = pair.a.to_profile(now);
    let friend = &saved_a.friends[0];
    assert_eq!(friend.name, b"Bob");
    assert_eq!(
        friend.last_seen,
        1_700_000_000 + now.as_secs(),
        "an online friend is seen now"
    );
    // A restarted a: the profile, and b's address (no DHT in this harness).
    let mut a2 = Node::from_profile(
        now,
        &saved_a,
        NodeOptions {
            dht: DhtConfig {
                lan_discovery: false,
                ..DhtConfig::default()
            },
            ..NodeOptions::default()
        },
        Box::new(ChaCha20Rng::seed_from_u64(11)),
    );
    let fb = a2.friends()[0];
    assert_eq!(a2.friend_presence(fb).unwrap().name, b"Bob");
    let b_pk = pair.b.public_key();
    let b_dht = pair.b.dht_public_key();
    a2.add_friend_direct(now, b_pk, b_dht, addr_b()).unwrap();
    let b = std::mem::replace(&mut pair.b, node(5, false));
    let mut pair = Pair::new(a2, b);
    pair.now = now;
    let (ev_a, _) = pair.idle(Duration::from_secs(40), |a, _| online(a));
    assert!(
        online(&ev_a),
        "the loaded node's friend came back: {ev_a:?}"
    );
}

/// A DHT data search (0x93) for the key `[9; 32]` to the node with DHT key `to`, from a client
/// key drawn from `seed`, under the nonce `[nonce; 24]`.
fn data_search_to(to: &PublicKey, seed: u64, nonce: u8) -> Vec<u8> {
    let client = KeyPair::generate(&mut ChaCha20Rng::seed_from_u64(seed));
    let key = rustox_net_crypto::crypto::PrecomputedKey::new(to, &client.secret).unwrap();
    let nonce = rustox_net_crypto::crypto::Nonce([nonce; 24]);
    let mut plain = [9u8; 32].to_vec();
    plain.extend_from_slice(&[1; 8]);
    let mut request = vec![0x93];
    request.extend_from_slice(client.public.as_bytes());
    request.extend_from_slice(&nonce.0);
    request.extend_from_slice(&key.encrypt(&nonce, &plain));
    request
}

/// Every node answers a DHT announcement search (0x93), as every c-toxcore 0.2.18 node does
/// (its DHT probes nodes with one to learn which store announcements), and counts it.
#[test]
fn a_node_answers_a_data_search() {
    let mut b = node(77, false);
    let request = data_search_to(&b.dht_public_key(), 78, 5);
    b.handle_datagram(Timestamp::ZERO, addr_a(), &request);
    let reply = std::iter::from_fn(|| b.poll_transmit(Timestamp::ZERO))
        .find(|t| t.payload.first() == Some(&0x94))
        .expect("a data search response");
    assert_eq!(reply.destination, addr_a());
    assert_eq!(&reply.payload[1..33], b.dht_public_key().as_bytes());
    assert_eq!(b.stats().announce_in, 1);
    assert_eq!(b.announce_server_stats().answered, [1, 0, 0]);
}

/// A node that runs a relay server (`tcp_port`) forwards its clients' packet 10 as a 0x91
/// and keeps the 0x92 that comes back for the client's connection, for the relay to send
/// as packet 11; a node without a relay server keeps nothing for TCP clients.
#[test]
fn an_instance_relay_forwards_for_its_clients_and_keeps_their_replies() {
    let mut relay = node(81, false);
    let mut other = node(82, false);
    relay.serve_relay_onion();
    let search = data_search_to(&other.dht_public_key(), 83, 6);
    let request = crate::relay::server::ForwardRequest {
        client: "192.0.2.5:5555".parse().unwrap(),
        con: 17,
        serial: 4242,
        dest: addr_b(),
        data: search,
    };
    relay.handle_relay_forward_request(Timestamp::ZERO, &request);
    let forwarding = std::iter::from_fn(|| relay.poll_transmit(Timestamp::ZERO))
        .find(|t| t.payload.first() == Some(&0x91))
        .expect("the request leaves as a 0x91");
    assert_eq!(forwarding.destination, addr_b());
    other.handle_datagram(Timestamp::ZERO, addr_a(), &forwarding.payload);
    let reply = std::iter::from_fn(|| other.poll_transmit(Timestamp::ZERO))
        .find(|t| t.payload.first() == Some(&0x92))
        .expect("the answer comes back as a 0x92");
    assert_eq!(reply.destination, addr_a());
    relay.handle_datagram(Timestamp::ZERO, addr_b(), &reply.payload);
    let (con, serial, data) = relay
        .poll_relay_forward_reply()
        .expect("a reply for the relay's client");
    assert_eq!((con, serial, data.first()), (17, 4242, Some(&0x94)));
    assert_eq!(relay.poll_relay_forward_reply(), None);

    // Without a relay server the same reply has nowhere to go and is not kept.
    let mut plain_node = node(81, false);
    plain_node.handle_relay_forward_request(Timestamp::ZERO, &request);
    let forwarding = std::iter::from_fn(|| plain_node.poll_transmit(Timestamp::ZERO))
        .find(|t| t.payload.first() == Some(&0x91))
        .expect("the request leaves as a 0x91");
    other.handle_datagram(Timestamp::from_secs(1), addr_a(), &forwarding.payload);
    let reply = std::iter::from_fn(|| other.poll_transmit(Timestamp::from_secs(1)))
        .find(|t| t.payload.first() == Some(&0x92))
        .expect("the answer comes back as a 0x92");
    plain_node.handle_datagram(Timestamp::from_secs(1), addr_b(), &reply.payload);
    assert_eq!(plain_node.poll_relay_forward_reply(), None);
}
