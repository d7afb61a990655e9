//! The TCP relay handshake (docs/protocol.md §7; c-toxcore 0.2.18 `TCP_client.c`
//! `generate_handshake` / `handle_handshake`, `TCP_server.c` `handle_TCP_handshake`).
//!
//! Both messages travel unframed on the raw TCP stream, before any frame.
//!
//! Client hello, [`CLIENT_HELLO_SIZE`] = 128 bytes:
//!
//! | length | content                                                                   |
//! |--------|---------------------------------------------------------------------------|
//! | 32     | client's long-term (DHT) public key                                       |
//! | 24     | random nonce                                                              |
//! | 72     | `E(beforenm(server pk, client sk), nonce)[ client temp pk 32 \| client base nonce 24 ]` |
//!
//! Server reply, [`SERVER_REPLY_SIZE`] = 96 bytes:
//!
//! | length | content                                                                   |
//! |--------|---------------------------------------------------------------------------|
//! | 24     | random nonce                                                              |
//! | 72     | `E(beforenm(client pk, server sk), nonce)[ server temp pk 32 \| server base nonce 24 ]` |
//!
//! The long-term keys only authenticate the exchange; the session is sealed with
//! `beforenm(peer temp pk, own temp sk)`, so it stays secret if a long-term key leaks later.
//! Each direction's nonce starts at the base nonce its *sender* announced and is incremented
//! (big-endian, [`Nonce::increment`]) after every frame ([`super::frame`]). Neither side proves
//! liveness in the handshake itself: the server counts a connection as confirmed only after
//! its first frame opens.

use rustox_net_crypto::crypto::{
    CryptoRng, KeyPair, Nonce, PrecomputedKey, PublicKey, SecretKey, MAC_SIZE, NONCE_SIZE,
    PUBLIC_KEY_SIZE,
};
use rustox_net_crypto::wire::Reader;

use super::frame::{FrameDecoder, FrameEncoder};

/// `TCP_HANDSHAKE_PLAIN_SIZE`: a temporary public key and a base nonce.
pub const HANDSHAKE_PLAIN_SIZE: usize = PUBLIC_KEY_SIZE + NONCE_SIZE;
/// `TCP_SERVER_HANDSHAKE_SIZE` = 96: nonce, then the sealed temporary key and base nonce.
pub const SERVER_REPLY_SIZE: usize = NONCE_SIZE + HANDSHAKE_PLAIN_SIZE + MAC_SIZE;
/// `TCP_CLIENT_HANDSHAKE_SIZE` = 128: the client's public key, then a server-reply-shaped box.
pub const CLIENT_HELLO_SIZE: usize = PUBLIC_KEY_SIZE + SERVER_REPLY_SIZE;

/// Why a handshake message was refused. Either way c-toxcore closes the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HandshakeError {
    /// Not exactly the message's size.
    #[error("handshake message of {0} bytes")]
    BadLength(usize),
    /// The box did not open: wrong keys, or tampered bytes.
    #[error("handshake box does not open")]
    Decrypt,
    /// A public key of small order (libsodium's `crypto_box_beforenm` refuses it: the
    /// shared key would be one anyone can compute).
    #[error("low-order public key")]
    LowOrderKey,
}

/// The keys and nonces of an established secure stream, one direction each way.
#[derive(Debug, Clone)]
pub struct SessionKeys {
    /// `beforenm(peer temp pk, own temp sk)`: the same on both sides.
    pub shared: PrecomputedKey,
    /// The nonce of our next frame: the base nonce we announced.
    pub send_nonce: Nonce,
    /// The nonce of the peer's next frame: the base nonce the peer announced.
    pub recv_nonce: Nonce,
}

impl SessionKeys {
    /// The frame encoder and decoder for this session.
    pub fn split(self) -> (FrameEncoder, FrameDecoder) {
        (
            FrameEncoder::new(self.shared.clone(), self.send_nonce),
            FrameDecoder::new(self.shared, self.recv_nonce),
        )
    }
}

