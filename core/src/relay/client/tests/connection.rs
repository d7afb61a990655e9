//! One [`RelayConnection`] against a relay played by hand with the wire module: every
//! packet the client sends is decoded, every packet the relay sends is sealed here.

use super::*;
use crate::relay::client::connection::{
    ConnectionStats, MAX_CONNECTION_EVENTS, MAX_DATA_SIZE, MAX_ONION_REQUEST_SIZE,
};
use crate::relay::client::routes::{RouteRequestError, RouteStatus};
use crate::relay::wire::packet::MAX_OOB_DATA_LENGTH;
use crate::relay::wire::{AcceptedHello, HandshakeError, CLIENT_HELLO_SIZE, SERVER_REPLY_SIZE};

/// A client connection and the relay's end of its session.
struct Pair {
    conn: RelayConnection,
    /// The relay's sealer and opener.
    enc: FrameEncoder,
    dec: FrameDecoder,
    /// The id of the ping sent with the handshake.
    first_ping: u64,
    rng: ChaCha8Rng,
}

fn peer(n: u8) -> PublicKey {
    KeyPair::generate(&mut ChaCha8Rng::seed_from_u64(u64::from(n) + 500)).public
}

/// A connection whose hello the relay accepted; the reply not yet delivered.
fn hello(config: ConnectionConfig) -> (RelayConnection, AcceptedHello, ChaCha8Rng) {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let ours = KeyPair::generate(&mut rng);
    let relay = KeyPair::generate(&mut rng);
    let conn = RelayConnection::new(START, &ours, relay.public, config, &mut rng).unwrap();
    let hello = conn.poll_write().to_vec();
    assert_eq!(hello.len(), CLIENT_HELLO_SIZE);
    let accepted = accept_hello(&relay.secret, &hello, &mut rng).unwrap();
    assert_eq!(accepted.client_pk, ours.public);
    (conn, accepted, rng)
}

impl Pair {
    fn new() -> Self {
        Self::with_config(ConnectionConfig::default())
    }

    fn with_config(config: ConnectionConfig) -> Self {
        let (mut conn, accepted, rng) = hello(config);
        conn.consume(CLIENT_HELLO_SIZE);
        conn.handle_bytes(START, &accepted.reply).unwrap();
        assert_eq!(conn.poll_event(), Some(ConnectionEvent::Established));
        let (enc, dec) = accepted.keys.split();
        let mut pair = Pair {
            conn,
            enc,
            dec,
            first_ping: 0,
            rng,
        };
        // The first ping goes out with the handshake.
        let sent = pair.sent();
        let [Packet::Ping { ping_id }] = sent[..] else {
            panic!("the first ping: {sent:?}");
        };
        pair.first_ping = ping_id;
        pair
    }

    /// Packets the client wrote since the last call, as the relay reads them.
    fn sent(&mut self) -> Vec<Packet<'static>> {
        let mut bytes = Vec::new();
        while !self.conn.poll_write().is_empty() {
            let record = self.conn.poll_write().to_vec();
            self.conn.consume(record.len());
            bytes.extend_from_slice(&record);
        }
        let mut input: &[u8] = &bytes;
        let mut out = Vec::new();
        while let Some(p) = self.dec.decode(&mut input).unwrap() {
            let owned: &'static [u8] = Box::leak(p.to_vec().into_boxed_slice());
            out.push(Packet::parse(owned).unwrap());
        }
        out
    }

    /// The relay sends `packets`; the client's verdict.
    fn deliver(&mut self, packets: &[Packet<'_>]) -> Result<(), ConnectionError> {
        let mut bytes = Vec::new();
        for p in packets {
            self.enc.encode(&p.to_vec(), &mut bytes).unwrap();
        }
        self.conn.handle_bytes(START, &bytes)
    }

    fn events(&mut self) -> Vec<ConnectionEvent> {
        std::iter::from_fn(|| self.conn.poll_event()).collect()
    }
}

