#[path = "transport_harness.rs"]
mod harness;
use harness::{LinkConfig, Pair};
use rustox_net_crypto::transport::ControllerKind;
use std::time::Duration;

#[test]
#[ignore]
fn debug_stall() {
    let l = LinkConfig {
        delay: Duration::from_millis(50),
        jitter: Duration::from_millis(10),
        rate: 2_000_000,
        buffer: 200_000,
        loss: 0.4,
        duplicate: 0.0,
        drop_first_data: 0,
    };
    let mut p = Pair::new(ControllerKind::Bbr, l.clone(), l, 7);
    p.a.control_every = 17;
    p.a.payload_len = 9;
    p.a.to_send = 400;
    let mut last = 0;
    let mut last_t = p.now;
    p.run_until(Duration::from_secs(100), |p| {
        let bstart = (0..p.a.t.send_buffer_end())
            .find(|&pn| p.a.t.is_delivered(pn) && !p.b.t.is_received(pn))
            .unwrap_or(0);
        if p.a.t.is_delivered(bstart) && !p.b.t.is_received(bstart) {
            println!("A thinks {bstart} delivered at {:?}; A log:", p.now);
            for l in &p.a.log {
                println!("  {l}");
            }
            let d = format!("{:?}", p.a.t);
            println!("{}", &d[..d.len().min(5000)]);
            return true;
        }
        if p.b.expect_bulk != last {
            last = p.b.expect_bulk;
            last_t = p.now;
        }
        p.b.expect_bulk >= 400 || p.now - last_t > Duration::from_secs(20)
    });
    println!("now {:?} B got {}", p.now, p.b.expect_bulk);
    println!(
        "B recv start {} A send_end {} A errors {:?} B errors {:?}",
        p.b.t.recv_buffer_start(),
        p.a.t.send_buffer_end(),
        &p.a.errors[..p.a.errors.len().min(5)],
        &p.b.errors[..p.b.errors.len().min(5)]
    );
    println!("A: {:#?}", p.a.t.stats());
    println!("B: {:#?}", p.b.t.stats());
}

#[test]
#[ignore]
fn debug_wan20() {
    let l = LinkConfig {
        delay: Duration::from_millis(10),
        jitter: Duration::ZERO,
        rate: 12_500_000,
        buffer: 250_000,
        loss: 0.0,
        duplicate: 0.0,
        drop_first_data: 0,
    };
    let mut p = Pair::new(ControllerKind::Bbr, l.clone(), l, 1);
    let t = p.transfer(6000, Duration::from_secs(30));
    println!("done {t:?} A {:#?}", p.a.t.stats());
}

fn trace(name: &str, l: LinkConfig, packets: u64, secs: u64) {
    trace_kind(ControllerKind::Bbr, name, l, packets, secs)
}

fn trace_kind(kind: ControllerKind, name: &str, l: LinkConfig, packets: u64, secs: u64) {
    let mut p = Pair::new(kind, l.clone(), LinkConfig { loss: 0.0, ..l }, 1);
    p.a.to_send = packets;
    let mut next = p.now;
    let start = p.now;
    p.run_until(Duration::from_secs(secs), |p| {
        if p.now >= next {
            next = p.now + Duration::from_millis(if name == "wan20" { 20 } else { 250 });
            let _ = kind;
            let s = p.a.t.stats();
            println!(
                "{name} {:?} truth {:?} got {} inflight {} srtt {:?} pace {} | {}",
                p.now,
                p.ab.last_transit + p.ba.last_transit,
                p.b.expect_bulk,
                s.bytes_in_flight,
                s.smoothed_rtt,
                s.pacing_rate,
                p.a.t.controller_state()
            );
        }
        p.b.expect_bulk >= packets
    });
    let el = (p.now - start).as_secs_f64();
    println!(
        "{name} done in {el:.2}s eff {:.3}",
        (packets * 1373) as f64 / el / l.rate as f64
    );
}

#[test]
#[ignore]
fn trace_relay500() {
    trace(
        "relay500",
        LinkConfig {
            delay: Duration::from_millis(250),
            jitter: Duration::ZERO,
            rate: 250_000,
            buffer: 10_000_000,
            loss: 0.0,
            duplicate: 0.0,
            drop_first_data: 0,
        },
        3000,
        60,
    );
}

#[test]
#[ignore]
fn trace_wan20() {
    trace(
        "wan20",
        LinkConfig {
            delay: Duration::from_millis(10),
            jitter: Duration::ZERO,
            rate: 12_500_000,
            buffer: 250_000,
            loss: 0.0,
            duplicate: 0.0,
            drop_first_data: 0,
        },
        6000,
        30,
    );
}

#[test]
#[ignore]
fn trace_vpn300() {
    trace(
        "vpn300",
        LinkConfig {
            delay: Duration::from_millis(150),
            jitter: Duration::ZERO,
            rate: 1_000_000,
            buffer: 300_000,
            loss: 0.01,
            duplicate: 0.0,
            drop_first_data: 0,
        },
        12000,
        60,
    );
}

#[test]
#[ignore]
fn trace_legacy_lan() {
    trace_kind(
        ControllerKind::Legacy,
        "legacy_lan",
        LinkConfig {
            delay: Duration::from_micros(250),
            jitter: Duration::ZERO,
            rate: 125_000_000,
            buffer: 1_428_000,
            loss: 0.0,
            duplicate: 0.0,
            drop_first_data: 0,
        },
        20000,
        20,
    );
}

#[test]
#[ignore]
fn trace_legacy_vpn300() {
    trace_kind(
        ControllerKind::Legacy,
        "legacy_vpn300",
        LinkConfig {
            delay: Duration::from_millis(150),
            jitter: Duration::ZERO,
            rate: 1_000_000,
            buffer: 300_000,
            loss: 0.01,
            duplicate: 0.0,
            drop_first_data: 0,
        },
        3000,
        60,
    );
}

#[test]
#[ignore]
fn trace_sat600() {
    trace(
        "sat600",
        LinkConfig {
            delay: Duration::from_millis(300),
            jitter: Duration::ZERO,
            rate: 1_875_000,
            buffer: 500_000,
            loss: 0.03,
            duplicate: 0.0,
            drop_first_data: 0,
        },
        24000,
        60,
    );
}

#[test]
#[ignore]
fn startup_exit_by_seed() {
    for seed in 1..8 {
        let l = LinkConfig {
            delay: Duration::from_millis(150),
            jitter: Duration::ZERO,
            rate: 1_000_000,
            buffer: 300_000,
            loss: 0.01,
            duplicate: 0.0,
            drop_first_data: 0,
        };
        let mut p = Pair::new(
            ControllerKind::Bbr,
            l.clone(),
            LinkConfig { loss: 0.0, ..l },
            seed,
        );
        p.a.to_send = 20000;
        let mut prev = String::new();
        p.run_until(Duration::from_secs(12), |p| {
            let st = p.a.t.controller_state();
            let mode = st.split(' ').next().unwrap_or("").to_string();
            if mode != prev {
                println!("seed {seed} {:?} -> {st}", p.now);
                prev = mode;
            }
            false
        });
    }
}

#[test]
#[ignore]
fn trace_relay500_lossy() {
    trace(
        "relay500l",
        LinkConfig {
            delay: Duration::from_millis(250),
            jitter: Duration::ZERO,
            rate: 250_000,
            buffer: 2_000_000,
            loss: 0.03,
            duplicate: 0.0,
            drop_first_data: 0,
        },
        6000,
        60,
    );
}
