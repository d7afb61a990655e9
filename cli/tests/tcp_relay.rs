//! `rustox bootstrap --tcp-ports` as a process: it listens on every port given, and two
//! clients made from the relay wire module (`relay_probe`) route to each other through it,
//! one on each port, and exchange data.

mod common;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::Stdio;

use common::{rustox, Killed, Scratch};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rustox_auto_tests::relay_probe::RelayProbe;
use rustox_core::relay::wire::Packet;
use rustox_net_crypto::crypto::PublicKey;

#[test]
fn bootstrap_serves_a_tcp_relay_on_each_port_given() {
    let dir = Scratch::new("tcp-relay");
    let mut boot = Killed(
        rustox()
            .args(["bootstrap", "--bind", "127.0.0.1", "--port", "0"])
            .args(["--tcp-ports", "0,0", "--keys"])
            .arg(dir.path("boot.keys"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn rustox bootstrap"),
    );
    let mut key = String::new();
    BufReader::new(boot.0.stdout.take().expect("stdout"))
        .read_line(&mut key)
        .expect("its key");
    let pk = PublicKey::from_hex(key.trim()).expect("the node prints its key");
    let mut err = BufReader::new(boot.0.stderr.take().expect("stderr"));
    let ports: Vec<SocketAddr> = loop {
        let mut line = String::new();
        assert!(
            err.read_line(&mut line).expect("stderr") > 0,
            "no relay line"
        );
        if let Some(list) = line.trim().strip_prefix("rustox bootstrap: TCP relay on ") {
            break list
                .split(", ")
                .map(|a| a.parse().expect("an address"))
                .collect();
        }
    };
    assert_eq!(ports.len(), 2, "{ports:?}");

    let mut rng = StdRng::seed_from_u64(3);
    let mut a = RelayProbe::connect(ports[0], &pk, &mut rng).expect("a connects");
    let mut b = RelayProbe::connect(ports[1], &pk, &mut rng).expect("b connects");
    let ab = a.route(b.keys.public).expect("a's route");
    let ba = b.route(a.keys.public).expect("b's route");
    b.wait_connected(ba).expect("b linked");
    a.wait_connected(ab).expect("a linked");
    for i in 0..100u8 {
        let payload = vec![i; 1 + usize::from(i) * 10];
        a.send(&Packet::Data {
            conn_id: ab,
            payload: &payload,
        })
        .expect("send");
        assert_eq!(
            b.recv().expect("recv"),
            Packet::Data {
                conn_id: ba,
                payload: &payload
            }
            .to_vec()
        );
    }
    b.send(&Packet::OobSend {
        dest: a.keys.public,
        data: b"hello",
    })
    .expect("oob");
    assert_eq!(
        a.recv().expect("recv"),
        Packet::OobRecv {
            sender: b.keys.public,
            data: b"hello"
        }
        .to_vec()
    );
}

/// `rustox recv --tcp-port` runs a relay under its key (as a c-toxcore client started with
/// `tcp_port`): a `rustox send --no-udp` whose only way in is that relay (and a bootstrap
/// node as its onion path node, as c-toxcore's `tox_many_tcp_test` gives its UDP-off
/// clients) finds the receiver by Tox ID through it and sends a file over TCP.
#[test]
fn recv_with_tcp_port_is_the_relay_a_udp_off_sender_reaches_it_through() {
    const SIZE: usize = 256 * 1024;
    /// Outside Tox's default range and the other tests' ports.
    const BOOTSTRAP_PORT: u16 = 36960;
    let dir = Scratch::new("recv-tcp-port");
    let original = common::write_pattern(&dir.path("payload.bin"), SIZE, 0x7c9);
    let mut boot = Killed(
        rustox()
            .args(["bootstrap", "--bind", "127.0.0.1", "--port"])
            .arg(BOOTSTRAP_PORT.to_string())
            .arg("--keys")
            .arg(dir.path("boot.keys"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn rustox bootstrap"),
    );
    let mut boot_key = String::new();
    BufReader::new(boot.0.stdout.take().expect("stdout"))
        .read_line(&mut boot_key)
        .expect("its key");
    let node = format!("127.0.0.1:{BOOTSTRAP_PORT}:{}", boot_key.trim());

    let inbox = dir.path("inbox");
    let mut recv = Killed(
        rustox()
            .args([
                "recv",
                "--listen",
                "127.0.0.1:0",
                "--once",
                "--tcp-port",
                "0",
            ])
            .args(["--bootstrap", &node])
            .arg("--out")
            .arg(&inbox)
            .arg("--key-file")
            .arg(dir.path("recv.key"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn rustox recv"),
    );
    let mut out = BufReader::new(recv.0.stdout.take().expect("stdout"));
    let mut field = |prefix: &str| loop {
        let mut line = String::new();
        assert!(
            out.read_line(&mut line).expect("stdout") > 0,
            "recv exited before printing {prefix:?}"
        );
        if let Some(rest) = line.trim().strip_prefix(prefix) {
            break rest.to_string();
        }
    };
    let key = field("public key ");
    let tox_id = field("tox id ");
    let tcp_port: u16 = field("tcp relay on port ").parse().expect("a port");
    assert_ne!(tcp_port, 0);

    let send = common::run_with_limit(
        rustox()
            .args(["send", "--to", &tox_id, "--no-udp"])
            .args(["--tcp-relay", &format!("127.0.0.1:{tcp_port}:{key}")])
            .args(["--bootstrap", &node])
            .args(["--find-timeout", "40"])
            .arg(dir.path("payload.bin")),
        std::time::Duration::from_secs(90),
    );
    assert!(
        send.status.success(),
        "send failed: {}",
        String::from_utf8_lossy(&send.stderr)
    );
    let sent = common::last_json(&String::from_utf8_lossy(&send.stdout));
    assert_eq!(sent["bytes"], SIZE as u64);
    eprintln!(
        "friend online through the receiver's relay after {} s",
        sent["friend_online_seconds"]
    );
    let status = common::wait_with_limit(&mut recv.0, std::time::Duration::from_secs(30));
    assert!(status.success(), "recv failed");
    let copy = std::fs::read(inbox.join("payload.bin")).expect("received file exists");
    assert!(copy == original, "received file differs from the original");
}
