//! The real-socket link emulator (`rustox_auto_tests::emulator`): real UDP datagrams between
//! two network namespaces go through the simulator's link models.
//!
//! These tests need root and `/dev/net/tun`. Without them they skip with a message, except
//! under CI (`CI` set), where a missing prerequisite is a failure: CI must run them.
//!
//! Each test builds its own testbed (its own namespaces), so they run in parallel. They
//! assert what the link model decided against what real sockets saw, never the host's
//! speed: arrival times are checked only as lower bounds (a slow host can only make
//! packets later) and rates only through the model's own timestamps.

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use nix::sys::socket::{setsockopt, sockopt};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rustox_auto_tests::emulator::{
    check_prerequisites, EmulatorReport, Side, Testbed, TestbedConfig, NAMESPACE_PREFIX,
};
use rustox_simulator::{BottleneckConfig, LinkConfig, LossModel};

/// Receive buffer forced on test receivers (root may exceed `rmem_max`): a whole test's
/// datagrams fit, so the kernel never drops one the link model delivered.
const RECEIVE_BUFFER: usize = 8 << 20;

/// Largest UDP payload in one 1500-byte IPv4 packet.
const MAX_PAYLOAD: usize = 1500 - 28;

/// A testbed, or `None` (with a message) when this host cannot build one outside CI.
fn testbed(config: TestbedConfig) -> Option<Testbed> {
    if let Err(why) = check_prerequisites() {
        if std::env::var_os("CI").is_some() {
            panic!("CI must run the emulator tests, but: {why}");
        }
        eprintln!("skipping: {why}");
        return None;
    }
    Some(Testbed::new(config).expect("testbed"))
}

/// A sender socket in A and a receiver socket in B (port chosen by the OS).
fn sockets(bed: &Testbed) -> (UdpSocket, UdpSocket, SocketAddr) {
    let tx = bed.udp_socket(Side::A, 0).expect("socket in A");
    let rx = bed.udp_socket(Side::B, 0).expect("socket in B");
    setsockopt(&rx, sockopt::RcvBufForce, &RECEIVE_BUFFER).expect("receive buffer");
    let to = rx.local_addr().expect("address");
    (tx, rx, to)
}

/// Longest a test waits for its datagrams: only reached if something is broken.
const RECEIVE_DEADLINE: Duration = Duration::from_secs(10);

/// Datagrams received, with their receive times, until the emulator has taken in `sent`
/// datagrams from A, released every one its link model let through, and `rx` holds them
/// all: no guess at how long the host needs, however loaded it is.
fn receive_all(rx: &UdpSocket, bed: &Testbed, sent: u64) -> Vec<(Vec<u8>, Instant)> {
    rx.set_read_timeout(Some(Duration::from_millis(20)))
        .expect("timeout");
    let deadline = Instant::now() + RECEIVE_DEADLINE;
    let mut buf = vec![0u8; 65_536];
    let mut got = Vec::new();
    while Instant::now() < deadline {
        match rx.recv(&mut buf) {
            Ok(n) => got.push((buf[..n].to_vec(), Instant::now())),
            Err(_) => {
                let fwd = bed.stats().a_to_b;
                if fwd.link.packets_in >= sent
                    && fwd.packets_released >= fwd.link.packets_out
                    && got.len() as u64 >= fwd.packets_released
                {
                    break;
                }
            }
        }
    }
    got
}

/// The sequence number in a datagram's first four bytes.
fn seq_of(datagram: &[u8]) -> u32 {
    u32::from_be_bytes(datagram[..4].try_into().expect("4 bytes"))
}

/// A datagram of `len` (≥ 4) bytes: `seq`, then seeded random bytes.
fn datagram(seq: u32, len: usize, rng: &mut ChaCha8Rng) -> Vec<u8> {
    let mut d = vec![0u8; len];
    rng.fill(&mut d[4..]);
    d[..4].copy_from_slice(&seq.to_be_bytes());
    d
}

