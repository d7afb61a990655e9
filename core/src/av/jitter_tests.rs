use super::*;

fn at(ms: u64) -> Timestamp {
    Timestamp::from_millis(ms)
}

/// Drains everything due at `now`.
fn drain(jb: &mut JitterBuffer, now: Timestamp) -> Vec<Playout> {
    let mut out = Vec::new();
    while let Some(p) = jb.poll(now) {
        out.push(p);
    }
    out
}

#[test]
fn clean_link_plays_each_frame_after_the_margin() {
    let mut jb = JitterBuffer::new();
    // Sender clock 1000 ms ahead of ours; one-way 30 ms.
    for i in 0..10u16 {
        let sent = 1000 + u32::from(i) * 20;
        let arrive = u64::from(i) * 20 + 30;
        jb.insert(at(arrive), i, sent, vec![i as u8]).unwrap();
        assert_eq!(jb.poll(at(arrive)), None, "not before the margin");
        let due = jb.next_due().unwrap();
        assert_eq!(due, at(arrive + MARGIN_MS));
        assert_eq!(jb.poll(due), Some(Playout::Frame(vec![i as u8])));
    }
    assert_eq!(jb.stats().played, 10);
}

#[test]
fn reordered_frames_play_in_order() {
    let mut jb = JitterBuffer::new();
    jb.insert(at(0), 10, 0, vec![10]).unwrap();
    jb.insert(at(21), 12, 40, vec![12]).unwrap();
    jb.insert(at(22), 11, 20, vec![11]).unwrap();
    let out = drain(&mut jb, at(200));
    assert_eq!(
        out,
        vec![
            Playout::Frame(vec![10]),
            Playout::Frame(vec![11]),
            Playout::Frame(vec![12])
        ]
    );
}

#[test]
fn a_lost_frame_is_recovered_by_fec_then_the_next_plays() {
    let mut jb = JitterBuffer::new();
    jb.insert(at(0), 0, 0, vec![0]).unwrap();
    jb.insert(at(40), 2, 40, vec![2]).unwrap();
    let out = drain(&mut jb, at(500));
    assert_eq!(
        out,
        vec![
            Playout::Frame(vec![0]),
            Playout::Fec(vec![2]),
            Playout::Frame(vec![2])
        ]
    );
    assert_eq!(jb.stats().fec, 1);
    // The lost frame arriving now is late.
    assert_eq!(jb.insert(at(501), 1, 20, vec![1]), Err(JitterError::Late));
    assert_eq!(jb.stats().late, 1);
}

#[test]
fn two_lost_frames_one_concealed_one_by_fec_and_without_fec_both_concealed() {
    for fec in [true, false] {
        let mut jb = JitterBuffer::new();
        jb.set_fec(fec);
        jb.insert(at(0), 0, 0, vec![0]).unwrap();
        jb.insert(at(60), 3, 60, vec![3]).unwrap();
        let out = drain(&mut jb, at(500));
        assert_eq!(out.len(), 4);
        assert_eq!(out[1], Playout::Conceal);
        let expected = if fec {
            Playout::Fec(vec![3])
        } else {
            Playout::Conceal
        };
        assert_eq!(out[2], expected);
        assert_eq!(out[3], Playout::Frame(vec![3]));
    }
}

#[test]
fn jitter_raises_the_delay_and_a_long_gap_is_skipped() {
    let mut jb = JitterBuffer::new();
    // Every fourth frame 50 ms late.
    for i in 0..100u16 {
        let extra = if i % 4 == 0 { 50 } else { 0 };
        jb.insert(at(u64::from(i) * 20 + extra), i, u32::from(i) * 20, vec![])
            .unwrap();
        drain(&mut jb, at(u64::from(i) * 20 + extra));
    }
    let d = jb.delay().as_millis() as u64;
    assert!((50..=60).contains(&d), "delay {d} ms");
    assert_eq!(jb.stats().late, 0, "the delay covers the late frames");
    // A gap of 30 frames: 10 concealed, the rest skipped.
    let before = jb.stats();
    jb.insert(at(3000), 130, 2600, vec![]).unwrap();
    drain(&mut jb, at(10_000));
    let after = jb.stats();
    assert_eq!(after.skipped - before.skipped, 20);
    assert_eq!(
        (after.concealed + after.fec) - (before.concealed + before.fec),
        10
    );
}

#[test]
fn wrapping_sequence_and_timestamp_and_bounds() {
    let mut jb = JitterBuffer::new();
    jb.insert(at(0), u16::MAX, u32::MAX - 10, vec![1]).unwrap();
    jb.insert(at(20), 0, 9, vec![2]).unwrap();
    assert_eq!(
        drain(&mut jb, at(100)),
        vec![Playout::Frame(vec![1]), Playout::Frame(vec![2])]
    );
    assert_eq!(jb.insert(at(30), 0, 9, vec![2]), Err(JitterError::Late));
    jb.insert(at(40), 2, 49, vec![]).unwrap();
    assert_eq!(
        jb.insert(at(41), 2, 49, vec![]),
        Err(JitterError::Duplicate)
    );
    // A jump beyond the capacity restarts the buffer; it never holds more than its capacity.
    jb.insert(at(50), 5000, 100_000, vec![]).unwrap();
    assert_eq!(jb.stats().resets, 1);
    for s in 5001..5001 + 200u16 {
        let _ = jb.insert(at(60), s, 100_000, vec![]);
    }
    assert!(jb.len() <= JITTER_CAPACITY + 1);
}
