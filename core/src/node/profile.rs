//! A node from a save file and back (docs/protocol.md §8, c-toxcore's `tox_new` with savedata and
//! `tox_get_savedata`): the identity, nospam, our name, status message and status, the
//! friends with what they last told us and any request still pending, the conferences, and
//! the DHT nodes to start from. Hidden links (`links.rs`) are not friends and are not saved:
//! the conferences that need them open them again.
//!
//! Sections this node does not interpret (anything newer) are kept and written back
//! unchanged, so a profile shared with a c-toxcore client loses nothing here.

use rustox_net_crypto::crypto::{CryptoRng, KeyPair};
use rustox_net_crypto::Timestamp;

use super::presence::FriendPresence;
use super::{Node, NodeOptions};
use crate::friend::ToxId;
use crate::savedata::{FriendStatus, Profile, SavedFriend};

/// Saved DHT nodes a loaded node asks at start: c-toxcore loads up to 96 into its
/// bootstrap lists and asks them over the following seconds; the closest few are enough to
/// join, and asking all at once would be a burst of 96 datagrams.
pub const MAX_BOOTSTRAP_FROM_PROFILE: usize = 16;

/// Close DHT nodes written into a profile (c-toxcore saves up to 96 of its own).
pub const MAX_SAVED_DHT_NODES: usize = 96;

/// What a profile held that the node keeps only to write it back.
#[derive(Debug, Clone, Default)]
pub(super) struct KeptSections {
    pub(super) other_sections: Vec<(u16, Vec<u8>)>,
    pub(super) dht_other_sections: Vec<(u16, Vec<u8>)>,
    pub(super) tcp_relays: Vec<crate::dht::wire::packed_node::PackedNode>,
    pub(super) path_nodes: Vec<crate::dht::wire::packed_node::PackedNode>,
}

impl Node {
    /// A node that is the profile's identity, with its friends, name and status, started
    /// from the profile's DHT nodes. Friends whose request was still pending get it again
    /// (c-toxcore re-adds them with `m_addfriend`).
    pub fn from_profile(
        now: Timestamp,
        profile: &Profile,
        mut options: NodeOptions,
        rng: Box<dyn CryptoRng + Send>,
    ) -> Self {
        options.nospam = Some(profile.nospam);
        let keys = KeyPair::from_secret(profile.secret_key.clone());
        let mut node = Node::new(now, keys, options, rng);
        node.presence.name = profile.name.clone();
        node.presence.status_message = profile.status_message.clone();
        node.presence.status = profile.user_status;
        node.conferences.set_self_name(now, &profile.name);
        for saved in &profile.friends {
            let number = if saved.status.is_pending_request() {
                let id = ToxId::new(saved.pk, saved.request_nospam);
                node.add_friend(now, &id, &saved.request_message).ok()
            } else {
                node.add_friend_norequest(now, saved.pk).ok()
            };
            let Some(number) = number else { continue };
            if let Some(f) = node.friends.get_mut(number) {
                f.presence = FriendPresence {
                    name: saved.name.clone(),
                    status_message: saved.status_message.clone(),
                    status: saved.user_status,
                    typing: false,
                    we_type: false,
                };
                f.last_seen = saved.last_seen;
            }
        }
        for dht_node in profile
            .dht_nodes
            .iter()
            .filter(|n| !n.tcp)
            .take(MAX_BOOTSTRAP_FROM_PROFILE)
        {
            node.bootstrap(now, dht_node.addr, dht_node.pk);
        }
        // The conferences come back with their peers frozen, after the friends, so the
        // conferences know which peers are friends (their section follows the friends' in
        // c-toxcore's save file).
        node.conferences.load(now, &profile.conferences);
        node.drain_conferences(now);
        // Saved relays are connected through again (c-toxcore adds them at load).
        for relay in profile.tcp_relays.iter().filter(|n| n.tcp) {
            let _ = node.relays.add_relay(now, relay.addr, relay.pk);
        }
        node.kept = KeptSections {
            other_sections: profile.other_sections.clone(),
            dht_other_sections: profile.dht_other_sections.clone(),
            tcp_relays: profile.tcp_relays.clone(),
            path_nodes: profile.path_nodes.clone(),
        };
        node
    }

    /// The node's state as a profile c-toxcore 0.2.18 loads (`tox_get_savedata`).
    pub fn to_profile(&self, now: Timestamp) -> Profile {
        let mut profile = Profile::new(self.keys.secret.clone(), self.requests.nospam());
        profile.name = self.presence.name.clone();
        profile.status_message = self.presence.status_message.clone();
        profile.user_status = self.presence.status;
        // Strangers a node accepting anyone took in are kept too: they are the friends it
        // accepted (`rustox recv --profile` remembers who sent it files).
        for (_, f) in self.friends.iter() {
            let mut saved = match &f.request {
                Some(pending) => SavedFriend::pending(
                    f.pk,
                    pending.request.nospam(),
                    pending.request.message().to_vec(),
                ),
                None => SavedFriend::confirmed(f.pk),
            };
            if saved.status != FriendStatus::Added {
                saved.status = FriendStatus::Confirmed;
            }
            saved.name = f.presence.name.clone();
            saved.status_message = f.presence.status_message.clone();
            saved.user_status = f.presence.status;
            saved.last_seen = if f.online {
                self.unix_seconds(now)
            } else {
                f.last_seen
            };
            profile.friends.push(saved);
        }
        let mut dht_nodes = self.dht.close_nodes(now);
        dht_nodes.truncate(MAX_SAVED_DHT_NODES);
        profile.dht_nodes = dht_nodes;
        profile.conferences = self.conferences.save();
        profile.dht_other_sections = self.kept.dht_other_sections.clone();
        profile.tcp_relays = self.kept.tcp_relays.clone();
        profile.path_nodes = self.kept.path_nodes.clone();
        profile.other_sections = self.kept.other_sections.clone();
        profile
    }

    /// Unix seconds at `now`, from the wall clock the driver gave at creation.
    pub(super) fn unix_seconds(&self, now: Timestamp) -> u64 {
        self.unix_origin.saturating_add(now.as_secs())
    }
}
