//! Data request 0x85 and data response 0x86 (docs/protocol.md §6.3; c-toxcore 0.2.18
//! `onion_announce.c` `create_data_request`, `handle_data_request`, and `onion_client.c`
//! `send_onion_data`, `handle_data_response`).
//!
//! Two layers, one nonce. The inner one proves the sender's identity to the receiver; the
//! outer one, under a fresh random key pair per packet, hides it from D.
//!
//! | length | content                                                                       |
//! |--------|-------------------------------------------------------------------------------|
//! | 1      | 0x85                                                                          |
//! | 32     | destination real pk (D looks up its announce entry)                           |
//! | 24     | nonce                                                                         |
//! | 32     | temporary pk (random, one per packet)                                         |
//! | 16 + n | `E(dest data pk, temp sk)[ sender real pk 32 \| E(dest real pk, sender real sk)[ onion-data ] ]` |
//!
//! D turns it into `[0x86][nonce][temp pk][same box]` — the request minus the destination
//! key — and sends it along the destination's stored return path.
//!
//! Sizes. Sending (`send_onion_data`): onion-data of 1 to [`ONION_CLIENT_MAX_DATA_SIZE`] =
//! 1021 bytes, a request of at most `ONION_MAX_DATA_SIZE` = 1174. Receiving
//! (`handle_data_response`): a 0x86 of 122 to [`MAX_DATA_REQUEST_SIZE`] = 1069 bytes. The 0x86
//! is 121 bytes longer than its onion-data, so **a 0.2.18 receiver silently drops onion-data
//! longer than [`MAX_RECEIVED_DATA_SIZE`] = 948 bytes** even though senders may make it up
//! to 1021. We send what 0.2.18 sends and enforce on receipt what 0.2.18 enforces.

use rustox_net_crypto::crypto::{
    CryptoRng, KeyPair, LowOrderPublicKey, Nonce, PrecomputedKey, PublicKey, SecretKey, MAC_SIZE,
    NONCE_SIZE, PUBLIC_KEY_SIZE,
};

use rustox_net_crypto::wire::Reader;

use super::{kind, ONION_MAX_DATA_SIZE, ONION_MAX_PACKET_SIZE, RETURN_3};

/// `ONION_DATA_REQUEST_MIN_SIZE` = 105: a 0x85 without its box's plaintext.
pub const DATA_REQUEST_MIN_SIZE: usize =
    1 + PUBLIC_KEY_SIZE + NONCE_SIZE + PUBLIC_KEY_SIZE + MAC_SIZE;
/// `ONION_DATA_RESPONSE_MIN_SIZE` = 73: a 0x86 without its box's plaintext.
pub const DATA_RESPONSE_MIN_SIZE: usize = 1 + NONCE_SIZE + PUBLIC_KEY_SIZE + MAC_SIZE;
/// `ONION_DATA_IN_RESPONSE_MIN_SIZE` = 48: the inner layer without its onion-data.
pub const DATA_IN_RESPONSE_MIN_SIZE: usize = PUBLIC_KEY_SIZE + MAC_SIZE;
/// `MAX_DATA_REQUEST_SIZE` = 1069: the longest 0x86 a 0.2.18 client accepts.
pub const MAX_DATA_REQUEST_SIZE: usize = ONION_MAX_DATA_SIZE - DATA_REQUEST_MIN_SIZE;
/// `ONION_CLIENT_MAX_DATA_SIZE` = 1021: the longest onion-data a 0.2.18 client sends.
pub const ONION_CLIENT_MAX_DATA_SIZE: usize = MAX_DATA_REQUEST_SIZE - DATA_IN_RESPONSE_MIN_SIZE;
/// 948: the longest onion-data a 0.2.18 client accepts (docs/protocol.md §6.3).
pub const MAX_RECEIVED_DATA_SIZE: usize =
    MAX_DATA_REQUEST_SIZE - DATA_RESPONSE_MIN_SIZE - DATA_IN_RESPONSE_MIN_SIZE;
/// The longest 0x85 D accepts (without C's sendback): `ONION_MAX_PACKET_SIZE - RETURN_3`.
pub const MAX_DATA_REQUEST_AT_D: usize = ONION_MAX_PACKET_SIZE - RETURN_3;

