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
