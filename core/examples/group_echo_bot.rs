//! A group echo bot on rustox's Rust API: conferences (c-toxcore's group chats) from a program.
//!
//! It prints its Tox ID, accepts every friend request, creates a conference, invites every
//! friend that comes online to it, joins every conference a friend invites it to, and says
//! back in a conference each message and action it hears there (not its own, nor another
//! echo bot's: two bots in one conference would echo each other forever).
//!
//! ```text
//! cargo run --release -p rustox-core --example group_echo_bot -- [HOST:PORT:DHTKEY ...]
//! ```
//!
//! Give it a DHT node to start from (a `rustox bootstrap`, or a public node from
//! nodes.tox.chat), then add its Tox ID from any Tox client (qTox, toxic, uTox): once you are
//! friends it invites you to its conference.

use std::net::SocketAddr;

use rustox_core::api::{Tox, ToxOptions};
use rustox_core::conference::{ConferenceEvent, ConferenceType, PeerList};
use rustox_core::node::{NodeEvent, NodeOptions};
use rustox_net_crypto::crypto::PublicKey;

/// Our name in the conferences; a peer with this name is an echo bot too and is not
/// echoed.
const NAME: &[u8] = b"rustox group echo bot";
/// The title of the conference the bot creates.
const TITLE: &[u8] = b"rustox echo";

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
    tox.set_name(NAME).await?;
    let ours = tox.conference_new(ConferenceType::Text).await?;
    tox.conference_set_title(ours, TITLE).await?;
    println!(
        "group echo bot {} listening on {}; conference {}",
        tox.tox_id(),
        tox.local_addr(),
        ours.0
    );
    while let Some(event) = tox.next_event().await {
        match event {
            NodeEvent::FriendRequest { pk, .. } => {
                println!("friend request from {pk}: accepted");
                tox.add_friend_norequest(pk).await?;
            }
            NodeEvent::FriendConnection {
                friend,
                online: true,
                ..
            } => match tox.conference_invite(friend, ours).await {
                Ok(()) => println!("friend {} online: invited", friend.0),
                // It went offline again meanwhile: the next time it comes online.
                Err(e) => println!("friend {} online, not invited: {e}", friend.0),
            },
            NodeEvent::ConferenceInvite { friend, cookie, .. } => {
                match tox.conference_join(friend, &cookie).await {
                    Ok(c) => println!("friend {} invited us: joining conference {}", friend.0, c.0),
                    Err(e) => println!("friend {} invited us, cannot join: {e}", friend.0),
                }
            }
            NodeEvent::Conference(ConferenceEvent::Connected { conference }) => {
                println!("connected to conference {}", conference.0);
            }
            NodeEvent::Conference(ConferenceEvent::PeerListChanged { conference }) => {
                if let Ok(peers) = tox.conference_peers(conference, PeerList::Online).await {
                    println!("conference {}: {} peers online", conference.0, peers.len());
                }
            }
            NodeEvent::Conference(ConferenceEvent::Message {
                conference,
                peer,
                kind,
                text,
            }) => {
                // The sender: its number names it until the conference's peer list
                // changes (a peer leaving between the event and this look-up could make
                // it another peer, which an echo bot can live with).
                let Ok(sender) = tox
                    .conference_peer(conference, PeerList::Online, peer)
                    .await
                else {
                    continue;
                };
                if sender.ours || sender.name == NAME {
                    continue;
                }
                println!(
                    "conference {}, {}: {}",
                    conference.0,
                    String::from_utf8_lossy(&sender.name),
                    String::from_utf8_lossy(&text)
                );
                let _ = tox
                    .conference_send_message_kind(conference, kind, &text)
                    .await;
            }
            NodeEvent::Conference(ConferenceEvent::Title {
                conference, title, ..
            }) => {
                println!(
                    "conference {} is titled {:?}",
                    conference.0,
                    String::from_utf8_lossy(&title)
                );
            }
            _ => {}
        }
    }
    Ok(())
}
