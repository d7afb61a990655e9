//! DHT interop against c-toxcore 0.2.18 (Debian's libtoxcore), on loopback.
//!
//! The c-toxcore side is `tests/interop/toxnet.c`, compiled at test time with the system
//! `cc` against `-ltoxcore` and run as a separate process, so c-toxcore is never linked
//! into anything of ours. With `CI` set, a missing c-toxcore fails the tests; otherwise they
//! print a notice and pass without running.
//!
//! c-toxcore's LAN discovery is off and IPv6 is off, so the only way its instances can learn
//! about each other is what the DHT tells them.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::SeedableRng;
use rustox_core::dht::wire::dht_packet::{DhtMessage, Envelope};
use rustox_core::dht::wire::nodes::NodesRequest;
use rustox_core::driver::workers::{NodeRunner, RunnerConfig};
use rustox_core::onion::server::OnionDrop;
use rustox_net_crypto::crypto::{KeyPair, Nonce, PrecomputedKey, PublicKey};
use rustox_testkit::bootstrapd::{self, Bootstrapd};
use rustox_testkit::c::Cc;
use rustox_testkit::ci::skip_or_fail;
use rustox_testkit::temp::TempDir;

/// Builds toxnet once; `None` (with a notice) when c-toxcore is not installed outside CI.
fn toxnet_binary() -> Option<PathBuf> {
    static BIN: OnceLock<Option<PathBuf>> = OnceLock::new();
    BIN.get_or_init(|| {
        let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/toxnet.c");
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("rustox-toxnet");
        let built = std::path::Path::new("/usr/include/tox/tox.h").exists()
            && Cc::new("cc")
                .arg("-O1")
                .testkit_header()
                .arg(&src)
                .arg("-ltoxcore")
                .pin_pkg_config_library("toxcore")
                .and_then(|cc| cc.build(&out))
                .is_ok();
        if built {
            return Some(out);
        }
        skip_or_fail(
            "c-toxcore not installed (apt-get install libtoxcore-dev); interop test skipped",
        );
        None
    })
    .clone()
}

/// A running toxnet process.
struct ToxNet {
    child: Child,
    _stdin: ChildStdin,
    nodes: Vec<(PublicKey, u16)>,
    /// Latest (self status, friend status) per instance.
    stat: Arc<Mutex<HashMap<usize, (i32, i32)>>>,
}

impl ToxNet {
    fn spawn(bin: &PathBuf, n: usize, port_base: u16, args: &[String]) -> ToxNet {
        let mut child = Command::new(bin)
            .arg(n.to_string())
            .arg(port_base.to_string())
            .arg("300")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start toxnet");
        let stdin = child.stdin.take().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut nodes = Vec::new();
        while nodes.len() < n {
            let line = lines.next().expect("toxnet exited").unwrap();
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.first() == Some(&"NODE") {
                nodes.push((PublicKey::from_hex(f[2]).unwrap(), f[3].parse().unwrap()));
            }
        }
        let stat = Arc::new(Mutex::new(HashMap::new()));
        let s2 = stat.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                let f: Vec<&str> = line.split_whitespace().collect();
                if f.len() == 4 && f[0] == "STAT" {
                    let i: usize = f[1].parse().unwrap();
                    s2.lock()
                        .unwrap()
                        .insert(i, (f[2].parse().unwrap(), f[3].parse().unwrap()));
                }
            }
        });
        ToxNet {
            child,
            _stdin: stdin,
            nodes,
            stat,
        }
    }

    fn addr(&self, i: usize) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.nodes[i].1))
    }

    fn status(&self, i: usize) -> (i32, i32) {
        self.stat
            .lock()
            .unwrap()
            .get(&i)
            .copied()
            .unwrap_or((0, -1))
    }
}

