//! Conferences between real nodes joined in memory, in virtual time: invites over friend
//! sessions, peers that are not friends reaching each other through hidden links, messages,
//! titles and names, leaving, and a node rebuilt from its profile rejoining.
//!
//! A is B's friend, B is C's friend; A and C are strangers, all three on one DHT (A and C
//! bootstrap from B), so the hidden link A–C finds C's address through it.

use std::net::SocketAddr;
use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use super::conference_ops::PACKET_ID_INVITE_CONFERENCE as PACKET_ID_INVITE;
use super::tests::node;
use super::*;
use crate::conference::{
    ConferenceError, ConferenceEvent, ConferenceNumber, ConferenceType, PeerList, INVITE_COOKIE_LEN,
};

const ONE_WAY: Duration = Duration::from_millis(5);

fn addr(i: usize) -> SocketAddr {
    SocketAddr::from(([10, 0, 2, i as u8 + 1], 33445))
}

/// Nodes on a wire of [`ONE_WAY`] each way, the virtual clock, and every event each node
/// reported so far.
pub(super) struct Net {
    pub(super) nodes: Vec<Node>,
    pub(super) now: Timestamp,
    wire: Vec<(Timestamp, usize, usize, Vec<u8>)>,
    pub(super) events: Vec<Vec<NodeEvent>>,
    /// A node that is off: nothing reaches it and it runs no timers.
    off: Vec<bool>,
}

impl Net {
    fn new(nodes: Vec<Node>) -> Self {
        let n = nodes.len();
        Net {
            nodes,
            now: Timestamp::ZERO,
            wire: Vec::new(),
            events: (0..n).map(|_| Vec::new()).collect(),
            off: vec![false; n],
        }
    }

    /// Runs until `done` holds (true) or `limit` more virtual time passed (false).
    pub(super) fn run(&mut self, limit: Duration, done: impl Fn(&Net) -> bool) -> bool {
        let end = self.now + limit;
        loop {
            for i in 0..self.nodes.len() {
                while let Some(e) = self.nodes[i].poll_event() {
                    self.events[i].push(e);
                }
            }
            if done(self) {
                return true;
            }
            if self.now >= end {
                return false;
            }
            for i in 0..self.nodes.len() {
                while let Some(t) = self.nodes[i].poll_transmit(self.now) {
                    let to = (0..self.nodes.len()).find(|j| addr(*j) == t.destination);
                    if let Some(to) = to.filter(|j| !self.off[*j] && !self.off[i]) {
                        self.wire.push((self.now + ONE_WAY, i, to, t.payload));
                    }
                }
            }
            let next = self
                .wire
                .iter()
                .map(|w| w.0)
                .chain(
                    (0..self.nodes.len())
                        .filter(|i| !self.off[*i])
                        .filter_map(|i| self.nodes[i].poll_timeout()),
                )
                .min()
                .unwrap_or(self.now + ONE_WAY);
            self.now = next.max(self.now).min(end);
            let now = self.now;
            let (due, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.wire)
                .into_iter()
                .partition(|w| w.0 <= now);
            self.wire = rest;
            for (_, from, to, bytes) in due {
                self.nodes[to].handle_datagram(now, addr(from), &bytes);
            }
            for i in 0..self.nodes.len() {
                if !self.off[i] {
                    self.nodes[i].handle_timeout(now);
                }
            }
        }
    }

    /// Whether node `i` reported an event `f` picks since its event `from`.
    pub(super) fn saw(&self, i: usize, from: usize, f: impl Fn(&NodeEvent) -> bool) -> bool {
        self.events[i].iter().skip(from).any(f)
    }

    pub(super) fn mark(&self, i: usize) -> usize {
        self.events[i].len()
    }

    fn peers(&self, i: usize, conference: ConferenceNumber) -> u32 {
        self.nodes[i]
            .conferences()
            .peer_count(conference, PeerList::Online)
            .unwrap_or(0)
    }
}

fn friend_online(events: &[NodeEvent], friend: FriendNumber) -> bool {
    events.iter().any(
        |e| matches!(e, NodeEvent::FriendConnection { friend: f, online: true, .. } if *f == friend),
    )
}

fn message_from(e: &NodeEvent, text: &[u8]) -> bool {
    matches!(e, NodeEvent::Conference(ConferenceEvent::Message { text: t, .. }) if t == text)
}

