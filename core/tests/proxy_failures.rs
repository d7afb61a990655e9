//! Relay connections through a proxy that fails, on real loopback sockets, through both
//! drivers: a proxy that refuses (SOCKS5 reply 5, HTTP 403), dies mid-handshake, answers
//! garbage, is not listening, or never answers. Each ends in its own typed error, and none
//! hangs: the step driver's node gives up at its relay timeout (injected time), the tokio
//! driver's task at its connect bound (paused time).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use rustox_core::driver::relay_streams::RelayStreams;
use rustox_core::driver::tokio::relays::open;
use rustox_core::node::{system_rng, Node, NodeOptions};
use rustox_core::proxy::{ProxyConfig, ProxyError, ProxyKind};
use rustox_net_crypto::crypto::KeyPair;
use rustox_net_crypto::Timestamp;

/// What a fake proxy does with each connection.
#[derive(Clone, Copy)]
enum Script {
    /// Reads the SOCKS5 greeting, accepts, reads the request, answers with this reply code.
    Socks5Reply(u8),
    /// Reads the request, answers this.
    Answer(&'static [u8]),
    /// Reads the first message and closes.
    Close,
    /// Accepts and never answers (holds the connection for a while).
    Silent,
}

/// A fake proxy on loopback serving `script` to every connection.
fn fake_proxy(script: Script) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { return };
            std::thread::spawn(move || {
                let _ = s.set_read_timeout(Some(Duration::from_secs(20)));
                let mut buf = [0u8; 512];
                match script {
                    Script::Socks5Reply(code) => {
                        let _ = s.read(&mut buf);
                        let _ = s.write_all(&[5, 0]);
                        let _ = s.read(&mut buf);
                        let _ = s.write_all(&[5, code, 0, 1, 0, 0, 0, 0, 0, 0]);
                    }
                    Script::Answer(bytes) => {
                        let _ = s.read(&mut buf);
                        let _ = s.write_all(bytes);
                    }
                    Script::Close => {
                        let _ = s.read(&mut buf);
                    }
                    Script::Silent => {
                        std::thread::sleep(Duration::from_secs(20));
                    }
                }
                // Dropped: the connection closes.
            });
        }
    });
    addr
}

/// A loopback port with nothing listening.
fn dead_port() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap()
}

/// The relay the node is told to use (never reached: the proxies here do not connect).
fn relay() -> SocketAddr {
    "192.0.2.1:33445".parse().unwrap()
}

/// A step-driven node whose one relay goes through `proxy`, stepped until the proxy's failure
/// is reported; `advance` is how far its clock moves per step (to reach the relay timeout
/// without waiting for it). Panics if nothing is reported within 40 s of node time.
fn step_driver_failure(proxy: ProxyConfig, advance: Duration) -> ProxyError {
    let mut rng = system_rng();
    let keys = KeyPair::generate(rng.as_mut());
    let options = NodeOptions {
        proxy: Some(proxy),
        ..NodeOptions::default()
    };
    let mut now = Timestamp::ZERO;
    let mut node = Node::new(now, keys, options, rng);
    let relay_pk = KeyPair::generate(system_rng().as_mut()).public;
    node.add_tcp_relay(now, relay(), relay_pk).unwrap();
    let mut streams = RelayStreams::default();
    let real_start = Instant::now();
    while now < Timestamp::ZERO + Duration::from_secs(40) {
        node.handle_timeout(now);
        streams.step(&mut node, now);
        if let (n, Some(e)) = node.relay_proxy_failure() {
            assert!(n >= 1);
            assert!(node.connected_relays().is_empty());
            return e.clone();
        }
        std::thread::sleep(Duration::from_millis(5));
        now += advance;
        assert!(
            real_start.elapsed() < Duration::from_secs(30),
            "the step driver hung"
        );
    }
    panic!("no proxy failure reported");
}

fn socks5(addr: SocketAddr) -> ProxyConfig {
    ProxyConfig {
        kind: ProxyKind::Socks5,
        addr,
    }
}

fn http(addr: SocketAddr) -> ProxyConfig {
    ProxyConfig {
        kind: ProxyKind::Http,
        addr,
    }
}

