//! The Tox TCP relay (docs/protocol.md §7; c-toxcore 0.2.18 `TCP_server.c`, `TCP_common.c`).
//!
//! A TCP relay lets clients that cannot use UDP (firewalls, proxies, Tor) reach each other
//! and the onion. Every client keeps a TCP connection to a few relays, authenticated by its
//! long-term DHT key. Through a relay a client can:
//! * **route** to another client of the same relay: both ask for each other by public key
//!   (routing request), the relay gives each a connection id (16..=255) and links them once
//!   both have asked; then data packets (raw net_crypto packets) flow between the two ids;
//! * send **out of band** to any client connected to the relay, by key, without a route
//!   (cookie requests and handshakes before the route is up);
//! * use the relay as the **first hop of an onion path**: the relay sends the request on over
//!   UDP as hop A, and the response comes back to the client over TCP.
//!
//! ```text
//!  client A ──TCP──► [frames ─► packets] ─► route table ─► [packets ─► frames] ──TCP──► client B
//!                                   │                ▲
//!                                   ▼ onion request  │ onion response
//!                              onion relay (UDP, hop A of the path)
//! ```
//!
//! [`wire`] holds the byte formats, shared by both sides; [`client`] is the client side,
//! sans-IO: connections to relays and the routes to peers through them; [`server`] is the
//! relay server, sans-IO, which `driver::tcp_relay` runs on sockets for
//! `rustox bootstrap --tcp-ports`; [`outbuf`] is the output buffer of both, and [`record`] where
//! they cut it into writes.

pub mod client;
pub mod outbuf;
pub mod record;
pub mod server;
pub mod wire;
