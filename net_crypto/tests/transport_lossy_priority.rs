//! A lossy datagram (a call's audio) during a saturating bulk transfer (a file) on the same
//! session: it leaves with the very next `poll_transmit`, ahead of the bulk backlog the
//! pacer holds, and the transfer still gets the rest of the rate.

mod common;

use std::time::Duration;

use common::{Pair, Side};
use rustox_net_crypto::{ConnectionEvent, ConnectionId, EndpointEvent, SendError, Timestamp};

/// A file chunk's size (file_transfer's data packets are about this long).
const CHUNK: usize = 1300;
/// One audio frame every 20 ms (Opus at 20 ms frames, toxav's default).
const AUDIO_INTERVAL: Duration = Duration::from_millis(20);

/// Queues bulk payloads on A's session until its budget is spent.
fn top_up(p: &mut Pair, id: ConnectionId) -> usize {
    let now = p.now;
    let conn = p.a.endpoint.connection_mut(id).expect("session");
    let mut queued = 0;
    while conn.send_budget(now) > 0 {
        let mut chunk = vec![0u8; CHUNK];
        chunk[0] = 80;
        match conn.send_bulk(now, &chunk) {
            Ok(_) => queued += 1,
            Err(SendError::NoBudget | SendError::QueueFull) => break,
            Err(e) => panic!("bulk refused: {e}"),
        }
    }
    queued
}

fn lossy_received(p: &Pair) -> usize {
    p.connection_events(Side::B)
        .iter()
        .filter(|e| matches!(e, ConnectionEvent::Lossy(d) if d.first() == Some(&200)))
        .count()
}

fn bulk_bytes_received(p: &Pair) -> usize {
    p.b.events
        .iter()
        .filter_map(|e| match e {
            EndpointEvent::Connection {
                event: ConnectionEvent::Lossless(d),
                ..
            } if d.first() == Some(&80) => Some(d.len()),
            _ => None,
        })
        .sum()
}

/// Sends one lossy packet at `p.now` and checks that the very next datagram A sends is it,
/// although bulk data is queued and waiting for the pacer.
fn send_audio_and_check_it_leaves_first(p: &mut Pair, id: ConnectionId) {
    let now = p.now;
    let before = lossy_received(p);
    let mut frame = vec![0u8; 160];
    frame[0] = 200;
    p.a.endpoint
        .connection_mut(id)
        .expect("session")
        .send_lossy(now, &frame)
        .expect("lossy accepted");
    let t =
        p.a.endpoint
            .poll_transmit(now)
            .expect("the lossy datagram leaves now");
    p.deliver(Side::B, &t.payload).expect("B takes it");
    p.collect_events();
    assert_eq!(
        lossy_received(p),
        before + 1,
        "the first datagram out was the audio"
    );
}

#[test]
fn lossy_leaves_ahead_of_a_paced_bulk_backlog_and_bulk_gets_the_rest() {
    let mut p = Pair::new(7);
    let (a_id, _) = p.establish(Side::A);
    p.collect_events();

    let start = p.now;
    let end = start + Duration::from_secs(3);
    let mut next_audio = start + AUDIO_INTERVAL;
    let mut checked_behind_backlog = 0;
    while p.now < end {
        top_up(&mut p, a_id);
        p.flush();
        if p.now >= next_audio {
            // The pacer holds the bulk queue now (flush sent all it allowed): a backlog.
            let backlog =
                p.a.endpoint
                    .connection(a_id)
                    .expect("session")
                    .transport()
                    .stats()
                    .send_queue_len;
            if backlog > 0 {
                checked_behind_backlog += 1;
            }
            send_audio_and_check_it_leaves_first(&mut p, a_id);
            next_audio += AUDIO_INTERVAL;
        }
        let next = [
            p.a.endpoint.poll_timeout(),
            p.b.endpoint.poll_timeout(),
            Some(next_audio),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(end);
        p.now = next.max(p.now + Duration::from_micros(1)).min(end);
        let now = p.now;
        p.a.endpoint.handle_timeout(now);
        p.b.endpoint.handle_timeout(now);
    }
    p.flush();
    let audio = lossy_received(&p);
    let file = bulk_bytes_received(&p);
    // 3 s of 20 ms frames, every one delivered.
    assert!(audio >= 149, "audio frames delivered: {audio}");
    assert!(
        checked_behind_backlog >= 50,
        "frames sent while bulk data waited: {checked_behind_backlog}"
    );
    // The transfer kept going: far more than the audio's 8 kB/s.
    assert!(file > 1_000_000, "file bytes delivered: {file}");
    let _ = Timestamp::ZERO;
}
