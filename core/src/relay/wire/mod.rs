//! TCP relay wire formats (docs/protocol.md §7; c-toxcore 0.2.18 `TCP_common.c`, `TCP_client.c`,
//! `TCP_server.c`), shared by the relay server and the relay client.
//!
//! ```text
//! client                                           server
//!   ── hello 128 (raw) ─────────────────────────────►   handshake.rs
//!   ◄──────────────────────────── reply 96 (raw) ──
//!   ── [len][box] [len][box] … ─────────────────────►   frame.rs (session key, counted nonces)
//!   ◄──────────────────────────── [len][box] … ───
//!        box plaintext = [id][body]                      packet.rs
//! ```
//!
//! Every parser takes untrusted bytes and returns a typed error; none panics, none trusts a
//! length, and none holds more than one frame (2050 bytes) of a stream.
// Wire code: every length comes from a TCP peer, so no indexing, slicing or arithmetic
// that could panic or wrap (the relay client and server are not held to it).
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

pub mod frame;
pub mod handshake;
pub(crate) mod packet;

pub use frame::{FrameDecoder, FrameEncoder, FrameError, MAX_PACKET_SIZE, MAX_PLAINTEXT_SIZE};
pub use handshake::{
    accept_hello, AcceptedHello, ClientHandshake, ExactBytes, HandshakeError, SessionKeys,
    CLIENT_HELLO_SIZE, SERVER_REPLY_SIZE,
};
pub use packet::{Packet, PacketError, NUM_CLIENT_CONNECTIONS, NUM_RESERVED_PORTS};

/// Copies as many bytes from the front of `input` as `dst` holds (or `input` has), moves
/// `input` past them and returns how many: the one step of every streaming reader here.
fn take_front(dst: &mut [u8], input: &mut &[u8]) -> usize {
    let bytes: &[u8] = input;
    let n = dst.len().min(bytes.len());
    let (head, rest) = bytes.split_at_checked(n).unwrap_or((bytes, &[]));
    for (d, s) in dst.iter_mut().zip(head) {
        *d = *s;
    }
    *input = rest;
    n
}