/// `[temp pk][base nonce]` sealed under `key` with a fresh random nonce, nonce first.
fn seal_plain(
    key: &PrecomputedKey,
    temp_pk: &PublicKey,
    base: &Nonce,
    rng: &mut dyn CryptoRng,
) -> [u8; SERVER_REPLY_SIZE] {
    let nonce = Nonce::random(rng);
    let mut plain = [0u8; HANDSHAKE_PLAIN_SIZE];
    plain[..PUBLIC_KEY_SIZE].copy_from_slice(temp_pk.as_bytes());
    plain[PUBLIC_KEY_SIZE..].copy_from_slice(&base.0);
    let mac = key.encrypt_in_place(&nonce, &mut plain);
    let mut out = [0u8; SERVER_REPLY_SIZE];
    out[..NONCE_SIZE].copy_from_slice(&nonce.0);
    out[NONCE_SIZE..NONCE_SIZE + MAC_SIZE].copy_from_slice(&mac);
    out[NONCE_SIZE + MAC_SIZE..].copy_from_slice(&plain);
    out
}

/// Opens what [`seal_plain`] made: the peer's temporary key and base nonce.
fn open_plain(key: &PrecomputedKey, sealed: &[u8]) -> Result<(PublicKey, Nonce), HandshakeError> {
    let bad = HandshakeError::BadLength(sealed.len());
    let mut r = Reader::new(sealed);
    let nonce = Nonce(r.array().map_err(|_| bad)?);
    let mac: [u8; MAC_SIZE] = r.array().map_err(|_| bad)?;
    let mut plain: [u8; HANDSHAKE_PLAIN_SIZE] = r.array().map_err(|_| bad)?;
    // Nothing after the plaintext: `sealed` is exactly SERVER_REPLY_SIZE.
    r.expect_end().map_err(|_| bad)?;
    key.decrypt_in_place(&nonce, &mac, &mut plain)
        .map_err(|_| HandshakeError::Decrypt)?;
    let mut r = Reader::new(&plain);
    let pk = PublicKey(r.array().map_err(|_| HandshakeError::Decrypt)?);
    let base = Nonce(r.array().map_err(|_| HandshakeError::Decrypt)?);
    Ok((pk, base))
}

/// A client's half-done handshake: the hello is sent, the reply awaited.
#[derive(Debug)]
pub struct ClientHandshake {
    long_term: PrecomputedKey,
    temp_secret: SecretKey,
    send_nonce: Nonce,
}

impl ClientHandshake {
    /// Makes the hello a client sends to the relay whose long-term key is `server_pk`.
    /// `own` is the client's DHT key pair (the relay sees its public half).
    pub fn new(
        own: &KeyPair,
        server_pk: &PublicKey,
        rng: &mut dyn CryptoRng,
    ) -> Result<(ClientHandshake, [u8; CLIENT_HELLO_SIZE]), HandshakeError> {
        let long_term =
            PrecomputedKey::new(server_pk, &own.secret).map_err(|_| HandshakeError::LowOrderKey)?;
        Ok(Self::with_long_term_key(own.public, long_term, rng))
    }

    /// As [`Self::new`], with `beforenm(server pk, own sk)` supplied by the caller (from a
    /// key cache).
    pub fn with_long_term_key(
        own_pk: PublicKey,
        long_term: PrecomputedKey,
        rng: &mut dyn CryptoRng,
    ) -> (ClientHandshake, [u8; CLIENT_HELLO_SIZE]) {
        let temp = KeyPair::generate(rng);
        let send_nonce = Nonce::random(rng);
        let mut hello = [0u8; CLIENT_HELLO_SIZE];
        hello[..PUBLIC_KEY_SIZE].copy_from_slice(own_pk.as_bytes());
        hello[PUBLIC_KEY_SIZE..].copy_from_slice(&seal_plain(
            &long_term,
            &temp.public,
            &send_nonce,
            rng,
        ));
        (
            ClientHandshake {
                long_term,
                temp_secret: temp.secret,
                send_nonce,
            },
            hello,
        )
    }

