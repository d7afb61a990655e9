//! Conferences of conference peers ([`ConfPeer`]) on one machine: a tox-bootstrapd node they
//! all bootstrap from, peers on either implementation on free ports, friendships by public
//! key, invites along a chain, and waits for what every peer must see (a peer count, a
//! message). The interop tests and `conference-net-bench` are written with these steps.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rustox_testkit::net::free_udp_port;

use super::bootstrap::{BootstrapNode, BootstrapOptions, BootstrapSpec};
use super::conference::{binary_or_skip, ConferenceBinary, Implementation};
use super::conference_peer::{ConfOptions, ConfPeer, Line};
use super::launch::Launch;

/// How often a poll for the current peer count looks again.
const POLL: Duration = Duration::from_millis(50);

/// The peer programs on both implementations that a test needs, and a bootstrap node.
pub struct ConfNet {
    /// The DHT node every peer bootstraps from.
    pub bootstrap: BootstrapNode,
    ctoxcore: Option<ConferenceBinary>,
    rustox: Option<ConferenceBinary>,
}

impl ConfNet {
    /// Builds the peer for each implementation in `needed` and starts tox-bootstrapd on a
    /// free port; `None` (after `skip_or_fail`) when something is missing outside CI.
    pub fn start(needed: &[Implementation]) -> Option<ConfNet> {
        Self::start_with(needed, Launch::direct())
    }

    /// [`ConfNet::start`] with the bootstrap node started through `launch`.
    pub fn start_with(needed: &[Implementation], launch: Launch) -> Option<ConfNet> {
        let mut ctoxcore = None;
        let mut rustox = None;
        for &i in needed {
            let bin = binary_or_skip(i)?;
            match i {
                Implementation::CToxcore => ctoxcore = Some(bin),
                Implementation::Rustox => rustox = Some(bin),
            }
        }
        let bootstrap = match BootstrapNode::start(&BootstrapOptions {
            launch,
            ..BootstrapOptions::default()
        }) {
            Ok(b) => b,
            Err(e) if e.is_missing_dependency() => {
                rustox_testkit::ci::skip_or_fail(e);
                return None;
            }
            Err(e) => panic!("tox-bootstrapd: {e}"),
        };
        Some(ConfNet {
            bootstrap,
            ctoxcore,
            rustox,
        })
    }

    /// The peer program for `implementation` (built by [`ConfNet::start`]).
    pub fn binary(&self, implementation: Implementation) -> &ConferenceBinary {
        match implementation {
            Implementation::CToxcore => self.ctoxcore.as_ref(),
            Implementation::Rustox => self.rustox.as_ref(),
        }
        .unwrap_or_else(|| panic!("{} was not built for this net", implementation.name()))
    }

    /// The bootstrap node as the peers reach it on loopback.
    pub fn spec(&self) -> BootstrapSpec {
        self.bootstrap.spec("127.0.0.1")
    }

    /// Starts a peer on a free port, bootstrapped to the node, named `name` in the
    /// conference.
    pub fn peer(&self, name: &str, implementation: Implementation) -> ConfPeer {
        self.peer_with(name, implementation, None)
    }

    /// [`ConfNet::peer`] from a save file.
    pub fn peer_with(
        &self,
        name: &str,
        implementation: Implementation,
        load: Option<PathBuf>,
    ) -> ConfPeer {
        let options = ConfOptions {
            bootstrap: vec![self.spec()],
            port: free_udp_port(),
            name: load.is_none().then(|| name.to_string()),
            load,
            ..ConfOptions::default()
        };
        ConfPeer::start(name, self.binary(implementation), &options)
            .unwrap_or_else(|e| panic!("starting {name}: {e}"))
    }
}

/// Makes `a` and `b` friends by public key (no request) and waits until both see the other
/// online; returns (b's friend number at a, a's at b).
pub fn befriend(a: &mut ConfPeer, b: &mut ConfPeer, limit: Duration) -> (u32, u32) {
    let fb = friend_number(a.must(&format!("friend {}", b.pk)));
    let fa = friend_number(b.must(&format!("friend {}", a.pk)));
    wait_friend_online(a, fb, limit);
    wait_friend_online(b, fa, limit);
    (fb, fa)
}

