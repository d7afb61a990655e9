//! A small in-memory network of conference engines driven by an injected clock: a link
//! between two keys is up when both nodes are up and they are friends or each holds an
//! `Open` for the other (as friend connections are); `LinkAction::Send` is delivered as
//! `handle_packet` on the other side when the link is up at delivery time.
// Members are numbered; loops over member numbers index several tables at once.
#![allow(clippy::needless_range_loop)]

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::Timestamp;

use super::*;

pub(super) struct Member {
    pub pk: PublicKey,
    pub dht: PublicKey,
    pub conf: Conferences,
    /// Open minus Release per remote key.
    pub opens: HashMap<PublicKey, i64>,
    /// Link status last reported to the engine.
    pub reported: HashMap<PublicKey, bool>,
    pub events: Vec<ConferenceEvent>,
    pub up: bool,
}

pub(super) struct Net {
    pub members: Vec<Member>,
    pub friends: HashSet<(usize, usize)>,
    pub now: Timestamp,
    queue: VecDeque<(usize, usize, Vec<u8>)>,
    /// Packets delivered, by id.
    pub delivered: HashMap<u8, u64>,
    by_pk: HashMap<PublicKey, usize>,
}

impl Net {
    pub fn new(n: usize, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut members = Vec::new();
        let mut by_pk = HashMap::new();
        for i in 0..n {
            let mut pk = [0u8; 32];
            rng.fill_bytes(&mut pk);
            let mut dht = [0u8; 32];
            rng.fill_bytes(&mut dht);
            let pk = PublicKey(pk);
            let name = format!("peer{i}").into_bytes();
            by_pk.insert(pk, i);
            members.push(Member {
                pk,
                dht: PublicKey(dht),
                conf: Conferences::new(pk, PublicKey(dht), &name),
                opens: HashMap::new(),
                reported: HashMap::new(),
                events: Vec::new(),
                up: true,
            });
        }
        Net {
            members,
            friends: HashSet::new(),
            now: Timestamp::from_secs(1_000),
            queue: VecDeque::new(),
            delivered: HashMap::new(),
            by_pk,
        }
    }

    pub fn pk(&self, i: usize) -> PublicKey {
        self.members[i].pk
    }

    pub fn befriend(&mut self, a: usize, b: usize) {
        self.friends.insert((a.min(b), a.max(b)));
        let (pa, pb) = (self.pk(a), self.pk(b));
        self.members[a].conf.set_friend(pb, true);
        self.members[b].conf.set_friend(pa, true);
        self.settle();
    }

    fn are_friends(&self, a: usize, b: usize) -> bool {
        self.friends.contains(&(a.min(b), a.max(b)))
    }

    /// The link exists from `a`'s side (a friend connection, or one it holds open).
    fn exists(&self, a: usize, b: usize) -> bool {
        self.are_friends(a, b)
            || self.members[a]
                .opens
                .get(&self.members[b].pk)
                .is_some_and(|&n| n > 0)
    }

    fn link_up(&self, a: usize, b: usize) -> bool {
        a != b && self.members[a].up && self.members[b].up && self.exists(a, b) && self.exists(b, a)
    }

    /// Drains actions into the queue; true when anything happened.
    fn drain(&mut self) -> bool {
        let mut any = false;
        for a in 0..self.members.len() {
            while let Some(action) = self.members[a].conf.poll_action() {
                any = true;
                match action {
                    LinkAction::Open { pk, .. } => {
                        *self.members[a].opens.entry(pk).or_insert(0) += 1;
                    }
                    LinkAction::Release { pk } => {
                        let n = self.members[a].opens.entry(pk).or_insert(0);
                        *n -= 1;
                        assert!(*n >= 0, "a Release without its Open");
                    }
                    LinkAction::Send { pk, data, .. } => {
                        assert!(data.len() <= wire::MAX_PACKET_LEN, "packet too long");
                        if let Some(&b) = self.by_pk.get(&pk) {
                            self.queue.push_back((a, b, data));
                        }
                    }
                }
            }
            while let Some(e) = self.members[a].conf.poll_event() {
                self.members[a].events.push(e);
            }
        }
        any
    }

