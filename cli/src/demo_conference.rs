//! `rustox demo`'s second act: three peers in one conference (c-toxcore's group chats), on
//! the Rust API. Alice, Bob and Carol are `rustox_core::api::Tox` handles on 127.0.0.1 that
//! start from the first act's bootstrap node. Alice and Bob are friends, and so are Bob and
//! Carol; Carol is a stranger to Alice. Alice creates a conference and invites Bob; once Bob
//! is in, he invites Carol, who so joins a peer she has never met. Once all three are in and
//! each sees the other two, each says a line: a line said while a peer is still joining may
//! miss it (group.c drops a message from a peer the receiver does not know yet and asks for
//! the peer list instead), so the act waits for everyone before anyone speaks. It prints who
//! heard which line and how long after it was said, and the time from the first line to the
//! last delivery; it fails if a line has not reached both other peers within
//! [`DELIVERY_WAIT`].

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use rustox_core::api::{Tox, ToxOptions};
use rustox_core::conference::{ConferenceEvent, ConferenceNumber, ConferenceType, PeerList};
use rustox_core::crypto::PublicKey;
use rustox_core::node::{FriendNumber, NodeEvent, NodeOptions};

use crate::driver;

const ALICE: usize = 0;
const BOB: usize = 1;
const CAROL: usize = 2;
/// The peers' names, as they print and as they call themselves in the conference.
const NAMES: [&str; 3] = ["Alice", "Bob", "Carol"];
/// What each says once all three see each other.
const LINES: [&str; 3] = [
    "Hello both! Alice here, in a conference.",
    "Hi Alice, hi Carol: I invited you, Carol.",
    "Hi! Alice and I are not friends, yet here we are.",
];

/// How long the lines have to reach every peer once said (on loopback they take
/// milliseconds; the conference's packets ride on lossless sessions).
const DELIVERY_WAIT: Duration = Duration::from_secs(10);

/// What the act needs from the first: where to bootstrap, the node options, the relays.
pub struct Setup {
    /// The bootstrap node's address and DHT key.
    pub boot: (SocketAddr, PublicKey),
    /// The node options of the first act (transport, no LAN discovery, UDP or not).
    pub node: NodeOptions,
    /// The TCP relays of the first act, if any.
    pub tcp_relays: Vec<(SocketAddr, PublicKey)>,
    /// Give up after this long.
    pub limit: Duration,
}

/// One of the three and what it has seen.
struct Peer {
    tox: Tox,
    /// Friend number → which of the three.
    friends: HashMap<FriendNumber, usize>,
    online: Vec<usize>,
    conference: Option<ConferenceNumber>,
    /// `ConferenceEvent::Connected` has arrived (or we created the conference).
    connected: bool,
    invited: bool,
    /// In the conference and seeing all three online.
    ready: bool,
    /// When this peer said its line.
    said: Option<Instant>,
    /// When this peer heard each other's line.
    heard: [Option<Instant>; 3],
}

impl Peer {
    fn friend_number(&self, who: usize) -> Option<FriendNumber> {
        self.friends
            .iter()
            .find_map(|(number, w)| (*w == who).then_some(*number))
    }
}

/// Runs the act and prints it; an error if a line did not reach every peer.
pub fn run(setup: Setup) -> anyhow::Result<()> {
    driver::runtime()?.block_on(run_async(setup))
}

