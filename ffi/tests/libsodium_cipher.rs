//! Our cipher against libsodium itself: Debian's libsodium 1.0.18, the library
//! c-toxcore 0.2.18 boxes every packet with, loaded into this test process.
//!
//! net_crypto's XSalsa20-Poly1305 is our own code (eight Salsa20 blocks per SIMD step,
//! `net_crypto/src/crypto/xsalsa20.rs`; a 44-bit-limb Poly1305, `poly1305.rs`), and is the
//! default only because it is proven byte for byte against the reference: `crypto_box_easy_afternm`
//! and `crypto_box_open_easy_afternm` for seal and open over random keys and nonces, at every
//! length from 0 to 1600 bytes and around every 512-byte keystream group up to 8 KiB (a
//! group is eight 64-byte blocks; the message starts 32 bytes into the first); tampered
//! boxes (tag, ciphertext, nonce) that both must refuse; `crypto_box_beforenm` and
//! `crypto_scalarmult_base` for key agreement and public keys; and the small-order public
//! keys that libsodium refuses and so must we. CI runs this file twice: in the default build
//! (wide's SSE2 lanes on x86-64) and with net_crypto's `scalar-cipher` feature, the array lanes
//! of targets without SIMD (`.ci/run`).
//!
//! The library is opened with `dlopen` rather than linked: a test binary linked against a
//! missing library cannot even start, and this one must skip with a reason on a machine
//! without libsodium, and fail when `CI` is set (`common::skip_or_fail`). This file is in the
//! ffi crate because it is the only one allowed `unsafe` (docs/design.md principle 4).

mod common;

use std::ffi::{c_char, c_int, c_ulonglong, c_void, CStr};
use std::sync::OnceLock;

use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};
use rustox_net_crypto::crypto::{
    CryptoError, KeyPair, LowOrderPublicKey, Nonce, PrecomputedKey, PublicKey, SecretKey,
    SymmetricKey, CIPHER_LANES, MAC_SIZE, SMALL_ORDER_POINTS,
};

/// Shared objects tried in turn: Debian 12's runtime library (package libsodium23), then the
/// development symlink (libsodium-dev).
const LIBRARY_NAMES: [&CStr; 2] = [c"libsodium.so.23", c"libsodium.so"];

type BeforeNm = unsafe extern "C" fn(*mut u8, *const u8, *const u8) -> c_int;
type EasyAfterNm =
    unsafe extern "C" fn(*mut u8, *const u8, c_ulonglong, *const u8, *const u8) -> c_int;
type ScalarMult = unsafe extern "C" fn(*mut u8, *const u8, *const u8) -> c_int;
type ScalarMultBase = unsafe extern "C" fn(*mut u8, *const u8) -> c_int;

/// The libsodium functions this file calls, resolved once.
struct Sodium {
    version: String,
    crypto_box_beforenm: BeforeNm,
    crypto_box_easy_afternm: EasyAfterNm,
    crypto_box_open_easy_afternm: EasyAfterNm,
    crypto_scalarmult: ScalarMult,
    crypto_scalarmult_base: ScalarMultBase,
}

/// Looks `name` up in `handle` and gives it the type `T`.
///
/// # Safety
/// `T` must be the function pointer type of the C declaration of `name` in `sodium.h`.
unsafe fn symbol<T: Copy>(handle: *mut c_void, name: &CStr) -> Result<T, String> {
    assert_eq!(size_of::<T>(), size_of::<*mut c_void>());
    // SAFETY: `handle` came from dlopen and `name` is NUL-terminated.
    let address = unsafe { libc::dlsym(handle, name.as_ptr()) };
    if address.is_null() {
        return Err(format!("libsodium has no {name:?}"));
    }
    // SAFETY: a non-null dlsym result for a function is its address; the caller vouches for
    // the type, and the sizes agree (asserted above).
    Ok(unsafe { std::mem::transmute_copy::<*mut c_void, T>(&address) })
}