#[test]
fn reply_and_frames_in_odd_pieces_establish_the_session() {
    let (mut conn, accepted, _) = hello(ConnectionConfig::default());
    conn.consume(CLIENT_HELLO_SIZE);
    let (mut enc, mut dec) = accepted.keys.split();
    let mut stream = accepted.reply.to_vec();
    enc.encode(&Packet::Ping { ping_id: 42 }.to_vec(), &mut stream)
        .unwrap();
    for piece in stream.chunks(7) {
        conn.handle_bytes(START, piece).unwrap();
    }
    assert_eq!(conn.poll_event(), Some(ConnectionEvent::Established));
    assert!(conn.is_established());
    let bytes = conn.poll_write().to_vec();
    let mut input: &[u8] = &bytes;
    let first = Packet::parse(dec.decode(&mut input).unwrap().unwrap())
        .unwrap()
        .id();
    assert_eq!(first, 4, "our first ping");
    let pong = dec.decode(&mut input).unwrap().unwrap().to_vec();
    assert_eq!(Packet::parse(&pong), Ok(Packet::Pong { ping_id: 42 }));
}

#[test]
fn a_reply_that_does_not_open_fails_for_good() {
    let (mut conn, _, _) = hello(ConnectionConfig::default());
    let junk = [0x55; SERVER_REPLY_SIZE];
    let err = ConnectionError::Handshake(HandshakeError::Decrypt);
    assert_eq!(conn.handle_bytes(START, &junk), Err(err));
    assert_eq!(conn.failure(), Some(err));
    assert_eq!(conn.handle_bytes(START, &[1, 2, 3]), Err(err));
    assert_eq!(conn.poll_timeout(), None);
    assert_eq!(conn.send_oob(&peer(1), b"x"), Err(SendError::Failed(err)));
}

#[test]
fn the_handshake_must_finish_10_s_after_the_start() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let ours = KeyPair::generate(&mut rng);
    let mut conn =
        RelayConnection::new(START, &ours, peer(9), ConnectionConfig::default(), &mut rng).unwrap();
    assert_eq!(conn.poll_timeout(), Some(START + TCP_CONNECTION_TIMEOUT));
    let almost = START + TCP_CONNECTION_TIMEOUT - Duration::from_micros(1);
    assert_eq!(conn.handle_timeout(almost, &mut rng), Ok(()));
    assert_eq!(
        conn.handle_timeout(START + TCP_CONNECTION_TIMEOUT, &mut rng),
        Err(ConnectionError::HandshakeTimeout)
    );
}

#[test]
fn nothing_is_sent_before_the_handshake() {
    let (mut conn, _, _) = hello(ConnectionConfig::default());
    assert_eq!(conn.request_route(peer(1)), Err(SendError::NotEstablished));
    assert_eq!(
        conn.send_oob(&peer(1), b"x"),
        Err(SendError::NotEstablished)
    );
    assert_eq!(conn.poll_write().len(), CLIENT_HELLO_SIZE, "only the hello");
}

#[test]
fn a_route_from_request_to_data_and_back_down() {
    let mut p = Pair::new();
    let b = peer(1);
    p.conn.request_route(b).unwrap();
    assert_eq!(p.sent(), vec![Packet::RoutingRequest { pk: b }]);
    assert_eq!(p.conn.route_status(&b), Some(RouteStatus::Requested));
    assert_eq!(
        p.conn.request_route(b),
        Err(SendError::Route(RouteRequestError::Exists))
    );
    p.deliver(&[Packet::RoutingResponse { conn_id: 17, pk: b }])
        .unwrap();
    assert_eq!(p.conn.route_status(&b), Some(RouteStatus::Registered(17)));
    assert_eq!(p.conn.send_data(&b, b"x"), Err(SendError::NoRoute));
    p.deliver(&[Packet::ConnectNotification { conn_id: 17 }])
        .unwrap();
    assert_eq!(p.events(), vec![ConnectionEvent::RouteOnline(b)]);
    p.conn.send_data(&b, b"\x1bout").unwrap();
    assert_eq!(
        p.sent(),
        vec![Packet::Data {
            conn_id: 17,
            payload: b"\x1bout"
        }]
    );
    p.deliver(&[Packet::Data {
        conn_id: 17,
        payload: b"\x1bin",
    }])
    .unwrap();
    assert_eq!(
        p.events(),
        vec![ConnectionEvent::Data {
            from: b,
            data: b"\x1bin".to_vec()
        }]
    );
    p.deliver(&[Packet::DisconnectNotification { conn_id: 17 }])
        .unwrap();
    assert_eq!(p.events(), vec![ConnectionEvent::RouteOffline(b)]);
    assert_eq!(p.conn.route_status(&b), Some(RouteStatus::Registered(17)));
    p.conn.remove_route(&b).unwrap();
    assert_eq!(
        p.sent(),
        vec![Packet::DisconnectNotification { conn_id: 17 }]
    );
    assert_eq!(p.conn.route_status(&b), None);
}