/// Why a data packet was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DataError {
    /// Not the expected kind.
    #[error("unexpected kind {0:#04x}")]
    UnknownKind(u8),
    /// A length the kind does not allow.
    #[error("bad length {len} for {kind:#04x}")]
    BadLength {
        /// The kind byte.
        kind: u8,
        /// The length.
        len: usize,
    },
    /// A layer did not open.
    #[error("data box does not open")]
    Decrypt,
    /// Onion-data of 0 bytes or more than 1021.
    #[error("onion data of {0} bytes")]
    DataSize(usize),
    /// A key of the exchange (the destination's data key, the sender's temporary or real
    /// key) has low order: libsodium's `crypto_box_beforenm` refuses it.
    #[error("low-order public key")]
    LowOrderKey,
}

impl From<LowOrderPublicKey> for DataError {
    fn from(_: LowOrderPublicKey) -> Self {
        DataError::LowOrderKey
    }
}

/// The inner layer, made once per message and shared by every 0x85 that carries it:
/// `[sender real pk][E(key, nonce)[data]]` with `key` = `beforenm(dest real pk, our real sk)`.
pub fn seal_inner(
    sender_real_pk: &PublicKey,
    key: &PrecomputedKey,
    nonce: &Nonce,
    data: &[u8],
) -> Result<Vec<u8>, DataError> {
    if data.is_empty() || data.len() > ONION_CLIENT_MAX_DATA_SIZE {
        return Err(DataError::DataSize(data.len()));
    }
    // `data` is at most ONION_CLIENT_MAX_DATA_SIZE here.
    let mut out = Vec::with_capacity(DATA_IN_RESPONSE_MIN_SIZE.saturating_add(data.len()));
    out.extend_from_slice(sender_real_pk.as_bytes());
    out.extend_from_slice(&key.encrypt(nonce, data));
    Ok(out)
}

/// A 0x85 for D: `inner` from [`seal_inner`] with the same `nonce`, sealed to the
/// destination's data pk under a fresh random key pair.
pub fn seal_request(
    dest_real_pk: &PublicKey,
    dest_data_pk: &PublicKey,
    nonce: &Nonce,
    inner: &[u8],
    rng: &mut dyn CryptoRng,
) -> Result<Vec<u8>, DataError> {
    if inner.len() <= DATA_IN_RESPONSE_MIN_SIZE
        || inner.len() > ONION_MAX_DATA_SIZE - DATA_REQUEST_MIN_SIZE
    {
        return Err(DataError::DataSize(
            inner.len().saturating_sub(DATA_IN_RESPONSE_MIN_SIZE),
        ));
    }
    let temp = KeyPair::generate(rng);
    let mut out = Vec::with_capacity(DATA_REQUEST_MIN_SIZE.saturating_add(inner.len()));
    out.push(kind::DATA_REQUEST);
    out.extend_from_slice(dest_real_pk.as_bytes());
    out.extend_from_slice(&nonce.0);
    out.extend_from_slice(temp.public.as_bytes());
    out.extend_from_slice(&PrecomputedKey::new(dest_data_pk, &temp.secret)?.encrypt(nonce, inner));
    Ok(out)
}

/// A 0x85 as D receives it (C's sendback already split off).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataRequest<'a> {
    /// The destination's real pk.
    pub dest_pk: PublicKey,
    /// `[nonce][temp pk][box]`, passed on untouched.
    pub body: &'a [u8],
}

impl<'a> DataRequest<'a> {
    /// Checks kind and length: more than 105 bytes, at most 1223 (0.2.18's
    /// `handle_data_request` bounds, less the sendback).
    pub fn parse(bytes: &'a [u8]) -> Result<Self, DataError> {
        let k = *bytes.first().ok_or(DataError::UnknownKind(0))?;
        if k != kind::DATA_REQUEST {
            return Err(DataError::UnknownKind(k));
        }
        let bad = DataError::BadLength {
            kind: k,
            len: bytes.len(),
        };
        if bytes.len() <= DATA_REQUEST_MIN_SIZE || bytes.len() > MAX_DATA_REQUEST_AT_D {
            return Err(bad);
        }
        let mut r = Reader::after_kind(bytes);
        let dest_pk = PublicKey(r.array().map_err(|_| bad)?);
        Ok(DataRequest {
            dest_pk,
            body: r.rest(),
        })
    }

