//! The group announce store of an announce node (c-toxcore 0.2.19+ `group_announce.c`
//! `gca_add_announce`, `gca_get_announces`, `do_gca`), fed by 0x87 requests that carry a
//! public group announce ([`crate::onion::wire::group_announce`]).
//!
//! Per chat key, the last [`GCA_MAX_SAVED_ANNOUNCES_PER_GC`] = 16 announces in a ring, as
//! c-toxcore keeps them; a chat is forgotten [`GCA_ANNOUNCE_SAVE_TIMEOUT`] = 30 s after its
//! last announce. c-toxcore keeps any number of chats in a list; this store keeps at most
//! [`MAX_GROUPS`] and, when full, lets a new chat replace the one announced to least
//! recently, so a flood of made-up chat keys costs a fixed amount of memory and displaces
//! quiet chats before active ones (NGC peers re-announce every few seconds while they look
//! for peers).

use std::time::Duration;

use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::Timestamp;

use crate::onion::wire::group_announce::{GroupAnnounce, PublicGroupAnnounce};

/// `GCA_MAX_SAVED_ANNOUNCES_PER_GC`.
pub const GCA_MAX_SAVED_ANNOUNCES_PER_GC: usize = 16;
/// `GCA_ANNOUNCE_SAVE_TIMEOUT`: a chat with no announce for this long is forgotten.
pub const GCA_ANNOUNCE_SAVE_TIMEOUT: Duration = Duration::from_secs(30);
/// Chats held at once (our bound; about 2.5 KiB each when full).
pub const MAX_GROUPS: usize = 256;

#[derive(Debug, Clone)]
struct Group {
    chat_pk: PublicKey,
    /// The ring; slot `i % 16` holds the `i`-th announce received.
    slots: Vec<GroupAnnounce>,
    /// Announces received (the ring's next slot is `received % 16`).
    received: u64,
    last_received: Timestamp,
}

impl Group {
    fn live(&self, now: Timestamp) -> bool {
        now < self.last_received + GCA_ANNOUNCE_SAVE_TIMEOUT
    }
}

/// The store.
#[derive(Debug, Default)]
pub struct GroupStore {
    groups: Vec<Group>,
}

impl GroupStore {
    /// An empty store.
    pub fn new() -> Self {
        GroupStore::default()
    }

    /// Chats with a live announce.
    pub fn len(&self, now: Timestamp) -> usize {
        self.groups.iter().filter(|g| g.live(now)).count()
    }

    /// True when no chat is held.
    pub fn is_empty(&self, now: Timestamp) -> bool {
        self.len(now) == 0
    }

    /// `gca_add_announce`: records `announce` as its chat's newest.
    pub fn add(&mut self, now: Timestamp, announce: &PublicGroupAnnounce) {
        self.groups.retain(|g| g.live(now));
        let i = match self
            .groups
            .iter()
            .position(|g| g.chat_pk == announce.chat_pk)
        {
            Some(i) => i,
            None => {
                let fresh = Group {
                    chat_pk: announce.chat_pk,
                    slots: Vec::with_capacity(1),
                    received: 0,
                    last_received: now,
                };
                if self.groups.len() < MAX_GROUPS {
                    self.groups.push(fresh);
                    self.groups.len() - 1
                } else {
                    let quietest = (0..self.groups.len())
                        .min_by_key(|&i| self.groups[i].last_received)
                        .unwrap_or(0);
                    self.groups[quietest] = fresh;
                    quietest
                }
            }
        };
        let g = &mut self.groups[i];
        g.last_received = now;
        let slot = (g.received % GCA_MAX_SAVED_ANNOUNCES_PER_GC as u64) as usize;
        if slot < g.slots.len() {
            g.slots[slot] = announce.announce;
        } else {
            g.slots.push(announce.announce);
        }
        g.received += 1;
    }

