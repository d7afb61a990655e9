//! File transfers with one friend: the file layer's streams plus what the node adds on top —
//! the file id of each pending offer and, for each file being received, where the sink
//! leaves the SHA-256 it computed and the file id to compare it with. Senders on this core
//! set the file id to the content's SHA-256, so a receiver can verify their files; other
//! clients' ids are opaque (c-toxcore draws a random one), so a file whose SHA-256 is not
//! its id is kept and reported as unverified ([`FileVerification`]).
//!
//! The node's file calls and file packets are in `file_ops.rs`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rustox_file_transfer::stream::{FileStreams, Source, StreamEvent};
use rustox_file_transfer::FileControl;

use super::event::{FileOffer, FileVerification, NodeEvent};
use crate::types::FriendNumber;

/// Where a sink that hashes what it writes leaves the SHA-256 of the whole file once it
/// is flushed (`None` while unknown, or when the writes were not sequential). The driver's
/// writer thread fills it; the node only reads it.
pub type DigestSlot = Arc<Mutex<Option<[u8; 32]>>>;

/// A file ready to offer: its content, size and SHA-256 (the file id receivers verify).
/// Hashing happens before the offer, outside the node (a driver does it off its event
/// loop).
pub struct PreparedFile {
    /// The content, read as chunks are requested.
    pub source: Box<dyn Source>,
    /// Its size in bytes.
    pub size: u64,
    /// Its SHA-256.
    pub sha256: [u8; 32],
}

/// One friend's transfers.
#[derive(Default)]
pub struct FriendFiles {
    /// The file layer.
    pub streams: FileStreams,
    /// The file id of each offer not yet accepted or refused (at most 256: one per slot).
    pub offered: HashMap<u32, [u8; 32]>,
    /// Each file being received: its sink's digest slot (when it hashes) and the file id.
    pub receiving: HashMap<u32, (Option<DigestSlot>, [u8; 32])>,
}

impl FriendFiles {
    /// Turns the file layer's events into node events.
    pub fn drain_into(&mut self, friend: FriendNumber, events: &mut impl Extend<NodeEvent>) {
        while let Some(event) = self.streams.poll_event() {
            if let Some(e) = self.translate(friend, event) {
                events.extend(std::iter::once(e));
            }
        }
    }

    fn translate(&mut self, friend: FriendNumber, event: StreamEvent) -> Option<NodeEvent> {
        Some(match event {
            StreamEvent::Offered {
                file,
                kind,
                size,
                file_id,
                name,
            } => {
                self.offered.insert(file, file_id);
                NodeEvent::FileOffered(FileOffer {
                    friend,
                    file,
                    kind,
                    size,
                    name,
                    file_id,
                })
            }
            StreamEvent::Sent { file, bytes } => NodeEvent::FileSent {
                friend,
                file,
                bytes,
            },
            StreamEvent::Received {
                file,
                bytes,
                verified: checked_by_stream,
                sha256: stream_sha256,
            } => {
                // The stream layer flushed the sink, which left the digest of the file as
                // written (or, resuming with `verify`, hashed it itself and found it equal
                // to the file id: `checked_by_stream`). A file whose SHA-256 is not its
                // file id is kept: the id is opaque unless the sender hashes its content.
                let (sha256, verification) = match self.receiving.remove(&file) {
                    _ if checked_by_stream => (stream_sha256, FileVerification::Sha256FileId),
                    Some((Some(slot), expected)) => {
                        let digest = *slot.lock().unwrap_or_else(|e| e.into_inner());
                        (digest, FileVerification::of(digest, &expected))
                    }
                    _ => (stream_sha256, FileVerification::NotHashed),
                };
                NodeEvent::FileReceived {
                    friend,
                    file,
                    bytes,
                    sha256,
                    verification,
                }
            }
            StreamEvent::PeerControl {
                file,
                control: FileControl::Cancel,
            } => {
                self.offered.remove(&file);
                self.receiving.remove(&file);
                NodeEvent::FileFailed {
                    friend,
                    file,
                    reason: "the peer cancelled the transfer".into(),
                    by_peer: true,
                }
            }
            StreamEvent::Failed { file, error } => {
                self.receiving.remove(&file);
                NodeEvent::FileFailed {
                    friend,
                    file,
                    reason: error.to_string(),
                    by_peer: false,
                }
            }
            StreamEvent::PeerControl { file, control } => NodeEvent::FileControl {
                friend,
                file,
                control,
            },
            StreamEvent::Other(_) => return None,
        })
    }

    /// The session ended: unfinished transfers fail (c-toxcore resets them silently,
    /// `break_files`; the application here hears why).
    pub fn friend_offline(&mut self, friend: FriendNumber, events: &mut impl Extend<NodeEvent>) {
        self.streams.friend_offline();
        self.drain_into(friend, events);
        self.offered.clear();
        self.receiving.clear();
    }
}