impl Drop for ToxNet {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_rustox(port: u16) -> NodeRunner {
    let mut rng = StdRng::from_entropy();
    NodeRunner::start(KeyPair::generate(&mut rng), RunnerConfig::loopback(port))
        .expect("start rustox node")
}

/// Asks the node at `addr` (key `pk`) for the nodes closest to `searched`, with a one-off
/// probe key, and returns the keys it answers with.
fn ask_nodes(addr: SocketAddr, pk: &PublicKey, searched: &PublicKey) -> Vec<PublicKey> {
    let mut rng = StdRng::from_entropy();
    let probe = KeyPair::generate(&mut rng);
    let key = PrecomputedKey::new(pk, &probe.secret).unwrap();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let req = DhtMessage::NodesRequest(NodesRequest {
        searched: *searched,
        sendback: 42,
    });
    let _ = sock.send_to(
        &req.seal(&probe.public, &key, &Nonce::random(&mut rng)),
        addr,
    );
    let mut buf = [0u8; 2048];
    while let Ok((n, _)) = sock.recv_from(&mut buf) {
        if let Ok(env) = Envelope::parse(&buf[..n]) {
            if let Ok(DhtMessage::NodesResponse(r)) = env.open(&key) {
                return r.nodes.iter().map(|n| n.pk).collect();
            }
        }
    }
    Vec::new()
}

fn wait_until(limit: Duration, mut what: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if what() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    what()
}

/// Six c-toxcore instances know only our node; through it they find each other (each one's
/// get-nodes answer for any other's key names that one), and two of them, friends, come
/// online to each other over the onion they build among themselves.
#[test]
fn c_toxcore_instances_find_each_other_through_our_node() {
    let Some(bin) = toxnet_binary() else { return };
    let ours = start_rustox(36150);
    let args = vec![
        "--friends".to_string(),
        "--bootstrap".into(),
        "127.0.0.1".into(),
        "36150".into(),
        ours.public_key().to_hex(),
    ];
    let net = ToxNet::spawn(&bin, 6, 36100, &args);
    let all_know_all = || {
        (0..6).all(|i| {
            (0..6).filter(|&j| j != i).all(|j| {
                ask_nodes(net.addr(i), &net.nodes[i].0, &net.nodes[j].0).contains(&net.nodes[j].0)
            })
        })
    };
    assert!(
        wait_until(Duration::from_secs(60), all_know_all),
        "c-toxcore instances did not find each other"
    );
    let ours_has_all = || {
        let close: Vec<PublicKey> = ours.close_nodes().iter().map(|n| n.pk).collect();
        net.nodes.iter().all(|(pk, _)| close.contains(pk))
    };
    assert!(
        wait_until(Duration::from_secs(10), ours_has_all),
        "our table misses a c-toxcore node"
    );
    let friends_online = || net.status(0).1 > 0 && net.status(1).1 > 0;
    assert!(
        wait_until(Duration::from_secs(120), friends_online),
        "friends did not come online: {:?}",
        (net.status(0), net.status(1))
    );
    let s = ours.stats();
    eprintln!("our node: {s:?}");
    assert!(s.dht.nodes_answered > 0 && s.dht.pings_answered > 0);
    // c-toxcore used our onion server: it relayed requests and responses and stored
    // announces, and nothing c-toxcore sent failed to parse or open.
    let o = s.onion;
    assert!(
        o.requests_relayed.iter().sum::<u64>() > 0 && o.responses_relayed.iter().sum::<u64>() > 0
    );
    assert!(o.announces_stored > 0, "{o:?}");
    for reason in [
        OnionDrop::BadLength,
        OnionDrop::Decrypt,
        OnionDrop::BadSendback,
        OnionDrop::BadAddress,
    ] {
        assert_eq!(o.dropped(reason), 0, "{reason:?}: {o:?}");
    }
}

/// Our node bootstraps from a c-toxcore network: its table fills from c-toxcore's answers,
/// and pings are answered both ways.
#[test]
fn our_node_bootstraps_from_c_toxcore() {
    let Some(bin) = toxnet_binary() else { return };
    let net = ToxNet::spawn(&bin, 4, 36200, &["--chain".to_string()]);
    std::thread::sleep(Duration::from_secs(3));
    let ours = start_rustox(36250);
    ours.bootstrap(net.addr(0), net.nodes[0].0);
    let table_full = || {
        let close: Vec<PublicKey> = ours.close_nodes().iter().map(|n| n.pk).collect();
        net.nodes.iter().all(|(pk, _)| close.contains(pk))
    };
    assert!(
        wait_until(Duration::from_secs(30), table_full),
        "table: {:?}",
        ours.close_nodes()
    );
    // Our pings to every c-toxcore instance are answered.
    ours.with_node(|node, now| {
        let mut rng = StdRng::from_entropy();
        for i in 0..4 {
            node.ping(now, net.addr(i), net.nodes[i].0, &mut rng);
        }
    });
    assert!(
        wait_until(Duration::from_secs(10), || ours.stats().dht.pings_accepted
            >= 4),
        "our pings were not all answered: {:?}",
        ours.stats().dht
    );
    // c-toxcore pings the new node it heard from (ping.c's to_ping batch), and we answer.
    assert!(
        wait_until(Duration::from_secs(20), || ours.stats().dht.pings_answered
            >= 1),
        "c-toxcore never pinged us: {:?}",
        ours.stats().dht
    );
    // And c-toxcore has added us: its answer for our key names us.
    let pk = ours.public_key();
    assert!(wait_until(Duration::from_secs(20), || ask_nodes(
        net.addr(0),
        &net.nodes[0].0,
        &pk
    )
    .contains(&pk)));
}

/// Four c-toxcore and four rustox nodes on loopback: every rustox node's table holds all
/// seven others.
#[test]
fn mixed_network_every_rustox_table_holds_every_node() {
    let Some(bin) = toxnet_binary() else { return };
    let ours: Vec<NodeRunner> = (0..4).map(|i| start_rustox(36350 + i)).collect();
    let args = vec![
        "--chain".to_string(),
        "--bootstrap".into(),
        "127.0.0.1".into(),
        "36350".into(),
        ours[0].public_key().to_hex(),
    ];
    let net = ToxNet::spawn(&bin, 4, 36300, &args);
    for r in &ours[1..] {
        r.bootstrap(ours[0].local_addr(), ours[0].public_key());
    }
    ours[3].bootstrap(net.addr(2), net.nodes[2].0);
    let mut everyone: Vec<PublicKey> = net.nodes.iter().map(|n| n.0).collect();
    everyone.extend(ours.iter().map(|r| r.public_key()));
    let all_full = || {
        ours.iter().all(|r| {
            let close: Vec<PublicKey> = r.close_nodes().iter().map(|n| n.pk).collect();
            everyone
                .iter()
                .filter(|k| **k != r.public_key())
                .all(|k| close.contains(k))
        })
    };
    assert!(
        wait_until(Duration::from_secs(90), all_full),
        "some rustox table misses a node"
    );
    // And the c-toxcore nodes learned about rustox nodes too, on their own (slower,
    // one-second) timers: rustox's tables can be complete before c-toxcore has pinged back.
    let last = ours[3].public_key();
    assert!(
        wait_until(Duration::from_secs(60), || ask_nodes(
            net.addr(1),
            &net.nodes[1].0,
            &last
        )
        .contains(&last)),
        "c-toxcore node 1 never named our node 3"
    );
}

#[test]
fn ask_nodes_probe_works_against_our_node() {
    // The probe used above, checked against our own node so a failure there cannot hide.
    let a = start_rustox(36450);
    let b = start_rustox(36451);
    b.bootstrap(a.local_addr(), a.public_key());
    let bk = b.public_key();
    assert!(wait_until(Duration::from_secs(10), || ask_nodes(
        a.local_addr(),
        &a.public_key(),
        &bk
    )
    .contains(&bk)));
    let _ = std::io::stdout().flush();
}

/// tox-bootstrapd (toxcore-utils) answers our 78-byte 0xf0 request, and its reply decodes
/// with our codec: version, then the MOTD with its NUL. Skipped when tox-bootstrapd is not
/// installed (CI installs only libtoxcore-dev).
#[test]
fn tox_bootstrapd_answers_our_bootstrap_info_request() {
    use rustox_core::dht::wire::bootstrap_info;
    if !bootstrapd::installed() {
        eprintln!("NOTICE: tox-bootstrapd not installed (apt-get install toxcore-utils); skipped");
        return;
    }
    let dir = TempDir::new("rustox-tbd", "info");
    let daemon = Bootstrapd::start(
        &bootstrapd::Config {
            motd: Some("interop motd".into()),
            ..bootstrapd::Config::udp(36560)
        },
        dir.path(),
    )
    .unwrap();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut buf = [0u8; 600];
    let mut reply = None;
    for _ in 0..30 {
        let _ = sock.send_to(&bootstrap_info::encode_request(), "127.0.0.1:36560");
        if let Ok((n, _)) = sock.recv_from(&mut buf) {
            reply = Some(buf[..n].to_vec());
            break;
        }
    }
    drop(daemon);
    drop(dir);
    let reply = reply.expect("tox-bootstrapd answered");
    let (version, motd) = bootstrap_info::decode_reply(&reply).unwrap();
    assert!(version > 0);
    assert_eq!(motd, b"interop motd\0");
    eprintln!("tox-bootstrapd version {version}");
}
