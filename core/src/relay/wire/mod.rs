//! TCP relay wire formats (protocol.md §7; c-toxcore 0.2.18 `TCP_common.c`, `TCP_client.c`,
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

pub mod frame;
pub mod handshake;
pub mod packet;

pub use frame::{FrameDecoder, FrameEncoder, FrameError, MAX_PACKET_SIZE, MAX_PLAINTEXT_SIZE};
pub use handshake::{
    accept_hello, AcceptedHello, ClientHandshake, ExactBytes, HandshakeError, SessionKeys,
    CLIENT_HELLO_SIZE, SERVER_REPLY_SIZE,
};
pub use packet::{Packet, PacketError, NUM_CLIENT_CONNECTIONS, NUM_RESERVED_PORTS};
