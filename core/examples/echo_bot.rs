//! An echo bot on rustox's Rust API: start here.
//!
//! It prints its Tox ID, accepts every friend request, sends every message back, and sends
//! every file back once it has arrived (verified against its SHA-256 id).
//!
//! ```text
//! cargo run --release -p rustox-core --example echo_bot -- [HOST:PORT:DHTKEY ...]
//! ```
//!
//! Give it a DHT node to start from (a `rustox bootstrap`, or a public node from
//! nodes.tox.chat), then add its Tox ID from any Tox client (qTox, toxic, `rustox send`).

use std::net::SocketAddr;

use rustox_core::api::{Tox, ToxOptions};
use rustox_core::node::{FileVerification, NodeEvent, NodeOptions};
use rustox_net_crypto::crypto::PublicKey;

/// `HOST:PORT:KEY` → the node's address and DHT key.
fn parse_node(text: &str) -> Option<(SocketAddr, PublicKey)> {
    let (addr, key) = text.rsplit_once(':')?;
    Some((addr.parse().ok()?, PublicKey::from_hex(key)?))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut bootstrap = Vec::new();
    for arg in std::env::args().skip(1) {
        bootstrap.push(parse_node(&arg).ok_or_else(|| format!("{arg:?} is not HOST:PORT:KEY"))?);
    }
    let mut tox = Tox::start(ToxOptions {
        bootstrap,
        node: NodeOptions {
            unix_time: rustox_core::driver::clock::unix_now(),
            ..NodeOptions::default()
        },
        ..ToxOptions::default()
    })
    .await?;
    tox.set_name(b"rustox echo bot").await?;
    println!(
        "echo bot {} listening on {}",
        tox.tox_id(),
        tox.local_addr()
    );
    let inbox = std::env::temp_dir().join(format!("rustox-echo-{}", std::process::id()));
    std::fs::create_dir_all(&inbox)?;
    let mut received = std::collections::HashMap::new();
    while let Some(event) = tox.next_event().await {
        match event {
            NodeEvent::FriendRequest { pk, message } => {
                println!(
                    "friend request from {pk}: {}",
                    String::from_utf8_lossy(&message)
                );
                tox.add_friend_norequest(pk).await?;
            }
            NodeEvent::FriendConnection { friend, online, .. } => {
                println!(
                    "friend {} {}",
                    friend.0,
                    if online { "online" } else { "offline" }
                );
            }
            NodeEvent::Message { friend, kind, text } => {
                let _ = tox.send_message_kind(friend, kind, &text).await;
            }
            NodeEvent::FileOffered(offer) => {
                let path = inbox.join(format!("{}-{}", offer.friend.0, offer.file));
                received.insert((offer.friend, offer.file), path.clone());
                tox.accept_file(offer.friend, offer.file, path).await?;
            }
            NodeEvent::FileReceived {
                friend,
                file,
                verification: FileVerification::Sha256FileId,
                ..
            } => {
                if let Some(path) = received.remove(&(friend, file)) {
                    let _ = tox.send_file(friend, &path).await;
                }
            }
            _ => {}
        }
    }
    Ok(())
}