/// Names of the network namespaces `ip netns` knows.
fn namespaces() -> Vec<String> {
    std::fs::read_dir("/run/netns")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn finish(bed: Testbed) -> EmulatorReport {
    bed.finish().expect("emulator report")
}

#[test]
fn datagrams_arrive_byte_exact_and_in_order() {
    let link = LinkConfig::with_delay(Duration::from_millis(5));
    let Some(bed) = testbed(TestbedConfig::symmetric(link, 1)) else {
        return;
    };
    let (tx, rx, to) = sockets(&bed);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut sent = Vec::new();
    for seq in 0..400u32 {
        // Every size from the smallest to a full MTU occurs.
        let len = match seq {
            0 => 4,
            1 => MAX_PAYLOAD,
            _ => rng.gen_range(4..=MAX_PAYLOAD),
        };
        let d = datagram(seq, len, &mut rng);
        tx.send_to(&d, to).expect("send");
        sent.push(d);
    }
    let got = receive_all(&rx, &bed, sent.len() as u64);
    let report = finish(bed);
    assert_eq!(got.len(), sent.len(), "every datagram arrives once");
    for (i, (d, _)) in got.iter().enumerate() {
        assert_eq!(
            seq_of(d) as usize,
            i,
            "no reordering without a reorder model"
        );
        assert_eq!(d, &sent[i], "datagram {i} arrives byte for byte");
    }
    let fwd = &report.stats.a_to_b;
    assert_eq!(fwd.link.packets_in, 400, "only our datagrams crossed");
    let ip_bytes: u64 = sent.iter().map(|d| d.len() as u64 + 28).sum();
    assert_eq!(
        fwd.link.bytes_in, ip_bytes,
        "the link counts IP packet sizes"
    );
    assert_eq!(fwd.bytes_released, ip_bytes);
    assert_eq!(fwd.write_errors + fwd.pending_overflow, 0);
}

#[test]
fn nothing_arrives_before_the_one_way_delay() {
    let delay = Duration::from_millis(40);
    let Some(bed) = testbed(TestbedConfig::symmetric(LinkConfig::with_delay(delay), 2)) else {
        return;
    };
    let (tx, rx, to) = sockets(&bed);
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let mut sent_at = Vec::new();
    for seq in 0..60u32 {
        sent_at.push(Instant::now());
        tx.send_to(&datagram(seq, 200, &mut rng), to).expect("send");
        if seq % 10 == 9 {
            std::thread::sleep(Duration::from_millis(3));
        }
    }
    let got = receive_all(&rx, &bed, 60);
    finish(bed);
    assert_eq!(got.len(), 60);
    for (d, at) in &got {
        let seq = seq_of(d) as usize;
        let transit = at.duration_since(sent_at[seq]);
        assert!(
            transit >= delay,
            "datagram {seq} took {transit:?} < {delay:?}"
        );
    }
}

#[test]
fn random_loss_received_equals_sent_minus_model_drops() {
    let link = LinkConfig {
        delay: Duration::from_millis(2),
        loss: LossModel::Random(0.2),
        record_samples: true,
        ..LinkConfig::default()
    };
    let Some(bed) = testbed(TestbedConfig::symmetric(link, 3)) else {
        return;
    };
    let (tx, rx, to) = sockets(&bed);
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let sent = 1000u32;
    for seq in 0..sent {
        tx.send_to(&datagram(seq, 100, &mut rng), to).expect("send");
    }
    let got = receive_all(&rx, &bed, u64::from(sent));
    let report = finish(bed);
    let link = report.stats.a_to_b.link;
    assert_eq!(link.packets_in, u64::from(sent));
    assert!(
        (100..300).contains(&link.dropped_loss),
        "about 20 % dropped by the model: {}",
        link.dropped_loss
    );
    assert_eq!(got.len() as u64, u64::from(sent) - link.dropped_loss);
    // And exactly the ones the model let through: its samples are those packets.
    assert_eq!(report.a_to_b.samples.len(), got.len());
}

#[test]
fn a_burst_beyond_the_queue_is_tail_dropped() {
    // 1000-byte IP packets at 40 kbit/s: 200 ms each, far longer than the burst takes to
    // reach the emulator, so the queue (5 packets) is full when the 6th arrives.
    let link = LinkConfig {
        delay: Duration::from_millis(1),
        bottleneck: Some(BottleneckConfig {
            rate_bps: 40_000,
            queue_bytes: 5_000,
        }),
        ..LinkConfig::default()
    };
    let Some(bed) = testbed(TestbedConfig::symmetric(link, 4)) else {
        return;
    };
    let (tx, rx, to) = sockets(&bed);
    let mut rng = ChaCha8Rng::seed_from_u64(10);
    for seq in 0..25u32 {
        tx.send_to(&datagram(seq, 1000 - 28, &mut rng), to)
            .expect("send");
    }
    let got = receive_all(&rx, &bed, 25);
    let report = finish(bed);
    let link = report.stats.a_to_b.link;
    assert_eq!(link.dropped_queue, 20, "25 offered, 5 fit");
    let seqs: Vec<u32> = got.iter().map(|(d, _)| seq_of(d)).collect();
    assert_eq!(seqs, vec![0, 1, 2, 3, 4], "drop-tail keeps the first five");
}

#[test]
fn throughput_never_exceeds_the_configured_rate() {
    let rate_bps = 2_000_000;
    let link = LinkConfig {
        delay: Duration::from_millis(5),
        bottleneck: Some(BottleneckConfig {
            rate_bps,
            queue_bytes: 30_000,
        }),
        record_samples: true,
        ..LinkConfig::default()
    };
    let Some(bed) = testbed(TestbedConfig::symmetric(link, 5)) else {
        return;
    };
    let (tx, rx, to) = sockets(&bed);
    let origin = bed.origin();
    let got = std::thread::scope(|scope| {
        let receiver = scope.spawn(|| receive_all(&rx, &bed, 600));
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        // Offered: 1000-byte packets every 1 ms (8 Mbit/s) for 0.6 s, four times the rate.
        for seq in 0..600u32 {
            tx.send_to(&datagram(seq, 1000 - 28, &mut rng), to)
                .expect("send");
            std::thread::sleep(Duration::from_millis(1));
        }
        receiver.join().expect("receiver")
    });
    let report = finish(bed);
    let link = report.stats.a_to_b.link;
    assert!(
        link.dropped_queue > 0,
        "the offered load overflowed the queue"
    );
    assert_eq!(
        got.len() as u64,
        link.packets_out,
        "all the model delivered arrived"
    );
    let received_ip_bytes: u64 = got.iter().map(|(d, _)| d.len() as u64 + 28).sum();
    assert_eq!(received_ip_bytes, link.bytes_out);
    // Model arrival times (entry + transit) of what arrived: after the first packet, the
    // bytes delivered by time t never exceed rate × (t − first arrival).
    let arrivals: Vec<u64> = report
        .a_to_b
        .samples
        .iter()
        .map(|s| s.entered.as_micros() + u64::from(s.transit_us))
        .collect();
    // And no datagram reached the receiver before its model arrival time (samples and
    // receptions are both in sequence order), so what the receiver saw is bounded alike.
    for (i, ((_, received), at_us)) in got.iter().zip(&arrivals).enumerate() {
        let received_us = received.duration_since(origin).as_micros() as u64;
        assert!(
            received_us >= *at_us,
            "datagram {i} received at {received_us} µs, due at {at_us} µs"
        );
    }
    let first = arrivals[0];
    let mut delivered_bits = 0u64;
    for &at in &arrivals[1..] {
        delivered_bits += 1000 * 8;
        let allowed = (rate_bps as f64 * (at - first) as f64 / 1e6).ceil() as u64 + 8;
        assert!(
            delivered_bits <= allowed,
            "{delivered_bits} bits by {} µs",
            at - first
        );
    }
    // The link was busy: the bytes arrived at the rate, not below it.
    let span_s = (arrivals[arrivals.len() - 1] - first) as f64 / 1e6;
    let rate = delivered_bits as f64 / span_s;
    assert!(rate > 0.99 * rate_bps as f64, "{rate}");
}

#[test]
fn teardown_removes_namespaces_and_stale_ones_of_dead_processes() {
    let Some(bed) = testbed(TestbedConfig::symmetric(LinkConfig::default(), 6)) else {
        return;
    };
    let names = [
        bed.namespace(Side::A).to_owned(),
        bed.namespace(Side::B).to_owned(),
    ];
    // A leftover of a process that no longer exists (pid numbers stop below 2^22).
    let stale = format!("{NAMESPACE_PREFIX}4194999-0-a");
    let status = std::process::Command::new("ip")
        .args(["netns", "add", &stale])
        .status()
        .expect("ip netns add");
    assert!(status.success());
    drop(bed);
    let after = namespaces();
    for name in &names {
        assert!(!after.contains(name), "{name} still exists");
    }
    // The next testbed clears the stale namespace.
    let Some(bed) = testbed(TestbedConfig::symmetric(LinkConfig::default(), 7)) else {
        return;
    };
    drop(bed);
    assert!(!namespaces().contains(&stale), "{stale} was not cleaned up");
}

#[test]
fn flows_are_counted_apart() {
    let Some(bed) = testbed(TestbedConfig::symmetric(
        LinkConfig::with_delay(Duration::from_millis(1)),
        8,
    )) else {
        return;
    };
    let (tx1, rx, to) = sockets(&bed);
    let tx2 = bed.udp_socket(Side::A, 0).expect("second socket");
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    for seq in 0..30u32 {
        tx1.send_to(&datagram(seq, 500, &mut rng), to)
            .expect("send");
        if seq < 10 {
            tx2.send_to(&datagram(seq, 300, &mut rng), to)
                .expect("send");
        }
    }
    let got = receive_all(&rx, &bed, 40);
    let report = finish(bed);
    assert_eq!(got.len(), 40);
    let by_port: HashMap<u16, u64> = report
        .stats
        .a_to_b
        .flows
        .iter()
        .map(|f| (f.flow.src.port(), f.bytes))
        .collect();
    let p1 = tx1.local_addr().expect("addr").port();
    let p2 = tx2.local_addr().expect("addr").port();
    assert_eq!(by_port.get(&p1), Some(&(30 * 528)));
    assert_eq!(by_port.get(&p2), Some(&(10 * 328)));
    assert_eq!(by_port.len(), 2);
}

#[test]
fn the_plain_link_delays_and_drops_tail_in_bytes_ignoring_the_profile_loss() {
    // 10 Mbit/s (1500 bytes = 1.2 ms) and a queue of ten full packets; the profile's 50 %
    // loss is not the plain link's business.
    let link = LinkConfig {
        delay: Duration::from_millis(20),
        loss: LossModel::Random(0.5),
        bottleneck: Some(BottleneckConfig {
            rate_bps: 10_000_000,
            queue_bytes: 15_000,
        }),
        record_samples: true,
        ..LinkConfig::default()
    };
    let mut config = TestbedConfig::symmetric(link, 4);
    config.options.plain = true;
    let Some(bed) = testbed(config) else {
        return;
    };
    let (tx, rx, to) = sockets(&bed);
    let mut rng = ChaCha8Rng::seed_from_u64(10);
    let start = Instant::now();
    let sent = 60u32;
    for seq in 0..sent {
        tx.send_to(&datagram(seq, MAX_PAYLOAD, &mut rng), to)
            .expect("send");
    }
    let got = receive_all(&rx, &bed, u64::from(sent));
    let report = finish(bed);
    let link = report.stats.a_to_b.link;
    assert_eq!(link.packets_in, u64::from(sent));
    assert_eq!(link.dropped_loss, 0, "no random loss on the plain link");
    assert!(link.dropped_queue > 0, "60 packets at once overflow 15 kB");
    assert_eq!(link.packets_out + link.dropped_queue, u64::from(sent));
    assert_eq!(got.len() as u64, link.packets_out, "what passed arrived");
    let first = got.first().expect("some arrive").1;
    assert!(first.duration_since(start) >= Duration::from_millis(20));
    let seqs: Vec<u32> = got.iter().map(|(d, _)| seq_of(d)).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "in order: {seqs:?}");
}
