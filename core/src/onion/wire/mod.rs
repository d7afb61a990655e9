//! Onion wire formats (docs/protocol.md §6.1–§6.3, c-toxcore 0.2.18 `onion.c`,
//! `onion_announce.c`, `onion_client.c`), one module per packet family.
//!
//! Every parser takes untrusted bytes and returns a typed error; none panics, none trusts a
//! length, and none allocates more than [`ONION_MAX_PACKET_SIZE`]. Size checks come before
//! any decryption, in the order c-toxcore makes them, so a wrong-sized datagram never costs a
//! key agreement.
//!
//! ```text
//! client ─0x80─► A ─0x81─► B ─0x82─► C ─0x83/0x85─► D
//! client ◄─resp── A ◄─0x8e── B ◄─0x8d── C ◄─0x8c───── D
//! ```
// Wire code: every length comes from the network, so no indexing, slicing or arithmetic
// that could panic or wrap (the onion client and server are not held to it).
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

pub mod announce;
pub mod announce_ext;
pub mod data;
pub mod group_announce;
pub mod ip_port;
pub mod request;
pub mod response;
pub mod sendback;

use rustox_net_crypto::crypto::{Nonce, PublicKey, MAC_SIZE, NONCE_SIZE, PUBLIC_KEY_SIZE};
use rustox_net_crypto::wire::{Reader, TooShort};

use ip_port::SIZE_IPPORT;

/// First byte of each onion datagram (docs/protocol.md §2.1, `network.h`).
pub mod kind {
    /// `NET_PACKET_ONION_SEND_INITIAL`: client → first hop A.
    pub const REQUEST_0: u8 = 0x80;
    /// `NET_PACKET_ONION_SEND_1`: A → B.
    pub const REQUEST_1: u8 = 0x81;
    /// `NET_PACKET_ONION_SEND_2`: B → C.
    pub const REQUEST_2: u8 = 0x82;
    /// `NET_PACKET_ANNOUNCE_REQUEST_OLD`: C → D, announce or search.
    pub const ANNOUNCE_REQUEST: u8 = 0x83;
    /// `NET_PACKET_ANNOUNCE_RESPONSE_OLD`: D's answer, back along the path.
    pub const ANNOUNCE_RESPONSE: u8 = 0x84;
    /// `NET_PACKET_ONION_DATA_REQUEST`: C → D, data for an announced key.
    pub const DATA_REQUEST: u8 = 0x85;
    /// `NET_PACKET_ONION_DATA_RESPONSE`: D → the announced client, along its stored path.
    pub const DATA_RESPONSE: u8 = 0x86;
    /// `NET_PACKET_ANNOUNCE_REQUEST`: C → D, an announce or search answered with a node
    /// count, and for NGC clients (0.2.19+) with a group announce (`announce_ext`).
    pub const ANNOUNCE_REQUEST_NEW: u8 = 0x87;
    /// `NET_PACKET_ANNOUNCE_RESPONSE`: the answer to 0x87.
    pub const ANNOUNCE_RESPONSE_NEW: u8 = 0x88;
    /// `NET_PACKET_ONION_RECV_3`: D → C.
    pub const RESPONSE_3: u8 = 0x8c;
    /// `NET_PACKET_ONION_RECV_2`: C → B.
    pub const RESPONSE_2: u8 = 0x8d;
    /// `NET_PACKET_ONION_RECV_1`: B → A.
    pub const RESPONSE_1: u8 = 0x8e;
}