    /// Opens the server's 96-byte reply; the session keys on success.
    pub fn open_reply(self, reply: &[u8]) -> Result<SessionKeys, HandshakeError> {
        let (server_temp, recv_nonce) = open_plain(&self.long_term, reply)?;
        Ok(SessionKeys {
            shared: PrecomputedKey::new(&server_temp, &self.temp_secret)
                .map_err(|_| HandshakeError::LowOrderKey)?,
            send_nonce: self.send_nonce,
            recv_nonce,
        })
    }
}

/// What the server learns from a valid hello.
#[derive(Debug, Clone)]
pub struct AcceptedHello {
    /// The client's long-term (DHT) public key: the key other clients route to.
    pub client_pk: PublicKey,
    /// The session keys.
    pub keys: SessionKeys,
    /// The 96 bytes to send back, unframed.
    pub reply: [u8; SERVER_REPLY_SIZE],
}

/// Server side: opens a client's 128-byte hello with the relay's long-term secret key and
/// makes the reply. Costs two key agreements (the long-term one and the session one) and
/// one key pair generation.
pub fn accept_hello(
    server_secret: &SecretKey,
    hello: &[u8],
    rng: &mut dyn CryptoRng,
) -> Result<AcceptedHello, HandshakeError> {
    if hello.len() != CLIENT_HELLO_SIZE {
        return Err(HandshakeError::BadLength(hello.len()));
    }
    let mut r = Reader::new(hello);
    let client_pk = PublicKey(
        r.array()
            .map_err(|_| HandshakeError::BadLength(hello.len()))?,
    );
    let sealed = r.rest();
    let long_term =
        PrecomputedKey::new(&client_pk, server_secret).map_err(|_| HandshakeError::LowOrderKey)?;
    let (client_temp, recv_nonce) = open_plain(&long_term, sealed)?;
    let temp = KeyPair::generate(rng);
    let send_nonce = Nonce::random(rng);
    let reply = seal_plain(&long_term, &temp.public, &send_nonce, rng);
    Ok(AcceptedHello {
        client_pk,
        keys: SessionKeys {
            shared: PrecomputedKey::new(&client_temp, &temp.secret)
                .map_err(|_| HandshakeError::LowOrderKey)?,
            send_nonce,
            recv_nonce,
        },
        reply,
    })
}

/// Collects exactly `N` bytes from a stream delivered in arbitrary chunks: the hello on the
/// server's side, the reply on the client's. Never holds more than `N` bytes.
#[derive(Debug, Clone)]
pub struct ExactBytes<const N: usize> {
    buf: [u8; N],
    filled: usize,
}

impl<const N: usize> Default for ExactBytes<N> {
    fn default() -> Self {
        ExactBytes {
            buf: [0; N],
            filled: 0,
        }
    }
}

impl<const N: usize> ExactBytes<N> {
    /// Takes what it still needs from the front of `input` (advancing it); the `N` bytes
    /// once they are all there. Bytes after them stay in `input`: they are the first frames.
    pub fn fill(&mut self, input: &mut &[u8]) -> Option<&[u8; N]> {
        let free = self.buf.get_mut(self.filled..).unwrap_or_default();
        // At most N - filled bytes: `filled` never passes N.
        self.filled = self.filled.saturating_add(super::take_front(free, input));
        (self.filled == N).then_some(&self.buf)
    }

    /// Bytes collected so far.
    pub fn len(&self) -> usize {
        self.filled
    }

    /// True before the first byte.
    pub fn is_empty(&self) -> bool {
        self.filled == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn rng() -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(14)
    }

    #[test]
    fn sizes_match_c_toxcore() {
        assert_eq!(HANDSHAKE_PLAIN_SIZE, 56);
        assert_eq!(SERVER_REPLY_SIZE, 96);
        assert_eq!(CLIENT_HELLO_SIZE, 128);
    }