async fn run_async(setup: Setup) -> anyhow::Result<()> {
    let options = ToxOptions {
        bind: SocketAddr::from(([127, 0, 0, 1], 0)),
        node: NodeOptions {
            unix_time: rustox_core::driver::clock::unix_now(),
            ..setup.node.clone()
        },
        bootstrap: vec![setup.boot],
        tcp_relays: setup.tcp_relays.clone(),
        driver: driver::options(),
        ..ToxOptions::default()
    };
    println!();
    println!("A conference of three: Carol is Bob's friend and a stranger to Alice");
    let mut peers = Vec::new();
    for name in NAMES {
        let tox = Tox::start(options.clone())
            .await
            .with_context(|| format!("cannot start {name}"))?;
        tox.set_name(name.as_bytes()).await?;
        println!("{name:<5} {}  Tox ID {}", tox.local_addr(), tox.tox_id());
        peers.push(Peer {
            tox,
            friends: HashMap::new(),
            online: Vec::new(),
            conference: None,
            connected: false,
            invited: false,
            ready: false,
            said: None,
            heard: [None; 3],
        });
    }
    befriend(&mut peers, ALICE, BOB).await?;
    befriend(&mut peers, BOB, CAROL).await?;
    let keys = [ALICE, BOB, CAROL].map(|i| peers[i].tox.tox_id().pk);
    // When Alice sent the first invitation.
    let mut invited_at = None;
    let outcome = tokio::time::timeout(setup.limit, async {
        let mut said_at: Option<Instant> = None;
        while !all_heard(&peers) {
            let (me, event) = match said_at {
                None => next_event(&mut peers).await?,
                Some(at) => {
                    let by = tokio::time::Instant::from_std(at + DELIVERY_WAIT);
                    match tokio::time::timeout_at(by, next_event(&mut peers)).await {
                        Ok(next) => next?,
                        Err(_) => bail!(
                            "a conference line did not reach every peer within {} s",
                            DELIVERY_WAIT.as_secs()
                        ),
                    }
                }
            };
            step(&mut peers, &keys, &mut invited_at, me, event).await?;
            if said_at.is_none() && peers.iter().all(|p| p.ready) {
                println!("All three see each other in the conference; each says a line");
                said_at = Some(Instant::now());
                for (me, p) in peers.iter_mut().enumerate() {
                    say(p, me).await?;
                }
            }
        }
        anyhow::Ok(())
    })
    .await;
    report(&peers);
    for p in peers {
        p.tox.shutdown().await;
    }
    match outcome {
        Ok(result) => result,
        Err(_) => bail!(
            "the conference of three did not come together within {} s",
            setup.limit.as_secs()
        ),
    }
}

/// Peer `me` says its line to the conference.
async fn say(p: &mut Peer, me: usize) -> anyhow::Result<()> {
    let c = p.conference.context("not in the conference")?;
    p.tox
        .conference_send_message(c, LINES[me].as_bytes())
        .await?;
    p.said = Some(Instant::now());
    println!("{:<5} → all  : {}", NAMES[me].to_lowercase(), LINES[me]);
    Ok(())
}

/// Makes `a` and `b` friends on both sides (they have each other's keys already).
async fn befriend(peers: &mut [Peer], a: usize, b: usize) -> anyhow::Result<()> {
    let (pa, pb) = (peers[a].tox.tox_id().pk, peers[b].tox.tox_id().pk);
    let fa = peers[a].tox.add_friend_norequest(pb).await?;
    let fb = peers[b].tox.add_friend_norequest(pa).await?;
    peers[a].friends.insert(fa, b);
    peers[b].friends.insert(fb, a);
    Ok(())
}

/// The next event of any of the three.
async fn next_event(peers: &mut [Peer]) -> anyhow::Result<(usize, NodeEvent)> {
    let [a, b, c] = peers else {
        bail!("the act has three peers")
    };
    let (me, event) = tokio::select! {
        e = a.tox.next_event() => (ALICE, e),
        e = b.tox.next_event() => (BOB, e),
        e = c.tox.next_event() => (CAROL, e),
    };
    Ok((
        me,
        event.with_context(|| format!("{}'s node stopped", NAMES[me]))?,
    ))
}

/// Whether every line has reached both other peers.
fn all_heard(peers: &[Peer]) -> bool {
    (0..3).all(|me| (0..3).all(|o| o == me || peers[me].heard[o].is_some()))
}

