//! Known-answer tests: our crypto module against vectors computed by libsodium
//! (`tests/data/make_crypto_kat.py`, via PyNaCl). docs/protocol.md §1 requires the Tox wire form of
//! a box, `[MAC 16][ciphertext]`, and a big-endian nonce increment; these vectors pin both.

use rustox_net_crypto::crypto::{
    sha256, sha512, KeyPair, Nonce, PrecomputedKey, PublicKey, SecretKey, SymmetricKey,
};
use serde_json::Value;

fn vectors() -> Value {
    serde_json::from_str(include_str!("data/crypto_kat.json")).expect("valid KAT json")
}

fn bytes(v: &Value, field: &str) -> Vec<u8> {
    hex::decode(v[field].as_str().expect("hex string")).expect("valid hex")
}

fn arr32(v: &Value, field: &str) -> [u8; 32] {
    bytes(v, field).try_into().expect("32 bytes")
}

fn nonce(v: &Value, field: &str) -> Nonce {
    Nonce(bytes(v, field).try_into().expect("24 bytes"))
}

fn list<'a>(all: &'a Value, name: &str) -> &'a Vec<Value> {
    let list = all[name].as_array().expect("array");
    assert!(!list.is_empty(), "no {name} vectors");
    list
}

#[test]
fn public_key_derived_from_secret_key_matches_libsodium() {
    let all = vectors();
    for v in list(&all, "keypairs") {
        let pair = KeyPair::from_secret(SecretKey::from_bytes(arr32(v, "secret_key")));
        assert_eq!(pair.public, PublicKey(arr32(v, "public_key")));
    }
}

#[test]
fn precomputed_box_matches_libsodium_box_easy_in_both_directions() {
    let all = vectors();
    for v in list(&all, "boxes") {
        let a = SecretKey::from_bytes(arr32(v, "secret_key_a"));
        let b = SecretKey::from_bytes(arr32(v, "secret_key_b"));
        let pk_a = PublicKey(arr32(v, "public_key_a"));
        let pk_b = PublicKey(arr32(v, "public_key_b"));
        let n = nonce(v, "nonce");
        let plaintext = bytes(v, "plaintext");
        let boxed = bytes(v, "boxed");

        let ab = PrecomputedKey::new(&pk_b, &a).unwrap();
        assert_eq!(
            ab.encrypt(&n, &plaintext),
            boxed,
            "box differs from libsodium"
        );
        let ba = PrecomputedKey::new(&pk_a, &b).unwrap();
        assert_eq!(ba.decrypt(&n, &boxed).expect("opens"), plaintext);

        // beforenm's output, used as a plain XSalsa20-Poly1305 key, gives the same box: this
        // pins the shared key itself, not just the composition.
        let shared = SymmetricKey::from_bytes(arr32(v, "shared_key"));
        assert_eq!(
            shared.encrypt(&n, &plaintext),
            boxed,
            "beforenm differs from libsodium"
        );
    }
}

#[test]
fn symmetric_box_matches_libsodium_secretbox_easy() {
    let all = vectors();
    for v in list(&all, "secretboxes") {
        let key = SymmetricKey::from_bytes(arr32(v, "key"));
        let n = nonce(v, "nonce");
        let plaintext = bytes(v, "plaintext");
        let boxed = bytes(v, "boxed");
        assert_eq!(key.encrypt(&n, &plaintext), boxed);
        assert_eq!(key.decrypt(&n, &boxed).expect("opens"), plaintext);
        let mut tampered = boxed.clone();
        *tampered.last_mut().expect("non-empty") ^= 0x01;
        assert!(key.decrypt(&n, &tampered).is_err());
    }
}

#[test]
fn sha256_and_sha512_match_libsodium() {
    let all = vectors();
    for v in list(&all, "hashes") {
        let data = bytes(v, "data");
        assert_eq!(sha256(&data).to_vec(), bytes(v, "sha256"));
        assert_eq!(sha512(&data).to_vec(), bytes(v, "sha512"));
    }
}

#[test]
fn nonce_addition_is_big_endian_and_wraps_like_the_reference() {
    let all = vectors();
    for v in list(&all, "nonce_adds") {
        let mut n = nonce(v, "nonce");
        let x = u32::try_from(v["add"].as_u64().expect("number")).expect("u32");
        if x == 1 {
            let mut m = n;
            m.increment();
            assert_eq!(m, nonce(v, "result"), "increment");
        }
        n.add(x);
        assert_eq!(n, nonce(v, "result"), "add {x}");
    }
}