impl Sodium {
    fn load() -> Result<Sodium, String> {
        let handle = LIBRARY_NAMES
            .iter()
            // SAFETY: dlopen with a NUL-terminated name; libsodium has no unsafe initialisers.
            .map(|name| unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW) })
            .find(|handle| !handle.is_null())
            .ok_or("libsodium not found (apt-get install libsodium-dev)")?;
        // SAFETY: each type below is the prototype `sodium.h` 1.0.18 declares for the name.
        unsafe {
            let init: unsafe extern "C" fn() -> c_int = symbol(handle, c"sodium_init")?;
            // 0: initialised now; 1: already initialised; -1: failure.
            if init() < 0 {
                return Err("sodium_init failed".into());
            }
            let version: unsafe extern "C" fn() -> *const c_char =
                symbol(handle, c"sodium_version_string")?;
            Ok(Sodium {
                version: CStr::from_ptr(version()).to_string_lossy().into_owned(),
                crypto_box_beforenm: symbol(handle, c"crypto_box_beforenm")?,
                crypto_box_easy_afternm: symbol(handle, c"crypto_box_easy_afternm")?,
                crypto_box_open_easy_afternm: symbol(handle, c"crypto_box_open_easy_afternm")?,
                crypto_scalarmult: symbol(handle, c"crypto_scalarmult")?,
                crypto_scalarmult_base: symbol(handle, c"crypto_scalarmult_base")?,
            })
        }
    }

    /// `crypto_box_beforenm(pk, sk)`, or `None` where libsodium returns −1.
    fn beforenm(&self, pk: &[u8; 32], sk: &[u8; 32]) -> Option<[u8; 32]> {
        let mut k = [0u8; 32];
        // SAFETY: three 32-byte buffers, as the prototype requires.
        let rc = unsafe { (self.crypto_box_beforenm)(k.as_mut_ptr(), pk.as_ptr(), sk.as_ptr()) };
        (rc == 0).then_some(k)
    }

    /// `crypto_box_easy_afternm`: `[MAC 16][ciphertext]`.
    fn seal(&self, k: &[u8; 32], nonce: &[u8; 24], m: &[u8]) -> Vec<u8> {
        let mut c = vec![0u8; MAC_SIZE + m.len()];
        // SAFETY: `c` holds MAC_SIZE + m.len() bytes; nonce 24 and key 32 bytes.
        let rc = unsafe {
            (self.crypto_box_easy_afternm)(
                c.as_mut_ptr(),
                m.as_ptr(),
                m.len() as c_ulonglong,
                nonce.as_ptr(),
                k.as_ptr(),
            )
        };
        assert_eq!(rc, 0, "crypto_box_easy_afternm");
        c
    }

    /// `crypto_box_open_easy_afternm`, or `None` where libsodium refuses the box.
    fn open(&self, k: &[u8; 32], nonce: &[u8; 24], c: &[u8]) -> Option<Vec<u8>> {
        if c.len() < MAC_SIZE {
            return None;
        }
        let mut m = vec![0u8; c.len() - MAC_SIZE];
        // SAFETY: `m` holds c.len() − MAC_SIZE bytes; nonce 24 and key 32 bytes.
        let rc = unsafe {
            (self.crypto_box_open_easy_afternm)(
                m.as_mut_ptr(),
                c.as_ptr(),
                c.len() as c_ulonglong,
                nonce.as_ptr(),
                k.as_ptr(),
            )
        };
        (rc == 0).then_some(m)
    }

    /// `crypto_scalarmult(sk, pk)`, or `None` where libsodium returns −1.
    fn scalarmult(&self, sk: &[u8; 32], pk: &[u8; 32]) -> Option<[u8; 32]> {
        let mut q = [0u8; 32];
        // SAFETY: three 32-byte buffers.
        let rc = unsafe { (self.crypto_scalarmult)(q.as_mut_ptr(), sk.as_ptr(), pk.as_ptr()) };
        (rc == 0).then_some(q)
    }

    /// `crypto_scalarmult_base(sk)`: the public key.
    fn public_key(&self, sk: &[u8; 32]) -> [u8; 32] {
        let mut q = [0u8; 32];
        // SAFETY: two 32-byte buffers.
        let rc = unsafe { (self.crypto_scalarmult_base)(q.as_mut_ptr(), sk.as_ptr()) };
        assert_eq!(rc, 0, "crypto_scalarmult_base");
        q
    }
}

/// libsodium, or `None` after printing why this test is skipped (a failure when CI is set).
fn sodium() -> Option<&'static Sodium> {
    static SODIUM: OnceLock<Result<Sodium, String>> = OnceLock::new();
    match SODIUM.get_or_init(Sodium::load) {
        Ok(sodium) => {
            eprintln!(
                "libsodium {} against our cipher on {CIPHER_LANES}",
                sodium.version
            );
            expect_lanes();
            Some(sodium)
        }
        Err(reason) => {
            common::skip_or_fail(reason);
            None
        }
    }
}

/// CI's scalar run sets `RUSTOX_EXPECT_CIPHER_LANES=scalar`: the feature must have reached
/// net_crypto, or that run would test the SIMD lanes twice and the scalar ones never.
fn expect_lanes() {
    if let Ok(expected) = std::env::var("RUSTOX_EXPECT_CIPHER_LANES") {
        assert!(
            CIPHER_LANES.starts_with(&expected),
            "this build's lanes are {CIPHER_LANES:?}, not {expected:?}"
        );
    }
}

