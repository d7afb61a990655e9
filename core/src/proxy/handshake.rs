//! The proxy handshake of one relay connection, sans-IO: the driver writes what
//! [`ProxyHandshake::poll_transmit`] holds, feeds what it reads to
//! [`ProxyHandshake::handle_bytes`], and when that says [`Progress::Done`] the connection is
//! a tunnel to the relay. Messages go one at a time, each after the answer to the last, as
//! c-toxcore sends them (`do_confirmed_TCP` through its `TCP_CLIENT_PROXY_*` states).

use std::net::SocketAddr;

use super::{http, socks5, ProxyError, ProxyKind};

/// Where a handshake stands after some input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// The proxy's answer is not complete yet (there may be bytes to write).
    Pending,
    /// The tunnel is open. The bytes came after the proxy's answer, from the relay: they
    /// are the relay connection's first bytes.
    Done(Vec<u8>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    /// SOCKS5 greeting sent, waiting for the method selection.
    Socks5Method,
    /// SOCKS5 CONNECT sent, waiting for its reply.
    Socks5Connect,
    /// HTTP CONNECT sent, waiting for the status line and headers.
    HttpConnect,
    /// Tunnel open.
    Done,
    /// Failed for good.
    Failed(ProxyError),
}

/// One connection's handshake with its proxy.
#[derive(Debug, Clone)]
pub struct ProxyHandshake {
    target: SocketAddr,
    phase: Phase,
    /// The message being written; `sent` bytes of it are gone.
    out: Vec<u8>,
    sent: usize,
    /// The proxy's answer so far: at most [`http::MAX_RESPONSE`] bytes.
    answer: Vec<u8>,
}

impl ProxyHandshake {
    /// The handshake through a proxy of `kind` to the relay at `target`; its first message
    /// is queued.
    pub fn new(kind: ProxyKind, target: SocketAddr) -> Self {
        let (phase, out) = match kind {
            ProxyKind::Socks5 => (Phase::Socks5Method, socks5::GREETING.to_vec()),
            ProxyKind::Http => (Phase::HttpConnect, http::connect_request(target)),
        };
        ProxyHandshake {
            target,
            phase,
            out,
            sent: 0,
            answer: Vec::new(),
        }
    }

    /// Bytes to write to the proxy now (empty: none until its answer).
    pub fn poll_transmit(&self) -> &[u8] {
        self.out.get(self.sent..).unwrap_or_default()
    }

    /// `n` bytes of [`Self::poll_transmit`] were written.
    pub fn consume(&mut self, n: usize) {
        self.sent = self.sent.saturating_add(n).min(self.out.len());
    }

    /// True once the tunnel is open.
    pub fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }

    /// Bytes read from the proxy. An error fails the handshake for good (the caller closes
    /// the connection); after `Done` the caller hands further bytes to the relay client.
    pub fn handle_bytes(&mut self, input: &[u8]) -> Result<Progress, ProxyError> {
        match &self.phase {
            Phase::Failed(e) => return Err(e.clone()),
            Phase::Done => return Ok(Progress::Done(input.to_vec())),
            _ => {}
        }
        // Take no more than the bound; the answer ends within it or is an error.
        let room = http::MAX_RESPONSE.saturating_sub(self.answer.len());
        let (head, rest) = input.split_at(room.min(input.len()));
        self.answer.extend_from_slice(head);
        let parsed = match self.phase {
            Phase::Socks5Method => socks5::parse_method_reply(&self.answer),
            Phase::Socks5Connect => socks5::parse_connect_reply(&self.answer),
            _ => http::parse_response(&self.answer),
        };
        let used = match parsed {
            Err(e) => return Err(self.fail(e)),
            Ok(None) if self.answer.len() >= http::MAX_RESPONSE => {
                return Err(self.fail(ProxyError::TooLong(http::MAX_RESPONSE)))
            }
            Ok(None) => return Ok(Progress::Pending),
            Ok(Some(used)) => used,
        };
        // Bytes past this answer: the next answer's, or (when done) the relay's.
        let mut extra = self.answer.split_off(used.min(self.answer.len()));
        extra.extend_from_slice(rest);
        self.answer.clear();
        if self.phase == Phase::Socks5Method {
            self.phase = Phase::Socks5Connect;
            self.out = socks5::connect_request(self.target);
            self.sent = 0;
            if extra.is_empty() {
                return Ok(Progress::Pending);
            }
            // Bytes the proxy sent before it was asked: its parser judges them (the
            // phase is now Socks5Connect, so this recurses once at most).
            return self.handle_bytes(&extra);
        }
        self.phase = Phase::Done;
        Ok(Progress::Done(extra))
    }

    /// The proxy closed the connection: the handshake failed unless it was done.
    pub fn handle_eof(&mut self) -> ProxyError {
        match &self.phase {
            Phase::Failed(e) => e.clone(),
            _ => self.fail(ProxyError::Closed),
        }
    }

    fn fail(&mut self, e: ProxyError) -> ProxyError {
        self.phase = Phase::Failed(e.clone());
        self.answer = Vec::new();
        self.out = Vec::new();
        self.sent = 0;
        e
    }
}
