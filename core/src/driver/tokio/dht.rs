//! The thin async driver: one task, one socket, `select!` over a datagram and the node's
//! deadline (str0m's discipline: after every input, drain outputs, then wait for the next
//! input or deadline).

use std::future::Future;

use ::tokio::net::UdpSocket;
use rustox_net_crypto::crypto::CryptoRng;
use rustox_net_crypto::Timestamp;

use crate::dht::node::DhtNode;
use crate::driver::clock::Clock;

/// Runs `node` on `socket` until `shutdown` completes. `on_tick` runs after every timer
/// round (once a second), for statistics.
pub async fn run(
    node: &mut DhtNode,
    socket: &UdpSocket,
    clock: Clock,
    rng: &mut dyn CryptoRng,
    shutdown: impl Future<Output = ()>,
    on_tick: &mut dyn FnMut(&DhtNode, Timestamp),
) -> std::io::Result<()> {
    tokio::pin!(shutdown);
    let mut buf = [0u8; 2048];
    let v6 = socket.local_addr().is_ok_and(|a| a.is_ipv6());
    loop {
        let now = clock.now();
        while let Some(t) = node.poll_transmit(now, rng) {
            let _ = socket
                .send_to(&t.payload, crate::driver::socket::for_socket(t.dst, v6))
                .await;
        }
        let deadline = tokio::time::Instant::from_std(clock.instant(node.poll_timeout()));
        tokio::select! {
            _ = &mut shutdown => return Ok(()),
            r = socket.recv_from(&mut buf) => {
                if let Ok((len, from)) = r {
                    let _ = node.handle_datagram(clock.now(), from, &buf[..len], rng);
                }
            }
            _ = tokio::time::sleep_until(deadline) => {
                let now = clock.now();
                node.handle_timeout(now, rng);
                on_tick(node, now);
            }
        }
    }
}
