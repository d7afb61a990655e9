//! The handshake phase (docs/protocol.md §2.2–§2.3): starting as initiator or responder, the
//! cookie response, the peer's handshake in every state, and the temp packet that carries our
//! last handshake packet (mod.rs's `handle_timeout` resends it until the first data packet
//! confirms the session).

use super::framing::parse_drop;
use super::state::{Connection, PeerSession, Queued, Route, TempPacket};
use super::types::{CloseReason, ConnectionId, ConnectionStatus, MAX_QUEUED_DATAGRAMS};
use crate::crypto::{sha512, CryptoRng, LowOrderPublicKey, Nonce, PrecomputedKey, PublicKey};
use crate::drop_reason::DropReason;
use crate::identity::Identity;
use crate::packets::{
    Cookie, CookieRequest, CookieRequestPayload, CookieResponse, EncryptedCookie, Handshake,
    HandshakePayload,
};
use crate::path::Paths;
use crate::receive_nonce::ReceiveNonce;
use crate::transport::TransportConfig;
use crate::Timestamp;

impl Connection {
    /// Starts a connection as initiator: sends a cookie request to the peer's DHT key
    /// (docs/protocol.md §2.2) and waits in COOKIE_REQUESTING. A low-order DHT or real key of the
    /// peer is refused: no key can be agreed with it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn initiate(
        id: ConnectionId,
        now: Timestamp,
        paths: Paths,
        peer_real_pk: PublicKey,
        peer_dht_pk: PublicKey,
        identity: &Identity,
        config: TransportConfig,
        rng: &mut dyn CryptoRng,
    ) -> Result<Self, LowOrderPublicKey> {
        let dht_shared = PrecomputedKey::new(&peer_dht_pk, &identity.dht.secret)?;
        let real_shared = PrecomputedKey::new(&peer_real_pk, &identity.real.secret)?;
        let echo_id = rng.next_u64();
        let request = CookieRequest::seal(
            identity.dht.public,
            &dht_shared,
            Nonce::random(rng),
            &CookieRequestPayload {
                sender_real_pk: identity.real.public,
                echo_id,
            },
        );
        let mut conn = Self::new(
            id,
            now,
            paths,
            peer_real_pk,
            peer_dht_pk,
            real_shared,
            config,
            rng,
        );
        conn.cookie_request = Some((dht_shared.clone(), echo_id));
        conn.dht_shared = Some(dht_shared);
        conn.status = ConnectionStatus::CookieRequesting;
        conn.start_temp(now, request.to_bytes());
        Ok(conn)
    }

    /// Creates the responder's side from a verified handshake (`cookie` is the opened outer
    /// cookie, `real_shared` the key that opened the box) and answers with our handshake.
    /// Refuses a handshake whose session key has low order.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn accept(
        id: ConnectionId,
        now: Timestamp,
        paths: Paths,
        cookie: &Cookie,
        payload: &HandshakePayload,
        real_shared: PrecomputedKey,
        identity: &Identity,
        config: TransportConfig,
        rng: &mut dyn CryptoRng,
    ) -> Result<Self, DropReason> {
        let mut conn = Self::new(
            id,
            now,
            paths,
            cookie.real_pk,
            cookie.dht_pk,
            real_shared,
            config,
            rng,
        );
        conn.adopt_peer_session(payload)?;
        let handshake = conn.build_handshake(now, payload.other_cookie, identity, rng);
        conn.start_temp(now, handshake);
        conn.status = ConnectionStatus::NotConfirmed;
        Ok(conn)
    }

    /// A cookie response from the peer's address (docs/protocol.md §2.2): accepted only while
    /// COOKIE_REQUESTING and only with our echo id; then our handshake goes out.
    pub(crate) fn handle_cookie_response(
        &mut self,
        now: Timestamp,
        response: &CookieResponse,
        identity: &Identity,
        rng: &mut dyn CryptoRng,
    ) -> Result<(), DropReason> {
        let (dht_shared, echo_id) = match (&self.status, &self.cookie_request) {
            (ConnectionStatus::CookieRequesting, Some(request)) => request,
            _ => return Err(DropReason::WrongState),
        };
        let payload = response.open(dht_shared).map_err(parse_drop)?;
        if payload.echo_id != *echo_id {
            return Err(DropReason::WrongEchoId);
        }
        self.handshake_rtt_sample(now);
        let handshake = self.build_handshake(now, payload.cookie, identity, rng);
        self.cookie_request = None;
        self.start_temp(now, handshake);
        self.status = ConnectionStatus::HandshakeSent;
        Ok(())
    }

    /// A verified handshake from this connection's peer (docs/protocol.md §2.3). The endpoint
    /// has opened the cookie, checked its age and that it names this peer, opened the box
    /// and checked the cookie hash.
    pub(crate) fn handle_handshake(
        &mut self,
        now: Timestamp,
        payload: &HandshakePayload,
        identity: &Identity,
        rng: &mut dyn CryptoRng,
    ) -> Result<(), DropReason> {
        match self.status {
            ConnectionStatus::CookieRequesting => {
                // The peer connected to us first: answer with the cookie it gave us.
                self.adopt_peer_session(payload)?;
                let handshake = self.build_handshake(now, payload.other_cookie, identity, rng);
                self.cookie_request = None;
                self.start_temp(now, handshake);
                self.status = ConnectionStatus::NotConfirmed;
                Ok(())
            }
            ConnectionStatus::HandshakeSent => {
                // Our handshake is out (crossed, or the peer's answer to ours).
                self.adopt_peer_session(payload)?;
                self.status = ConnectionStatus::NotConfirmed;
                Ok(())
            }
            ConnectionStatus::NotConfirmed => {
                let incoming = PeerSession {
                    session_pk: payload.session_pk,
                    base_nonce: payload.base_nonce,
                };
                if self.peer_session != Some(incoming) {
                    // The peer started over (new session key): follow it, as c-toxcore does.
                    self.adopt_peer_session(payload)?;
                }
                Ok(())
            }
            ConnectionStatus::Established | ConnectionStatus::Closed => {
                Err(DropReason::HandshakeIgnored)
            }
        }
    }

    /// The peer's DHT key changed: c-toxcore kills the old session (§2.2).
    pub(crate) fn close_replaced(&mut self) {
        if self.status != ConnectionStatus::Closed {
            self.outgoing.clear();
            self.close(CloseReason::Killed);
        }
    }

    pub(super) fn start_temp(&mut self, now: Timestamp, bytes: Vec<u8>) {
        if self.outgoing.len() < MAX_QUEUED_DATAGRAMS {
            self.outgoing.push_back(Queued {
                bytes: bytes.clone(),
                route: Route::Every,
            });
        }
        self.temp = Some(TempPacket {
            bytes,
            last_sent: now,
            sends: 1,
        });
    }

    /// The temp packet was just answered (a cookie response echoing our request's id, or
    /// the peer's first data packet, sealed with the session key our handshake carried):
    /// its round trip seeds the transport's RTT estimator, which otherwise assumes
    /// kInitialRtt (333 ms, first PTO ≈ 1 s) until data is acknowledged. Only a temp
    /// packet sent once counts (Karn's rule: after a resend the reply may answer either
    /// send). Local timing only; nothing on the wire changes.
    pub(super) fn handshake_rtt_sample(&mut self, now: Timestamp) {
        if let Some(temp) = self.temp.as_ref().filter(|t| t.sends == 1) {
            self.transport.on_handshake_rtt(now, now - temp.last_sent);
        }
    }

    /// Takes the session key and base nonce of the peer's handshake. A low-order session key
    /// is refused before anything changes: the data key would be one anyone can compute.
    pub(super) fn adopt_peer_session(
        &mut self,
        payload: &HandshakePayload,
    ) -> Result<(), DropReason> {
        let data_key = PrecomputedKey::new(&payload.session_pk, &self.session.secret)
            .map_err(|LowOrderPublicKey| DropReason::LowOrderPublicKey)?;
        self.data_key = Some(data_key);
        self.recv_nonce = Some(ReceiveNonce::new(payload.base_nonce));
        self.peer_session = Some(PeerSession {
            session_pk: payload.session_pk,
            base_nonce: payload.base_nonce,
        });
        self.confirm_pending = true;
        Ok(())
    }

    /// Our handshake, inside the peer's cookie `outer`, carrying a fresh cookie of ours.
    pub(super) fn build_handshake(
        &self,
        now: Timestamp,
        outer: EncryptedCookie,
        identity: &Identity,
        rng: &mut dyn CryptoRng,
    ) -> Vec<u8> {
        let other_cookie = Cookie {
            time: now.as_secs(),
            real_pk: self.peer_real_pk,
            dht_pk: self.peer_dht_pk,
        }
        .seal(&identity.cookie_key, rng);
        let payload = HandshakePayload {
            base_nonce: self.sent_nonce,
            session_pk: self.session.public,
            cookie_hash: sha512(&outer.0),
            other_cookie,
        };
        Handshake::seal(outer, &self.real_shared, Nonce::random(rng), &payload).to_bytes()
    }
}
