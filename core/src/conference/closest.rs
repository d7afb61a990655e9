//! The closest-peer rule (`add_to_closest`, `calculate_comp_value` in `toxcore/group.c`):
//! each member keeps connections to [`DESIRED_CLOSEST`] peers whose real keys are nearest to
//! its own, half on each side on a ring of the keys' first 8 bytes, so the conference forms
//! one connected ring whatever its size.

use rustox_net_crypto::crypto::PublicKey;

/// `DESIRED_CLOSEST`.
pub const DESIRED_CLOSEST: usize = 4;

/// `calculate_comp_value`: the first 8 bytes of `a` minus those of `b`, as u64, wrapping.
pub fn comp_value(a: &PublicKey, b: &PublicKey) -> u64 {
    let head = |k: &PublicKey| {
        let mut bytes = [0u8; 8];
        for (d, s) in bytes.iter_mut().zip(k.0.iter()) {
            *d = *s;
        }
        u64::from_be_bytes(bytes)
    };
    head(a).wrapping_sub(head(b))
}

/// `Groupchat_Closest_Change`: what happened to the set since the connections were
/// last matched to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Change {
    /// Nothing.
    #[default]
    None,
    /// A peer went in.
    Added,
    /// A peer went out: the set is rebuilt from the peer list.
    Removed,
}

/// `closest_peers` and `changed`.
#[derive(Debug, Clone, Default)]
pub struct Closest {
    slots: [Option<(PublicKey, PublicKey)>; DESIRED_CLOSEST],
    /// `changed`.
    pub changed: Change,
}

impl Closest {
    /// `add_to_closest` for our key `own`: whether `real_pk` is (now) in the set. A peer it
    /// displaces is tried again, as group.c does, which ends after a few rounds; the loop is
    /// bounded anyway.
    pub fn add(&mut self, own: &PublicKey, real_pk: PublicKey, temp_pk: PublicKey) -> bool {
        let mut candidate = (real_pk, temp_pk);
        let mut first = None;
        for _ in 0..=DESIRED_CLOSEST * 2 {
            let (added, displaced) = self.add_once(own, candidate.0, candidate.1);
            if first.is_none() {
                first = Some(added);
            }
            match displaced {
                Some(old) => candidate = old,
                None => break,
            }
        }
        first.unwrap_or(false)
    }

    fn add_once(
        &mut self,
        own: &PublicKey,
        real_pk: PublicKey,
        temp_pk: PublicKey,
    ) -> (bool, Option<(PublicKey, PublicKey)>) {
        if *own == real_pk {
            return (false, None);
        }
        if self.contains(&real_pk) {
            return (true, None);
        }
        let mut index = self.slots.iter().position(Option::is_none);
        if index.is_none() {
            let mut comp_d = 0u64;
            let comp_val = comp_value(own, &real_pk);
            for (i, slot) in self.slots.iter().enumerate().take(DESIRED_CLOSEST / 2) {
                if let Some((pk, _)) = slot {
                    let comp = comp_value(own, pk);
                    if comp > comp_val && comp > comp_d {
                        index = Some(i);
                        comp_d = comp;
                    }
                }
            }
            let comp_val = comp_value(&real_pk, own);
            for (i, slot) in self.slots.iter().enumerate().skip(DESIRED_CLOSEST / 2) {
                if let Some((pk, _)) = slot {
                    let comp = comp_value(pk, own);
                    if comp > comp_val && comp > comp_d {
                        index = Some(i);
                        comp_d = comp;
                    }
                }
            }
        }
        let Some(slot) = index.and_then(|i| self.slots.get_mut(i)) else {
            return (false, None);
        };
        let old = slot.replace((real_pk, temp_pk));
        if self.changed == Change::None {
            self.changed = Change::Added;
        }
        (true, old)
    }

    /// `pk_in_closest_peers`.
    pub fn contains(&self, real_pk: &PublicKey) -> bool {
        self.slots.iter().flatten().any(|(pk, _)| pk == real_pk)
    }

    /// `remove_from_closest`.
    pub fn remove(&mut self, real_pk: &PublicKey) {
        for slot in self.slots.iter_mut() {
            if slot.as_ref().is_some_and(|(pk, _)| pk == real_pk) {
                *slot = None;
                self.changed = Change::Removed;
                break;
            }
        }
    }

    /// The peers in the set: (real key, DHT key).
    pub fn peers(&self) -> impl Iterator<Item = &(PublicKey, PublicKey)> {
        self.slots.iter().flatten()
    }
}