#[test]
fn a_route_given_up_before_its_answer_is_released_when_it_comes() {
    let mut p = Pair::new();
    let b = peer(1);
    p.conn.request_route(b).unwrap();
    p.conn.remove_route(&b).unwrap();
    assert_eq!(p.sent(), vec![Packet::RoutingRequest { pk: b }]);
    p.deliver(&[Packet::RoutingResponse { conn_id: 20, pk: b }])
        .unwrap();
    assert_eq!(
        p.sent(),
        vec![Packet::DisconnectNotification { conn_id: 20 }]
    );
    assert_eq!(p.events(), vec![]);
    // An answer nobody asked for is released the same way.
    p.deliver(&[Packet::RoutingResponse {
        conn_id: 30,
        pk: peer(2),
    }])
    .unwrap();
    assert_eq!(
        p.sent(),
        vec![Packet::DisconnectNotification { conn_id: 30 }]
    );
}

#[test]
fn a_refusal_is_reported_and_the_slot_ids_of_others_are_ignored() {
    let mut p = Pair::new();
    let b = peer(1);
    p.conn.request_route(b).unwrap();
    p.deliver(&[Packet::RoutingResponse { conn_id: 0, pk: b }])
        .unwrap();
    assert_eq!(p.events(), vec![ConnectionEvent::RouteRefused(b)]);
    assert_eq!(p.conn.route_status(&b), Some(RouteStatus::Refused));
    // Notifications and data for ids we do not hold change nothing.
    p.deliver(&[
        Packet::ConnectNotification { conn_id: 99 },
        Packet::DisconnectNotification { conn_id: 99 },
        Packet::Data {
            conn_id: 99,
            payload: b"x",
        },
    ])
    .unwrap();
    assert_eq!(p.events(), vec![]);
    assert_eq!(p.conn.stats().unknown_route, 1);
}

#[test]
fn oob_both_ways_and_its_size_limits() {
    let mut p = Pair::new();
    let b = peer(1);
    assert_eq!(p.conn.send_oob(&b, &[]), Err(SendError::Size(0)));
    assert_eq!(
        p.conn.send_oob(&b, &[1; MAX_OOB_DATA_LENGTH + 1]),
        Err(SendError::Size(MAX_OOB_DATA_LENGTH + 1))
    );
    p.conn.send_oob(&b, &[1; MAX_OOB_DATA_LENGTH]).unwrap();
    assert_eq!(
        p.sent(),
        vec![Packet::OobSend {
            dest: b,
            data: &[1; MAX_OOB_DATA_LENGTH]
        }]
    );
    p.deliver(&[Packet::OobRecv {
        sender: b,
        data: b"\x18hi",
    }])
    .unwrap();
    assert_eq!(
        p.events(),
        vec![ConnectionEvent::Oob {
            from: b,
            data: b"\x18hi".to_vec()
        }]
    );
}