/// Whether `node` has a friend connection up to `pk`, friend or hidden link.
fn link_up(node: &Node, pk: &PublicKey) -> bool {
    node.friends
        .link_by_pk(pk)
        .and_then(|n| node.friends.link(n))
        .is_some_and(|l| l.conn.status() == crate::friend::FriendConnStatus::Connected)
}

/// A, B, C with A–B and B–C friends online, A and C bootstrapped from B. Returns the net and
/// A's number for B, B's for A, B's for C, C's for B.
pub(super) fn three() -> (Net, [FriendNumber; 4]) {
    let now = Timestamp::ZERO;
    let mut a = node(31, false);
    let mut b = node(32, false);
    let mut c = node(33, false);
    a.set_name(now, b"Alice").unwrap();
    b.set_name(now, b"Bob").unwrap();
    c.set_name(now, b"Carol").unwrap();
    let ab = a
        .add_friend_direct(now, b.public_key(), b.dht_public_key(), addr(1))
        .unwrap();
    let ba = b.add_friend_norequest(now, a.public_key()).unwrap();
    let cb = c
        .add_friend_direct(now, b.public_key(), b.dht_public_key(), addr(1))
        .unwrap();
    let bc = b.add_friend_norequest(now, c.public_key()).unwrap();
    let b_dht = b.dht_public_key();
    a.bootstrap(now, addr(1), b_dht);
    c.bootstrap(now, addr(1), b_dht);
    let mut net = Net::new(vec![a, b, c]);
    assert!(
        net.run(Duration::from_secs(20), |n| {
            friend_online(&n.events[0], ab)
                && friend_online(&n.events[1], ba)
                && friend_online(&n.events[1], bc)
                && friend_online(&n.events[2], cb)
        }),
        "the friends came online"
    );
    (net, [ab, ba, bc, cb])
}

/// The cookie of the latest invite node `i` got, and from whom.
fn invite(net: &Net, i: usize) -> Option<(FriendNumber, Vec<u8>)> {
    net.events[i].iter().rev().find_map(|e| match e {
        NodeEvent::ConferenceInvite { friend, cookie, .. } => Some((*friend, cookie.clone())),
        _ => None,
    })
}

/// `inviter` invites its friend `friend` (node `invitee`) into `conference`; the invitee
/// joins. Returns the invitee's conference number once it is connected.
fn invite_and_join(
    net: &mut Net,
    inviter: usize,
    friend: FriendNumber,
    conference: ConferenceNumber,
    invitee: usize,
) -> ConferenceNumber {
    let kind = net.nodes[inviter].conferences().kind(conference).unwrap();
    let now = net.now;
    let from = net.mark(invitee);
    net.nodes[inviter]
        .conference_invite(now, friend, conference)
        .unwrap();
    assert!(
        net.run(Duration::from_secs(5), |n| n.saw(
            invitee,
            from,
            |e| matches!(e, NodeEvent::ConferenceInvite { .. })
        )),
        "the invite arrived"
    );
    let (by, cookie) = invite(net, invitee).unwrap();
    assert_eq!(cookie.len(), INVITE_COOKIE_LEN);
    let now = net.now;
    let invitee_node = &mut net.nodes[invitee];
    let joined = match kind {
        ConferenceType::Text => invitee_node.conference_join(now, by, &cookie),
        ConferenceType::Av => invitee_node.conference_join_av(now, by, &cookie),
    }
    .unwrap();
    assert!(
        net.run(Duration::from_secs(10), |n| n.saw(
            invitee,
            from,
            |e| matches!(
                e,
                NodeEvent::Conference(ConferenceEvent::Connected { conference: c }) if *c == joined
            )
        )),
        "the invitee connected: {:?}",
        net.events[invitee]
    );
    joined
}

