//! c-toxcore 0.2.18 itself, as the yardstick for rustox's claims against it.
//!
//! `tools/toxcore_file_peer.c` is a small client on Debian's libtoxcore that uses only tox.h:
//! a sender that offers a generated file and a receiver that checks it, each printing JSON
//! lines. This module builds it at run time ([`PeerBinary`]), starts a DHT bootstrap node
//! ([`BootstrapNode`]) and the two roles ([`RecvPeer`], [`SendPeer`]) as child processes —
//! directly or behind a command prefix such as `ip netns exec NS` ([`Launch`]) — and reads
//! their summaries. [`run_transfer`] does all of it for one transfer. Every child is killed
//! when its handle is dropped.
//!
//! Coming online, measured on loopback (2 cores, Debian 12, one bootstrap node or the
//! receiver itself as the sender's only node): each peer reports itself connected 7.1–8.0 s
//! after start and sees its friend 9.0–10.8 s after start, the same with a friend request or
//! with both peers adding each other by key. c-toxcore's LAN discovery needs an interface
//! broadcast address, which loopback and point-to-point links lack, so a bootstrap node is
//! always given and LAN discovery is off by default. The C file's header has the details.

pub mod av_peer;
pub mod bootstrap;
pub mod build;
mod child;
pub mod conference;
pub mod conference_net;
pub mod conference_peer;
pub mod error;
pub mod friend;
pub mod group;
pub mod launch;
pub mod peer;
pub mod transfer;

pub use bootstrap::{BootstrapNode, BootstrapOptions, BootstrapProgram, BootstrapSpec};
pub use build::{file_peer_or_skip, BuildOptions, PeerBinary};
pub use error::CToxcoreError;
pub use launch::Launch;
pub use peer::{
    ContentCheck, FileIdChoice, PeerOptions, PeerReady, RecvOptions, RecvPeer, RecvSummary,
    SendOptions, SendPeer, SendSummary, TransferTimes,
};
pub use transfer::{run_transfer, Discovery, Friendship, TransferOptions, TransferReport};
