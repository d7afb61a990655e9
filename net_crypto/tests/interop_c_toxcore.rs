//! Interop with c-toxcore 0.2.18's own net_crypto (Debian's libtoxcore.a) over loopback UDP:
//! a C peer our code did not write is the judge of the layouts in docs/protocol.md §2.2–§2.7.
//!
//! The peer (`tests/interop/netcrypto_peer.c`) is compiled at test time; it echoes every
//! lossless and lossy packet. Each test is skipped, with a message, when `cc` or
//! `libtoxcore.a` is missing (install Debian's `libtoxcore-dev`), except under CI (`CI` set),
//! where a missing peer is a failure, as for the project's other interop tests.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use rand_chacha::rand_core::SeedableRng;
use rustox_net_crypto::crypto::{KeyPair, PublicKey};
use rustox_net_crypto::{
    CloseReason, ConnectionEvent, ConnectionId, Endpoint, EndpointConfig, EndpointEvent, Timestamp,
    TransportConfig,
};
use rustox_testkit::c::Cc;
use rustox_testkit::ci::skip_or_fail;
use rustox_testkit::net::free_udp_port;

const LIBTOXCORE: &str = "/usr/lib/x86_64-linux-gnu/libtoxcore.a";

/// Builds the C peer once per test binary; `None` (skip) without a compiler or libtoxcore.
fn peer_binary() -> Option<PathBuf> {
    static BUILT: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    BUILT.get_or_init(build_peer).clone()
}

fn build_peer() -> Option<PathBuf> {
    if !Path::new(LIBTOXCORE).exists() {
        skip_or_fail(format!(
            "{LIBTOXCORE} not found (apt-get install libtoxcore-dev)"
        ));
        return None;
    }
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("netcrypto_peer");
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/netcrypto_peer.c");
    let built = Cc::new("cc")
        .arg("-O1")
        .testkit_header()
        .arg(&src)
        .args([LIBTOXCORE, "-lsodium", "-lpthread"])
        .build(&out);
    match built {
        Ok(()) => Some(out),
        Err(e) => {
            skip_or_fail(format!("cannot build the c-toxcore peer: {e}"));
            None
        }
    }
}

struct CPeer {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    seen: Vec<String>,
    real_pk: PublicKey,
    dht_pk: PublicKey,
    addr: SocketAddr,
}

impl CPeer {
    fn spawn(binary: &Path, port: u16, args: &[String]) -> CPeer {
        let mut child = Command::new(binary)
            .arg(port.to_string())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn the c-toxcore peer");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let keys = lines
            .recv_timeout(Duration::from_secs(5))
            .expect("KEYS line from the peer");
        let parts: Vec<&str> = keys.split_whitespace().collect();
        assert_eq!(parts.first(), Some(&"KEYS"), "{keys}");
        CPeer {
            child,
            stdin,
            lines,
            seen: Vec::new(),
            real_pk: PublicKey::from_hex(parts[1]).unwrap(),
            dht_pk: PublicKey::from_hex(parts[2]).unwrap(),
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        }
    }

