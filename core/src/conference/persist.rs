//! A conference to and from the profile's CONFERENCES records (`save_conf` / `load_group`
//! in `toxcore/group.c`): only connected conferences are saved; every peer but us, online
//! ones first then frozen ones, goes in; on loading all of them come back frozen and we are
//! the only online peer, so the conference rejoins as links to them come up.

use crate::savedata::{SavedConference, SavedConferencePeer};

use super::group::{
    Group, Status, MAX_FROZEN_PEERS, SAVE_OFFSET_LOSSY_MESSAGE_NUMBER, SAVE_OFFSET_MESSAGE_NUMBER,
};
use super::io::Io;
use super::peers::Peer;
use super::wire::MAX_NAME_LEN;

impl Group {
    /// `save_conf`; None for a conference still joining (c-toxcore skips those).
    pub fn to_saved(&self, io: &Io) -> Option<SavedConference> {
        if self.status != Status::Connected {
            return None;
        }
        let peers = self
            .peers
            .iter()
            .chain(self.frozen.iter())
            .filter(|p| p.real_pk != io.self_pk)
            .map(|p| SavedConferencePeer {
                real_pk: p.real_pk,
                temp_pk: p.temp_pk,
                peer_number: p.peer_number,
                last_active: p.last_active,
                name: p.nick.clone(),
            })
            .collect();
        Some(SavedConference {
            kind: self.kind,
            id: self.id,
            message_number: self.message_number.wrapping_add(SAVE_OFFSET_MESSAGE_NUMBER),
            lossy_message_number: self
                .lossy_message_number
                .wrapping_add(SAVE_OFFSET_LOSSY_MESSAGE_NUMBER),
            peer_number: self.peer_number,
            title: self.title.clone(),
            peers,
        })
    }

    /// `load_group` and the `addpeer` of ourselves after it: `None` when a length is beyond
    /// c-toxcore's bounds (it refuses the whole section then; the codec already checks).
    pub fn from_saved(number: u16, saved: &SavedConference, io: &mut Io) -> Option<Group> {
        if saved.title.len() > MAX_NAME_LEN
            || saved.peers.iter().any(|p| p.name.len() > MAX_NAME_LEN)
        {
            return None;
        }
        let mut g = Group::new(number, Status::Connected, saved.kind, saved.id);
        g.message_number = saved.message_number;
        g.lossy_message_number = saved.lossy_message_number;
        g.peer_number = saved.peer_number;
        g.title = saved.title.clone();
        for p in saved.peers.iter().take(MAX_FROZEN_PEERS) {
            let mut peer = Peer::new(p.real_pk, p.temp_pk, p.peer_number, p.last_active);
            peer.temp_pk_updated = false;
            peer.nick = p.name.clone();
            peer.is_friend = io.is_friend(&p.real_pk);
            g.frozen.push(peer);
        }
        let count = u32::try_from(g.frozen.len()).unwrap_or(u32::MAX);
        if count > g.max_frozen {
            g.max_frozen = count;
        }
        let (own, own_dht) = (io.self_pk, io.self_dht_pk);
        let index = g.add_peer(io, own, own_dht, g.peer_number, true, false)?;
        let name = io.self_name.clone();
        g.set_nick(io, index, &name, false);
        Some(g)
    }
}
