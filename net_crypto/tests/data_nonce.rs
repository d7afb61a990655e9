//! The data-packet nonce of docs/protocol.md §2.4 as seen on the wire.

mod common;

use std::time::Duration;

use common::{Pair, Side};
use rustox_net_crypto::ConnectionEvent;

const DATA: u8 = 0x1b;

#[test]
fn every_data_packet_uses_the_next_nonce_including_resends() {
    let mut p = Pair::new(50);
    let (a, _) = p.establish(Side::A);
    // Drop every 5th data packet A sends, so the transport has to resend.
    let mut n = 0u32;
    p.filter = Some(Box::new(move |side, t| {
        if side == Side::A && t.payload[0] == DATA {
            n = (n + 1) % 5;
            return n != 0;
        }
        true
    }));
    let sent_before = p.sent(Side::A, DATA).len();
    for i in 0..200u32 {
        let now = p.now;
        let mut payload = vec![100u8];
        payload.extend_from_slice(&i.to_be_bytes());
        p.a.endpoint
            .connection_mut(a)
            .unwrap()
            .send_lossless(now, &payload)
            .unwrap();
    }
    p.run_for(Duration::from_secs(20));

    let delivered: Vec<_> = p
        .connection_events(Side::B)
        .into_iter()
        .filter(|e| matches!(e, ConnectionEvent::Lossless(_)))
        .collect();
    assert_eq!(
        delivered.len(),
        200,
        "every lossless payload arrives once, in order"
    );
    for (i, e) in delivered.iter().enumerate() {
        let mut expected = vec![100u8];
        expected.extend_from_slice(&(i as u32).to_be_bytes());
        assert_eq!(*e, ConnectionEvent::Lossless(expected));
    }
    let stats = p.a.endpoint.connection(a).unwrap().transport().stats();
    assert!(stats.packets_resent > 0, "the test must exercise resends");

    // On the wire, A's data packets carry consecutive nonces: +1 per packet, resends too.
    let lows: Vec<u16> = p
        .sent(Side::A, DATA)
        .iter()
        .map(|s| u16::from_be_bytes([s.transmit.payload[1], s.transmit.payload[2]]))
        .collect();
    assert!(lows.len() > sent_before + 200);
    for w in lows.windows(2) {
        assert_eq!(w[1], w[0].wrapping_add(1));
    }
}
