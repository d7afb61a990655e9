//! Onion requests 0x80, 0x81, 0x82 (docs/protocol.md §6.2; c-toxcore 0.2.18 `onion.c`
//! `create_onion_packet`, `handle_send_initial`, `handle_send_1`, `handle_send_2`).
//!
//! One random nonce serves all three layers. Hop A's key is `beforenm(A, our DHT sk)` and
//! the packet carries our DHT pk; hops B and C get two random key pairs made once per path.
//!
//! | kind | from → to | layout                                                                |
//! |------|-----------|-----------------------------------------------------------------------|
//! | 0x80 | client → A | `[0x80][nonce 24][PK1 32][E(k1)[ ipport_B 19 \| PK2 32 \| E(k2)[ ipport_C 19 \| PK3 32 \| E(k3)[ ipport_D 19 \| payload ] ] ] ]` |
//! | 0x81 | A → B     | `[0x81][nonce 24][PK2 32][E(k2)[..]][sendback_A 59]`                  |
//! | 0x82 | B → C     | `[0x82][nonce 24][PK3 32][E(k3)[..]][sendback_B 118]`                 |
//! | —    | C → D     | `[payload][sendback_C 177]`, payload\[0\] = 0x83 or 0x85             |
//!
//! Receipt checks, in c-toxcore's order: total length ≤ 1400 and > `1 + SEND_n`; the layer
//! opens and fills the box exactly; at C the payload kind is 0x83 or 0x85; the next address
//! is UDP (family 2 or 10).

use std::net::SocketAddr;

use rustox_net_crypto::crypto::{
    CryptoRng, KeyPair, LowOrderPublicKey, Nonce, PrecomputedKey, PublicKey, SymmetricKey,
    MAC_SIZE, NONCE_SIZE, PUBLIC_KEY_SIZE,
};

use super::ip_port::{IpPort, IpPortError, SIZE_IPPORT};
use super::sendback::{self, ReturnLevel, SendbackError};
use super::{kind, ONION_MAX_DATA_SIZE, ONION_MAX_PACKET_SIZE, SEND_1, SEND_2, SEND_3};
use crate::dht::wire::packed_node::PackedNode;

/// Bytes before a layer's box: kind, nonce, public key.
pub const LAYER_HEADER_SIZE: usize = 1 + NONCE_SIZE + PUBLIC_KEY_SIZE;

/// Why an onion request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// Not 0x80, 0x81 or 0x82.
    #[error("not an onion request: kind {0:#04x}")]
    UnknownKind(u8),
    /// Longer than 1400 bytes or not longer than its kind's minimum.
    #[error("bad length {len} for onion request {kind:#04x}")]
    BadLength {
        /// The kind byte.
        kind: u8,
        /// The datagram's length.
        len: usize,
    },
    /// The layer did not open with our key.
    #[error("layer does not open")]
    Decrypt,
    /// The next address is not UDP.
    #[error(transparent)]
    Address(#[from] IpPortError),
    /// At the last hop, a payload other than 0x83, 0x85 or 0x87 (c-toxcore 0.2.19+ `onion.c`
    /// `handle_send_2`; 0.2.18 forwarded no 0x87, which kept NGC group announces off every
    /// path through a 0.2.18 node).
    #[error("payload kind {0:#04x} may not leave the last hop")]
    ForbiddenPayload(u8),
    /// A payload of 0 bytes or more than `ONION_MAX_DATA_SIZE` (1174) bytes.
    #[error("payload of {0} bytes")]
    PayloadSize(usize),
    /// A path whose second or third node is a TCP relay.
    #[error("onion hops B and C must be UDP nodes")]
    TcpHop,
    /// Our own sendback could not be made.
    #[error(transparent)]
    Sendback(#[from] SendbackError),
    /// A relay's key has low order: libsodium's `crypto_box_beforenm` refuses it, so no
    /// layer can be sealed to it (or opened from it).
    #[error("low-order public key")]
    LowOrderKey,
}

impl From<LowOrderPublicKey> for RequestError {
    fn from(_: LowOrderPublicKey) -> Self {
        RequestError::LowOrderKey
    }
}

/// The relay a request layer is addressed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hop {
    /// The first relay: receives 0x80 from the client, sends 0x81.
    A,
    /// The second: receives 0x81, sends 0x82.
    B,
    /// The third: receives 0x82, delivers the payload to D.
    C,
}