/// The three in one conference: A made it, invited B, B invited C. Returns each one's
/// conference number.
pub(super) fn conference_of_three(
    kind: ConferenceType,
) -> (Net, [FriendNumber; 4], [ConferenceNumber; 3]) {
    let (mut net, f) = three();
    let now = net.now;
    let conf_a = net.nodes[0].conference_new(now, kind).unwrap();
    let conf_b = invite_and_join(&mut net, 0, f[0], conf_a, 1);
    let conf_c = invite_and_join(&mut net, 1, f[2], conf_b, 2);
    let confs = [conf_a, conf_b, conf_c];
    assert!(
        net.run(Duration::from_secs(60), |n| (0..3)
            .all(|i| n.peers(i, confs[i]) == 3)),
        "every node sees three peers: {:?}",
        (0..3).map(|i| net.peers(i, confs[i])).collect::<Vec<_>>()
    );
    // A and C heard of each other through B; their hidden links find each other through the
    // DHT (the DHT key each conference peer list carries is dialled at once).
    let (a_pk, c_pk) = (net.nodes[0].public_key(), net.nodes[2].public_key());
    assert!(
        net.run(Duration::from_secs(60), |n| link_up(&n.nodes[0], &c_pk)
            && link_up(&n.nodes[2], &a_pk)),
        "A and C linked"
    );
    eprintln!("three in one conference at {:?}", net.now);
    (net, f, confs)
}

#[test]
fn strangers_in_a_conference_talk_through_hidden_links_the_application_never_sees() {
    // An AV conference: text, and group audio's lossy packets.
    let (mut net, f, confs) = conference_of_three(ConferenceType::Av);
    // A and C are not friends: each holds a hidden link to the other, and nothing more.
    for i in [0, 2] {
        assert_eq!(net.nodes[i].hidden_link_count(), 1, "node {i}");
        assert_eq!(net.nodes[i].friends().len(), 1, "node {i}");
        let saved = net.nodes[i].to_profile(net.now);
        assert_eq!(saved.friends.len(), 1, "node {i} saves its one friend only");
    }
    assert_eq!(net.nodes[1].hidden_link_count(), 0);
    assert_eq!(net.nodes[0].friends(), vec![f[0]]);
    let c_pk = net.nodes[2].public_key();
    let a_pk = net.nodes[0].public_key();
    for (i, other) in [(0, c_pk), (2, a_pk)] {
        assert!(
            link_up(&net.nodes[i], &other),
            "node {i}'s hidden link is up"
        );
    }
    assert_eq!(net.nodes[0].friend_by_pk(&c_pk), None);
    for i in [0, 2] {
        assert!(
            !net.events[i].iter().any(|e| matches!(
                e,
                NodeEvent::FriendAdded { .. } | NodeEvent::FriendRequest { .. }
            ) || matches!(e, NodeEvent::FriendConnection { friend, .. }
                    if net.nodes[i].friend_public_key(*friend).is_none())
                || matches!(e, NodeEvent::SessionClosed { friend, .. }
                    if net.nodes[i].friend_public_key(*friend).is_none())),
            "node {i} heard nothing of its hidden link"
        );
    }
    // Messages reach everyone, from every side.
    let now = net.now;
    let marks: Vec<usize> = (0..3).map(|i| net.mark(i)).collect();
    net.nodes[0]
        .conference_send_message(now, confs[0], MessageKind::Normal, b"hello from A")
        .unwrap();
    net.nodes[2]
        .conference_send_message(now, confs[2], MessageKind::Action, b"waves from C")
        .unwrap();
    assert!(
        net.run(Duration::from_secs(5), |n| (0..3).all(|i| n.saw(
            i,
            marks[i],
            |e| message_from(e, b"hello from A")
        ) && n.saw(
            i,
            marks[i],
            |e| message_from(e, b"waves from C")
        ))),
        "every node has both messages"
    );
    // The action arrived as one, at A, from the peer whose key is C's.
    let at_a = net.events[0].iter().skip(marks[0]).find_map(|e| match e {
        NodeEvent::Conference(ConferenceEvent::Message {
            peer, kind, text, ..
        }) if text == b"waves from C" => Some((*peer, *kind)),
        _ => None,
    });
    let (peer, kind) = at_a.unwrap();
    assert_eq!(kind, MessageKind::Action);
    assert_eq!(
        net.nodes[0]
            .conferences()
            .peer_public_key(confs[0], PeerList::Online, peer),
        Ok(c_pk)
    );
    // Titles and names travel too.
    let now = net.now;
    let marks: Vec<usize> = (0..3).map(|i| net.mark(i)).collect();
    net.nodes[2]
        .conference_set_title(now, confs[2], b"three of us")
        .unwrap();
    net.nodes[2].set_name(now, b"Caroline").unwrap();
    assert!(
        net.run(Duration::from_secs(5), |n| [0, 1].iter().all(|&i| {
            n.saw(i, marks[i], |e| {
                matches!(e, NodeEvent::Conference(ConferenceEvent::Title { title, .. })
                    if title == b"three of us")
            }) && n.saw(i, marks[i], |e| {
                matches!(e, NodeEvent::Conference(ConferenceEvent::PeerName { name, .. })
                    if name == b"Caroline")
            })
        })),
        "A and B have the title and C's new name"
    );
    for (node, conf) in net.nodes.iter().zip(confs) {
        assert_eq!(node.conferences().title(conf), Ok(&b"three of us"[..]));
    }
    // Lossy conference packets (group audio's 199) cross the hidden link too. C joined with
    // its audio on, which would take a group audio packet (192) as audio: off, it is handed
    // over as it came.
    let now = net.now;
    let mark = net.mark(2);
    net.nodes[2]
        .conference_set_audio(now, confs[2], false)
        .unwrap();
    net.nodes[0]
        .conference_send_lossy(now, confs[0], &[192, 1, 2, 3])
        .unwrap();
    assert!(
        net.run(Duration::from_secs(5), |n| n.saw(2, mark, |e| matches!(
            e,
            NodeEvent::Conference(ConferenceEvent::Lossy { data, .. }) if data == &[192, 1, 2, 3]
        ))),
        "C has A's lossy packet"
    );
    // An invite (96) is Messenger's: on a hidden link it goes nowhere.
    let now = net.now;
    let link = net.nodes[2].friends.link_by_pk(&a_pk).unwrap();
    let session = net.nodes[2].friends.link(link).unwrap().session.unwrap();
    let mut invite = vec![PACKET_ID_INVITE];
    invite.extend_from_slice(&[0, 0]);
    invite.extend_from_slice(&[0; INVITE_COOKIE_LEN - 2]);
    let (ignored, mark) = (net.nodes[2].stats().packets_ignored, net.mark(2));
    net.nodes[2].on_session_packet(now, link, session, &invite);
    assert_eq!(net.nodes[2].stats().packets_ignored, ignored + 1);
    net.run(Duration::from_millis(100), |_| false);
    assert!(!net.saw(2, mark, |e| matches!(e, NodeEvent::ConferenceInvite { .. })));
    // Nothing of it came as a custom packet.
    assert!(!net
        .events
        .iter()
        .flatten()
        .any(|e| matches!(e, NodeEvent::CustomPacket { .. })));
}

