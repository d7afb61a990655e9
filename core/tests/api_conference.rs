//! Conferences through the Rust API on loopback: three `Tox` handles and a bootstrap node.
//! Alice and Bob are friends, Bob and Carol are friends, Alice and Carol are not. Alice
//! creates a conference and invites Bob, Bob invites Carol; once all three are in, each says
//! something (Bob an action), Alice sets a title, then Carol another. Every message and title reaches both other
//! peers, the three agree on the conference's id, peers, names and title, and the typed
//! errors come back for what tox.h refuses.

#![cfg(feature = "tokio")]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::SeedableRng;
use rustox_core::api::{ConferenceInfo, Tox, ToxError, ToxOptions};
use rustox_core::conference::{
    ConferenceError, ConferenceEvent, ConferenceNumber, ConferenceType, PeerList,
};
use rustox_core::dht::DhtConfig;
use rustox_core::driver::workers::{NodeRunner, RunnerConfig};
use rustox_core::node::{FriendNumber, MessageKind, NodeEvent, NodeOptions};
use rustox_net_crypto::crypto::{KeyPair, PublicKey};

const ALICE: usize = 0;
const BOB: usize = 1;
const CAROL: usize = 2;
const NAMES: [&str; 3] = ["alice", "bob", "carol"];
/// What each says once all three are in; Bob's is an action.
const LINES: [&str; 3] = [
    "alice: hello, conference",
    "bob waves",
    "carol: hi both, I came in through Bob",
];
const KINDS: [MessageKind; 3] = [
    MessageKind::Normal,
    MessageKind::Action,
    MessageKind::Normal,
];
/// Alice's title, set after the lines, and Carol's, set once Alice's reaches her.
const TITLES: [&[u8]; 2] = [b"three of us", b"renamed by carol"];

fn options(boot: &NodeRunner) -> ToxOptions {
    ToxOptions {
        bind: SocketAddr::from(([127, 0, 0, 1], 0)),
        bootstrap: vec![(boot.local_addr(), boot.public_key())],
        node: NodeOptions {
            dht: DhtConfig {
                lan_discovery: false,
                ..DhtConfig::default()
            },
            unix_time: rustox_core::driver::clock::unix_now(),
            ..NodeOptions::default()
        },
        ..ToxOptions::default()
    }
}

/// What `rustox bootstrap` runs, on loopback: the node the handles bootstrap from.
fn bootstrap_node() -> NodeRunner {
    NodeRunner::start(
        KeyPair::generate(&mut StdRng::from_entropy()),
        RunnerConfig::loopback(0),
    )
    .expect("bootstrap node")
}

/// One of the three, and what it has seen.
struct Peer {
    tox: Tox,
    /// Friend number → which of the three.
    friends: HashMap<FriendNumber, usize>,
    online: Vec<usize>,
    conference: Option<ConferenceNumber>,
    invited_carol: bool,
    /// In the conference and seeing all three online.
    ready: bool,
    /// (sender, kind, text) of every message from another peer.
    heard: Vec<(usize, MessageKind, Vec<u8>)>,
    /// Titles announced by another peer (or with the peer list on joining).
    titles: Vec<Vec<u8>>,
}

impl Peer {
    fn heard_everyone(&self, me: usize) -> bool {
        (0..3).filter(|&o| o != me).all(|o| {
            self.heard.iter().any(|(from, kind, text)| {
                *from == o && *kind == KINDS[o] && text == LINES[o].as_bytes()
            })
        })
    }

    fn saw_title(&self, title: &[u8]) -> bool {
        self.titles.iter().any(|t| t == title)
    }
}

/// Befriends `a` and `b` on both sides (as two friends who have each other's keys).
async fn befriend(peers: &mut [Peer], a: usize, b: usize) {
    let (pa, pb) = (peers[a].tox.tox_id().pk, peers[b].tox.tox_id().pk);
    let fa = peers[a].tox.add_friend_norequest(pb).await.unwrap();
    let fb = peers[b].tox.add_friend_norequest(pa).await.unwrap();
    peers[a].friends.insert(fa, b);
    peers[b].friends.insert(fb, a);
}

/// The next event of any of the three.
async fn next_event(peers: &mut [Peer]) -> (usize, NodeEvent) {
    let [a, b, c] = peers else {
        unreachable!("three peers")
    };
    tokio::select! {
        e = a.tox.next_event() => (ALICE, e.expect("alice runs")),
        e = b.tox.next_event() => (BOB, e.expect("bob runs")),
        e = c.tox.next_event() => (CAROL, e.expect("carol runs")),
    }
}

/// Which of the three owns `pk`.
fn who(keys: &[PublicKey; 3], pk: &PublicKey) -> usize {
    keys.iter().position(|k| k == pk).expect("a peer of ours")
}

