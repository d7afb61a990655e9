//! The attacks: what each sends and from where, started on a victim and stopped with a
//! report.

use std::net::{IpAddr, UdpSocket};

use rand::rngs::StdRng;
use rand::SeedableRng;
use rustox_auto_tests::attack::flood::{Flood, FloodReport, Outlet, Pool};
use rustox_auto_tests::attack::forge;
use rustox_auto_tests::attack::link::Sources;
use rustox_auto_tests::attack::session::{handshake_pool, PinnedSession, Pinning};
use rustox_auto_tests::attack::victim::Victim;
use rustox_auto_tests::live::{RustoxOptions, RustoxPeer};
use rustox_net_crypto::crypto::PublicKey;

use crate::{Args, AttackKind};

/// Distinct datagrams in the malformed pool: enough that the victim never sees a pattern
/// in the time a row lasts (8192 × ~700 bytes is 5.6 MiB of the bench's memory).
const MALFORMED_POOL: usize = 8192;

/// Announce requests in the pool, each from its own key: far more than any shared-key
/// cache the victim might keep, so each costs it a key agreement.
const ANNOUNCE_POOL: usize = 4096;

/// Identities whose real cookies the handshake replay uses, and fresh-key handshakes per
/// identity: 4 × 2 × 128 = 1024 datagrams, half of them verbatim repeats. Four cookies
/// fit the victim's cookie bucket (10 at once) without waiting for a refill.
const REPLAY_IDENTITIES: usize = 4;
const REPLAY_FRESH: usize = 128;

/// Source addresses the spoofed-source flood binds: host 2 … 254 of the attacker's pool
/// (127.0.0.x on loopback, 10.78.4.x with `--link`), one socket each on a port the OS picks.
const SPOOF_FIRST: u8 = 2;
const SPOOF_LAST: u8 = 254;

/// What runs against the victim during a row.
pub enum Running {
    Nothing,
    Flood(Flood),
    Peers(Vec<RustoxPeer>),
}

/// What a stopped attack reports.
pub struct AttackReport {
    pub flood: Option<FloodReport>,
    /// Friend-spam: spammers that saw the victim come online as their friend.
    pub spammers_online: Option<usize>,
}

impl Running {
    pub fn stop(self) -> AttackReport {
        match self {
            Running::Nothing => AttackReport {
                flood: None,
                spammers_online: None,
            },
            Running::Flood(f) => AttackReport {
                flood: Some(f.stop()),
                spammers_online: None,
            },
            Running::Peers(peers) => {
                let online = peers
                    .iter()
                    .filter(|p| p.log.friend_online().is_some())
                    .count();
                for p in peers {
                    p.stop();
                }
                AttackReport {
                    flood: None,
                    spammers_online: Some(online),
                }
            }
        }
    }
}

/// Prepares and starts one attack on `victim`, from `sources`.
pub fn start_attack(
    args: &Args,
    sources: Sources,
    kind: AttackKind,
    rate: u64,
    victim: &Victim,
    notes: &mut Vec<String>,
) -> Result<Running, String> {
    let mut rng = StdRng::from_entropy();
    let key = PublicKey::from_hex(&victim.key_hex).ok_or("the victim printed a bad key")?;
    let to = victim.addr;
    let one_socket = || Outlet::udp(sources.host()).map_err(|e| e.to_string());
    let flood = |outlets: Vec<Outlet>, packets: Vec<Vec<u8>>| {
        let n = outlets.len();
        Flood::start(to, rate, outlets, Box::new(Pool::new(packets, n)))
            .map(Running::Flood)
            .map_err(|e| e.to_string())
    };
    match kind {
        AttackKind::Malformed => flood(
            vec![one_socket()?],
            forge::malformed(MALFORMED_POOL, &mut rng),
        ),
        AttackKind::CookieFlood => flood(
            vec![one_socket()?],
            forge::cookie_request_pool(&key, &mut rng),
        ),
        AttackKind::Spoofed => {
            let mut outlets = (SPOOF_FIRST..=SPOOF_LAST)
                .map(|last| Outlet::udp(sources.spoofed(last)))
                .collect::<std::io::Result<Vec<_>>>()
                .map_err(|e| format!("binding {}: {e}", sources.spoofed(SPOOF_FIRST)))?;
            match Outlet::port_zero() {
                Ok(raw) => {
                    outlets.push(raw);
                    notes.push(format!(
                        "1 in {} datagrams from UDP source port 0 (raw socket)",
                        outlets.len()
                    ));
                }
                Err(e) => notes.push(format!("no datagrams from port 0 (needs root): {e}")),
            }
            flood(outlets, forge::cookie_request_pool(&key, &mut rng))
        }
        AttackKind::HandshakeReplay => {
            let socket = UdpSocket::bind((sources.host(), 0)).map_err(|e| e.to_string())?;
            let pool = handshake_pool(&socket, to, &key, REPLAY_IDENTITIES, REPLAY_FRESH, &mut rng)
                .map_err(|e| e.to_string())?;
            notes.push(format!(
                "cookies expire after 15 s (COOKIE_TIMEOUT): later handshakes are stale ({} datagrams in the pool)",
                pool.len()
            ));
            flood(vec![Outlet::Udp(socket)], pool)
        }
        AttackKind::Pinning => {
            let sessions = (0..args.pin_sessions)
                .map(|i| {
                    let ip = sources.pinned(1 + (i % 250) as u8);
                    PinnedSession::open(ip, to, &key, &mut rng)
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            let (source, outlets) = Pinning::new(sessions).map_err(|e| e.to_string())?;
            Flood::start(to, rate, outlets, Box::new(source))
                .map(Running::Flood)
                .map_err(|e| e.to_string())
        }
        AttackKind::AnnounceFlood => flood(
            vec![one_socket()?],
            forge::announce_requests(&key, ANNOUNCE_POOL, &mut rng),
        ),
        AttackKind::FriendSpam => {
            let id = victim
                .tox_id
                .parse()
                .map_err(|e| format!("the victim's Tox ID: {e}"))?;
            let peers = (0..args.spammers)
                .map(|_| {
                    RustoxPeer::start(RustoxOptions {
                        bind_ip: Some(IpAddr::V4(sources.host())),
                        bootstrap: vec![(to, key)],
                        request: Some(id),
                        ..RustoxOptions::default()
                    })
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            Ok(Running::Peers(peers))
        }
    }
}
