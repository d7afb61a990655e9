//! `tox_new` with a SOCKS5 and with an HTTP proxy, through the C API: the instance starts,
//! and the relay it is given (a rustox relay on loopback) receives its hello and answers
//! through the proxy (Debian's `microsocks`, `tinyproxy`, started here); when the proxy is
//! killed, the relay's connection ends with it, so it was the proxy that carried it.
//!
//! Ports 378[6-7]x. A missing proxy skips the test, or fails it with `CI` set.

mod common;

use std::ffi::CString;
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustox_core::driver::tcp_relay::TcpRelayConfig;
use rustox_core::driver::workers::{NodeRunner, RunnerConfig};
use rustox_net_crypto::crypto::KeyPair;
use toxcore::lifecycle::{tox_add_tcp_relay, tox_iterate, tox_kill, tox_new};
use toxcore::options::Tox_Options;
use toxcore::types::{Tox_Err_Bootstrap, Tox_Err_New, Tox_Proxy_Type};

/// A rustox relay: UDP `port`, TCP `port + 1`.
fn relay(port: u16) -> NodeRunner {
    let mut rng = rustox_core::node::system_rng();
    NodeRunner::start(
        KeyPair::generate(rng.as_mut()),
        RunnerConfig {
            tcp: Some(TcpRelayConfig {
                listen: vec![SocketAddr::from(([127, 0, 0, 1], port + 1))],
                relay: Default::default(),
            }),
            ..RunnerConfig::loopback(port)
        },
    )
    .expect("start a rustox relay")
}

/// A proxy process, killed when dropped.
struct Proxy(Child);

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_proxy(kind: Tox_Proxy_Type, port: u16) -> Option<Proxy> {
    let mut cmd = match kind {
        Tox_Proxy_Type::SOCKS5 => {
            let mut c = Command::new("microsocks");
            c.args(["-i", "127.0.0.1", "-p", &port.to_string()]);
            c
        }
        _ => {
            let conf = std::env::temp_dir().join(format!("rustox-ffi-tinyproxy-{port}.conf"));
            std::fs::write(
                &conf,
                format!("Port {port}\nListen 127.0.0.1\nAllow 127.0.0.1\nLogLevel Error\n"),
            )
            .expect("write tinyproxy's config");
            let mut c = Command::new("tinyproxy");
            c.arg("-d").arg("-c").arg(conf);
            c
        }
    };
    let child = match cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            common::skip_or_fail(format!("{cmd:?}: {e}"));
            return None;
        }
    };
    let proxy = Proxy(child);
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let end = Instant::now() + Duration::from_secs(5);
    while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        assert!(Instant::now() < end, "{cmd:?} does not listen on {addr}");
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(proxy)
}

/// Iterates `tox` until `done` holds or `limit` passes; whether it held.
fn iterate_until(tox: *mut toxcore::handle::Tox, limit: Duration, done: impl Fn() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        // SAFETY: a live instance.
        unsafe { tox_iterate(tox, std::ptr::null_mut()) };
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

fn through(kind: Tox_Proxy_Type, base: u16) {
    let Some(mut proxy) = start_proxy(kind, base + 9) else {
        return;
    };
    let relay = relay(base);
    let relay_stats = || relay.stats().relay.expect("the relay's counters");
    let host = CString::new("127.0.0.1").unwrap();
    let options = Tox_Options {
        // Left on: the proxy turns UDP off, as c-toxcore's tox_new does.
        udp_enabled: true,
        local_discovery_enabled: false,
        proxy_type: kind as u32,
        proxy_host: host.as_ptr(),
        proxy_port: base + 9,
        ..Tox_Options::default()
    };
    let mut e = Tox_Err_New::OK;
    // SAFETY: valid options; the instance is killed below.
    let tox = unsafe { tox_new(&options, &mut e) };
    assert_eq!(e, Tox_Err_New::OK, "{kind:?}");
    assert!(!tox.is_null());
    let relay_pk = relay.public_key().0;
    let mut be = Tox_Err_Bootstrap::OK;
    // SAFETY: a live instance, a NUL-terminated host, a 32-byte key.
    let added =
        unsafe { tox_add_tcp_relay(tox, host.as_ptr(), base + 1, relay_pk.as_ptr(), &mut be) };
    assert!(added, "{be:?}");
    // The relay got the 128-byte hello and answered with its 96 bytes, through the proxy.
    let up = iterate_until(tox, Duration::from_secs(15), || {
        let s = relay_stats();
        s.connections >= 1 && s.stats.bytes_in >= 128 && s.stats.bytes_out >= 96
    });
    assert!(
        up,
        "{kind:?}: no relay handshake through the proxy: {:?}",
        relay_stats()
    );
    // Killed, the proxy takes the connection with it.
    let _ = proxy.0.kill();
    let _ = proxy.0.wait();
    let gone = iterate_until(tox, Duration::from_secs(15), || {
        relay_stats().stats.closed_by_peer >= 1
    });
    assert!(
        gone,
        "{kind:?}: the relay connection outlived the proxy: {:?}",
        relay_stats()
    );
    // SAFETY: the instance is live and no longer used.
    unsafe { tox_kill(tox) };
}

#[test]
fn tox_new_with_a_socks5_proxy_reaches_a_relay_through_it() {
    through(Tox_Proxy_Type::SOCKS5, 37861);
}

#[test]
fn tox_new_with_an_http_proxy_reaches_a_relay_through_it() {
    through(Tox_Proxy_Type::HTTP, 37871);
}
