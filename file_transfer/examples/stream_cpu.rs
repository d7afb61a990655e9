//! CPU cost of the file layer alone: 64 MiB streamed between two `FileStreams` through an
//! in-memory pipe (SHA-256 on both sides included). `cargo run --release -p
//! rustox-file-transfer --example stream_cpu`
use std::io::Cursor;
use std::time::Instant;

use rustox_file_transfer::stream::{FileStreams, StreamEvent};
use rustox_file_transfer::testing::MockSession;
use rustox_file_transfer::FileKind;
use rustox_net_crypto::Timestamp;

fn main() {
    let size = 64usize << 20;
    let data: Vec<u8> = (0..size).map(|i| (i * 31 % 251) as u8).collect();
    let (mut a, mut b) = (FileStreams::new(), FileStreams::new());
    let (mut sa, mut sb) = (MockSession::new(), MockSession::new());
    let now = Timestamp::ZERO;
    let start = Instant::now();
    a.send_file(
        now,
        &mut sa,
        FileKind::Data,
        Box::new(Cursor::new(data)),
        b"x",
    )
    .expect("offer");
    let hashed = start.elapsed();
    let mut done = false;
    while !done {
        sa.grant(10);
        a.pump(now, &mut sa);
        for (_, _, p) in sa.drain() {
            let _ = b.handle_packet(now, &mut sb, &p);
        }
        while let Some(e) = b.poll_event() {
            match e {
                StreamEvent::Offered { file, .. } => b
                    .accept(now, &mut sb, file, Box::new(Cursor::new(Vec::new())), true)
                    .expect("accept"),
                StreamEvent::Received { verified, .. } => {
                    assert!(verified);
                    done = true;
                }
                _ => {}
            }
        }
        for (_, _, p) in sb.drain() {
            let _ = a.handle_packet(now, &mut sa, &p);
        }
        while a.poll_event().is_some() {}
    }
    let total = start.elapsed();
    println!(
        "64 MiB: {:.3} s total ({:.3} s hashing the source), {:.1} ms per MiB",
        total.as_secs_f64(),
        hashed.as_secs_f64(),
        total.as_secs_f64() * 1000.0 / 64.0
    );
}
