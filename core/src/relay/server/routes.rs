//! One connection's route slots (c-toxcore 0.2.18 `TCP_server.c` `TCP_Secure_Conn`,
//! `handle_TCP_routing_req`, `rm_connection_index`).
//!
//! Slot `i` is connection id `i + 16` on the wire. A slot is *pending* when the client asked
//! for a key that has not asked back, and *linked* once both have: then it names the other
//! connection and the other's slot. c-toxcore keeps a fixed array of 240 slots (about 10 KiB)
//! in every connection; here the table grows only as far as the highest slot in use, so an
//! idle connection holds none.

use rustox_net_crypto::crypto::PublicKey;

use super::ConnId;
use crate::relay::wire::packet::NUM_CLIENT_CONNECTIONS;

/// The other end of a linked route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    /// The other client's connection.
    pub conn: ConnId,
    /// Its slot for us.
    pub slot: u8,
}

/// A slot in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// The key the client asked for.
    pub pk: PublicKey,
    /// Set once the other client asked for us too.
    pub link: Option<Link>,
}

/// The slots of one connection.
#[derive(Debug, Default)]
pub struct Routes {
    slots: Vec<Option<Route>>,
}

impl Routes {
    /// The slot that holds `pk`, if any.
    pub fn find(&self, pk: &PublicKey) -> Option<u8> {
        self.slots
            .iter()
            .position(|s| s.is_some_and(|r| r.pk == *pk))
            .map(|i| i as u8)
    }

    /// The lowest free slot (c-toxcore's choice), if fewer than 240 are in use.
    pub fn first_free(&self) -> Option<u8> {
        let i = self
            .slots
            .iter()
            .position(Option::is_none)
            .unwrap_or(self.slots.len());
        (i < NUM_CLIENT_CONNECTIONS).then_some(i as u8)
    }

    /// Puts a pending route to `pk` in slot `i` (from [`Self::first_free`]).
    pub fn insert(&mut self, i: u8, pk: PublicKey) {
        let i = usize::from(i);
        debug_assert!(i < NUM_CLIENT_CONNECTIONS);
        if self.slots.len() <= i {
            self.slots.resize(i + 1, None);
        }
        self.slots[i] = Some(Route { pk, link: None });
    }

    /// The route in slot `i`.
    pub fn get(&self, i: u8) -> Option<&Route> {
        self.slots.get(usize::from(i))?.as_ref()
    }

    /// The route in slot `i`, mutably.
    pub fn get_mut(&mut self, i: u8) -> Option<&mut Route> {
        self.slots.get_mut(usize::from(i))?.as_mut()
    }

    /// Frees slot `i`; what it held.
    pub fn remove(&mut self, i: u8) -> Option<Route> {
        let r = self.slots.get_mut(usize::from(i))?.take();
        while self.slots.last().is_some_and(Option::is_none) {
            self.slots.pop();
        }
        if self.slots.is_empty() {
            self.slots = Vec::new();
        }
        r
    }

    /// Every linked slot and its link.
    pub fn links(&self) -> impl Iterator<Item = (u8, Link)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((i as u8, s.as_ref()?.link?)))
    }

    /// Slots in use.
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }

    /// Heap bytes held by the table.
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Option<Route>>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowest_free_slot_is_reused_and_the_table_shrinks() {
        let mut r = Routes::default();
        for i in 0..3u8 {
            assert_eq!(r.first_free(), Some(i));
            r.insert(i, PublicKey([i; 32]));
        }
        assert_eq!(r.find(&PublicKey([1; 32])), Some(1));
        r.remove(1);
        assert_eq!(r.first_free(), Some(1));
        assert_eq!(r.find(&PublicKey([1; 32])), None);
        r.remove(2);
        r.remove(0);
        assert_eq!(r.len(), 0);
        assert_eq!(r.heap_bytes(), 0);
    }

    #[test]
    fn at_most_240_slots() {
        let mut r = Routes::default();
        for i in 0..240u16 {
            let s = r.first_free().unwrap();
            r.insert(s, PublicKey([(i % 200) as u8; 32]));
        }
        assert_eq!(r.len(), 240);
        assert_eq!(r.first_free(), None);
    }
}