fn friend_number(reply: String) -> u32 {
    reply
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("friend number {reply:?}"))
}

/// Waits until `peer` reports friend `n` online.
pub fn wait_friend_online(peer: &ConfPeer, n: u32, limit: Duration) {
    if let Err(e) = peer.wait(&format!("friend {n} online"), limit, |l| {
        l.tag == "FRIEND" && l.num(0) == Some(n) && l.num(1).is_some_and(|s| s != 0)
    }) {
        panic!("{e}");
    }
}

/// `host` invites its friend `friend` (the guest) to conference `conf`; the guest joins.
/// Returns the guest's conference number.
pub fn invite(
    host: &mut ConfPeer,
    conf: u32,
    friend: u32,
    guest: &mut ConfPeer,
    limit: Duration,
) -> u32 {
    let from = guest.mark();
    guest.must("join-next-invite");
    host.must(&format!("invite {friend} {conf}"));
    let joined = guest
        .wait_from(from, "JOINED", limit, |l| {
            l.tag == "JOINED" || l.tag == "JOIN_ERR"
        })
        .unwrap_or_else(|e| panic!("{e}"));
    if joined.tag == "JOIN_ERR" {
        panic!(
            "{} could not join {}'s invite: {}\n{}\n{}",
            guest.label,
            host.label,
            joined.rest,
            guest.report(),
            host.report()
        );
    }
    joined.num(0).expect("JOINED's conference number")
}

/// The online peer count `peer` last reported for `conf` (its last PEERS line).
pub fn peer_count(peer: &ConfPeer, conf: u32) -> Option<u32> {
    peer.lines()
        .iter()
        .rev()
        .find(|l| l.tag == "PEERS" && l.num(0) == Some(conf))
        .and_then(|l| l.num(1))
}

/// Waits until `peer` last reported `n` online peers in `conf`.
pub fn wait_peer_count(peer: &ConfPeer, conf: u32, n: u32, limit: Duration) -> Result<(), String> {
    let deadline = Instant::now() + limit;
    loop {
        if peer_count(peer, conf) == Some(n) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "{}: conference {conf} has {:?} peers, not {n}, after {limit:?}\n{}",
                peer.label,
                peer_count(peer, conf),
                peer.report()
            ));
        }
        std::thread::sleep(POLL);
    }
}

/// Waits until `peer` received `text` in `conf` as a message (`action` false) or action from
/// the peer whose key is `from_pk` (upper-case hex); returns the line.
pub fn wait_message(
    peer: &ConfPeer,
    conf: u32,
    from_pk: &str,
    action: bool,
    text: &str,
    limit: Duration,
) -> Result<Line, String> {
    let kind = if action { "1" } else { "0" };
    peer.wait(&format!("{text:?} from {}", &from_pk[..8]), limit, |l| {
        l.tag == "MESSAGE"
            && l.num(0) == Some(conf)
            && l.word(3) == Some(kind)
            && l.word(4) == Some(from_pk)
            && l.tail(5) == text
    })
}

/// Waits until `peer` saw `conf`'s title become `title` (set by anyone, itself included).
pub fn wait_title(peer: &ConfPeer, conf: u32, title: &str, limit: Duration) -> Result<Line, String> {
    peer.wait(&format!("title {title:?}"), limit, |l| {
        l.tag == "TITLE" && l.num(0) == Some(conf) && l.tail(2) == title
    })
}

/// Waits until `peer` saw the peer with key `pk` in `conf` named `name`.
pub fn wait_peer_name(
    peer: &ConfPeer,
    conf: u32,
    pk: &str,
    name: &str,
    limit: Duration,
) -> Result<Line, String> {
    peer.wait(&format!("peer name {name:?}"), limit, |l| {
        l.tag == "PEER_NAME" && l.num(0) == Some(conf) && l.word(2) == Some(pk) && l.tail(3) == name
    })
}