impl Hop {
    /// The hop a request kind is for.
    pub fn from_kind(k: u8) -> Option<Hop> {
        match k {
            kind::REQUEST_0 => Some(Hop::A),
            kind::REQUEST_1 => Some(Hop::B),
            kind::REQUEST_2 => Some(Hop::C),
            _ => None,
        }
    }

    /// The kind byte of the request this hop receives.
    pub const fn kind(self) -> u8 {
        match self {
            Hop::A => kind::REQUEST_0,
            Hop::B => kind::REQUEST_1,
            Hop::C => kind::REQUEST_2,
        }
    }

    /// The sendback the request arrives with (A: none, B: A's, C: B's).
    pub const fn incoming_sendback(self) -> usize {
        match self {
            Hop::A => 0,
            Hop::B => ReturnLevel::One.size(),
            Hop::C => ReturnLevel::Two.size(),
        }
    }

    /// The sendback this hop adds.
    pub const fn outgoing_level(self) -> ReturnLevel {
        match self {
            Hop::A => ReturnLevel::One,
            Hop::B => ReturnLevel::Two,
            Hop::C => ReturnLevel::Three,
        }
    }

    /// A datagram of this kind must be longer than this (`1 + SEND_1/2/3`).
    const fn min_exclusive(self) -> usize {
        match self {
            Hop::A => 1 + SEND_1,
            Hop::B => 1 + SEND_2,
            Hop::C => 1 + SEND_3,
        }
    }
}

/// A request layer as a relay receives it, before decryption.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestLayer<'a> {
    /// Which hop we are.
    pub hop: Hop,
    /// The path's nonce.
    pub nonce: Nonce,
    /// The key our layer was sealed with (the client's DHT pk at A, a path key at B and C).
    pub pk: PublicKey,
    /// `[MAC][ciphertext]` of our layer.
    pub boxed: &'a [u8],
    /// The previous relay's sendback (empty at A).
    pub sendback: &'a [u8],
}

impl<'a> RequestLayer<'a> {
    /// Splits a datagram, checking its kind and length.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, RequestError> {
        let k = *bytes.first().ok_or(RequestError::UnknownKind(0))?;
        let hop = Hop::from_kind(k).ok_or(RequestError::UnknownKind(k))?;
        let len = bytes.len();
        if len > ONION_MAX_PACKET_SIZE || len <= hop.min_exclusive() {
            return Err(RequestError::BadLength { kind: k, len });
        }
        let bad = RequestError::BadLength { kind: k, len };
        let (nonce, pk, rest) = super::read_nonce_key_box(bytes).map_err(|_| bad)?;
        let (boxed, sendback) = rest
            .len()
            .checked_sub(hop.incoming_sendback())
            .and_then(|split| rest.split_at_checked(split))
            .ok_or(bad)?;
        Ok(RequestLayer {
            hop,
            nonce,
            pk,
            boxed,
            sendback,
        })
    }

    /// Opens our layer with `beforenm(self.pk, our DHT sk)`.
    pub fn open(&self, key: &PrecomputedKey) -> Result<OpenedLayer, RequestError> {
        let plain = key
            .decrypt(&self.nonce, self.boxed)
            .map_err(|_| RequestError::Decrypt)?;
        // The length checks of `parse` leave more than an IP_Port in every layer.
        let Some(&k) = plain.get(SIZE_IPPORT) else {
            return Err(RequestError::Decrypt);
        };
        if self.hop == Hop::C
            && !matches!(
                k,
                kind::ANNOUNCE_REQUEST | kind::ANNOUNCE_REQUEST_NEW | kind::DATA_REQUEST
            )
        {
            return Err(RequestError::ForbiddenPayload(k));
        }
        let next = IpPort::decode_udp(&plain)?;
        Ok(OpenedLayer {
            hop: self.hop,
            nonce: self.nonce,
            next,
            plain,
        })
    }
}

