//! Forwarding (c-toxcore 0.2.18 `forwarding.c`): how a client that reaches only some DHT
//! nodes sends a request to a node it knows by key, and gets the reply, without learning or
//! revealing more addresses. Every 0.2.18 node runs it.
//!
//! | kind | layout | what a node does with it |
//! |------|--------|--------------------------|
//! | 0x90 `FORWARD_REQUEST` | `[0x90][pk 32][data]` | wraps `data` in a 0x91 with a sendback naming the source, and sends it to `pk` if `pk` is in its close list (`route_packet`) |
//! | 0x91 `FORWARDING` | `[0x91][n][sendback n][data]` | `data` is another 0x90: chain it, the sendback now naming the source and carrying the old one; else, `n > 0`: a request for us (the announce server, [`super::store`]); `n = 0`: a reply for our client (none here) |
//! | 0x92 `FORWARD_REPLY` | `[0x92][n][auth 32][sendback n − 32][data]` | checks the auth we made; sendback `[0][ip_port]`: send `[0x91][0][data]` there; `[1][ip_port][inner]`: send `[0x92][len][inner][data]` to that forwarder; `[2][con 4][id 8]`: to a client of our TCP relay as TCP packet 11 |
//!
//! A sendback we make is `[auth 32][kind][...]`, `auth = timed_auth(key, 3600 s, kind ‖ ...)`
//! (`SENDBACK_TIMEOUT`), so only replies to our own forwards are passed on, for one to two
//! hours, and a reply goes only where the request came from.
//!
//! Data is at most [`MAX_FORWARD_DATA_SIZE`] = 1792 bytes, a sendback at most
//! [`MAX_SENDBACK_SIZE`] = 254 (a chain of at most four forwards fits). What a forward costs
//! an attacker: each output goes to a node of our close list or back along a path we signed,
//! and is at most 53 bytes longer than its input (the auth, the kind and an IPv6 address).

use std::net::SocketAddr;
use std::time::Duration;

use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::wire::Reader;
use rustox_net_crypto::Timestamp;

use super::timed_auth::{TimedAuthKey, TIMED_AUTH_SIZE};
use crate::dht::wire::packed_node::{decode_udp_addr, encode_udp_addr};

/// `NET_PACKET_FORWARD_REQUEST`.
pub const FORWARD_REQUEST: u8 = 0x90;
/// `NET_PACKET_FORWARDING`.
pub const FORWARDING: u8 = 0x91;
/// `NET_PACKET_FORWARD_REPLY`.
pub const FORWARD_REPLY: u8 = 0x92;
/// `SENDBACK_IPPORT`: the reply goes to this address as a 0x91 with no sendback.
pub const SENDBACK_IPPORT: u8 = 0;
/// `SENDBACK_FORWARD`: the reply goes to this forwarder as a 0x92 with the inner sendback.
pub const SENDBACK_FORWARD: u8 = 1;
/// `SENDBACK_TCP`: the reply goes to a client of our TCP relay.
pub const SENDBACK_TCP: u8 = 2;
/// `MAX_SENDBACK_SIZE` (0xff is reserved).
pub const MAX_SENDBACK_SIZE: usize = 0xff - 1;
/// `MAX_FORWARD_DATA_SIZE`: `MAX_UDP_PACKET_SIZE` 2048 − (1 + 1 + 254).
pub const MAX_FORWARD_DATA_SIZE: usize = 2048 - (1 + 1 + MAX_SENDBACK_SIZE);
/// `MAX_PACKED_IPPORT_SIZE`.
pub const MAX_PACKED_IPPORT_SIZE: usize = 1 + 16 + 2;
/// `SENDBACK_TIMEOUT`.
pub const SENDBACK_TIMEOUT: Duration = Duration::from_secs(3600);