    fn command(&mut self, cmd: &str) {
        writeln!(self.stdin, "{cmd}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn drain(&mut self) {
        while let Ok(line) = self.lines.try_recv() {
            self.seen.push(line);
        }
    }

    fn saw(&self, line: &str) -> bool {
        self.seen.iter().any(|l| l == line)
    }
}

impl Drop for CPeer {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "QUIT");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Our endpoint on a real loopback socket, driven in real time.
struct Host {
    endpoint: Endpoint,
    socket: UdpSocket,
    start: Instant,
    events: Vec<EndpointEvent>,
    /// Drop every n-th data packet we send (0: none), to make the peers repair losses.
    drop_every: u32,
    data_sent: u32,
    /// Drop every n-th data packet we receive (0: none), so the peer must repair them.
    drop_incoming_every: u32,
    data_received: u32,
}

impl Host {
    fn new(seed: u64) -> Host {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
        let endpoint = Endpoint::new(
            Timestamp::ZERO,
            KeyPair::generate(&mut rng),
            KeyPair::generate(&mut rng),
            EndpointConfig {
                transport: TransportConfig {
                    controller: Default::default(),
                    ..Default::default()
                },
                accept_all: false,
            },
            Box::new(rand_chacha::ChaCha20Rng::seed_from_u64(seed + 1)),
        );
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_millis(2)))
            .unwrap();
        Host {
            endpoint,
            socket,
            start: Instant::now(),
            events: Vec::new(),
            drop_every: 0,
            data_sent: 0,
            drop_incoming_every: 0,
            data_received: 0,
        }
    }

    /// A C peer on a free port that dials this host, which lets it in.
    fn dialled_by(&mut self, binary: &Path) -> CPeer {
        let our_port = self.socket.local_addr().unwrap().port();
        let args = vec![
            "connect".to_string(),
            self.endpoint.real_public_key().to_hex(),
            self.endpoint.dht_public_key().to_hex(),
            our_port.to_string(),
        ];
        let peer = CPeer::spawn(binary, free_udp_port(), &args);
        self.endpoint.allow_peer(peer.real_pk);
        peer
    }

    /// Starts this host's connection to `peer`.
    fn dial(&mut self, peer: &CPeer) -> ConnectionId {
        let now = self.now();
        self.endpoint
            .connect(now, peer.addr, peer.real_pk, peer.dht_pk)
            .unwrap()
    }

    fn now(&self) -> Timestamp {
        Timestamp::from_micros(self.start.elapsed().as_micros() as u64)
    }

    /// Runs the endpoint and the peer's output until `done` or `limit` elapses.
    fn drive(
        &mut self,
        peer: &mut CPeer,
        limit: Duration,
        mut done: impl FnMut(&Host, &CPeer) -> bool,
    ) -> bool {
        let end = Instant::now() + limit;
        let mut buf = [0u8; 2048];
        while Instant::now() < end {
            if let Ok((n, from)) = self.socket.recv_from(&mut buf) {
                if buf[0] == 0x1b && self.drop_incoming_every > 0 {
                    self.data_received = (self.data_received + 1) % self.drop_incoming_every;
                    if self.data_received == 0 {
                        continue;
                    }
                }
                let now = self.now();
                let _ = self.endpoint.handle_datagram(now, from, &buf[..n]);
            }
            let now = self.now();
            if self.endpoint.poll_timeout().is_some_and(|t| t <= now) {
                self.endpoint.handle_timeout(now);
            }
            while let Some(t) = self.endpoint.poll_transmit(now) {
                if t.payload[0] == 0x1b && self.drop_every > 0 {
                    self.data_sent = (self.data_sent + 1) % self.drop_every;
                    if self.data_sent == 0 {
                        continue;
                    }
                }
                let to = t.destination.udp().expect("no relays in this test");
                self.socket.send_to(&t.payload, to).unwrap();
            }
            while let Some(e) = self.endpoint.poll_event() {
                self.events.push(e);
            }
            peer.drain();
            if done(self, peer) {
                return true;
            }
        }
        false
    }

    /// Connects to `peer` and drives both until each sees the session up, for at most 10 s;
    /// the connection's id, and whether it came up.
    fn connect_to(&mut self, peer: &mut CPeer) -> (ConnectionId, bool) {
        let id = self.dial(peer);
        let ok = self.drive(peer, Duration::from_secs(10), |h, p| {
            h.established() && p.saw("ONLINE")
        });
        (id, ok)
    }

    fn connection_events(&self) -> Vec<ConnectionEvent> {
        self.events
            .iter()
            .filter_map(|e| match e {
                EndpointEvent::Connection { event, .. } => Some(event.clone()),
                _ => None,
            })
            .collect()
    }

    fn established(&self) -> bool {
        self.connection_events()
            .contains(&ConnectionEvent::Established)
    }
}

