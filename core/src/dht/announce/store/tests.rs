//! The announcement store against a client built here from the layouts of `announce.c`.

use super::*;
use crate::dht::key_cache::KeyAgreementLimit;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

struct NoDht;
impl CloseNodes for NoDht {
    fn closest_nodes(&self, _: Timestamp, _: &PublicKey, _: bool) -> Vec<PackedNode> {
        vec![PackedNode::udp(
            "203.0.113.1:33445".parse().unwrap(),
            PublicKey([1; 32]),
        )]
    }
}

struct Client {
    keys: KeyPair,
    server: PublicKey,
}

impl Client {
    fn request(&self, kind: u8, body: &[u8], rng: &mut ChaCha8Rng) -> Vec<u8> {
        let key = PrecomputedKey::new(&self.server, &self.keys.secret).unwrap();
        let nonce = Nonce::random(rng);
        let mut plain = body.to_vec();
        plain.extend_from_slice(&[0xab; 8]);
        let mut out = vec![kind];
        out.extend_from_slice(self.keys.public.as_bytes());
        out.extend_from_slice(&nonce.0);
        out.extend_from_slice(&key.encrypt(&nonce, &plain));
        out
    }

    fn open(&self, kind: u8, reply: &[u8]) -> Vec<u8> {
        assert_eq!(reply[0], kind);
        assert_eq!(&reply[1..33], self.server.as_bytes());
        let key = PrecomputedKey::new(&self.server, &self.keys.secret).unwrap();
        let nonce = Nonce(reply[33..57].try_into().unwrap());
        let plain = key.decrypt(&nonce, &reply[57..]).unwrap();
        assert_eq!(&plain[plain.len() - 8..], &[0xab; 8], "the ping comes back");
        plain[..plain.len() - 8].to_vec()
    }
}

struct Setup {
    rng: ChaCha8Rng,
    store: AnnouncementStore,
    budget: KeyBudget,
    now: Timestamp,
    client: Client,
    data: KeyPair,
    src: SocketAddr,
}

fn setup() -> Setup {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let node = KeyPair::generate(&mut rng);
    let now = Timestamp::from_secs(1000);
    let store = AnnouncementStore::new(&node, now, &mut rng);
    let client = Client {
        keys: KeyPair::generate(&mut rng),
        server: node.public,
    };
    Setup {
        data: KeyPair::generate(&mut rng),
        rng,
        store,
        budget: KeyBudget::new(Some(KeyAgreementLimit::default())),
        now: now + Duration::from_secs(3600),
        client,
        src: "192.0.2.7:40000".parse().unwrap(),
    }
}

impl Setup {
    fn send(&mut self, kind: u8, body: &[u8]) -> Result<Vec<u8>, StoreError> {
        let req = self.client.request(kind, body, &mut self.rng);
        let reply = self.store.handle(
            self.now,
            self.src,
            &[],
            &req,
            &NoDht,
            &mut self.budget,
            &mut self.rng,
        )?;
        Ok(self.client.open(kind + 1, &reply))
    }

    /// A search; returns the auth.
    fn search(&mut self) -> (Vec<u8>, [u8; 32]) {
        let body = self.data.public.0.to_vec();
        let r = self.send(DATA_SEARCH_REQUEST, &body).unwrap();
        let auth_at = if r[32] == 1 { 65 } else { 33 };
        (r.clone(), r[auth_at..auth_at + 32].try_into().unwrap())
    }

    fn store_body(&mut self, auth: &[u8; 32], timeout: u32, kind: u8, data: &[u8]) -> Vec<u8> {
        let key = PrecomputedKey::new(&self.client.server, &self.data.secret).unwrap();
        let nonce = Nonce::random(&mut self.rng);
        let mut plain = auth.to_vec();
        plain.extend_from_slice(&timeout.to_be_bytes());
        plain.push(kind);
        plain.extend_from_slice(data);
        let mut body = self.data.public.0.to_vec();
        body.extend_from_slice(&nonce.0);
        body.extend_from_slice(&key.encrypt(&nonce, &plain));
        body
    }
}

#[test]
fn search_store_retrieve_refresh() {
    let mut s = setup();
    let (r, auth) = s.search();
    assert_eq!(&r[..32], s.data.public.as_bytes());
    assert_eq!(r[32], 0, "nothing stored yet");
    assert_eq!(r[65], 1, "would store");
    assert_eq!(r[66], 1, "one node");
    assert_eq!(r.len(), 67 + 39);
    // Store 100 bytes for 600 s; the uptime (3600 s) allows 900.
    let body = s.store_body(&auth, 600, 0, &[7; 100]);
    let r = s.send(STORE_ANNOUNCE_REQUEST, &body).unwrap();
    assert_eq!(&r[..32], s.data.public.as_bytes());
    assert_eq!(u32::from_be_bytes(r[32..36].try_into().unwrap()), 600);
    assert_eq!(s.store.data(s.now, &s.data.public), Some(&[7u8; 100][..]));
    // A search now says stored, with the data's hash.
    let (r, auth) = s.search();
    assert_eq!(r[32], 1);
    assert_eq!(&r[33..65], Sha256::digest([7u8; 100]).as_slice());
    // The same search with the previous reply's hash gets only the key.
    let mut again = s.data.public.0.to_vec();
    again.extend_from_slice(&Sha256::digest(&r));
    let short = s.send(DATA_SEARCH_REQUEST, &again).unwrap();
    assert_eq!(short, s.data.public.0.to_vec());
    // Retrieve.
    let mut body = s.data.public.0.to_vec();
    body.push(0);
    body.extend_from_slice(&auth);
    let r = s.send(DATA_RETRIEVE_REQUEST, &body).unwrap();
    assert_eq!(r[32], 1);
    assert_eq!(&r[33..], &[7; 100]);
    // Refresh by hash; a wrong hash deletes the entry.
    let body = s.store_body(&auth, 5000, 1, &Sha256::digest([7u8; 100]));
    let r = s.send(STORE_ANNOUNCE_REQUEST, &body).unwrap();
    assert_eq!(u32::from_be_bytes(r[32..36].try_into().unwrap()), 900);
    let body = s.store_body(&auth, 100, 1, &[0; 32]);
    assert_eq!(
        s.send(STORE_ANNOUNCE_REQUEST, &body),
        Err(StoreError::HashMismatch)
    );
    assert!(s.store.is_empty(s.now));
    assert_eq!(s.store.answered, [3, 1, 2]);
}

