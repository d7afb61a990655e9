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