/// Why a forwarding packet was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum ForwardError {
    /// Shorter than its kind's header, or a length field past the end.
    #[error("truncated forwarding packet")]
    Truncated,
    /// Data over 1792 bytes, or a sendback over 254.
    #[error("forwarded data or sendback too long")]
    TooLong,
    /// The destination key is not in our close list.
    #[error("destination not in the close list")]
    NoRoute,
    /// A reply whose sendback we did not make (or made over two hours ago).
    #[error("sendback auth does not check")]
    BadAuth,
    /// A sendback whose address does not unpack.
    #[error("bad sendback address")]
    BadAddress,
    /// A sendback of a kind we do not serve.
    #[error("unknown sendback kind")]
    UnknownSendback,
    /// A 0x91 with no sendback: a reply for a client, and this node runs none.
    #[error("forwarded reply for a client")]
    NotForUs,
}

/// Where the close list sends a forward (c-toxcore `route_packet`).
pub trait ForwardRoute {
    /// The address of `pk` if it is in our close list.
    fn close_addr(&self, now: Timestamp, pk: &PublicKey) -> Option<SocketAddr>;
}

impl ForwardRoute for crate::dht::node::DhtNode {
    fn close_addr(&self, now: Timestamp, pk: &PublicKey) -> Option<SocketAddr> {
        let e = self.close_list().get(pk)?;
        e.best_good(now)
            .or_else(|| e.assocs().next())
            .map(|a| a.addr)
    }
}

/// What a forwarding packet causes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Forwarded<'a> {
    /// A datagram to send.
    Send {
        /// Destination.
        dst: SocketAddr,
        /// The datagram.
        payload: Vec<u8>,
    },
    /// A request forwarded to us: answer `data` and send the reply with
    /// [`Forwarder::reply`] to `forwarder` with `sendback`.
    Request {
        /// Who forwarded it.
        forwarder: SocketAddr,
        /// Its sendback, echoed in the reply.
        sendback: &'a [u8],
        /// The request (a 0x93, 0x95 or 0x97).
        data: &'a [u8],
    },
    /// A reply for a client of our TCP relay: connection index and its identifier.
    Tcp {
        /// The connection's index in the relay.
        con: u32,
        /// The connection's identifier.
        id: u64,
        /// The reply, for TCP packet 11.
        data: &'a [u8],
    },
}

/// The forwarding state: only the sendback key.
#[derive(Debug)]
pub struct Forwarder {
    key: TimedAuthKey,
}

fn split_len_prefixed(bytes: &[u8]) -> Result<(&[u8], &[u8]), ForwardError> {
    let (&n, rest) = bytes
        .get(1..)
        .and_then(<[u8]>::split_first)
        .ok_or(ForwardError::Truncated)?;
    rest.split_at_checked(usize::from(n))
        .ok_or(ForwardError::Truncated)
}

impl Forwarder {
    /// A forwarder with a fresh key.
    pub fn new(rng: &mut dyn rustox_net_crypto::crypto::CryptoRng) -> Self {
        Forwarder {
            key: TimedAuthKey::generate(rng),
        }
    }

    /// `[0x91][n][auth][sendback_data][data]` (`create_forwarding_packet`); no sendback if
    /// `sendback_data` is empty.
    fn forwarding(&self, now: Timestamp, sendback_data: &[u8], data: &[u8]) -> Option<Vec<u8>> {
        let sb_len = if sendback_data.is_empty() {
            0
        } else {
            TIMED_AUTH_SIZE + sendback_data.len()
        };
        if sb_len > MAX_SENDBACK_SIZE || data.len() > MAX_FORWARD_DATA_SIZE {
            return None;
        }
        let mut out = Vec::with_capacity(2 + sb_len + data.len());
        out.push(FORWARDING);
        out.push(u8::try_from(sb_len).ok()?);
        if !sendback_data.is_empty() {
            out.extend_from_slice(&self.key.generate_auth(now, SENDBACK_TIMEOUT, sendback_data));
            out.extend_from_slice(sendback_data);
        }
        out.extend_from_slice(data);
        Some(out)
    }