#[test]
fn auth_binds_requester_address_and_time() {
    let mut s = setup();
    let (_, auth) = s.search();
    // From another address: refused, nothing stored.
    s.src = "192.0.2.8:40000".parse().unwrap();
    let body = s.store_body(&auth, 60, 0, b"x");
    assert_eq!(
        s.send(STORE_ANNOUNCE_REQUEST, &body),
        Err(StoreError::BadAuth)
    );
    s.src = "192.0.2.7:40000".parse().unwrap();
    // Two minutes later: expired.
    s.now += Duration::from_secs(120);
    assert_eq!(
        s.send(STORE_ANNOUNCE_REQUEST, &body),
        Err(StoreError::BadAuth)
    );
    assert!(s.store.is_empty(s.now));
    // Oversized data and unknown types are refused.
    let (_, auth) = s.search();
    let body = s.store_body(&auth, 60, 0, &[0; 513]);
    assert_eq!(
        s.send(STORE_ANNOUNCE_REQUEST, &body),
        Err(StoreError::BadAnnouncement)
    );
    let body = s.store_body(&auth, 60, 2, &[0; 10]);
    assert_eq!(
        s.send(STORE_ANNOUNCE_REQUEST, &body),
        Err(StoreError::BadAnnouncement)
    );
}

#[test]
fn short_uptime_caps_the_timeout_and_entries_expire() {
    let mut s = setup();
    s.now = s.store.start + Duration::from_secs(20);
    let (_, auth) = s.search();
    let body = s.store_body(&auth, 600, 0, b"x");
    let r = s.send(STORE_ANNOUNCE_REQUEST, &body).unwrap();
    assert_eq!(u32::from_be_bytes(r[32..36].try_into().unwrap()), 10);
    assert_eq!(s.store.len(s.now), 1);
    s.now += Duration::from_secs(10);
    assert!(s.store.is_empty(s.now));
}

#[test]
fn a_bucket_holds_eight_keys_closest_first() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let own = KeyPair::generate(&mut rng);
    let mut store = AnnouncementStore::new(&own, Timestamp::from_secs(0), &mut rng);
    let now = Timestamp::from_secs(10_000);
    // Sixteen keys of one bucket: the same bits after the first difference.
    let mut keys = Vec::new();
    while keys.len() < 16 {
        let pk = KeyPair::generate(&mut rng).public;
        if bucket_of(&own.public, &pk) == 3 {
            keys.push(pk);
        }
    }
    for pk in &keys {
        if let Some(i) = store.slot(now, pk) {
            store.entries[i] = Some(Entry {
                store_until: now + Duration::from_secs(100),
                data_pk: *pk,
                data: vec![1],
            });
        }
    }
    assert_eq!(store.len(now), 8);
    let kept: Vec<u32> = keys
        .iter()
        .filter(|k| store.data(now, k).is_some())
        .map(|k| first_differing_bit(&own.public, k))
        .collect();
    let dropped: Vec<u32> = keys
        .iter()
        .filter(|k| store.data(now, k).is_none())
        .map(|k| first_differing_bit(&own.public, k))
        .collect();
    assert!(
        kept.iter().min() >= dropped.iter().min(),
        "{kept:?} {dropped:?}"
    );
}

#[test]
fn bucket_numbers_follow_announce_get_bucketnum() {
    let base = PublicKey([0; 32]);
    let mut pk = PublicKey([0; 32]);
    pk.0[0] = 0b1000_0000;
    // First difference at bit 0; the five bits after it: base 00000, pk 00000.
    assert_eq!(bucket_of(&base, &pk), 0);
    pk.0[0] = 0b1010_1100;
    assert_eq!(bucket_of(&base, &pk), 0b01011);
    pk.0 = [0; 32];
    pk.0[1] = 0b0000_0111;
    pk.0[2] = 0b1100_0000;
    // First difference at bit 13; bits 14.. of pk: 1, 1 (byte 1), 1, 1, 0 (byte 2).
    assert_eq!(bucket_of(&base, &pk), 0b11110);
    assert_eq!(first_differing_bit(&base, &base), 256);
    assert_eq!(bucket_of(&base, &base), 0);
}

#[test]
fn malformed_requests_are_typed_and_never_panic() {
    let mut s = setup();
    for len in 0..200 {
        for kind in [0x93u8, 0x95, 0x97, 0x20] {
            let mut bytes = vec![kind];
            bytes.extend(std::iter::repeat_n(0x5a, len));
            assert!(s
                .store
                .handle(s.now, s.src, &[], &bytes, &NoDht, &mut s.budget, &mut s.rng)
                .is_err());
        }
    }
    // Well-sealed bodies of every wrong length.
    for len in [0usize, 31, 33, 63, 65, 100] {
        let body = vec![1u8; len];
        assert!(s.send(DATA_SEARCH_REQUEST, &body).is_err());
        assert!(s.send(DATA_RETRIEVE_REQUEST, &body).is_err());
        assert!(s.send(STORE_ANNOUNCE_REQUEST, &body).is_err());
    }
}