/// One event of peer `me`: invitations, joining, lines heard.
async fn step(
    peers: &mut [Peer],
    keys: &[PublicKey; 3],
    invited_at: &mut Option<Instant>,
    me: usize,
    event: NodeEvent,
) -> anyhow::Result<()> {
    let name = NAMES[me];
    let p = &mut peers[me];
    match event {
        NodeEvent::FriendConnection {
            friend,
            online: true,
            ..
        } => {
            let Some(&other) = p.friends.get(&friend) else {
                return Ok(());
            };
            p.online.push(other);
            if me == ALICE && other == BOB && p.conference.is_none() {
                let c = p.tox.conference_new(ConferenceType::Text).await?;
                p.conference = Some(c);
                p.connected = true;
                p.tox.conference_invite(friend, c).await?;
                *invited_at = Some(Instant::now());
                println!("Alice creates a conference and invites Bob");
            }
        }
        NodeEvent::ConferenceInvite { friend, cookie, .. } if p.conference.is_none() => {
            let inviter = p.friends.get(&friend).map_or("someone", |&w| NAMES[w]);
            p.conference = Some(p.tox.conference_join(friend, &cookie).await?);
            println!("{name} accepts {inviter}'s invitation");
        }
        NodeEvent::Conference(ConferenceEvent::Connected { .. }) => {
            p.connected = true;
            let after = invited_at.map_or(Duration::ZERO, |at| at.elapsed());
            println!(
                "{name} is in the conference {:.1} ms after Alice's invitation",
                after.as_secs_f64() * 1e3
            );
        }
        NodeEvent::Conference(ConferenceEvent::Message {
            conference,
            peer,
            text,
            ..
        }) if p.ready => {
            let sender = p
                .tox
                .conference_peer(conference, PeerList::Online, peer)
                .await?;
            if let Some(from) = keys.iter().position(|k| *k == sender.public_key) {
                // Heard: that peer's line, as said, from someone else.
                if from != me && p.heard[from].is_none() && text == LINES[from].as_bytes() {
                    p.heard[from] = Some(Instant::now());
                }
            }
        }
        _ => {}
    }
    // Bob invites Carol once he is in (tox.h's NO_CONNECTION before) and she is online.
    if me == BOB && p.connected && !p.invited && p.online.contains(&CAROL) {
        if let (Some(c), Some(carol)) = (p.conference, p.friend_number(CAROL)) {
            p.tox.conference_invite(carol, c).await?;
            p.invited = true;
            println!("Bob invites Carol");
        }
    }
    if let (false, true, Some(c)) = (p.ready, p.connected, p.conference) {
        p.ready = p.tox.conference_peers(c, PeerList::Online).await?.len() == 3;
    }
    Ok(())
}

/// Who heard which line and when; the time from the first line to the last delivery.
fn report(peers: &[Peer]) {
    println!();
    let mut first: Option<Instant> = None;
    let mut last: Option<Instant> = None;
    for (speaker, p) in peers.iter().enumerate() {
        let heard: Vec<String> = (0..3)
            .filter(|&o| o != speaker)
            .map(|o| match (p.said, peers[o].heard[speaker]) {
                (Some(said), Some(at)) => {
                    last = last.max(Some(at));
                    format!(
                        "{} ({:.1} ms)",
                        NAMES[o],
                        at.saturating_duration_since(said).as_secs_f64() * 1e3
                    )
                }
                _ => format!("{} (never)", NAMES[o]),
            })
            .collect();
        if let Some(said) = p.said {
            first = Some(first.map_or(said, |f| f.min(said)));
        }
        let line = match p.said {
            Some(_) => format!("{}'s line heard by {}", NAMES[speaker], heard.join(", ")),
            None => format!("{} never said a line", NAMES[speaker]),
        };
        let label = if speaker == 0 { "conference" } else { "" };
        println!("{label:<16} {line}");
    }
    match (first, last) {
        (Some(first), Some(last)) if all_heard(peers) => println!(
            "last delivery    {:.1} ms after the first line; every line reached every peer",
            last.saturating_duration_since(first).as_secs_f64() * 1e3
        ),
        _ => println!("last delivery    not every line reached every peer"),
    }
}