    /// A forwarding packet from `from` (`handle_forward_request`, `handle_forwarding`,
    /// `handle_forward_reply`).
    pub fn handle<'a>(
        &self,
        now: Timestamp,
        from: SocketAddr,
        bytes: &'a [u8],
        route: &dyn ForwardRoute,
    ) -> Result<Forwarded<'a>, ForwardError> {
        match bytes.first() {
            Some(&FORWARD_REQUEST) => {
                let mut sb = Vec::with_capacity(1 + MAX_PACKED_IPPORT_SIZE);
                sb.push(SENDBACK_IPPORT);
                encode_udp_addr(from, &mut sb);
                self.forward_request(now, &sb, bytes, route)
            }
            Some(&FORWARDING) => {
                let (sendback, data) = split_len_prefixed(bytes)?;
                if data.first() == Some(&FORWARD_REQUEST) {
                    let mut sb = Vec::with_capacity(1 + MAX_PACKED_IPPORT_SIZE + sendback.len());
                    sb.push(SENDBACK_FORWARD);
                    encode_udp_addr(from, &mut sb);
                    sb.extend_from_slice(sendback);
                    self.forward_request(now, &sb, data, route)
                } else if sendback.is_empty() {
                    Err(ForwardError::NotForUs)
                } else {
                    Ok(Forwarded::Request {
                        forwarder: from,
                        sendback,
                        data,
                    })
                }
            }
            Some(&FORWARD_REPLY) => {
                let (sendback, data) = split_len_prefixed(bytes)?;
                if sendback.len() > MAX_SENDBACK_SIZE {
                    return Err(ForwardError::TooLong);
                }
                if sendback.len() < TIMED_AUTH_SIZE + 1 {
                    return Err(ForwardError::Truncated);
                }
                let (auth, sb_data) = sendback.split_at(TIMED_AUTH_SIZE);
                if !self.key.check(now, SENDBACK_TIMEOUT, sb_data, auth) {
                    return Err(ForwardError::BadAuth);
                }
                let (&k, rest) = sb_data.split_first().ok_or(ForwardError::Truncated)?;
                match k {
                    SENDBACK_IPPORT => {
                        let (dst, after) =
                            decode_udp_addr(rest).map_err(|_| ForwardError::BadAddress)?;
                        if !after.is_empty() {
                            return Err(ForwardError::BadAddress);
                        }
                        let payload = self
                            .forwarding(now, &[], data)
                            .ok_or(ForwardError::TooLong)?;
                        Ok(Forwarded::Send { dst, payload })
                    }
                    SENDBACK_FORWARD => {
                        let (dst, inner) =
                            decode_udp_addr(rest).map_err(|_| ForwardError::BadAddress)?;
                        let payload = Self::reply(inner, data).ok_or(ForwardError::TooLong)?;
                        Ok(Forwarded::Send { dst, payload })
                    }
                    SENDBACK_TCP => {
                        let mut r = Reader::new(rest);
                        let con = r.u32_be().map_err(|_| ForwardError::Truncated)?;
                        let id = r.u64_be().map_err(|_| ForwardError::Truncated)?;
                        r.expect_end().map_err(|_| ForwardError::Truncated)?;
                        Ok(Forwarded::Tcp { con, id, data })
                    }
                    _ => Err(ForwardError::UnknownSendback),
                }
            }
            _ => Err(ForwardError::Truncated),
        }
    }

    /// `handle_forward_request_dht`: `request` is `[0x90][pk][data]`.
    fn forward_request<'a>(
        &self,
        now: Timestamp,
        sendback_data: &[u8],
        request: &[u8],
        route: &dyn ForwardRoute,
    ) -> Result<Forwarded<'a>, ForwardError> {
        let mut r = Reader::after_kind(request);
        let pk = PublicKey(r.array().map_err(|_| ForwardError::Truncated)?);
        let data = r.rest();
        if TIMED_AUTH_SIZE + sendback_data.len() > MAX_SENDBACK_SIZE
            || data.len() > MAX_FORWARD_DATA_SIZE
        {
            return Err(ForwardError::TooLong);
        }
        let dst = route.close_addr(now, &pk).ok_or(ForwardError::NoRoute)?;
        let payload = self
            .forwarding(now, sendback_data, data)
            .ok_or(ForwardError::TooLong)?;
        Ok(Forwarded::Send { dst, payload })
    }

    /// A 0x92 to the forwarder of a request (`forward_reply`).
    pub fn reply(sendback: &[u8], data: &[u8]) -> Option<Vec<u8>> {
        if sendback.len() > MAX_SENDBACK_SIZE || data.len() > MAX_FORWARD_DATA_SIZE {
            return None;
        }
        let mut out = Vec::with_capacity(2 + sendback.len() + data.len());
        out.push(FORWARD_REPLY);
        out.push(u8::try_from(sendback.len()).ok()?);
        out.extend_from_slice(sendback);
        out.extend_from_slice(data);
        Some(out)
    }

    /// A 0x91 for TCP packet 10 from a client of our relay (`TCP_server.c`
    /// `handle_TCP_packet`): `data` to `dst` with a sendback naming the connection.
    pub fn tcp_request(&self, now: Timestamp, con: u32, id: u64, data: &[u8]) -> Option<Vec<u8>> {
        let mut sb = Vec::with_capacity(13);
        sb.push(SENDBACK_TCP);
        sb.extend_from_slice(&con.to_be_bytes());
        sb.extend_from_slice(&id.to_be_bytes());
        self.forwarding(now, &sb, data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;

    struct Route(PublicKey, SocketAddr);
    impl ForwardRoute for Route {
        fn close_addr(&self, _: Timestamp, pk: &PublicKey) -> Option<SocketAddr> {
            (*pk == self.0).then_some(self.1)
        }
    }

    fn request(pk: &PublicKey, data: &[u8]) -> Vec<u8> {
        let mut v = vec![FORWARD_REQUEST];
        v.extend_from_slice(pk.as_bytes());
        v.extend_from_slice(data);
        v
    }

    /// A client asks forwarder F to reach node N; N answers through F; then a chain of two.
    #[test]
    fn request_reply_and_chain() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let f = Forwarder::new(&mut rng);
        let now = Timestamp::from_secs(7200);
        let client: SocketAddr = "192.0.2.1:5000".parse().unwrap();
        let n_pk = PublicKey([4; 32]);
        let n_addr: SocketAddr = "198.51.100.4:33445".parse().unwrap();
        let route = Route(n_pk, n_addr);
        let req = request(&n_pk, b"\x93payload");
        let Ok(Forwarded::Send { dst, payload }) = f.handle(now, client, &req, &route) else {
            panic!()
        };
        assert_eq!(dst, n_addr);
        assert_eq!(payload[0], FORWARDING);
        assert_eq!(usize::from(payload[1]), 32 + 1 + 7);
        assert!(payload.len() <= req.len() + 53);
        // At N it is a request with a sendback.
        let n = Forwarder::new(&mut rng);
        let Ok(Forwarded::Request {
            forwarder,
            sendback,
            data,
        }) = n.handle(now, dst, &payload, &route)
        else {
            panic!()
        };
        assert_eq!((forwarder, data), (dst, &b"\x93payload"[..]));
        // N's reply through F reaches the client as a 0x91 without sendback.
        let reply = Forwarder::reply(sendback, b"\x94answer").unwrap();
        let later = now + Duration::from_secs(3000);
        assert_eq!(
            f.handle(later, n_addr, &reply, &route),
            Ok(Forwarded::Send {
                dst: client,
                payload: [&[FORWARDING, 0][..], b"\x94answer"].concat()
            })
        );
        // A forged or expired sendback goes nowhere.
        let mut forged = reply.clone();
        forged[5] ^= 1;
        assert_eq!(
            f.handle(now, n_addr, &forged, &route),
            Err(ForwardError::BadAuth)
        );
        assert_eq!(
            f.handle(now + Duration::from_secs(7200), n_addr, &reply, &route),
            Err(ForwardError::BadAuth)
        );
        // Unknown destination.
        assert_eq!(
            f.handle(now, client, &request(&PublicKey([9; 32]), b"x"), &route),
            Err(ForwardError::NoRoute)
        );
        // A chain: F forwards to G a 0x91 carrying another 0x90; G wraps F's sendback.
        let g_pk = PublicKey([6; 32]);
        let g_addr: SocketAddr = "198.51.100.6:33445".parse().unwrap();
        let mut chain = request(&g_pk, &[]);
        chain.extend_from_slice(&request(&n_pk, b"\x93x"));
        let Ok(Forwarded::Send { dst, payload }) =
            f.handle(now, client, &chain, &Route(g_pk, g_addr))
        else {
            panic!()
        };
        assert_eq!(dst, g_addr);
        let g = Forwarder::new(&mut rng);
        let Ok(Forwarded::Send { dst, payload }) = g.handle(now, n_addr, &payload, &route) else {
            panic!()
        };
        assert_eq!(dst, n_addr);
        let Ok(Forwarded::Request { sendback, .. }) = n.handle(now, g_addr, &payload, &route)
        else {
            panic!()
        };
        // The reply goes N → G → F → client.
        let r1 = Forwarder::reply(sendback, b"r").unwrap();
        let Ok(Forwarded::Send { dst, payload }) = g.handle(now, n_addr, &r1, &route) else {
            panic!()
        };
        assert_eq!((dst, payload[0]), (n_addr, FORWARD_REPLY));
        let Ok(Forwarded::Send { dst, payload }) = f.handle(now, g_addr, &payload, &route) else {
            panic!()
        };
        assert_eq!(dst, client);
        assert_eq!(payload, vec![FORWARDING, 0, b'r']);
    }

    #[test]
    fn tcp_sendbacks_come_back_as_tcp() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(6);
        let f = Forwarder::new(&mut rng);
        let now = Timestamp::from_secs(100);
        let p = f.tcp_request(now, 7, 99, b"\x93q").unwrap();
        let (sendback, _) = split_len_prefixed(&p).unwrap();
        let reply = Forwarder::reply(sendback, b"\x94a").unwrap();
        let route = Route(PublicKey([0; 32]), "1.1.1.1:1".parse().unwrap());
        assert_eq!(
            f.handle(now, "1.1.1.1:1".parse().unwrap(), &reply, &route),
            Ok(Forwarded::Tcp {
                con: 7,
                id: 99,
                data: b"\x94a"
            })
        );
    }

    #[test]
    fn malformed_packets_are_typed() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let f = Forwarder::new(&mut rng);
        let now = Timestamp::from_secs(100);
        let from: SocketAddr = "1.1.1.1:1".parse().unwrap();
        let route = Route(PublicKey([0; 32]), from);
        for bad in [
            &[][..],
            &[FORWARD_REQUEST][..],
            &[FORWARDING][..],
            &[FORWARDING, 5, 1][..],
            &[FORWARD_REPLY, 3, 1, 2, 3][..],
            &[FORWARD_REPLY, 0xff][..],
        ] {
            assert!(f.handle(now, from, bad, &route).is_err(), "{bad:?}");
        }
        assert_eq!(
            f.handle(now, from, &[FORWARDING, 0, 1, 2], &route),
            Err(ForwardError::NotForUs)
        );
        let long = request(&PublicKey([0; 32]), &[0; MAX_FORWARD_DATA_SIZE + 1]);
        assert_eq!(
            f.handle(now, from, &long, &route),
            Err(ForwardError::TooLong)
        );
    }
}