#[test]
fn data_and_onion_size_limits() {
    let mut p = Pair::new();
    let b = peer(1);
    p.conn.request_route(b).unwrap();
    p.deliver(&[
        Packet::RoutingResponse { conn_id: 16, pk: b },
        Packet::ConnectNotification { conn_id: 16 },
    ])
    .unwrap();
    p.sent();
    assert_eq!(p.conn.send_data(&b, &[]), Err(SendError::Size(0)));
    p.conn.send_data(&b, &[2; MAX_DATA_SIZE]).unwrap();
    assert_eq!(
        p.conn.send_data(&b, &[2; MAX_DATA_SIZE + 1]),
        Err(SendError::Size(MAX_DATA_SIZE + 1))
    );
    p.conn.send_onion(&[3; MAX_ONION_REQUEST_SIZE]).unwrap();
    assert_eq!(
        p.conn.send_onion(&[3; MAX_ONION_REQUEST_SIZE + 1]),
        Err(SendError::Size(MAX_ONION_REQUEST_SIZE + 1))
    );
    let sent = p.sent();
    assert_eq!(sent.len(), 2, "the largest of each fits one frame");
}

#[test]
fn forwarding_packets_are_dropped_and_counted() {
    let mut p = Pair::new();
    p.deliver(&[Packet::Forwarding { data: b"x" }]).unwrap();
    assert_eq!(p.events(), vec![]);
    assert_eq!(
        p.conn.stats(),
        ConnectionStats {
            frames_in: 1,
            frames_out: 1,
            forwarding: 1,
            ..ConnectionStats::default()
        }
    );
}

#[test]
fn a_relay_that_reads_nothing_stalls_the_connection_and_nothing_grows() {
    let mut p = Pair::with_config(ConnectionConfig { output_limit: 200 });
    // Routing requests are control frames: they may fill the reserve, then the
    // connection is declared stalled rather than queueing more.
    let mut n = 0u64;
    let err = loop {
        let b = KeyPair::generate(&mut p.rng).public;
        match p.conn.request_route(b) {
            Ok(()) => n += 1,
            Err(e) => break e,
        }
        assert!(n < 1000);
    };
    assert_eq!(err, SendError::Failed(ConnectionError::Stalled));
    assert_eq!(p.conn.failure(), Some(ConnectionError::Stalled));
    assert!(p.conn.queued() <= 200 + CONTROL_RESERVE);
    assert!(p.conn.queued() + 51 > 200 + CONTROL_RESERVE);
}

#[test]
fn events_wait_in_a_bounded_queue() {
    let mut p = Pair::new();
    let b = peer(1);
    let many: Vec<Packet<'_>> = (0..MAX_CONNECTION_EVENTS + 10)
        .map(|_| Packet::OobRecv {
            sender: b,
            data: b"x",
        })
        .collect();
    p.deliver(&many).unwrap();
    assert_eq!(p.events().len(), MAX_CONNECTION_EVENTS);
    assert_eq!(p.conn.stats().events_dropped, 10);
}

#[test]
fn the_relays_ping_is_answered_and_our_unanswered_one_kills_after_10_s() {
    let mut p = Pair::new();
    p.deliver(&[Packet::Ping { ping_id: 5 }]).unwrap();
    assert_eq!(p.sent(), vec![Packet::Pong { ping_id: 5 }]);
    // Our first ping (with the handshake) is unanswered: dead 10 s later.
    assert_eq!(p.conn.poll_timeout(), Some(START + TCP_PING_TIMEOUT));
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    assert_eq!(
        p.conn.handle_timeout(START + TCP_PING_TIMEOUT, &mut rng),
        Err(ConnectionError::PingTimeout)
    );
}

#[test]
fn our_pings_go_out_every_30_s_while_answered() {
    let mut p = Pair::new();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut id = p.first_ping;
    let mut now = START;
    for _ in 0..5 {
        p.deliver(&[Packet::Pong { ping_id: id }]).unwrap();
        assert_eq!(p.conn.poll_timeout(), Some(now + TCP_PING_FREQUENCY));
        now += TCP_PING_FREQUENCY;
        p.conn.handle_timeout(now, &mut rng).unwrap();
        let sent = p.sent();
        let [Packet::Ping { ping_id }] = sent[..] else {
            panic!("one ping: {sent:?}");
        };
        assert_ne!(ping_id, id);
        id = ping_id;
    }
    // A pong with another id does not count.
    p.deliver(&[Packet::Pong { ping_id: id ^ 1 }]).unwrap();
    assert_eq!(
        p.conn.handle_timeout(now + TCP_PING_TIMEOUT, &mut rng),
        Err(ConnectionError::PingTimeout)
    );
}
