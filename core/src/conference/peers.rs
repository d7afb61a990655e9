//! One conference peer (`Group_Peer` in `toxcore/group.c`): its keys, its name, the last
//! message numbers seen from it (de-duplication) and its lossy window.

use std::cmp::Ordering;

use rustox_net_crypto::crypto::PublicKey;

/// `MAX_LAST_MESSAGE_INFOS`: message numbers remembered per peer.
pub const MAX_LAST_MESSAGE_INFOS: usize = 8;
/// `MAX_LOSSY_COUNT`: the lossy window, in packets.
pub const MAX_LOSSY_COUNT: u16 = 256;

/// A peer, online or frozen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    /// Its real key.
    pub real_pk: PublicKey,
    /// Its DHT key as last heard.
    pub temp_pk: PublicKey,
    /// `temp_pk_updated`: the DHT key was heard from a fresh source since (un)freezing.
    pub temp_pk_updated: bool,
    /// A friend of ours when it was added (frozen friends are kept first).
    pub is_friend: bool,
    /// Seconds (the engine's clock, Unix time when the node sets it) it was last heard.
    pub last_active: u64,
    /// Message numbers seen, newest first.
    pub infos: MessageInfos,
    /// Its name.
    pub nick: Vec<u8>,
    /// `nick_updated`: a NAME message set the name (a peer list no longer may).
    pub nick_updated: bool,
    /// Its 16-bit peer id.
    pub peer_number: u16,
    /// Lossy packets seen.
    pub lossy: LossyWindow,
}

impl Peer {
    /// A peer just heard of (`addpeer`'s new entry).
    pub fn new(real_pk: PublicKey, temp_pk: PublicKey, peer_number: u16, now: u64) -> Self {
        Peer {
            real_pk,
            temp_pk,
            temp_pk_updated: true,
            is_friend: false,
            last_active: now,
            infos: MessageInfos::default(),
            nick: Vec::new(),
            nick_updated: false,
            peer_number,
            lossy: LossyWindow::default(),
        }
    }
}

/// `last_message_infos`: the last [`MAX_LAST_MESSAGE_INFOS`] (number, id) pairs accepted
/// from a peer, strictly decreasing in number (modulo 2³²).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageInfos {
    slots: [(u32, u8); MAX_LAST_MESSAGE_INFOS],
    len: usize,
}

impl MessageInfos {
    /// `check_message_info`: whether message `number` with id `id` is new (and should be
    /// acted on and forwarded); if so it is remembered. A number at or below the oldest
    /// remembered one is refused, as is a NAME or TITLE older than the newest of its kind.
    pub fn check(&mut self, number: u32, id: u8) -> bool {
        let ignore_older =
            id == super::wire::MESSAGE_NAME_ID || id == super::wire::MESSAGE_TITLE_ID;
        let mut at = self.len;
        for (i, &(n, m)) in self.slots.iter().take(self.len).enumerate() {
            // `message_number - (n + 1) <= 2^31`: newer than n, modulo 2^32.
            if number.wrapping_sub(n.wrapping_add(1)) <= 1 << 31 {
                at = i;
                break;
            }
            if number == n {
                return false;
            }
            if ignore_older && id == m {
                return false;
            }
        }
        if at >= MAX_LAST_MESSAGE_INFOS {
            return false;
        }
        if self.len < MAX_LAST_MESSAGE_INFOS {
            self.len += 1;
        }
        // Shift [at, len-1) right by one, dropping the oldest when full.
        if let Some(tail) = self.slots.get_mut(at..self.len) {
            tail.rotate_right(1);
            if let Some(first) = tail.first_mut() {
                *first = (number, id);
            }
        }
        true
    }

    /// The numbers remembered, newest first.
    #[cfg(test)]
    pub fn numbers(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots.iter().take(self.len).map(|&(n, _)| n)
    }
}

/// `recv_lossy`, `bottom_lossy_number`, `top_lossy_number`: which of the last
/// [`MAX_LOSSY_COUNT`] lossy numbers were seen (a bit each instead of a byte each).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LossyWindow {
    bits: [u64; 4],
    bottom: u16,
    top: u16,
}

/// What [`LossyWindow::check`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossySeen {
    /// New: act on it and forward it.
    New,
    /// Seen before.
    Duplicate,
    /// Too far behind the window.
    Stale,
}

impl LossyWindow {
    fn slot(n: u16) -> (usize, u64) {
        let i = usize::from(n % MAX_LOSSY_COUNT);
        (i / 64, 1u64 << (i % 64))
    }
    fn get(&self, n: u16) -> bool {
        let (w, b) = Self::slot(n);
        self.bits.get(w).is_some_and(|x| x & b != 0)
    }
    fn set(&mut self, n: u16, v: bool) {
        let (w, b) = Self::slot(n);
        if let Some(x) = self.bits.get_mut(w) {
            if v {
                *x |= b;
            } else {
                *x &= !b;
            }
        }
    }

    /// `lossy_packet_not_received`.
    pub fn check(&mut self, n: u16) -> LossySeen {
        if self.bottom == self.top {
            self.top = n;
            self.bottom = n.wrapping_sub(MAX_LOSSY_COUNT).wrapping_add(1);
            self.set(n, true);
            return LossySeen::New;
        }
        if n.wrapping_sub(self.bottom) < MAX_LOSSY_COUNT {
            if self.get(n) {
                return LossySeen::Duplicate;
            }
            self.set(n, true);
            return LossySeen::New;
        }
        if n.wrapping_sub(self.bottom) > 1 << 15 {
            return LossySeen::Stale;
        }
        let top_distance = n.wrapping_sub(self.top);
        if top_distance >= MAX_LOSSY_COUNT {
            self.bits = [0; 4];
        } else {
            let mut i = self.bottom;
            for _ in 0..top_distance {
                self.set(i, false);
                i = i.wrapping_add(1);
            }
        }
        self.top = n;
        self.bottom = n.wrapping_sub(MAX_LOSSY_COUNT).wrapping_add(1);
        self.set(n, true);
        LossySeen::New
    }
}

/// `cmp_frozen`: friends first, then the most recently active.
pub fn cmp_frozen(a: &Peer, b: &Peer) -> Ordering {
    match (a.is_friend, b.is_friend) {
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => b.last_active.cmp(&a.last_active),
    }
}