/// Every length 0..=1600, then both sides of every keystream-group edge up to 8 KiB: a group
/// is 512 bytes and the message starts 32 bytes into the first, so message bytes cross into
/// a new group at 512k − 32; 512k ± 1 are checked too.
fn lengths() -> Vec<usize> {
    let mut lengths: Vec<usize> = (0..=1600).collect();
    for k in 1..=16 {
        for edge in [512 * k - 32, 512 * k] {
            lengths.extend([edge - 1, edge, edge + 1]);
        }
    }
    lengths.sort_unstable();
    lengths.dedup();
    lengths
}

fn random<const N: usize>(rng: &mut StdRng) -> [u8; N] {
    let mut out = [0u8; N];
    rng.fill_bytes(&mut out);
    out
}

fn random_message(rng: &mut StdRng, len: usize) -> Vec<u8> {
    let mut m = vec![0u8; len];
    rng.fill_bytes(&mut m);
    m
}

#[test]
fn seal_and_open_equal_libsodium_at_every_length() {
    let Some(sodium) = sodium() else { return };
    let mut rng = StdRng::seed_from_u64(0x5eed_0001);
    for len in lengths() {
        let key = random::<32>(&mut rng);
        let nonce = random::<24>(&mut rng);
        let m = random_message(&mut rng, len);
        let theirs = sodium.seal(&key, &nonce, &m);
        let ours = SymmetricKey::from_bytes(key);
        let boxed = ours.encrypt(&Nonce(nonce), &m);
        assert_eq!(
            boxed,
            theirs,
            "seal, length {len}, key {}",
            hex::encode(key)
        );
        // In place, as the data path seals and opens.
        let mut in_place = m.clone();
        let mac = ours.encrypt_in_place(&Nonce(nonce), &mut in_place);
        assert_eq!(&mac[..], &theirs[..MAC_SIZE], "in-place tag, length {len}");
        assert_eq!(&in_place[..], &theirs[MAC_SIZE..], "in place, length {len}");
        // libsodium opens ours; we open libsodium's (c-toxcore refuses empty plaintexts, as
        // do we: docs/protocol.md §1).
        assert_eq!(sodium.open(&key, &nonce, &boxed).as_ref(), Some(&m));
        if len == 0 {
            assert_eq!(
                ours.decrypt(&Nonce(nonce), &theirs),
                Err(CryptoError::TooShort)
            );
        } else {
            assert_eq!(ours.decrypt(&Nonce(nonce), &theirs).as_ref(), Ok(&m));
            ours.decrypt_in_place(&Nonce(nonce), &mac, &mut in_place)
                .unwrap();
            assert_eq!(in_place, m, "in-place open, length {len}");
        }
    }
}

/// Flips one bit of the box at `at`; both libsodium and we must refuse it, and our in-place
/// open must leave the buffer as it was.
fn assert_both_refuse(
    sodium: &Sodium,
    key: &[u8; 32],
    nonce: &[u8; 24],
    boxed: &[u8],
    at: usize,
    bit: u8,
) {
    let mut forged = boxed.to_vec();
    forged[at] ^= 1 << bit;
    let len = boxed.len() - MAC_SIZE;
    assert_eq!(
        sodium.open(key, nonce, &forged),
        None,
        "libsodium opened a box of {len} bytes flipped at {at}"
    );
    let ours = SymmetricKey::from_bytes(*key);
    let expected = if len == 0 {
        CryptoError::TooShort
    } else {
        CryptoError::AuthenticationFailed
    };
    assert_eq!(
        ours.decrypt(&Nonce(*nonce), &forged),
        Err(expected),
        "we opened a box of {len} bytes flipped at {at}"
    );
    let (mac, ciphertext) = forged.split_at(MAC_SIZE);
    let mut buffer = ciphertext.to_vec();
    assert_eq!(
        ours.decrypt_in_place(&Nonce(*nonce), mac.try_into().unwrap(), &mut buffer),
        Err(expected)
    );
    assert_eq!(buffer, ciphertext, "a refused open changed the buffer");
}