/// A layer a relay has opened: where it goes next and what it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenedLayer {
    /// Which hop we are.
    pub hop: Hop,
    /// The path's nonce, passed on unchanged.
    pub nonce: Nonce,
    /// The next hop (B, C, or D).
    pub next: SocketAddr,
    plain: Vec<u8>,
}

impl OpenedLayer {
    /// What follows the address: `[next PK][next box]` at A and B, the payload for D at C.
    pub fn payload(&self) -> &[u8] {
        // `open` made sure the plaintext is longer than the IP_Port.
        self.plain.get(SIZE_IPPORT..).unwrap_or_default()
    }

    /// The datagram for [`Self::next`]: the payload re-framed, with our sendback appended.
    /// `from` is where the request came from, `incoming` the sendback it carried
    /// ([`RequestLayer::sendback`]), `key` our sendback key and `nonce` a fresh random one.
    pub fn forward(
        &self,
        from: &IpPort,
        incoming: &[u8],
        key: &SymmetricKey,
        nonce: &Nonce,
    ) -> Result<Vec<u8>, RequestError> {
        let level = self.hop.outgoing_level();
        let mut out = Vec::with_capacity(
            (1 + NONCE_SIZE)
                .saturating_add(self.payload().len())
                .saturating_add(level.size()),
        );
        match self.hop {
            Hop::A | Hop::B => {
                out.push(if self.hop == Hop::A {
                    kind::REQUEST_1
                } else {
                    kind::REQUEST_2
                });
                out.extend_from_slice(&self.nonce.0);
            }
            Hop::C => {}
        }
        out.extend_from_slice(self.payload());
        sendback::seal_into(&mut out, level, key, nonce, from, incoming)?;
        Ok(out)
    }
}

/// The three relays of a path and the keys to seal layers for them: made once, then used for
/// every request on the path at the cost of three XSalsa20-Poly1305 passes (no key
/// agreement). c-toxcore's `Onion_Path` / `create_onion_path`.
#[derive(Debug, Clone)]
pub struct OnionPath {
    nodes: [PackedNode; 3],
    public_keys: [PublicKey; 3],
    keys: [PrecomputedKey; 3],
}

impl OnionPath {
    /// A path through `nodes` (A, B, C): layer A under our DHT key pair, B and C under two
    /// fresh random key pairs whose secret halves are dropped once the shared keys exist.
    /// A may be a TCP relay (the client then sends [`Self::tcp_request`] to it); B and C
    /// must be UDP nodes.
    pub fn new(
        dht_keys: &KeyPair,
        nodes: [PackedNode; 3],
        rng: &mut dyn CryptoRng,
    ) -> Result<Self, RequestError> {
        let first = PrecomputedKey::new(&nodes[0].pk, &dht_keys.secret)?;
        Self::with_first_key(dht_keys.public, first, nodes, rng)
    }

    /// As [`Self::new`], with hop A's shared key taken from the caller's key cache.
    pub fn with_first_key(
        dht_pk: PublicKey,
        first: PrecomputedKey,
        nodes: [PackedNode; 3],
        rng: &mut dyn CryptoRng,
    ) -> Result<Self, RequestError> {
        if nodes[1].tcp || nodes[2].tcp {
            return Err(RequestError::TcpHop);
        }
        let kb = KeyPair::generate(rng);
        let kc = KeyPair::generate(rng);
        let keys = [
            first,
            PrecomputedKey::new(&nodes[1].pk, &kb.secret)?,
            PrecomputedKey::new(&nodes[2].pk, &kc.secret)?,
        ];
        Ok(OnionPath {
            nodes,
            public_keys: [dht_pk, kb.public, kc.public],
            keys,
        })
    }

    /// A, B and C.
    pub fn nodes(&self) -> &[PackedNode; 3] {
        &self.nodes
    }

    /// The public keys the three layers carry (ours, then the two path keys).
    pub fn layer_keys(&self) -> &[PublicKey; 3] {
        &self.public_keys
    }