    /// Tells every engine about link changes; true when anything changed.
    fn report_links(&mut self) -> bool {
        let mut any = false;
        let n = self.members.len();
        for a in 0..n {
            if !self.members[a].up {
                continue;
            }
            for b in 0..n {
                if a == b {
                    continue;
                }
                let pb = self.members[b].pk;
                let was = self.members[a].reported.get(&pb).copied().unwrap_or(false);
                if !self.exists(a, b) {
                    // The link is gone on a's side; the engine forgets it by itself.
                    self.members[a].reported.remove(&pb);
                    continue;
                }
                let up = self.link_up(a, b);
                if up != was {
                    any = true;
                    self.members[a].reported.insert(pb, up);
                    let now = self.now;
                    if up {
                        // The node knows a connected peer's DHT key.
                        let dht = self.members[b].dht;
                        self.members[a].conf.set_link_dht_pk(pb, dht);
                    }
                    self.members[a].conf.handle_link_status(now, pb, up);
                }
            }
        }
        any
    }

    fn deliver(&mut self) -> bool {
        let mut any = false;
        let mut budget = 2_000_000u64;
        while let Some((a, b, data)) = self.queue.pop_front() {
            any = true;
            budget -= 1;
            assert!(budget > 0, "packets without end");
            if !self.link_up(a, b) {
                continue;
            }
            if data[0] == wire::PACKET_ID_INVITE && !self.are_friends(a, b) {
                continue;
            }
            *self.delivered.entry(data[0]).or_insert(0) += 1;
            let pa = self.members[a].pk;
            let now = self.now;
            self.members[b].conf.handle_packet(now, pa, &data);
            // Keep the order of causes and effects close to a real network's.
            self.drain();
        }
        any
    }

    fn timers(&mut self) -> bool {
        let mut any = false;
        for m in self.members.iter_mut().filter(|m| m.up) {
            let mut rounds = 0;
            while m.conf.poll_timeout().is_some_and(|t| t <= self.now) && rounds < 4 {
                m.conf.handle_timeout(self.now);
                any = true;
                rounds += 1;
            }
        }
        any
    }

    /// Runs until nothing moves at the current time.
    pub fn settle(&mut self) {
        for _ in 0..10_000 {
            let a = self.drain();
            let b = self.report_links();
            let c = self.deliver();
            let d = self.timers();
            let e = self.drain();
            if !(a || b || c || d || e) && self.queue.is_empty() {
                return;
            }
        }
        panic!("the network never settles");
    }

    /// Advances the clock second by second, settling each time.
    pub fn advance(&mut self, secs: u64) {
        for _ in 0..secs {
            self.now += Duration::from_secs(1);
            self.settle();
        }
    }

    pub fn take_events(&mut self, i: usize) -> Vec<ConferenceEvent> {
        std::mem::take(&mut self.members[i].events)
    }

    pub fn clear_events(&mut self) {
        for m in &mut self.members {
            m.events.clear();
        }
    }

    /// `inviter` invites `joiner` (friends) to its conference `c`; the joiner accepts.
    /// Returns the joiner's conference number.
    pub fn invite_and_join(
        &mut self,
        inviter: usize,
        c: ConferenceNumber,
        joiner: usize,
    ) -> ConferenceNumber {
        let now = self.now;
        let pj = self.pk(joiner);
        self.members[inviter]
            .conf
            .invite(now, c, pj)
            .expect("invite");
        self.settle();
        let invite = self.members[joiner]
            .events
            .iter()
            .rev()
            .find_map(|e| match e {
                ConferenceEvent::Invite {
                    friend_pk, cookie, ..
                } if *friend_pk == self.members[inviter].pk => Some(cookie.clone()),
                _ => None,
            })
            .expect("the invite arrives");
        let pi = self.pk(inviter);
        let jc = self.members[joiner]
            .conf
            .join(now, pi, &invite)
            .expect("join");
        self.settle();
        jc
    }