/// Every failing proxy, and the error it must give.
fn cases() -> Vec<(&'static str, ProxyConfig, ProxyError)> {
    vec![
        (
            "SOCKS5 refuses",
            socks5(fake_proxy(Script::Socks5Reply(5))),
            ProxyError::Socks5Refused(5),
        ),
        (
            "SOCKS5 wants a password",
            socks5(fake_proxy(Script::Answer(&[5, 0xff]))),
            ProxyError::Socks5AuthRequired,
        ),
        (
            "HTTP 403",
            http(fake_proxy(Script::Answer(
                b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n",
            ))),
            ProxyError::HttpRefused(403, "Forbidden".into()),
        ),
        (
            "SOCKS5 dies",
            socks5(fake_proxy(Script::Close)),
            ProxyError::Closed,
        ),
        (
            "HTTP dies",
            http(fake_proxy(Script::Close)),
            ProxyError::Closed,
        ),
        (
            "SOCKS5 garbage",
            socks5(fake_proxy(Script::Answer(b"SSH-2.0-OpenSSH_9.2\r\n"))),
            ProxyError::NotSocks5(b'S'),
        ),
        (
            "HTTP garbage",
            http(fake_proxy(Script::Answer(b"\x05\x00garbage"))),
            ProxyError::HttpGarbage,
        ),
        (
            "not listening",
            socks5(dead_port()),
            ProxyError::Connect(std::io::ErrorKind::ConnectionRefused),
        ),
    ]
}

#[test]
fn the_step_driver_reports_each_failing_proxy() {
    for (name, proxy, want) in cases() {
        let got = step_driver_failure(proxy, Duration::from_millis(5));
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn the_step_driver_gives_up_on_a_silent_proxy_at_the_relay_timeout() {
    let got = step_driver_failure(socks5(fake_proxy(Script::Silent)), Duration::from_secs(1));
    assert_eq!(got, ProxyError::Timeout);
    assert!(got.to_string().contains("did not answer"));
}

#[tokio::test]
async fn the_tokio_driver_reports_each_failing_proxy() {
    for (name, proxy, want) in cases() {
        let got = tokio::time::timeout(Duration::from_secs(20), open(relay(), Some(proxy)))
            .await
            .unwrap_or_else(|_| panic!("{name}: hung"));
        assert_eq!(got.err(), Some(Some(want)), "{name}");
    }
}

/// The connection task's own bound: with time paused, tokio moves the clock to the next
/// timer once every task waits, so the bound is reached without waiting for it; without a
/// bound the test would never end.
#[tokio::test(start_paused = true)]
async fn the_tokio_driver_gives_up_on_a_silent_proxy() {
    let proxy = socks5(fake_proxy(Script::Silent));
    let (to_loop, mut from_tasks) = tokio::sync::mpsc::channel(8);
    let (_writes_tx, writes) = tokio::sync::mpsc::channel(8);
    let id = rustox_core::relay::client::RelayId(7);
    tokio::spawn(rustox_core::driver::tokio::relays::connection(
        id,
        relay(),
        Some(proxy),
        writes,
        to_loop,
    ));
    let (got_id, report) = from_tasks.recv().await.expect("a report");
    assert_eq!(got_id, id);
    match report {
        rustox_core::driver::tokio::relays::RelayIo::ProxyFailed(e) => {
            assert_eq!(e, ProxyError::Timeout)
        }
        other => panic!("{other:?}"),
    }
}

/// A proxy carries TCP only, so a node with one sends no UDP even when `udp_disabled` is
/// off (c-toxcore's `new_messenger` turns UDP off when a proxy is set): a bootstrap that
/// would send DHT requests sends nothing, and the attempts are counted as dropped.
#[test]
fn a_node_with_a_proxy_sends_no_udp() {
    let mut rng = system_rng();
    let keys = KeyPair::generate(rng.as_mut());
    let other = KeyPair::generate(rng.as_mut()).public;
    let build = |proxy: Option<ProxyConfig>| {
        let options = NodeOptions {
            udp_disabled: false,
            proxy,
            ..NodeOptions::default()
        };
        let mut node = Node::new(Timestamp::ZERO, keys.clone(), options, system_rng());
        node.bootstrap(Timestamp::ZERO, "192.0.2.9:33445".parse().unwrap(), other);
        let mut sent = 0;
        let mut now = Timestamp::ZERO;
        for _ in 0..50 {
            node.handle_timeout(now);
            while node.poll_transmit(now).is_some() {
                sent += 1;
            }
            now += Duration::from_millis(100);
        }
        (sent, node.io_counters().udp_disabled_dropped)
    };
    // The same node without a proxy does send: the check can fail.
    let (sent, _) = build(None);
    assert!(sent > 0);
    let (sent, dropped) = build(Some(socks5(dead_port())));
    assert_eq!(sent, 0);
    assert!(dropped > 0);
}
