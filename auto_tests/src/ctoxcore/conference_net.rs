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
pub fn wait_title(
    peer: &ConfPeer,
    conf: u32,
    title: &str,
    limit: Duration,
) -> Result<Line, String> {
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

/// A conference of peers invited along a chain: peer `i` is friends with peers `i - 1` and
/// `i + 1` only, peer 0 makes the conference and each peer invites the next once it is in.
pub struct Chain {
    /// The peers, in chain order.
    pub peers: Vec<ConfPeer>,
    /// Each peer's number for the conference.
    pub confs: Vec<u32>,
}

/// How long the steps of [`chain`] may take.
#[derive(Debug, Clone, Copy)]
pub struct ChainLimits {
    /// All friends online (they come online in parallel).
    pub friends: Duration,
    /// One invite answered.
    pub join: Duration,
    /// Every peer seeing every other online.
    pub complete: Duration,
}

impl Default for ChainLimits {
    fn default() -> Self {
        ChainLimits {
            friends: Duration::from_secs(60),
            join: Duration::from_secs(30),
            complete: Duration::from_secs(60),
        }
    }
}

/// Starts one peer per entry of `implementations` (named `p0`, `p1`, …; `start` starts peer
/// `i`, e.g. through [`ConfNet::peer`] or in a namespace), makes neighbours friends, invites
/// along the chain and waits until every peer counts all of them online.
pub fn chain(
    implementations: &[Implementation],
    limits: ChainLimits,
    mut start: impl FnMut(usize, Implementation) -> ConfPeer,
) -> Result<Chain, String> {
    let mut peers: Vec<ConfPeer> = implementations
        .iter()
        .enumerate()
        .map(|(i, &imp)| start(i, imp))
        .collect();
    let n = peers.len();
    // next[i]: peer i+1's friend number at peer i, prev[i]: peer i's at peer i+1; the
    // friendships come online together.
    let mut next = Vec::with_capacity(n);
    let mut prev = Vec::with_capacity(n);
    for i in 0..n.saturating_sub(1) {
        let (a, b) = peers.split_at_mut(i + 1);
        let (left, right) = (&mut a[i], &mut b[0]);
        next.push(friend_number(left.cmd(&format!("friend {}", right.pk))?));
        prev.push(friend_number(right.cmd(&format!("friend {}", left.pk))?));
    }
    let online = |p: &ConfPeer, f: u32| {
        p.wait(&format!("friend {f} online"), limits.friends, |l| {
            l.tag == "FRIEND" && l.num(0) == Some(f) && l.num(1).is_some_and(|s| s != 0)
        })
        .map(|_| ())
    };
    for (i, (&f, &g)) in next.iter().zip(&prev).enumerate() {
        online(&peers[i], f)?;
        online(&peers[i + 1], g)?;
    }
    let first: u32 = peers
        .first_mut()
        .ok_or("an empty chain")?
        .cmd("new")?
        .trim()
        .parse()
        .map_err(|_| "the conference number".to_string())?;
    let mut confs = vec![first];
    for (i, &f) in next.iter().enumerate() {
        let (a, b) = peers.split_at_mut(i + 1);
        let (host, guest) = (&mut a[i], &mut b[0]);
        let from = guest.mark();
        guest.cmd("join-next-invite")?;
        host.cmd(&format!("invite {f} {}", confs[i]))?;
        let joined = guest.wait_from(from, "JOINED", limits.join, |l| {
            l.tag == "JOINED" || l.tag == "JOIN_ERR"
        })?;
        if joined.tag == "JOIN_ERR" {
            return Err(format!("{}: join failed: {}", guest.label, joined.rest));
        }
        let conf = joined.num(0).ok_or("JOINED's conference number")?;
        // The guest is in once it counts its host; then it can invite the next.
        wait_peer_count_at_least(guest, conf, 2, limits.join)?;
        confs.push(conf);
    }
    for (p, &c) in peers.iter().zip(&confs) {
        wait_peer_count(p, c, n as u32, limits.complete)?;
    }
    Ok(Chain { peers, confs })
}

/// Waits until `peer` last reported at least `n` online peers in `conf`.
pub fn wait_peer_count_at_least(
    peer: &ConfPeer,
    conf: u32,
    n: u32,
    limit: Duration,
) -> Result<(), String> {
    let deadline = Instant::now() + limit;
    while peer_count(peer, conf).unwrap_or(0) < n {
        if Instant::now() >= deadline {
            return Err(format!(
                "{}: conference {conf} has {:?} peers, fewer than {n}, after {limit:?}\n{}",
                peer.label,
                peer_count(peer, conf),
                peer.report()
            ));
        }
        std::thread::sleep(POLL);
    }
    Ok(())
}

/// When each peer of `peers` (in conference `confs[i]`) other than the sender received the
/// message `text` from the peer with key `from_pk`: the stamps, or the labels of those that
/// did not within `limit`.
pub fn receipts(
    peers: &[ConfPeer],
    confs: &[u32],
    sender: usize,
    text: &str,
    limit: Duration,
) -> Result<Vec<f64>, Vec<String>> {
    let from_pk = peers[sender].pk.clone();
    let deadline = Instant::now() + limit;
    let mut times = Vec::new();
    let mut missing = Vec::new();
    for (i, (p, &c)) in peers.iter().zip(confs).enumerate() {
        if i == sender {
            continue;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match p.wait("", left, |l| {
            l.tag == "MESSAGE"
                && l.num(0) == Some(c)
                && l.word(4) == Some(from_pk.as_str())
                && l.tail(5) == text
        }) {
            Ok(l) => times.push(l.t),
            Err(_) => missing.push(p.label.clone()),
        }
    }
    if missing.is_empty() {
        Ok(times)
    } else {
        Err(missing)
    }
}
