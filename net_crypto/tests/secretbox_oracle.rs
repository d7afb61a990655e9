//! Our XSalsa20-Poly1305 (net_crypto/src/crypto) against RustCrypto's `xsalsa20poly1305` and
//! `poly1305` crates as oracles, for random keys, nonces and every length a Tox packet can
//! have and beyond. The libsodium vectors (`crypto_kat.rs`) pin the construction; these pin
//! every length and block boundary of the four-lane keystream and the 44-bit-limb Poly1305.

use proptest::prelude::*;
use rustox_net_crypto::crypto::{CryptoError, Nonce, SymmetricKey, MAC_SIZE};
use xsalsa20poly1305::aead::{Aead, KeyInit};
use xsalsa20poly1305::XSalsa20Poly1305;

fn oracle_seal(key: [u8; 32], nonce: [u8; 24], plaintext: &[u8]) -> Vec<u8> {
    XSalsa20Poly1305::new(&key.into())
        .encrypt(&nonce.into(), plaintext)
        .expect("encryption without associated data")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn seal_equals_the_crate_and_opens(
        key in any::<[u8; 32]>(),
        nonce in any::<[u8; 24]>(),
        plaintext in proptest::collection::vec(any::<u8>(), 1..2100),
    ) {
        let ours = SymmetricKey::from_bytes(key);
        let boxed = ours.encrypt(&Nonce(nonce), &plaintext);
        prop_assert_eq!(&boxed, &oracle_seal(key, nonce, &plaintext));
        prop_assert_eq!(ours.decrypt(&Nonce(nonce), &boxed), Ok(plaintext.clone()));

        // In place: the same bytes, and a flipped bit anywhere is refused without touching
        // the buffer.
        let mut in_place = plaintext.clone();
        let mac = ours.encrypt_in_place(&Nonce(nonce), &mut in_place);
        prop_assert_eq!(&mac[..], &boxed[..MAC_SIZE]);
        prop_assert_eq!(&in_place[..], &boxed[MAC_SIZE..]);
        let flip = (key[0] as usize * 7 + plaintext.len()) % boxed.len();
        let mut forged = boxed.clone();
        forged[flip] ^= 0x20;
        let (forged_mac, forged_ct) = forged.split_at(MAC_SIZE);
        let mut buffer = forged_ct.to_vec();
        prop_assert_eq!(
            ours.decrypt_in_place(&Nonce(nonce), forged_mac.try_into().unwrap(), &mut buffer),
            Err(CryptoError::AuthenticationFailed)
        );
        prop_assert_eq!(&buffer[..], forged_ct);
    }

    #[test]
    fn poly1305_limb_edges_equal_the_crate(
        key in any::<[u8; 32]>(),
        fill in prop_oneof![Just(0x00u8), Just(0xffu8), any::<u8>()],
        len in 0usize..300,
    ) {
        // All-0xff messages drive every limb to its carry edge; checked through the box,
        // whose tag is Poly1305 of the ciphertext, so an all-0xff ciphertext is chosen by
        // encrypting the XOR of it with the keystream.
        let nonce = [fill; 24];
        let zeros = vec![0u8; len.max(1)];
        let ours = SymmetricKey::from_bytes(key);
        let keystream = ours.encrypt(&Nonce(nonce), &zeros)[MAC_SIZE..].to_vec();
        let plaintext: Vec<u8> = keystream.iter().map(|k| k ^ fill).collect();
        prop_assert_eq!(
            ours.encrypt(&Nonce(nonce), &plaintext),
            oracle_seal(key, nonce, &plaintext)
        );
    }
}

#[test]
fn short_boxes_are_refused() {
    let key = SymmetricKey::from_bytes([1; 32]);
    let nonce = Nonce([2; 24]);
    assert_eq!(
        key.decrypt(&nonce, &[0; MAC_SIZE]),
        Err(CryptoError::TooShort)
    );
    assert_eq!(key.decrypt(&nonce, &[]), Err(CryptoError::TooShort));
    assert_eq!(
        key.decrypt_in_place(&nonce, &[0; MAC_SIZE], &mut []),
        Err(CryptoError::TooShort)
    );
}
