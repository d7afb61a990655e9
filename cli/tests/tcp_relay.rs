//! `rustox bootstrap --tcp-ports` as a process: it listens on every port given, and two
//! clients made from the relay wire module (`relay_probe`) route to each other through it,
//! one on each port, and exchange data.

mod common;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::Stdio;

use common::{line_after, rustox, start_bootstrap, succeeded, Receiver, Scratch};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rustox_auto_tests::relay_probe::RelayProbe;
use rustox_core::relay::wire::Packet;
use rustox_net_crypto::crypto::PublicKey;

#[test]
fn bootstrap_serves_a_tcp_relay_on_each_port_given() {
    let dir = Scratch::new("tcp-relay");
    let (mut boot, key) = start_bootstrap(
        0,
        &dir.path("boot.keys"),
        &["--tcp-ports", "0,0"],
        Stdio::piped(),
    );
    let pk = PublicKey::from_hex(&key).expect("the node prints its key");
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
    let (_boot, boot_key) =
        start_bootstrap(BOOTSTRAP_PORT, &dir.path("boot.keys"), &[], Stdio::null());
    let node = format!("127.0.0.1:{BOOTSTRAP_PORT}:{boot_key}");

    let inbox = dir.path("inbox");
    let mut recv = Receiver::start_with(
        &inbox,
        &dir.path("recv.key"),
        &["--tcp-port", "0", "--bootstrap", &node],
        Stdio::null(),
    );
    let key = recv.key.clone();
    let tox_id = line_after(&mut recv.stdout, "tox id ");
    let tcp_port: u16 = line_after(&mut recv.stdout, "tcp relay on port ")
        .parse()
        .expect("a port");
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
    let sent = succeeded(&send, "send");
    assert_eq!(sent["bytes"], SIZE as u64);
    eprintln!(
        "friend online through the receiver's relay after {} s",
        sent["friend_online_seconds"]
    );
    let status = common::wait_with_limit(&mut recv.child, std::time::Duration::from_secs(30));
    assert!(status.success(), "recv failed");
    let copy = std::fs::read(inbox.join("payload.bin")).expect("received file exists");
    assert!(copy == original, "received file differs from the original");
}