    pub fn count(&self, i: usize, c: ConferenceNumber, list: PeerList) -> u32 {
        self.members[i].conf.peer_count(c, list).unwrap()
    }

    /// The messages member `i` heard: (sender's key, text).
    pub fn messages(&self, i: usize) -> Vec<(PublicKey, Vec<u8>)> {
        Vec::new()
            .into_iter()
            .chain(self.members[i].events.iter().filter_map(|e| {
                match e {
                    ConferenceEvent::Message {
                        conference,
                        peer,
                        text,
                        ..
                    } => Some((
                        self.members[i]
                            .conf
                            .peer_public_key(*conference, PeerList::Online, *peer)
                            .unwrap_or(PublicKey([0; 32])),
                        text.clone(),
                    )),
                    _ => None,
                }
            }))
            .collect()
    }

    pub fn set_down(&mut self, i: usize) {
        self.members[i].up = false;
        self.members[i].reported.clear();
        // The others see their links to i go down.
        self.settle();
    }
}

pub(super) fn texts(events: &[ConferenceEvent]) -> Vec<Vec<u8>> {
    events
        .iter()
        .filter_map(|e| match e {
            ConferenceEvent::Message { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

pub(super) fn rng() -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(99)
}

/// A conference of members `0..n` where member 0 is friends with everyone and invites them
/// one by one.
fn star(n: usize, seed: u64) -> (Net, Vec<ConferenceNumber>) {
    let mut net = Net::new(n, seed);
    for i in 1..n {
        net.befriend(0, i);
    }
    let now = net.now;
    let c0 = net.members[0]
        .conf
        .create(now, &mut rng(), ConferenceType::Text)
        .unwrap();
    let mut numbers = vec![c0];
    for i in 1..n {
        let c = net.invite_and_join(0, c0, i);
        numbers.push(c);
        net.advance(1);
    }
    net.advance(5);
    (net, numbers)
}

#[test]
fn create_invite_join_and_message() {
    let mut net = Net::new(2, 1);
    net.befriend(0, 1);
    let now = net.now;
    let c = net.members[0]
        .conf
        .create(now, &mut rng(), ConferenceType::Text)
        .unwrap();
    assert_eq!(c, ConferenceNumber(0));
    assert!(net.members[0].conf.is_connected(c).unwrap());
    assert_eq!(net.count(0, c, PeerList::Online), 1);
    assert_eq!(
        net.members[0]
            .conf
            .peer_name(c, PeerList::Online, 0)
            .unwrap(),
        b"peer0"
    );
    // Nothing is reported for our own peer on creating.
    net.settle();
    assert!(net.take_events(0).is_empty());

    let jc = net.invite_and_join(0, c, 1);
    let ev1 = net.take_events(1);
    assert!(matches!(
        ev1[0],
        ConferenceEvent::Invite {
            kind: ConferenceType::Text,
            ..
        }
    ));
    let connected: Vec<_> = ev1
        .iter()
        .filter(|e| matches!(e, ConferenceEvent::Connected { .. }))
        .collect();
    assert_eq!(connected.len(), 1, "{ev1:?}");
    assert!(net.members[1].conf.is_connected(jc).unwrap());
    assert_eq!(net.members[1].conf.id(jc), net.members[0].conf.id(c));
    assert_eq!(net.count(0, c, PeerList::Online), 2);
    assert_eq!(net.count(1, jc, PeerList::Online), 2);
    net.advance(1);
    // Names travel both ways.
    for (i, conf) in [(0, c), (1, jc)] {
        let names: HashSet<Vec<u8>> = (0..2)
            .map(|p| {
                net.members[i]
                    .conf
                    .peer_name(conf, PeerList::Online, p)
                    .unwrap()
                    .to_vec()
            })
            .collect();
        assert_eq!(names, HashSet::from([b"peer0".to_vec(), b"peer1".to_vec()]));
    }
    // Exactly one of the two online peers is us.
    let ours: Vec<bool> = (0..2)
        .map(|p| net.members[1].conf.peer_number_is_ours(jc, p).unwrap())
        .collect();
    assert_eq!(ours.iter().filter(|&&o| o).count(), 1);

    net.clear_events();
    let now = net.now;
    net.members[0]
        .conf
        .send_message(now, c, MessageKind::Normal, b"hello")
        .unwrap();
    net.members[1]
        .conf
        .send_message(now, jc, MessageKind::Action, b"waves")
        .unwrap();
    net.settle();
    for i in 0..2 {
        let mut got = texts(&net.members[i].events);
        got.sort();
        assert_eq!(
            got,
            vec![b"hello".to_vec(), b"waves".to_vec()],
            "member {i}"
        );
    }
    // Our own message comes back with our own peer number, as c-toxcore reports it.
    let own = net.messages(0);
    assert!(own.contains(&(net.pk(0), b"hello".to_vec())));
    let action = net.members[1].events.iter().find_map(|e| match e {
        ConferenceEvent::Message { kind, text, .. } if text == b"waves" => Some(*kind),
        _ => None,
    });
    assert_eq!(action, Some(MessageKind::Action));
}

#[test]
fn joining_twice_and_bad_cookies_are_refused() {
    let mut net = Net::new(2, 2);
    net.befriend(0, 1);
    let now = net.now;
    let c = net.members[0]
        .conf
        .create(now, &mut rng(), ConferenceType::Text)
        .unwrap();
    let _ = net.invite_and_join(0, c, 1);
    let cookie = net.members[1]
        .events
        .iter()
        .find_map(|e| match e {
            ConferenceEvent::Invite { cookie, .. } => Some(cookie.clone()),
            _ => None,
        })
        .unwrap();
    let p0 = net.pk(0);
    let m = &mut net.members[1].conf;
    assert_eq!(m.join(now, p0, &cookie), Err(ConferenceError::Duplicate));
    assert_eq!(
        m.join(now, p0, &cookie[..34]),
        Err(ConferenceError::InvalidLength)
    );
    let mut av = cookie.clone();
    av[2] = 1;
    assert_eq!(m.join(now, p0, &av), Err(ConferenceError::WrongType));
    assert_eq!(m.list().len(), 1);
}

/// Three members: 1 and 2 are not friends, both friends of 0, and meet through it.
pub(super) fn triangle() -> (Net, [ConferenceNumber; 3]) {
    let mut net = Net::new(3, 3);
    net.befriend(0, 1);
    net.befriend(0, 2);
    let now = net.now;
    let c0 = net.members[0]
        .conf
        .create(now, &mut rng(), ConferenceType::Text)
        .unwrap();
    let c1 = net.invite_and_join(0, c0, 1);
    let c2 = net.invite_and_join(0, c0, 2);
    net.advance(2);
    (net, [c0, c1, c2])
}

#[test]
fn strangers_meet_through_a_common_friend() {
    let (mut net, cs) = triangle();
    for i in 0..3 {
        assert_eq!(net.count(i, cs[i], PeerList::Online), 3, "member {i}");
    }
    // 1 and 2 hold a link to each other although they are not friends.
    assert!(net.link_up(1, 2));
    // Everyone knows everyone's DHT key (from NEW_PEER and the peer lists).
    for i in 0..3 {
        for p in &net.members[i].conf.save()[0].peers {
            let j = net.by_pk[&p.real_pk];
            assert_eq!(p.temp_pk, net.members[j].dht, "member {i} about {j}");
        }
    }
    net.clear_events();
    let now = net.now;
    net.members[1]
        .conf
        .send_message(now, cs[1], MessageKind::Normal, b"from 1")
        .unwrap();
    net.members[2]
        .conf
        .send_message(now, cs[2], MessageKind::Normal, b"from 2")
        .unwrap();
    net.members[0]
        .conf
        .send_message(now, cs[0], MessageKind::Normal, b"from 0")
        .unwrap();
    net.settle();
    for i in 0..3 {
        let mut got = texts(&net.members[i].events);
        got.sort();
        assert_eq!(
            got,
            vec![b"from 0".to_vec(), b"from 1".to_vec(), b"from 2".to_vec()],
            "member {i}"
        );
        // Each sender's messages carry that sender's key.
        for (pk, text) in net.messages(i) {
            let sender = text.last().map(|d| usize::from(d - b'0')).unwrap();
            assert_eq!(pk, net.pk(sender));
        }
    }
}

#[test]
fn titles_and_names_reach_everyone_once() {
    let (mut net, cs) = triangle();
    net.clear_events();
    let now = net.now;
    net.members[0]
        .conf
        .set_title(now, cs[0], b"the title")
        .unwrap();
    net.settle();
    for i in 1..3 {
        assert_eq!(net.members[i].conf.title(cs[i]).unwrap(), b"the title");
        let titles: Vec<_> = net.members[i]
            .events
            .iter()
            .filter(|e| matches!(e, ConferenceEvent::Title { .. }))
            .collect();
        assert_eq!(titles.len(), 1, "member {i}: {titles:?}");
    }
    // The setter hears no title event for its own title.
    assert!(!net.members[0]
        .events
        .iter()
        .any(|e| matches!(e, ConferenceEvent::Title { .. })));
    assert_eq!(
        net.members[0].conf.set_title(now, cs[0], b""),
        Err(ConferenceError::InvalidLength)
    );
    assert_eq!(
        net.members[0].conf.set_title(now, cs[0], &[b'x'; 129]),
        Err(ConferenceError::InvalidLength)
    );

    net.clear_events();
    net.members[2].conf.set_self_name(now, b"renamed");
    net.settle();
    for i in 0..2 {
        let names: Vec<_> = net.members[i]
            .events
            .iter()
            .filter_map(|e| match e {
                ConferenceEvent::PeerName { name, peer, .. } => Some((name.clone(), *peer)),
                _ => None,
            })
            .collect();
        assert_eq!(names.len(), 1, "member {i}: {names:?}");
        let (name, peer) = &names[0];
        assert_eq!(name, b"renamed");
        assert_eq!(
            net.members[i]
                .conf
                .peer_public_key(cs[i], PeerList::Online, *peer)
                .unwrap(),
            net.pk(2)
        );
    }

    // A newcomer gets the title with the peer list (peer u32::MAX) and everyone's names.
    net.members.push({
        let mut extra = Net::new(4, 3).members.pop().unwrap();
        extra.events.clear();
        extra
    });
    let p3 = net.members[3].pk;
    net.by_pk.insert(p3, 3);
    net.befriend(0, 3);
    let c3 = net.invite_and_join(0, cs[0], 3);
    net.advance(2);
    assert_eq!(net.members[3].conf.title(c3).unwrap(), b"the title");
    assert!(net.members[3]
        .events
        .iter()
        .any(|e| matches!(e, ConferenceEvent::Title { peer: u32::MAX, .. })));
    let names: HashSet<Vec<u8>> = (0..4)
        .map(|p| {
            net.members[3]
                .conf
                .peer_name(c3, PeerList::Online, p)
                .unwrap()
                .to_vec()
        })
        .collect();
    assert!(names.contains(b"renamed".as_slice()), "{names:?}");
}

#[test]
fn a_peer_leaving_is_removed_everywhere() {
    let (mut net, cs) = triangle();
    net.clear_events();
    let now = net.now;
    net.members[2].conf.delete(now, cs[2]).unwrap();
    assert_eq!(net.members[2].conf.list(), vec![]);
    assert_eq!(
        net.members[2].conf.delete(now, cs[2]),
        Err(ConferenceError::NotFound)
    );
    net.settle();
    for i in 0..2 {
        assert_eq!(net.count(i, cs[i], PeerList::Online), 2, "member {i}");
        assert_eq!(net.count(i, cs[i], PeerList::Offline), 0, "member {i}");
        assert!(net.members[i]
            .events
            .iter()
            .any(|e| matches!(e, ConferenceEvent::PeerListChanged { .. })));
    }
    // Every Open of the leaver was matched by a Release.
    assert!(
        net.members[2].opens.values().all(|&n| n == 0),
        "{:?}",
        net.members[2].opens
    );
    // The two left still talk.
    net.clear_events();
    net.members[1]
        .conf
        .send_message(now, cs[1], MessageKind::Normal, b"still here")
        .unwrap();
    net.settle();
    assert_eq!(texts(&net.members[0].events), vec![b"still here".to_vec()]);
}

#[test]
fn a_silent_peer_freezes_then_thaws() {
    let (mut net, cs) = triangle();
    net.set_down(2);
    net.advance(FREEZE_TIMEOUT + 2);
    for i in 0..2 {
        assert_eq!(net.count(i, cs[i], PeerList::Online), 2, "member {i}");
        assert_eq!(net.count(i, cs[i], PeerList::Offline), 1, "member {i}");
        assert_eq!(
            net.members[i]
                .conf
                .peer_public_key(cs[i], PeerList::Offline, 0)
                .unwrap(),
            net.pk(2)
        );
        let last = net.members[i]
            .conf
            .offline_peer_last_active(cs[i], 0)
            .unwrap();
        assert!(last <= net.now.as_secs() - FREEZE_TIMEOUT);
    }
    // Back up: its friend's link comes up and everyone rejoins.
    net.members[2].up = true;
    net.settle();
    net.advance(GROUP_PING_INTERVAL + 2);
    for i in 0..3 {
        assert_eq!(net.count(i, cs[i], PeerList::Online), 3, "member {i}");
        assert_eq!(net.count(i, cs[i], PeerList::Offline), 0, "member {i}");
    }
    net.clear_events();
    let now = net.now;
    net.members[2]
        .conf
        .send_message(now, cs[2], MessageKind::Normal, b"back")
        .unwrap();
    net.settle();
    for i in 0..3 {
        assert_eq!(
            texts(&net.members[i].events),
            vec![b"back".to_vec()],
            "member {i}"
        );
    }
}

#[test]
fn save_load_and_rejoin() {
    let (mut net, cs) = triangle();
    let saved = net.members[1].conf.save();
    assert_eq!(saved.len(), 1);
    let s = &saved[0];
    assert_eq!(s.id, net.members[1].conf.id(cs[1]).unwrap().0);
    assert_eq!(s.kind, 0);
    // Ourselves excluded; the two others saved.
    assert_eq!(s.peers.len(), 2);
    assert!(s.peers.iter().all(|p| p.real_pk != net.pk(1)));
    assert!(s.message_number >= 1 << 16, "saved ahead");

    // Member 1 restarts from the save.
    net.set_down(1);
    let dht = PublicKey([7; 32]);
    let mut fresh = Conferences::new(net.pk(1), dht, b"peer1");
    fresh.set_friend(net.pk(0), true);
    fresh.load(net.now, &saved);
    let c = fresh.list()[0];
    assert!(fresh.is_connected(c).unwrap());
    assert_eq!(fresh.peer_count(c, PeerList::Online).unwrap(), 1);
    assert_eq!(fresh.peer_count(c, PeerList::Offline).unwrap(), 2);
    assert!(fresh.peer_number_is_ours(c, 0).unwrap());
    // A second save of the loaded state keeps the peers.
    assert_eq!(fresh.save()[0].peers.len(), 2);
    net.members[1].conf = fresh;
    net.members[1].opens.clear();
    net.members[1].reported.clear();
    net.members[1].up = true;
    net.settle();
    net.advance(GROUP_PING_INTERVAL + 2);
    for i in 0..3 {
        let c = if i == 1 { c } else { cs[i] };
        assert_eq!(net.count(i, c, PeerList::Online), 3, "member {i}");
    }
    net.clear_events();
    let now = net.now;
    net.members[1]
        .conf
        .send_message(now, c, MessageKind::Normal, b"restarted")
        .unwrap();
    net.settle();
    for i in 0..3 {
        assert_eq!(
            texts(&net.members[i].events),
            vec![b"restarted".to_vec()],
            "member {i}"
        );
    }
}

#[test]
fn fifty_peers_every_message_reaches_every_peer_once() {
    let n = 50;
    let (mut net, cs) = star(n, 50);
    net.advance(GROUP_PING_INTERVAL * 2);
    for i in 0..n {
        assert_eq!(
            net.count(i, cs[i], PeerList::Online),
            n as u32,
            "member {i}"
        );
        assert!(net.members[i].conf.stats().actions_dropped == 0);
    }
    net.clear_events();
    let now = net.now;
    for i in 0..n {
        let text = format!("m{i}").into_bytes();
        net.members[i]
            .conf
            .send_message(now, cs[i], MessageKind::Normal, &text)
            .unwrap();
    }
    let before = net
        .delivered
        .get(&wire::PACKET_ID_MESSAGE)
        .copied()
        .unwrap_or(0);
    net.settle();
    let sent = net
        .delivered
        .get(&wire::PACKET_ID_MESSAGE)
        .copied()
        .unwrap_or(0)
        - before;
    for i in 0..n {
        let mut got = texts(&net.members[i].events);
        got.sort();
        let mut want: Vec<Vec<u8>> = (0..n).map(|j| format!("m{j}").into_bytes()).collect();
        want.sort();
        assert_eq!(got, want, "member {i}");
    }
    // Each member forwards each message at most once per connection.
    let bound = (n * n * MAX_GROUP_CONNECTIONS) as u64;
    assert!(sent <= bound, "{sent} packets for {n} messages");
    println!(
        "50 peers: {} packets 99 for {} messages ({:.1} per message per peer); memory of member 0: {} bytes",
        sent,
        n,
        sent as f64 / (n * n) as f64,
        net.members[0].conf.memory_estimate()
    );
}

#[test]
fn lossy_packets_reach_every_other_member_once() {
    let mut net = Net::new(4, 4);
    for i in 1..4 {
        net.befriend(0, i);
    }
    let now = net.now;
    let c0 = net.members[0]
        .conf
        .create(now, &mut rng(), ConferenceType::Av)
        .unwrap();
    let mut cs = vec![c0];
    for i in 1..4 {
        let invite = {
            let pi = net.pk(i);
            net.members[0].conf.invite(now, c0, pi).unwrap();
            net.settle();
            net.members[i]
                .events
                .iter()
                .find_map(|e| match e {
                    ConferenceEvent::Invite { cookie, kind, .. } => {
                        assert_eq!(*kind, ConferenceType::Av);
                        Some(cookie.clone())
                    }
                    _ => None,
                })
                .unwrap()
        };
        let p0 = net.pk(0);
        // tox_conference_join refuses AV conferences; toxav's join takes them.
        assert_eq!(
            net.members[i].conf.join(now, p0, &invite),
            Err(ConferenceError::WrongType)
        );
        let c = net.members[i]
            .conf
            .join_typed(now, p0, &invite, ConferenceType::Av)
            .unwrap();
        cs.push(c);
        net.settle();
    }
    net.advance(3);
    net.clear_events();
    let now = net.now;
    for round in 0..3u8 {
        net.members[2]
            .conf
            .send_lossy(now, cs[2], &[192, round])
            .unwrap();
    }
    net.settle();
    for i in 0..4 {
        let got: Vec<Vec<u8>> = net.members[i]
            .events
            .iter()
            .filter_map(|e| match e {
                ConferenceEvent::Lossy {
                    data,
                    peer,
                    conference,
                } => {
                    let from =
                        net.members[i]
                            .conf
                            .peer_public_key(*conference, PeerList::Online, *peer);
                    assert_eq!(from, Ok(net.pk(2)));
                    Some(data.clone())
                }
                _ => None,
            })
            .collect();
        if i == 2 {
            assert!(got.is_empty(), "the sender hears nothing back");
        } else {
            assert_eq!(
                got,
                vec![vec![192, 0], vec![192, 1], vec![192, 2]],
                "member {i}"
            );
        }
    }
    // Text conferences carry no lossy packets.
    assert_eq!(net.members[0].conf.kind(cs[0]), Ok(ConferenceType::Av));
}

#[test]
fn an_invite_to_a_member_is_answered_as_member() {
    let (mut net, cs) = triangle();
    // 0 invites 1 again: 1 is in, so it answers as a member and hears no invite.
    net.clear_events();
    let now = net.now;
    let p1 = net.pk(1);
    let invites_before = net
        .delivered
        .get(&wire::PACKET_ID_INVITE)
        .copied()
        .unwrap_or(0);
    net.members[0].conf.invite(now, cs[0], p1).unwrap();
    net.settle();
    assert!(!net.members[1]
        .events
        .iter()
        .any(|e| matches!(e, ConferenceEvent::Invite { .. })));
    let invites = net
        .delivered
        .get(&wire::PACKET_ID_INVITE)
        .copied()
        .unwrap_or(0);
    assert_eq!(
        invites - invites_before,
        2,
        "the invite and the member's answer"
    );
    for i in 0..3 {
        assert_eq!(net.count(i, cs[i], PeerList::Online), 3, "member {i}");
    }
    // Everyone leaves: every Open is matched by a Release.
    for i in 0..3 {
        let c = cs[i];
        net.members[i].conf.delete(now, c).unwrap();
        net.settle();
    }
    for i in 0..3 {
        assert!(
            net.members[i].opens.values().all(|&n| n == 0),
            "member {i}: {:?}",
            net.members[i].opens
        );
    }
}

#[test]
fn a_chain_of_invites_survives_churn() {
    // Each member is friends only with the next; each invites the next.
    let n = 12;
    let mut net = Net::new(n, 12);
    for i in 0..n - 1 {
        net.befriend(i, i + 1);
    }
    let now = net.now;
    let mut cs = vec![net.members[0]
        .conf
        .create(now, &mut rng(), ConferenceType::Text)
        .unwrap()];
    for i in 1..n {
        let c = net.invite_and_join(i - 1, cs[i - 1], i);
        cs.push(c);
        net.advance(1);
    }
    net.advance(5);
    for i in 0..n {
        assert_eq!(
            net.count(i, cs[i], PeerList::Online),
            n as u32,
            "member {i}"
        );
    }
    // Two members drop out long enough to be frozen, then come back.
    net.set_down(3);
    net.set_down(8);
    net.advance(FREEZE_TIMEOUT + 2);
    assert_eq!(net.count(0, cs[0], PeerList::Offline), 2);
    net.members[3].up = true;
    net.members[8].up = true;
    net.settle();
    net.advance(GROUP_PING_INTERVAL * 2);
    for i in 0..n {
        assert_eq!(
            net.count(i, cs[i], PeerList::Online),
            n as u32,
            "member {i}"
        );
    }
    net.clear_events();
    let now = net.now;
    for i in 0..n {
        let text = format!("c{i}").into_bytes();
        net.members[i]
            .conf
            .send_message(now, cs[i], MessageKind::Normal, &text)
            .unwrap();
    }
    net.settle();
    for i in 0..n {
        let mut got = texts(&net.members[i].events);
        got.sort();
        let mut want: Vec<Vec<u8>> = (0..n).map(|j| format!("c{j}").into_bytes()).collect();
        want.sort();
        assert_eq!(got, want, "member {i}");
    }
}

#[test]
fn closing_freezes_us_at_the_others_and_max_offline_bounds_them() {
    let (mut net, cs) = triangle();
    let now = net.now;
    // tox_kill: FREEZE_PEER, so the others keep us as an offline peer.
    net.members[2].conf.close(now);
    assert!(net.members[2].conf.list().is_empty());
    net.settle();
    for i in 0..2 {
        assert_eq!(net.count(i, cs[i], PeerList::Online), 2, "member {i}");
        assert_eq!(net.count(i, cs[i], PeerList::Offline), 1, "member {i}");
        assert_eq!(
            net.members[i]
                .conf
                .peer_name(cs[i], PeerList::Offline, 0)
                .unwrap(),
            b"peer2"
        );
    }
    assert!(net.members[2].opens.values().all(|&n| n == 0));
    net.members[0].conf.set_max_offline(cs[0], 0).unwrap();
    assert_eq!(net.count(0, cs[0], PeerList::Offline), 0);
}