/// `ONION_MAX_PACKET_SIZE`: no onion datagram is longer.
pub const ONION_MAX_PACKET_SIZE: usize = 1400;
/// `ONION_RETURN_1`: the sendback A adds (`[nonce][E(ipport)]`).
pub const RETURN_1: usize = NONCE_SIZE + SIZE_IPPORT + MAC_SIZE;
/// `ONION_RETURN_2`: the sendback B adds (wraps A's).
pub const RETURN_2: usize = NONCE_SIZE + SIZE_IPPORT + MAC_SIZE + RETURN_1;
/// `ONION_RETURN_3`: the sendback C adds (wraps B's); D stores it with an announce.
pub const RETURN_3: usize = NONCE_SIZE + SIZE_IPPORT + MAC_SIZE + RETURN_2;
/// `ONION_SEND_BASE`: what one layer adds inside its parent (`[ipport][pk][MAC]`).
pub const SEND_BASE: usize = PUBLIC_KEY_SIZE + SIZE_IPPORT + MAC_SIZE;
/// `ONION_SEND_3`: the smallest 0x82 after its kind byte, without payload.
pub const SEND_3: usize = NONCE_SIZE + SEND_BASE + RETURN_2;
/// `ONION_SEND_2`: the smallest 0x81 after its kind byte, without payload.
pub const SEND_2: usize = NONCE_SIZE + SEND_BASE * 2 + RETURN_1;
/// `ONION_SEND_1`: the smallest 0x80 after its kind byte, without payload.
pub const SEND_1: usize = NONCE_SIZE + SEND_BASE * 3;
/// `ONION_MAX_DATA_SIZE` = 1174: the longest payload a 0x80 carries to D.
pub const ONION_MAX_DATA_SIZE: usize = ONION_MAX_PACKET_SIZE - (SEND_1 + 1);
/// `ONION_RESPONSE_MAX_DATA_SIZE` = 1222: the longest response D may send back.
pub const ONION_RESPONSE_MAX_DATA_SIZE: usize = ONION_MAX_PACKET_SIZE - (1 + RETURN_3);

/// Encrypts `out[mac_at + MAC_SIZE..]` in place with `seal` and writes its MAC into the
/// `MAC_SIZE` bytes at `mac_at`, which the caller appended as a placeholder. Every caller
/// takes `mac_at` from `out.len()` just before appending those bytes, so the slot is always
/// there; were it not, nothing would be written.
fn seal_after(out: &mut [u8], mac_at: usize, seal: impl FnOnce(&mut [u8]) -> [u8; MAC_SIZE]) {
    if let Some((mac_slot, plain)) = out
        .get_mut(mac_at..)
        .and_then(<[u8]>::split_first_chunk_mut::<MAC_SIZE>)
    {
        *mac_slot = seal(plain);
    }
}

/// `[kind][nonce 24][public key 32][box]`, how 0x83, 0x87 and 0x86 begin: the nonce, the
/// key and the box.
fn read_nonce_key_box(bytes: &[u8]) -> Result<(Nonce, PublicKey, &[u8]), TooShort> {
    let mut r = Reader::after_kind(bytes);
    let nonce = Nonce(r.array()?);
    let pk = PublicKey(r.array()?);
    Ok((nonce, pk, r.rest()))
}

/// True for the kinds an onion server handles or counts (0x80–0x88, 0x8c–0x8e).
pub fn is_onion_kind(k: u8) -> bool {
    matches!(k, 0x80..=0x88 | 0x8c..=0x8e)
}

/// Keys for the wire modules' tests.
#[cfg(test)]
pub(crate) mod test_keys {
    use rand_chacha::rand_core::SeedableRng;
    use rustox_net_crypto::crypto::{KeyPair, PrecomputedKey, PublicKey, SecretKey};

    /// A client's and a node's key pairs, drawn from `seed`, and the key each precomputes
    /// for the other: `(client, node, ck, nk)`, `ck` the client's and `nk` the node's.
    pub(crate) fn client_and_node(seed: u64) -> (KeyPair, KeyPair, PrecomputedKey, PrecomputedKey) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let (client, node) = (KeyPair::generate(&mut rng), KeyPair::generate(&mut rng));
        let ck = PrecomputedKey::new(&node.public, &client.secret).unwrap();
        let nk = PrecomputedKey::new(&client.public, &node.secret).unwrap();
        (client, node, ck, nk)
    }

    /// A fixed key, for parsers fed arbitrary bytes.
    pub(crate) fn any_key() -> PrecomputedKey {
        PrecomputedKey::new(&PublicKey([1; 32]), &SecretKey::from_bytes([2; 32])).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_match_c_toxcore() {
        assert_eq!((RETURN_1, RETURN_2, RETURN_3), (59, 118, 177));
        assert_eq!((SEND_BASE, SEND_1, SEND_2, SEND_3), (67, 225, 217, 209));
        assert_eq!(ONION_MAX_DATA_SIZE, 1174);
        assert_eq!(ONION_RESPONSE_MAX_DATA_SIZE, 1222);
    }
}