    /// `gca_get_announces`: up to `max` announces of `chat_pk`, in ring order, one per peer,
    /// none of `except` (the requester's own).
    pub fn announces(
        &self,
        now: Timestamp,
        chat_pk: &PublicKey,
        except: &PublicKey,
        max: usize,
    ) -> Vec<GroupAnnounce> {
        let mut out: Vec<GroupAnnounce> = Vec::with_capacity(max);
        let Some(g) = self
            .groups
            .iter()
            .find(|g| g.chat_pk == *chat_pk && g.live(now))
        else {
            return out;
        };
        for a in &g.slots {
            if out.len() == max {
                break;
            }
            if a.peer_pk == *except || out.iter().any(|o| o.peer_pk == a.peer_pk) {
                continue;
            }
            out.push(*a);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ann(chat: u8, peer: u8) -> PublicGroupAnnounce {
        PublicGroupAnnounce {
            chat_pk: PublicKey([chat; 32]),
            announce: GroupAnnounce {
                peer_pk: PublicKey([peer; 32]),
                addr: Some(format!("192.0.2.{peer}:33445").parse().unwrap()),
                relay: None,
            },
        }
    }

    #[test]
    fn others_come_back_once_each_and_not_the_requester() {
        let mut s = GroupStore::new();
        let t = Timestamp::from_secs(100);
        s.add(t, &ann(1, 10));
        s.add(t, &ann(1, 11));
        s.add(t, &ann(1, 10));
        s.add(t, &ann(2, 12));
        let got = s.announces(t, &PublicKey([1; 32]), &PublicKey([11; 32]), 4);
        assert_eq!(got, vec![ann(1, 10).announce]);
        let got = s.announces(t, &PublicKey([1; 32]), &PublicKey([99; 32]), 4);
        assert_eq!(got.len(), 2);
        assert!(s
            .announces(t, &PublicKey([3; 32]), &PublicKey([0; 32]), 4)
            .is_empty());
        assert_eq!(s.len(t), 2);
    }

    #[test]
    fn ring_of_sixteen_and_at_most_max() {
        let mut s = GroupStore::new();
        let t = Timestamp::from_secs(100);
        for p in 0..20u8 {
            s.add(t, &ann(1, p + 1));
        }
        let all = s.announces(t, &PublicKey([1; 32]), &PublicKey([0; 32]), 32);
        assert_eq!(all.len(), 16);
        // Peers 1..=4 were overwritten by 17..=20, in their slots.
        assert_eq!(all[0].peer_pk, PublicKey([17; 32]));
        assert!(!all.iter().any(|a| a.peer_pk == PublicKey([1; 32])));
        assert_eq!(
            s.announces(t, &PublicKey([1; 32]), &PublicKey([0; 32]), 4)
                .len(),
            4
        );
    }

    #[test]
    fn chats_expire_after_thirty_seconds_of_silence() {
        let mut s = GroupStore::new();
        let t = Timestamp::from_secs(100);
        s.add(t, &ann(1, 10));
        let chat = PublicKey([1; 32]);
        let none = PublicKey([0; 32]);
        assert_eq!(
            s.announces(t + Duration::from_secs(29), &chat, &none, 4)
                .len(),
            1
        );
        s.add(t + Duration::from_secs(29), &ann(1, 11));
        assert_eq!(
            s.announces(t + Duration::from_secs(58), &chat, &none, 4)
                .len(),
            2
        );
        assert!(s
            .announces(t + Duration::from_secs(59), &chat, &none, 4)
            .is_empty());
        assert_eq!(s.len(t + Duration::from_secs(59)), 0);
    }

    #[test]
    fn a_flood_of_chats_is_bounded_and_displaces_the_quietest() {
        let mut s = GroupStore::new();
        let t = Timestamp::from_secs(100);
        s.add(t, &ann(0, 1));
        for i in 0..(MAX_GROUPS as u32 + 100) {
            let mut a = ann(0, 2);
            a.chat_pk.0[..4].copy_from_slice(&(i + 1).to_be_bytes());
            // The real chat keeps announcing.
            let now = t + Duration::from_millis(u64::from(i));
            s.add(now, &a);
            if i % 50 == 0 {
                s.add(now, &ann(0, 1));
            }
        }
        let now = t + Duration::from_secs(1);
        assert_eq!(s.len(now), MAX_GROUPS);
        assert_eq!(
            s.announces(now, &PublicKey([0; 32]), &PublicKey([9; 32]), 4)
                .len(),
            1
        );
    }
}