/// Runs one event of peer `me`: the invitations, what it hears, Carol's title.
async fn step(peers: &mut [Peer], keys: &[PublicKey; 3], me: usize, event: NodeEvent) {
    let p = &mut peers[me];
    match event {
        NodeEvent::FriendConnection {
            friend,
            online: true,
            ..
        } => {
            let other = p.friends[&friend];
            p.online.push(other);
            if me == ALICE && other == BOB && p.conference.is_none() {
                let c = p.tox.conference_new(ConferenceType::Text).await.unwrap();
                // Nobody has set a title yet: tox.h's INVALID_LENGTH, here `None`.
                assert_eq!(p.tox.conference_title(c).await.unwrap(), None);
                p.conference = Some(c);
                p.tox.conference_invite(friend, c).await.unwrap();
            }
        }
        NodeEvent::ConferenceInvite {
            friend,
            kind,
            cookie,
        } => {
            assert_eq!(kind, ConferenceType::Text);
            let inviter = p.friends[&friend];
            assert_eq!(
                (me, inviter),
                if me == BOB {
                    (BOB, ALICE)
                } else {
                    (CAROL, BOB)
                }
            );
            p.conference = Some(p.tox.conference_join(friend, &cookie).await.unwrap());
        }
        NodeEvent::Conference(ConferenceEvent::Message {
            conference,
            peer,
            kind,
            text,
        }) => {
            assert_eq!(Some(conference), p.conference);
            let sender = p
                .tox
                .conference_peer(conference, PeerList::Online, peer)
                .await
                .unwrap();
            if !sender.ours {
                p.heard.push((who(keys, &sender.public_key), kind, text));
            }
        }
        NodeEvent::Conference(ConferenceEvent::Title {
            conference, title, ..
        }) => {
            assert_eq!(Some(conference), p.conference);
            if me == CAROL && title == TITLES[0] && !p.saw_title(TITLES[0]) {
                p.tox
                    .conference_set_title(conference, TITLES[1])
                    .await
                    .unwrap();
            }
            p.titles.push(title);
        }
        _ => {}
    }
    // Bob invites Carol once he is in the conference and she is online.
    if me == BOB && !p.invited_carol && p.online.contains(&CAROL) {
        if let Some(c) = p.conference {
            if p.tox.conference(c).await.unwrap().connected {
                let carol = *p.friends.iter().find(|(_, &w)| w == CAROL).unwrap().0;
                p.tox.conference_invite(carol, c).await.unwrap();
                p.invited_carol = true;
            }
        }
    }
    // Ready once in the conference and seeing all three online.
    if let (false, Some(c)) = (p.ready, p.conference) {
        let info = p.tox.conference(c).await.unwrap();
        p.ready = info.connected && info.peers.len() == 3;
    }
}

/// Each says its line (Bob's an action), then Alice sets the title. Only once all three are
/// ready: a line said while a peer is still joining may miss it, as in c-toxcore (group.c
/// drops a message from a peer the receiver does not know yet and asks for the peer list).
async fn speak(peers: &[Peer]) {
    for (me, p) in peers.iter().enumerate() {
        let c = p.conference.unwrap();
        p.tox
            .conference_send_message_kind(c, KINDS[me], LINES[me].as_bytes())
            .await
            .unwrap();
    }
    let alice = &peers[ALICE];
    alice
        .tox
        .conference_set_title(alice.conference.unwrap(), TITLES[0])
        .await
        .unwrap();
}

/// Whether every line and both titles have reached every other peer.
fn all_delivered(peers: &[Peer]) -> bool {
    (0..3).all(|me| peers[me].heard_everyone(me))
        && peers[BOB].saw_title(TITLES[0])
        && peers[CAROL].saw_title(TITLES[0])
        && peers[ALICE].saw_title(TITLES[1])
        && peers[BOB].saw_title(TITLES[1])
}