    /// A 0x80 datagram for [`Self::nodes`]`[0]` that delivers `payload` to `dest`.
    pub fn request(
        &self,
        dest: SocketAddr,
        payload: &[u8],
        rng: &mut dyn CryptoRng,
    ) -> Result<Vec<u8>, RequestError> {
        let (nonce, mut out) = start(payload, 1 + SEND_1, rng)?;
        out.push(kind::REQUEST_0);
        out.extend_from_slice(&nonce.0);
        out.extend_from_slice(self.public_keys[0].as_bytes());
        let mac_at = out.len();
        out.extend_from_slice(&[0; MAC_SIZE]);
        self.inner_layers(&mut out, &nonce, dest, payload);
        super::seal_after(&mut out, mac_at, |plain| {
            self.keys[0].encrypt_in_place(&nonce, plain)
        });
        Ok(out)
    }

    /// The body of a TCP onion request (TCP packet 0x08, §6.2) for relay A: the same
    /// packet without A's layer, `[nonce][ipport_B][PK2][E(k2)[..]]`
    /// (`create_onion_packet_tcp`).
    pub fn tcp_request(
        &self,
        dest: SocketAddr,
        payload: &[u8],
        rng: &mut dyn CryptoRng,
    ) -> Result<Vec<u8>, RequestError> {
        let (nonce, mut out) = start(payload, SEND_1, rng)?;
        out.extend_from_slice(&nonce.0);
        self.inner_layers(&mut out, &nonce, dest, payload);
        Ok(out)
    }

    /// Appends `[ipport_B][PK2][E(k2)[ipport_C | PK3 | E(k3)[ipport_D | payload]]]`.
    fn inner_layers(&self, out: &mut Vec<u8>, nonce: &Nonce, dest: SocketAddr, payload: &[u8]) {
        out.extend_from_slice(&IpPort::Udp(self.nodes[1].addr).encode());
        out.extend_from_slice(self.public_keys[1].as_bytes());
        let mac2 = out.len();
        out.extend_from_slice(&[0; MAC_SIZE]);
        out.extend_from_slice(&IpPort::Udp(self.nodes[2].addr).encode());
        out.extend_from_slice(self.public_keys[2].as_bytes());
        let mac3 = out.len();
        out.extend_from_slice(&[0; MAC_SIZE]);
        out.extend_from_slice(&IpPort::Udp(dest).encode());
        out.extend_from_slice(payload);
        super::seal_after(out, mac3, |plain| {
            self.keys[2].encrypt_in_place(nonce, plain)
        });
        super::seal_after(out, mac2, |plain| {
            self.keys[1].encrypt_in_place(nonce, plain)
        });
    }
}

fn check_payload(payload: &[u8]) -> Result<(), RequestError> {
    if payload.is_empty() || payload.len() > ONION_MAX_DATA_SIZE {
        return Err(RequestError::PayloadSize(payload.len()));
    }
    Ok(())
}