#[test]
fn a_peer_that_leaves_is_gone_for_the_others_and_its_hidden_links_close() {
    let (mut net, _, confs) = conference_of_three(ConferenceType::Text);
    let now = net.now;
    net.nodes[2].conference_delete(now, confs[2]).unwrap();
    assert!(net.nodes[2].conferences().list().is_empty());
    assert!(
        net.run(Duration::from_secs(10), |n| n.peers(0, confs[0]) == 2
            && n.peers(1, confs[1]) == 2),
        "A and B see C go"
    );
    // For good: not kept among the offline peers, as a frozen one would be.
    for (i, conf) in [(0, confs[0]), (1, confs[1])] {
        assert_eq!(
            net.nodes[i]
                .conferences()
                .peer_count(conf, PeerList::Offline),
            Ok(0)
        );
    }
    // C no longer needs its link to A, nor A its link to C.
    assert!(
        net.run(Duration::from_secs(40), |n| n.nodes[0].hidden_link_count()
            == 0
            && n.nodes[2].hidden_link_count() == 0),
        "the hidden links closed: A {} C {}",
        net.nodes[0].hidden_link_count(),
        net.nodes[2].hidden_link_count()
    );
    // The two left still talk.
    let now = net.now;
    let mark = net.mark(1);
    net.nodes[0]
        .conference_send_message(now, confs[0], MessageKind::Normal, b"just us")
        .unwrap();
    assert!(net.run(Duration::from_secs(5), |n| n.saw(
        1,
        mark,
        |e| message_from(e, b"just us")
    )));
}