/// Re-reads `peer`'s view of the conference until its peers' names have arrived.
async fn settled_info(peer: &Peer) -> ConferenceInfo {
    let c = peer.conference.expect("in the conference");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let info = peer.tox.conference(c).await.unwrap();
        let named = info.peers.len() == 3 && info.peers.iter().all(|p| !p.name.is_empty());
        if named || tokio::time::Instant::now() > deadline {
            return info;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn three_api_nodes_share_messages_and_titles_through_a_conference() {
    let boot = bootstrap_node();
    let mut peers = Vec::new();
    for name in NAMES {
        let tox = Tox::start(options(&boot)).await.expect(name);
        tox.set_name(name.as_bytes()).await.unwrap();
        peers.push(Peer {
            tox,
            friends: HashMap::new(),
            online: Vec::new(),
            conference: None,
            invited_carol: false,
            ready: false,
            heard: Vec::new(),
            titles: Vec::new(),
        });
    }
    let keys = [0, 1, 2].map(|i| peers[i].tox.tox_id().pk);
    befriend(&mut peers, ALICE, BOB).await;
    befriend(&mut peers, BOB, CAROL).await;

    // Typed errors before any conference exists.
    let nowhere = ConferenceNumber(7);
    assert!(matches!(
        peers[ALICE]
            .tox
            .conference_send_message(nowhere, b"x")
            .await,
        Err(ToxError::Conference(ConferenceError::NotFound))
    ));
    assert!(matches!(
        peers[ALICE].tox.conference_title(nowhere).await,
        Err(ToxError::Conference(ConferenceError::NotFound))
    ));
    assert!(matches!(
        peers[BOB]
            .tox
            .conference_join(FriendNumber(9), &[0; 35])
            .await,
        Err(ToxError::Conference(ConferenceError::FriendNotFound))
    ));
    assert!(peers[CAROL].tox.conference_list().await.unwrap().is_empty());

    tokio::time::timeout(Duration::from_secs(90), async {
        let mut said = false;
        while !all_delivered(&peers) {
            let (me, event) = next_event(&mut peers).await;
            step(&mut peers, &keys, me, event).await;
            if !said && peers.iter().all(|p| p.ready) {
                speak(&peers).await;
                said = true;
            }
        }
    })
    .await
    .unwrap_or_else(|_| {
        let seen: Vec<_> = peers
            .iter()
            .map(|p| (p.conference, p.ready, p.heard.len(), p.titles.len()))
            .collect();
        panic!("not everything arrived within 90 s: (conference, ready, heard, titles) {seen:?}")
    });

    // Carol is not Alice's friend: she came in through Bob.
    let alice_friends = peers[ALICE].tox.with_node(|n, _| n.friends().len()).await;
    assert_eq!(alice_friends.unwrap(), 1);

    let mut infos = Vec::new();
    for p in &peers {
        infos.push(settled_info(p).await);
    }
    for (me, info) in infos.iter().enumerate() {
        assert_eq!(info.id, infos[ALICE].id, "{}: same conference", NAMES[me]);
        assert_eq!(info.kind, ConferenceType::Text);
        assert!(info.connected, "{} is connected", NAMES[me]);
        assert_eq!(
            info.title.as_deref(),
            Some(TITLES[1]),
            "{}'s title",
            NAMES[me]
        );
        let mut seen: Vec<(usize, Vec<u8>, bool)> = info
            .peers
            .iter()
            .map(|p| (who(&keys, &p.public_key), p.name.clone(), p.ours))
            .collect();
        seen.sort();
        let expected: Vec<(usize, Vec<u8>, bool)> = (0..3)
            .map(|i| (i, NAMES[i].as_bytes().to_vec(), i == me))
            .collect();
        assert_eq!(seen, expected, "{}'s peer list", NAMES[me]);
        let ours = info.peers.iter().find(|p| p.ours).unwrap().number;
        let tox = &peers[me].tox;
        assert_eq!(
            tox.conference_own_peer_number(info.number).await.unwrap(),
            ours
        );
        assert_eq!(
            tox.conference_by_id(info.id).await.unwrap(),
            Some(info.number)
        );
        assert_eq!(tox.conference_list().await.unwrap(), vec![info.number]);
        assert_eq!(tox.conference_id(info.number).await.unwrap(), info.id);
        assert_eq!(
            tox.conference_type(info.number).await.unwrap(),
            ConferenceType::Text
        );
        tox.conference_set_max_offline(info.number, 4)
            .await
            .unwrap();
    }
    // Bad input to a real conference: a title too long, a cookie of the wrong length.
    let c = infos[ALICE].number;
    assert!(matches!(
        peers[ALICE].tox.conference_set_title(c, &[b'x'; 200]).await,
        Err(ToxError::Conference(ConferenceError::InvalidLength))
    ));
    let bob_as_alice_friend = *peers[ALICE].friends.keys().next().unwrap();
    assert!(matches!(
        peers[ALICE]
            .tox
            .conference_join(bob_as_alice_friend, &[1, 2, 3])
            .await,
        Err(ToxError::Conference(ConferenceError::InvalidLength))
    ));
    assert!(matches!(
        peers[ALICE]
            .tox
            .conference_peer(c, PeerList::Online, 3)
            .await,
        Err(ToxError::Conference(ConferenceError::PeerNotFound))
    ));

    // Carol leaves: the other two see two peers online, and she has no conference left.
    let carols = infos[CAROL].number;
    peers[CAROL].tox.conference_delete(carols).await.unwrap();
    assert!(peers[CAROL].tox.conference_list().await.unwrap().is_empty());
    assert!(matches!(
        peers[CAROL]
            .tox
            .conference_send_message(carols, b"gone")
            .await,
        Err(ToxError::Conference(ConferenceError::NotFound))
    ));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    for me in [ALICE, BOB] {
        let c = infos[me].number;
        loop {
            let online = peers[me]
                .tox
                .conference_peers(c, PeerList::Online)
                .await
                .unwrap();
            if online.len() == 2 {
                assert!(online.iter().all(|p| p.public_key != keys[CAROL]));
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{} still lists Carol",
                NAMES[me]
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    for p in peers {
        p.tox.shutdown().await;
    }
}