/// How a request to send `payload` begins: the payload checked, the nonce every layer
/// uses drawn, and room for `head` bytes of layers before it.
fn start(
    payload: &[u8],
    head: usize,
    rng: &mut dyn CryptoRng,
) -> Result<(Nonce, Vec<u8>), RequestError> {
    check_payload(payload)?;
    let nonce = Nonce::random(rng);
    Ok((
        nonce,
        Vec::with_capacity(head.saturating_add(payload.len())),
    ))
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use crate::onion::wire::{RETURN_3, SEND_BASE};
    use proptest::prelude::*;
    use rand_chacha::rand_core::SeedableRng;

    struct Relay {
        keys: KeyPair,
        addr: SocketAddr,
        sym: SymmetricKey,
    }

    fn setup() -> (rand_chacha::ChaCha8Rng, KeyPair, [Relay; 3], OnionPath) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let me = KeyPair::generate(&mut rng);
        let relays: [Relay; 3] = std::array::from_fn(|i| Relay {
            keys: KeyPair::generate(&mut rng),
            addr: SocketAddr::from(([10, 0, 0, i as u8 + 1], 33445)),
            sym: SymmetricKey::generate(&mut rng),
        });
        let nodes = std::array::from_fn(|i| PackedNode::udp(relays[i].addr, relays[i].keys.public));
        let path = OnionPath::new(&me, nodes, &mut rng).unwrap();
        (rng, me, relays, path)
    }

    fn relay(
        r: &Relay,
        from: SocketAddr,
        bytes: &[u8],
    ) -> Result<(SocketAddr, Vec<u8>), RequestError> {
        let layer = RequestLayer::parse(bytes)?;
        let opened = layer.open(&PrecomputedKey::new(&layer.pk, &r.keys.secret).unwrap())?;
        let out = opened.forward(&IpPort::Udp(from), layer.sendback, &r.sym, &Nonce([9; 24]))?;
        Ok((opened.next, out))
    }

    #[test]
    fn three_hops_deliver_the_payload_with_a_177_byte_sendback() {
        let (mut rng, me, relays, path) = setup();
        let client: SocketAddr = "192.0.2.1:4000".parse().unwrap();
        let dest: SocketAddr = "198.51.100.7:33445".parse().unwrap();
        let mut payload = vec![kind::ANNOUNCE_REQUEST];
        payload.extend_from_slice(&[7; 176]);
        let p0 = path.request(dest, &payload, &mut rng).unwrap();
        assert_eq!(p0.len(), 1 + SEND_1 + payload.len());
        assert_eq!(p0[0], 0x80);
        assert_eq!(&p0[25..57], me.public.as_bytes());
        let (to_b, p1) = relay(&relays[0], client, &p0).unwrap();
        assert_eq!(to_b, relays[1].addr);
        assert_eq!(p1[0], 0x81);
        assert_eq!(&p1[1..25], &p0[1..25], "one nonce for all layers");
        assert_eq!(p1.len(), p0.len() - 8);
        let (to_c, p2) = relay(&relays[1], relays[0].addr, &p1).unwrap();
        assert_eq!(to_c, relays[2].addr);
        assert_eq!(p2[0], 0x82);
        let (to_d, p3) = relay(&relays[2], relays[1].addr, &p2).unwrap();
        assert_eq!(to_d, dest);
        assert_eq!(&p3[..payload.len()], &payload[..]);
        assert_eq!(p3.len(), payload.len() + RETURN_3);
        // The sendbacks unwind: C's names B, B's names A, A's names the client.
        let s3 = sendback::open(ReturnLevel::Three, &relays[2].sym, &p3[payload.len()..]).unwrap();
        assert_eq!(s3.prev, IpPort::Udp(relays[1].addr));
        let s2 = sendback::open(ReturnLevel::Two, &relays[1].sym, &s3.inner).unwrap();
        assert_eq!(s2.prev, IpPort::Udp(relays[0].addr));
        let s1 = sendback::open(ReturnLevel::One, &relays[0].sym, &s2.inner).unwrap();
        assert_eq!(s1.prev, IpPort::Udp(client));
        assert!(s1.inner.is_empty());
    }

    #[test]
    fn tcp_request_is_the_udp_request_without_layer_a() {
        let (mut rng, _, relays, path) = setup();
        let dest: SocketAddr = "198.51.100.7:33445".parse().unwrap();
        let body = path
            .tcp_request(dest, &[kind::DATA_REQUEST; 200], &mut rng)
            .unwrap();
        assert_eq!(body.len(), NONCE_SIZE + SIZE_IPPORT + SEND_BASE * 2 + 200);
        assert_eq!(IpPort::decode_udp(&body[NONCE_SIZE..]), Ok(relays[1].addr));
        // What a TCP server's onion_send_1 makes of it: a 0x81 to B.
        let mut p1 = vec![kind::REQUEST_1];
        p1.extend_from_slice(&body[..NONCE_SIZE]);
        p1.extend_from_slice(&body[NONCE_SIZE + SIZE_IPPORT..]);
        sendback::seal_into(
            &mut p1,
            ReturnLevel::One,
            &relays[0].sym,
            &Nonce([1; 24]),
            &IpPort::Udp("1.1.1.1:1".parse().unwrap()),
            &[],
        )
        .unwrap();
        let (to_c, _) = relay(&relays[1], relays[0].addr, &p1).unwrap();
        assert_eq!(to_c, relays[2].addr);
    }

    #[test]
    fn limits_and_refusals() {
        let (mut rng, me, relays, path) = setup();
        let dest: SocketAddr = "198.51.100.7:1".parse().unwrap();
        assert_eq!(
            path.request(dest, &[], &mut rng),
            Err(RequestError::PayloadSize(0))
        );
        assert_eq!(
            path.request(dest, &[0x83; ONION_MAX_DATA_SIZE + 1], &mut rng),
            Err(RequestError::PayloadSize(1175))
        );
        let max = path
            .request(dest, &[0x83; ONION_MAX_DATA_SIZE], &mut rng)
            .unwrap();
        assert_eq!(max.len(), ONION_MAX_PACKET_SIZE);
        assert!(RequestLayer::parse(&max).is_ok());
        let mut long = max.clone();
        long.push(0);
        assert_eq!(
            RequestLayer::parse(&long),
            Err(RequestError::BadLength {
                kind: 0x80,
                len: 1401
            })
        );
        assert!(RequestLayer::parse(&[0x80; 226]).is_err());
        assert!(RequestLayer::parse(&[0x81; 218]).is_err());
        assert!(RequestLayer::parse(&[0x82; 210]).is_err());
        assert!(RequestLayer::parse(&[0x82; 211]).is_ok());
        assert_eq!(
            RequestLayer::parse(&[0x83; 300]),
            Err(RequestError::UnknownKind(0x83))
        );
        // A forbidden payload stops at C.
        let p0 = path.request(dest, &[0x20; 50], &mut rng).unwrap();
        let from: SocketAddr = "1.1.1.1:1".parse().unwrap();
        let (_, p1) = relay(&relays[0], from, &p0).unwrap();
        let (_, p2) = relay(&relays[1], from, &p1).unwrap();
        assert_eq!(
            relay(&relays[2], from, &p2),
            Err(RequestError::ForbiddenPayload(0x20))
        );
        // NGC's extended announce 0x87 passes C.
        let p0 = path.request(dest, &[0x87; 250], &mut rng).unwrap();
        let (_, p1) = relay(&relays[0], from, &p0).unwrap();
        let (_, p2) = relay(&relays[1], from, &p1).unwrap();
        assert!(relay(&relays[2], from, &p2).is_ok());
        // The wrong relay cannot open the layer.
        assert_eq!(relay(&relays[1], from, &p0), Err(RequestError::Decrypt));
        // TCP nodes may not be B or C.
        let mut nodes = *path.nodes();
        nodes[2].tcp = true;
        assert_eq!(
            OnionPath::new(&me, nodes, &mut rng).err(),
            Some(RequestError::TcpHop)
        );
    }

    proptest! {
        #[test]
        fn any_payload_round_trips(len in 1usize..=ONION_MAX_DATA_SIZE, seed in any::<u64>()) {
            let (_, _, relays, path) = setup();
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut payload = vec![(seed as u8 & 2) | 0x83 ; len];
            payload[0] = if seed % 2 == 0 { 0x83 } else { 0x85 };
            let dest: SocketAddr = "[2001:db8::1]:9".parse().unwrap();
            let p0 = path.request(dest, &payload, &mut rng).unwrap();
            let from: SocketAddr = "1.1.1.1:1".parse().unwrap();
            let (_, p1) = relay(&relays[0], from, &p0).unwrap();
            let (_, p2) = relay(&relays[1], from, &p1).unwrap();
            let (to, p3) = relay(&relays[2], from, &p2).unwrap();
            prop_assert_eq!(to, dest);
            prop_assert_eq!(&p3[..len], &payload[..]);
        }

        #[test]
        fn parse_and_open_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..1500), k in 0x80u8..=0x82) {
            let mut bytes = bytes;
            if let Some(b) = bytes.first_mut() { *b = k; }
            if let Ok(layer) = RequestLayer::parse(&bytes) {
                let key = PrecomputedKey::new(&layer.pk, &rustox_net_crypto::crypto::SecretKey::from_bytes([1; 32])).unwrap();
                let _ = layer.open(&key);
            }
        }
    }
}