    /// The 0x86 D sends on: `[0x86][body]`.
    pub fn to_response(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.body.len().saturating_add(1));
        out.push(kind::DATA_RESPONSE);
        out.extend_from_slice(self.body);
        out
    }
}

/// A 0x86 as the destination client receives it, before decryption.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataResponse<'a> {
    /// The nonce of both layers.
    pub nonce: Nonce,
    /// The sender's one-time key.
    pub temp_pk: PublicKey,
    boxed: &'a [u8],
}

impl<'a> DataResponse<'a> {
    /// Checks kind and 0.2.18's receive bounds: 122 to 1069 bytes.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, DataError> {
        let k = *bytes.first().ok_or(DataError::UnknownKind(0))?;
        if k != kind::DATA_RESPONSE {
            return Err(DataError::UnknownKind(k));
        }
        let bad = DataError::BadLength {
            kind: k,
            len: bytes.len(),
        };
        if bytes.len() <= DATA_RESPONSE_MIN_SIZE + DATA_IN_RESPONSE_MIN_SIZE
            || bytes.len() > MAX_DATA_REQUEST_SIZE
        {
            return Err(bad);
        }
        let (nonce, temp_pk, boxed) = super::read_nonce_key_box(bytes).map_err(|_| bad)?;
        Ok(DataResponse {
            nonce,
            temp_pk,
            boxed,
        })
    }

    /// Opens the outer layer with our temporary data secret key.
    pub fn open(&self, data_sk: &SecretKey) -> Result<DataInner, DataError> {
        let plain = PrecomputedKey::new(&self.temp_pk, data_sk)?
            .decrypt(&self.nonce, self.boxed)
            .map_err(|_| DataError::Decrypt)?;
        let mut r = Reader::new(&plain);
        let sender_real_pk = PublicKey(r.array().map_err(|_| DataError::Decrypt)?);
        Ok(DataInner {
            sender_real_pk,
            nonce: self.nonce,
            boxed: r.rest().to_vec(),
        })
    }
}

/// The inner layer, opened from the outside: who claims to have sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataInner {
    /// The sender's real pk (proved only once [`Self::open`] succeeds).
    pub sender_real_pk: PublicKey,
    nonce: Nonce,
    boxed: Vec<u8>,
}

impl DataInner {
    /// Opens the onion-data with `beforenm(sender real pk, our real sk)`. Its first byte picks
    /// the handler (32 friend request, 156 DHT-PK).
    pub fn open(&self, key: &PrecomputedKey) -> Result<Vec<u8>, DataError> {
        key.decrypt(&self.nonce, &self.boxed)
            .map_err(|_| DataError::Decrypt)
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand_chacha::rand_core::SeedableRng;

    struct Parties {
        rng: rand_chacha::ChaCha8Rng,
        sender: KeyPair,
        dest: KeyPair,
        dest_data: KeyPair,
    }

    fn parties() -> Parties {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8);
        let sender = KeyPair::generate(&mut rng);
        let dest = KeyPair::generate(&mut rng);
        let dest_data = KeyPair::generate(&mut rng);
        Parties {
            rng,
            sender,
            dest,
            dest_data,
        }
    }

    fn send(p: &mut Parties, data: &[u8]) -> Result<Vec<u8>, DataError> {
        let nonce = Nonce::random(&mut p.rng);
        let key = PrecomputedKey::new(&p.dest.public, &p.sender.secret).unwrap();
        let inner = seal_inner(&p.sender.public, &key, &nonce, data)?;
        seal_request(
            &p.dest.public,
            &p.dest_data.public,
            &nonce,
            &inner,
            &mut p.rng,
        )
    }

    fn receive(p: &Parties, response: &[u8]) -> Result<Vec<u8>, DataError> {
        let inner = DataResponse::parse(response)?.open(&p.dest_data.secret)?;
        assert_eq!(inner.sender_real_pk, p.sender.public);
        inner.open(&PrecomputedKey::new(&inner.sender_real_pk, &p.dest.secret).unwrap())
    }