    #[test]
    fn both_sides_agree_on_keys_and_nonces() {
        let mut rng = rng();
        let client = KeyPair::generate(&mut rng);
        let server = KeyPair::generate(&mut rng);
        let (hs, hello) = ClientHandshake::new(&client, &server.public, &mut rng).unwrap();
        assert_eq!(&hello[..32], client.public.as_bytes());
        let accepted = accept_hello(&server.secret, &hello, &mut rng).unwrap();
        assert_eq!(accepted.client_pk, client.public);
        let client_keys = hs.open_reply(&accepted.reply).unwrap();
        assert_eq!(client_keys.send_nonce, accepted.keys.recv_nonce);
        assert_eq!(client_keys.recv_nonce, accepted.keys.send_nonce);
        assert_ne!(client_keys.send_nonce, client_keys.recv_nonce);
        let boxed = client_keys.shared.encrypt(&Nonce([1; 24]), b"x");
        assert_eq!(
            accepted
                .keys
                .shared
                .decrypt(&Nonce([1; 24]), &boxed)
                .unwrap(),
            b"x"
        );
    }

    #[test]
    fn session_key_is_not_the_long_term_key() {
        let mut rng = rng();
        let client = KeyPair::generate(&mut rng);
        let server = KeyPair::generate(&mut rng);
        let (_, hello) = ClientHandshake::new(&client, &server.public, &mut rng).unwrap();
        let accepted = accept_hello(&server.secret, &hello, &mut rng).unwrap();
        let long_term = PrecomputedKey::new(&client.public, &server.secret).unwrap();
        let boxed = accepted.keys.shared.encrypt(&Nonce([2; 24]), b"secret");
        assert!(long_term.decrypt(&Nonce([2; 24]), &boxed).is_err());
    }

    #[test]
    fn wrong_server_key_or_tampering_is_refused() {
        let mut rng = rng();
        let client = KeyPair::generate(&mut rng);
        let server = KeyPair::generate(&mut rng);
        let other = KeyPair::generate(&mut rng);
        let (_, hello) = ClientHandshake::new(&client, &other.public, &mut rng).unwrap();
        assert_eq!(
            accept_hello(&server.secret, &hello, &mut rng).unwrap_err(),
            HandshakeError::Decrypt
        );
        let (hs, mut hello) = ClientHandshake::new(&client, &server.public, &mut rng).unwrap();
        hello[0] ^= 1; // another client key: the box no longer opens
        assert_eq!(
            accept_hello(&server.secret, &hello, &mut rng).unwrap_err(),
            HandshakeError::Decrypt
        );
        assert_eq!(
            accept_hello(&server.secret, &hello[..127], &mut rng).unwrap_err(),
            HandshakeError::BadLength(127)
        );
        let mut reply = [0u8; SERVER_REPLY_SIZE];
        reply[50] = 1;
        assert_eq!(hs.open_reply(&reply).unwrap_err(), HandshakeError::Decrypt);
    }

    #[test]
    fn reply_for_another_client_is_refused() {
        let mut rng = rng();
        let a = KeyPair::generate(&mut rng);
        let b = KeyPair::generate(&mut rng);
        let server = KeyPair::generate(&mut rng);
        let (hs_a, _) = ClientHandshake::new(&a, &server.public, &mut rng).unwrap();
        let (_, hello_b) = ClientHandshake::new(&b, &server.public, &mut rng).unwrap();
        let accepted_b = accept_hello(&server.secret, &hello_b, &mut rng).unwrap();
        assert_eq!(
            hs_a.open_reply(&accepted_b.reply).unwrap_err(),
            HandshakeError::Decrypt
        );
    }

    #[test]
    fn exact_bytes_collects_across_chunks_and_leaves_the_rest() {
        let mut e = ExactBytes::<5>::default();
        let mut a: &[u8] = &[1, 2];
        assert!(e.fill(&mut a).is_none());
        assert!(a.is_empty());
        assert_eq!(e.len(), 2);
        let mut b: &[u8] = &[3, 4, 5, 6, 7];
        assert_eq!(e.fill(&mut b), Some(&[1, 2, 3, 4, 5]));
        assert_eq!(b, &[6, 7]);
        let mut c: &[u8] = &[8];
        assert_eq!(e.fill(&mut c), Some(&[1, 2, 3, 4, 5]));
        assert_eq!(c, &[8]);
    }
}