fn hex_upper(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// Sends lossless and lossy payloads and checks the C peer saw them and echoed them back.
fn exchange(host: &mut Host, peer: &mut CPeer, id: ConnectionId) {
    let small = vec![160u8, 1, 2, 3];
    let mut large = vec![161u8];
    large.extend((0..1372u32).map(|i| (i * 7 % 251) as u8));
    let lossy = vec![200u8, 42, 43];
    let now = host.now();
    let conn = host.endpoint.connection_mut(id).unwrap();
    conn.send_lossless(now, &small).unwrap();
    conn.send_lossless(now, &large).unwrap();
    conn.send_lossy(now, &lossy).unwrap();
    let expect = vec![
        ConnectionEvent::Lossless(small.clone()),
        ConnectionEvent::Lossless(large.clone()),
    ];
    let ok = host.drive(peer, Duration::from_secs(10), |h, p| {
        let got: Vec<_> = h
            .connection_events()
            .into_iter()
            .filter(|e| matches!(e, ConnectionEvent::Lossless(_)))
            .collect();
        got == expect
            && h.connection_events()
                .contains(&ConnectionEvent::Lossy(lossy.clone()))
            && p.saw(&format!("DATA {}", hex_upper(&small)))
            && p.saw(&format!("DATA {}", hex_upper(&large)))
            && p.saw(&format!("LOSSY {}", hex_upper(&lossy)))
    });
    assert!(
        ok,
        "exchange failed; peer said {:?}; we got {:?}; drops {:?}",
        peer.seen,
        host.connection_events(),
        host.endpoint.drop_counters()
    );
    assert!(host.endpoint.connection(id).unwrap().is_delivered(1));
    eprintln!(
        "c-toxcore peer said: {:?}",
        peer.seen
            .iter()
            .map(|l| &l[..l.len().min(40)])
            .collect::<Vec<_>>()
    );
}

#[test]
fn we_connect_to_c_toxcore_exchange_data_and_kill() {
    let Some(binary) = peer_binary() else { return };
    let port = free_udp_port();
    let mut peer = CPeer::spawn(&binary, port, &["listen".to_string()]);
    let mut host = Host::new(1);
    let (id, ok) = host.connect_to(&mut peer);
    assert!(
        ok,
        "handshake with c-toxcore failed; peer said {:?}; drops {:?}",
        peer.seen,
        host.endpoint.drop_counters()
    );
    exchange(&mut host, &mut peer, id);

    let now = host.now();
    host.endpoint.connection_mut(id).unwrap().kill(now);
    let ok = host.drive(&mut peer, Duration::from_secs(5), |_, p| p.saw("OFFLINE"));
    assert!(ok, "c-toxcore did not see our kill packet: {:?}", peer.seen);
}

#[test]
fn c_toxcore_connects_to_us_exchange_data_and_kill() {
    let Some(binary) = peer_binary() else { return };
    let mut host = Host::new(2);
    let mut peer = host.dialled_by(&binary);
    let ok = host.drive(&mut peer, Duration::from_secs(10), |h, p| {
        h.established() && p.saw("ONLINE")
    });
    assert!(
        ok,
        "c-toxcore's handshake failed; peer said {:?}; events {:?}; drops {:?}",
        peer.seen,
        host.events,
        host.endpoint.drop_counters()
    );
    let id = match host.events.first() {
        Some(EndpointEvent::Incoming {
            id, peer_real_pk, ..
        }) => {
            assert_eq!(*peer_real_pk, peer.real_pk);
            *id
        }
        other => panic!("expected Incoming first, got {other:?}"),
    };
    exchange(&mut host, &mut peer, id);

    peer.command("KILL");
    let ok = host.drive(&mut peer, Duration::from_secs(5), |h, _| {
        h.connection_events()
            .contains(&ConnectionEvent::Closed(CloseReason::Killed))
    });
    assert!(
        ok,
        "we did not see c-toxcore's kill packet: {:?}",
        host.events
    );
}

/// Streams 400 lossless packets to the C peer and back, losing every 10th data packet in
/// the direction(s) chosen.
fn stream_through_c_toxcore(lose_ours: bool, lose_theirs: bool, seed: u64) {
    let Some(binary) = peer_binary() else { return };
    let port = free_udp_port();
    let mut peer = CPeer::spawn(&binary, port, &["listen".to_string()]);
    let mut host = Host::new(seed);
    let (id, ok) = host.connect_to(&mut peer);
    assert!(ok);
    // Lost data packets of ours: c-toxcore's request packets must name them and our resends
    // fill its holes. Lost packets of its: our request packets must name them and c-toxcore
    // must resend them.
    host.drop_every = if lose_ours { 10 } else { 0 };
    host.drop_incoming_every = if lose_theirs { 10 } else { 0 };
    let count = 400u32;
    let payload = |i: u32| {
        let mut p = vec![170u8];
        p.extend_from_slice(&i.to_be_bytes());
        p.extend((0..1000u32).map(|j| (i.wrapping_mul(31).wrapping_add(j) % 253) as u8));
        p
    };
    let mut next = 0u32;
    let end = Instant::now() + Duration::from_secs(30);
    let delivered = |h: &Host| {
        h.connection_events()
            .into_iter()
            .filter(|e| matches!(e, ConnectionEvent::Lossless(_)))
            .count() as u32
    };
    while Instant::now() < end && delivered(&host) < count {
        let now = host.now();
        let conn = host.endpoint.connection_mut(id).unwrap();
        while next < count && conn.send_lossless(now, &payload(next)).is_ok() {
            next += 1;
        }
        host.drive(&mut peer, Duration::from_millis(20), |_, _| false);
    }
    let got: Vec<_> = host
        .connection_events()
        .into_iter()
        .filter_map(|e| match e {
            ConnectionEvent::Lossless(p) => Some(p),
            _ => None,
        })
        .collect();
    assert_eq!(
        got.len() as u32,
        count,
        "echoes received; sent {next}; stats {:?}; drops {:?}; poll_timeout {:?} at {:?}",
        host.endpoint.connection(id).unwrap().transport().stats(),
        host.endpoint.drop_counters(),
        host.endpoint.poll_timeout(),
        host.now()
    );
    for (i, p) in got.iter().enumerate() {
        assert_eq!(*p, payload(i as u32), "echo {i} in order and intact");
    }
    let stats = host.endpoint.connection(id).unwrap().transport().stats();
    if lose_ours {
        assert!(
            stats.packets_resent > 0,
            "our losses were repaired by resends"
        );
    }
}

#[test]
fn lossless_stream_with_our_packets_lost_round_trips_through_c_toxcore_in_order() {
    stream_through_c_toxcore(true, false, 3);
}

#[test]
fn lossless_stream_with_its_packets_lost_round_trips_through_c_toxcore_in_order() {
    stream_through_c_toxcore(false, true, 4);
}

#[test]
fn crossed_handshakes_with_c_toxcore_give_one_session() {
    let Some(binary) = peer_binary() else { return };
    let mut host = Host::new(5);
    let mut peer = host.dialled_by(&binary);
    // Both sides connect at once: c-toxcore's cookie request is already on its way.
    let (id, ok) = host.connect_to(&mut peer);
    assert!(
        ok,
        "crossed handshake with c-toxcore failed; peer said {:?}; events {:?}; drops {:?}",
        peer.seen,
        host.events,
        host.endpoint.drop_counters()
    );
    assert_eq!(host.endpoint.connection_ids(), vec![id]);
    assert!(
        !host
            .events
            .iter()
            .any(|e| matches!(e, EndpointEvent::Incoming { .. })),
        "the peer's handshake joined our own connection"
    );
    exchange(&mut host, &mut peer, id);
}