#[test]
fn a_hidden_link_becomes_a_friend_at_the_lowest_free_number_and_a_deleted_friend_stays_linked() {
    let (mut net, f, confs) = conference_of_three(ConferenceType::Text);
    let a_pk = net.nodes[0].public_key();
    let c_pk = net.nodes[2].public_key();
    // C adds A, whose link it holds hidden: A takes C's lowest free friend number, and the
    // two come online for Messenger over the link that is already up (C says ONLINE at
    // once, A answers).
    // C's friend numbers: B 0, then two more of which the first is deleted, so 1 is free.
    let now = net.now;
    let (d, e) = (node(35, false).public_key(), node(36, false).public_key());
    let cd = net.nodes[2].add_friend_norequest(now, d).unwrap();
    net.nodes[2].add_friend_norequest(now, e).unwrap();
    net.nodes[2].delete_friend(now, cd).unwrap();
    assert_eq!(cd, FriendNumber(1));
    let ca = net.nodes[2].add_friend_norequest(now, a_pk).unwrap();
    assert_eq!(ca, FriendNumber(1), "the lowest free friend number");
    assert_eq!(net.nodes[2].friend_by_pk(&a_pk), Some(ca));
    assert_eq!(net.nodes[2].hidden_link_count(), 0);
    let ac = net.nodes[0].add_friend_norequest(now, c_pk).unwrap();
    assert_eq!(ac, FriendNumber(1));
    let marks = [net.mark(0), net.mark(2)];
    assert!(
        net.run(Duration::from_secs(5), |n| friend_online(
            &n.events[0][marks[0]..],
            ac
        ) && friend_online(
            &n.events[2][marks[1]..],
            ca
        )),
        "A and C are online friends"
    );
    assert_eq!(net.nodes[2].to_profile(net.now).friends.len(), 3);
    // B deletes its friend A while the conference holds the connection: A leaves B's friend
    // list, the link stays (hidden), and the conference goes on over it.
    let now = net.now;
    net.nodes[1].delete_friend(now, f[1]).unwrap();
    assert_eq!(net.nodes[1].friends(), vec![f[2]]);
    assert_eq!(net.nodes[1].hidden_link_count(), 1);
    let mark = net.mark(1);
    net.nodes[0]
        .conference_send_message(now, confs[0], MessageKind::Normal, b"still here")
        .unwrap();
    assert!(
        net.run(Duration::from_secs(5), |n| n.saw(
            1,
            mark,
            |e| message_from(e, b"still here")
        )),
        "B still hears A"
    );
    // A's Messenger saw B go offline (B said OFFLINE), and B reports nothing of A.
    assert!(net.events[0].iter().any(|e| matches!(
        e,
        NodeEvent::FriendConnection { friend, online: false, .. } if *friend == f[0]
    )));
    assert!(!net.events[1][mark..].iter().any(|e| matches!(
        e,
        NodeEvent::FriendConnection { .. } | NodeEvent::SessionClosed { .. }
    )));
    assert_eq!(net.nodes[1].to_profile(net.now).friends.len(), 1);
}

#[test]
fn a_node_rebuilt_from_its_profile_rejoins_the_conference() {
    let (mut net, _, confs) = conference_of_three(ConferenceType::Text);
    let now = net.now;
    net.nodes[2]
        .conference_set_title(now, confs[2], b"saved title")
        .unwrap();
    assert!(net.run(Duration::from_secs(5), |n| n.nodes[0]
        .conferences()
        .title(confs[0])
        == Ok(&b"saved title"[..])));
    let now = net.now;
    let profile = net.nodes[2].to_profile(now);
    assert_eq!(profile.conferences.len(), 1);
    assert_eq!(profile.friends.len(), 1, "no hidden link is saved");
    let id = net.nodes[2].conferences().id(confs[2]).unwrap();
    // C goes away for a while: A and B freeze it.
    net.off[2] = true;
    assert!(
        net.run(Duration::from_secs(120), |n| n.peers(0, confs[0]) == 2
            && n.peers(1, confs[1]) == 2),
        "A and B see C go quiet"
    );
    // C comes back from its profile (a new DHT key, as every run), dialling B again.
    let now = net.now;
    let mut c = Node::from_profile(
        now,
        &crate::savedata::Profile::parse(&profile.to_bytes()).unwrap(),
        NodeOptions {
            dht: crate::dht::DhtConfig {
                lan_discovery: false,
                ..crate::dht::DhtConfig::default()
            },
            ..NodeOptions::default()
        },
        Box::new(ChaCha20Rng::seed_from_u64(34)),
    );
    let conf_c = c
        .conferences()
        .by_id(&id)
        .expect("the conference was loaded");
    assert_eq!(c.conferences().title(conf_c), Ok(&b"saved title"[..]));
    let b_pk = net.nodes[1].public_key();
    let b_dht = net.nodes[1].dht_public_key();
    c.add_friend_direct(now, b_pk, b_dht, addr(1)).unwrap();
    c.bootstrap(now, addr(1), b_dht);
    net.nodes[2] = c;
    net.off[2] = false;
    let mark = net.mark(2);
    assert!(
        net.run(Duration::from_secs(120), |n| (0..3).all(|i| {
            let conf = if i == 2 { conf_c } else { confs[i] };
            n.peers(i, conf) == 3
        })),
        "C rejoined: {:?}",
        [
            net.peers(0, confs[0]),
            net.peers(1, confs[1]),
            net.peers(2, conf_c)
        ]
    );
    let now = net.now;
    net.nodes[0]
        .conference_send_message(now, confs[0], MessageKind::Normal, b"welcome back")
        .unwrap();
    assert!(net.run(Duration::from_secs(5), |n| n.saw(
        2,
        mark,
        |e| message_from(e, b"welcome back")
    )));
}