#[test]
fn tampered_boxes_are_refused_by_both() {
    let Some(sodium) = sodium() else { return };
    let mut rng = StdRng::seed_from_u64(0x5eed_0002);
    // Every byte of the box, for lengths around block, tag-block and group edges.
    let every_byte = [
        0usize, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 479, 480, 481, 991, 992, 993, 1373,
    ];
    for len in every_byte {
        let key = random::<32>(&mut rng);
        let nonce = random::<24>(&mut rng);
        let boxed = sodium.seal(&key, &nonce, &random_message(&mut rng, len));
        for at in 0..boxed.len() {
            assert_both_refuse(sodium, &key, &nonce, &boxed, at, rng.gen_range(0..8));
        }
    }
    // Every length: a random byte of the tag, of the ciphertext, and a flipped nonce bit.
    for len in lengths() {
        let key = random::<32>(&mut rng);
        let nonce = random::<24>(&mut rng);
        let boxed = sodium.seal(&key, &nonce, &random_message(&mut rng, len));
        assert_both_refuse(
            sodium,
            &key,
            &nonce,
            &boxed,
            rng.gen_range(0..MAC_SIZE),
            rng.gen_range(0..8),
        );
        if len > 0 {
            let at = rng.gen_range(MAC_SIZE..boxed.len());
            assert_both_refuse(sodium, &key, &nonce, &boxed, at, rng.gen_range(0..8));
            let mut other_nonce = nonce;
            other_nonce[rng.gen_range(0..24)] ^= 1 << rng.gen_range(0..8);
            assert_eq!(sodium.open(&key, &other_nonce, &boxed), None);
            assert_eq!(
                SymmetricKey::from_bytes(key).decrypt(&Nonce(other_nonce), &boxed),
                Err(CryptoError::AuthenticationFailed),
                "length {len} opened under another nonce"
            );
        }
    }
}

#[test]
fn key_agreement_and_public_keys_equal_libsodium() {
    let Some(sodium) = sodium() else { return };
    let mut rng = StdRng::seed_from_u64(0x5eed_0003);
    for i in 0..256 {
        let sk_a = random::<32>(&mut rng);
        let sk_b = random::<32>(&mut rng);
        let a = KeyPair::from_secret(SecretKey::from_bytes(sk_a));
        let b = KeyPair::from_secret(SecretKey::from_bytes(sk_b));
        assert_eq!(a.public.0, sodium.public_key(&sk_a), "public key {i}");
        let k = sodium
            .beforenm(&b.public.0, &sk_a)
            .expect("libsodium agrees a key with a real public key");
        let ours = PrecomputedKey::new(&b.public, &a.secret).unwrap();
        // The key itself stays private to net_crypto: compare what it seals.
        let nonce = random::<24>(&mut rng);
        let m = random_message(&mut rng, i * 7);
        assert_eq!(
            ours.encrypt(&Nonce(nonce), &m),
            sodium.seal(&k, &nonce, &m),
            "beforenm {i}"
        );
    }
}

#[test]
fn small_order_public_keys_are_refused_by_both() {
    let Some(sodium) = sodium() else { return };
    let mut rng = StdRng::seed_from_u64(0x5eed_0004);
    let secrets: Vec<[u8; 32]> = (0..8).map(|_| random::<32>(&mut rng)).collect();
    for PublicKey(low) in SMALL_ORDER_POINTS {
        let mut high = low;
        high[31] |= 0x80;
        for pk in [low, high] {
            for sk in &secrets {
                assert_eq!(
                    sodium.beforenm(&pk, sk),
                    None,
                    "libsodium {}",
                    hex::encode(pk)
                );
                assert_eq!(sodium.scalarmult(sk, &pk), None);
                assert_eq!(
                    PrecomputedKey::new(&PublicKey(pk), &SecretKey::from_bytes(*sk)).err(),
                    Some(LowOrderPublicKey),
                    "ours {}",
                    hex::encode(pk)
                );
            }
        }
    }
}

#[test]
fn arbitrary_public_keys_are_accepted_or_refused_alike() {
    let Some(sodium) = sodium() else { return };
    let mut rng = StdRng::seed_from_u64(0x5eed_0005);
    // Random strings (points on the curve or its twist, half with the ignored top bit set),
    // and the neighbours of every small-order point.
    let mut keys: Vec<[u8; 32]> = (0..512).map(|_| random::<32>(&mut rng)).collect();
    for PublicKey(point) in SMALL_ORDER_POINTS {
        for delta in [-1i16, 1] {
            let mut near = point;
            near[0] = (i16::from(near[0]) + delta).rem_euclid(256) as u8;
            keys.push(near);
        }
    }
    for pk in keys {
        let sk = random::<32>(&mut rng);
        let theirs = sodium.beforenm(&pk, &sk);
        let ours = PrecomputedKey::new(&PublicKey(pk), &SecretKey::from_bytes(sk));
        assert_eq!(
            ours.is_ok(),
            theirs.is_some(),
            "{} accepted differently",
            hex::encode(pk)
        );
        if let (Ok(ours), Some(k)) = (ours, theirs) {
            let nonce = random::<24>(&mut rng);
            assert_eq!(
                ours.encrypt(&Nonce(nonce), b"agreement"),
                sodium.seal(&k, &nonce, b"agreement"),
                "{}",
                hex::encode(pk)
            );
        }
    }
}