    #[test]
    fn request_becomes_response_and_opens() {
        let mut p = parties();
        let req = send(&mut p, b"\x20hello").unwrap();
        assert_eq!(
            req.len(),
            DATA_REQUEST_MIN_SIZE + DATA_IN_RESPONSE_MIN_SIZE + 6
        );
        assert_eq!(&req[1..33], p.dest.public.as_bytes());
        let at_d = DataRequest::parse(&req).unwrap();
        assert_eq!(at_d.dest_pk, p.dest.public);
        let resp = at_d.to_response();
        assert_eq!(resp.len(), req.len() - 32);
        assert_eq!(resp.len(), 121 + 6);
        assert_eq!(receive(&p, &resp).unwrap(), b"\x20hello");
    }

    #[test]
    fn size_limits_of_0_2_18() {
        assert_eq!(
            (
                DATA_REQUEST_MIN_SIZE,
                DATA_RESPONSE_MIN_SIZE,
                MAX_DATA_REQUEST_SIZE
            ),
            (105, 73, 1069)
        );
        assert_eq!(
            (ONION_CLIENT_MAX_DATA_SIZE, MAX_RECEIVED_DATA_SIZE),
            (1021, 948)
        );
        let mut p = parties();
        assert_eq!(send(&mut p, &[]), Err(DataError::DataSize(0)));
        assert_eq!(send(&mut p, &[1; 1022]), Err(DataError::DataSize(1022)));
        // The largest a 0.2.18 sender makes fits in the onion...
        let biggest = send(&mut p, &[1; ONION_CLIENT_MAX_DATA_SIZE]).unwrap();
        assert_eq!(biggest.len(), ONION_MAX_DATA_SIZE);
        let resp = DataRequest::parse(&biggest).unwrap().to_response();
        // ...but a 0.2.18 receiver drops anything above 948 bytes of data.
        assert!(matches!(
            receive(&p, &resp),
            Err(DataError::BadLength { kind: 0x86, .. })
        ));
        let ok = DataRequest::parse(&send(&mut p, &[1; MAX_RECEIVED_DATA_SIZE]).unwrap())
            .unwrap()
            .to_response();
        assert_eq!(ok.len(), MAX_DATA_REQUEST_SIZE);
        assert_eq!(receive(&p, &ok).unwrap().len(), 948);
        let over = DataRequest::parse(&send(&mut p, &[1; MAX_RECEIVED_DATA_SIZE + 1]).unwrap())
            .unwrap()
            .to_response();
        assert!(receive(&p, &over).is_err());
        assert!(DataRequest::parse(&[0x85; 105]).is_err());
        assert!(DataRequest::parse(&[0x85; 106]).is_ok());
        assert!(DataRequest::parse(&[0x85; 1224]).is_err());
        assert!(DataResponse::parse(&[0x86; 121]).is_err());
    }

    #[test]
    fn a_forged_sender_does_not_open() {
        let mut p = parties();
        let resp = DataRequest::parse(&send(&mut p, b"x").unwrap())
            .unwrap()
            .to_response();
        let inner = DataResponse::parse(&resp)
            .unwrap()
            .open(&p.dest_data.secret)
            .unwrap();
        let other = KeyPair::generate(&mut p.rng);
        assert_eq!(
            inner.open(&PrecomputedKey::new(&other.public, &p.dest.secret).unwrap()),
            Err(DataError::Decrypt)
        );
        assert_eq!(
            DataResponse::parse(&resp).unwrap().open(&other.secret),
            Err(DataError::Decrypt)
        );
    }

    proptest! {
        #[test]
        fn round_trip(data in proptest::collection::vec(any::<u8>(), 1..=MAX_RECEIVED_DATA_SIZE)) {
            let mut p = parties();
            let resp = DataRequest::parse(&send(&mut p, &data).unwrap()).unwrap().to_response();
            prop_assert_eq!(receive(&p, &resp).unwrap(), data);
        }

        #[test]
        fn parsers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..1300), first in prop_oneof![Just(0x85u8), Just(0x86u8)]) {
            let mut bytes = bytes;
            if let Some(b) = bytes.first_mut() { *b = first; }
            if let Ok(r) = DataRequest::parse(&bytes) { prop_assert_eq!(r.to_response().len(), bytes.len() - 32); }
            if let Ok(r) = DataResponse::parse(&bytes) {
                if let Ok(inner) = r.open(&SecretKey::from_bytes([4; 32])) {
                    let _ = inner.open(&PrecomputedKey::new(&PublicKey([1; 32]), &SecretKey::from_bytes([4; 32])).unwrap());
                }
            }
        }
    }
}