#[test]
fn conference_calls_refuse_what_c_toxcore_refuses() {
    let (mut net, f) = three();
    let now = net.now;
    let a = &mut net.nodes[0];
    let nobody = FriendNumber(7);
    assert_eq!(
        a.conference_invite(now, f[0], ConferenceNumber(0)),
        Err(ConferenceError::NotFound)
    );
    let conf = a.conference_new(now, ConferenceType::Text).unwrap();
    assert_eq!(
        a.conference_invite(now, nobody, conf),
        Err(ConferenceError::FailSend)
    );
    // A cookie of the wrong length, or an AV one, is refused before the friend is looked at.
    assert_eq!(
        a.conference_join(now, nobody, &[0; 3]),
        Err(ConferenceError::InvalidLength)
    );
    let mut cookie = vec![0u8; INVITE_COOKIE_LEN];
    cookie[2] = ConferenceType::Av.to_byte();
    assert_eq!(
        a.conference_join(now, nobody, &cookie),
        Err(ConferenceError::WrongType)
    );
    assert_eq!(
        a.conference_join_av(now, nobody, &cookie),
        Err(ConferenceError::FriendNotFound)
    );
    cookie[2] = ConferenceType::Text.to_byte();
    assert_eq!(
        a.conference_join(now, nobody, &cookie),
        Err(ConferenceError::FriendNotFound)
    );
    // A hidden link's number is no friend's.
    assert_eq!(
        a.conference_join(now, FriendNumber(friends::HIDDEN_BASE), &cookie),
        Err(ConferenceError::FriendNotFound)
    );
    // An offline friend: c-toxcore cannot send the answer (FAIL_SEND), and keeps no conference.
    let now = net.now;
    let c_pk = net.nodes[2].public_key();
    let offline = net.nodes[0].add_friend_norequest(now, c_pk).unwrap();
    let before = net.nodes[0].conferences().list();
    assert_eq!(
        net.nodes[0].conference_invite(now, offline, conf),
        Err(ConferenceError::FailSend)
    );
    assert_eq!(
        net.nodes[0].conference_join(now, offline, &cookie),
        Err(ConferenceError::FailSend)
    );
    assert_eq!(net.nodes[0].conferences().list(), before);
}

#[test]
fn closing_the_conferences_freezes_us_for_the_peers_rather_than_leaving() {
    let (mut net, _, confs) = conference_of_three(ConferenceType::Text);
    let now = net.now;
    // What `tox_kill` does: the peers are told we freeze, and expect us back.
    net.nodes[2].conference_close_all(now);
    assert!(net.nodes[2].conferences().list().is_empty());
    assert!(
        net.run(Duration::from_secs(10), |n| [0, 1].iter().all(|&i| {
            let c = n.nodes[i].conferences();
            c.peer_count(confs[i], PeerList::Online) == Ok(2)
                && c.peer_count(confs[i], PeerList::Offline) == Ok(1)
        })),
        "A and B keep C among the offline peers"
    );
    let c_pk = net.nodes[2].public_key();
    assert_eq!(
        net.nodes[1]
            .conferences()
            .peer_public_key(confs[1], PeerList::Offline, 0),
        Ok(c_pk)
    );
}
