//! TCP relay connections through a proxy, as c-toxcore 0.2.18 makes them (`TCP_client.c`,
//! `connect_sock_to` and the `proxy_*` functions): the driver opens its TCP connection to the
//! proxy instead of the relay, runs a [`ProxyHandshake`] over it that asks the proxy for a
//! tunnel to the relay, and only then reports the connection up to the node, which starts
//! the relay handshake through the tunnel.
//!
//! ```text
//!   SOCKS5 (RFC 1928, no authentication)        HTTP CONNECT (RFC 9110 §9.3.6)
//!   ── 05 01 00 ─────────────────────────►     ── CONNECT ip:port HTTP/1.1 ... ─►
//!   ◄─ 05 00 ─────────────────────────────     ◄─ HTTP/1.1 200 ...\r\n\r\n ──────
//!   ── 05 01 00 ATYP addr port ──────────►
//!   ◄─ 05 00 00 ATYP addr port ───────────
//! ```
//!
//! The relay is named by the IP address the node has for it, as c-toxcore does (it
//! resolves relay host names itself, in `tox_add_tcp_relay`). A proxy carries TCP only, so
//! a node with a proxy sends no UDP at all ([`crate::node::NodeOptions::proxy`]).
//!
//! Everything here is sans-IO; the drivers (`driver::relay_streams`, `driver::tokio::relays`)
//! move the bytes. Every answer is read within a bound and every failure is a typed
//! [`ProxyError`]; the node's relay timeout (`TCP_CONNECTION_TIMEOUT`, 10 s from the TCP
//! connect, `kill_at` in c-toxcore) bounds a proxy that never answers.
// Proxy answers come from the network: no indexing, slicing or arithmetic that could panic.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

mod error;
mod handshake;
pub mod http;
pub mod socks5;

use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;

pub use error::ProxyError;
pub use handshake::{Progress, ProxyHandshake};

/// Which protocol the proxy speaks (tox.h `Tox_Proxy_Type`, less NONE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyKind {
    /// An HTTP proxy that allows `CONNECT` (`TOX_PROXY_TYPE_HTTP`).
    Http,
    /// A SOCKS5 proxy without authentication (`TOX_PROXY_TYPE_SOCKS5`).
    Socks5,
}

/// A proxy every TCP relay connection goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProxyConfig {
    /// Its protocol.
    pub kind: ProxyKind,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl fmt::Display for ProxyConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = match self.kind {
            ProxyKind::Http => "http",
            ProxyKind::Socks5 => "socks5",
        };
        write!(f, "{scheme}://{}", self.addr)
    }
}

/// Why a proxy URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProxyUrlError {
    /// Not `socks5://` or `http://`.
    #[error("{0:?}: a proxy is socks5://HOST:PORT or http://HOST:PORT")]
    Scheme(String),
    /// The part after the scheme is not an IP address and port.
    #[error("{0:?}: the proxy's address must be IP:PORT (resolve names first)")]
    Addr(String),
    /// Port 0 (c-toxcore's `tox_new` refuses it: PROXY_BAD_PORT).
    #[error("{0:?}: the proxy's port must not be 0")]
    Port(String),
}

/// Splits a proxy URL, `socks5://HOST:PORT` or `http://HOST:PORT` (`socks5h://` too, as curl
/// writes a SOCKS5 proxy; a trailing `/` is allowed), into its protocol and `HOST:PORT`.
pub fn split_url(text: &str) -> Result<(ProxyKind, &str), ProxyUrlError> {
    let (scheme, rest) = text
        .split_once("://")
        .ok_or_else(|| ProxyUrlError::Scheme(text.into()))?;
    let kind = match scheme.to_ascii_lowercase().as_str() {
        "socks5" | "socks5h" => ProxyKind::Socks5,
        "http" => ProxyKind::Http,
        _ => return Err(ProxyUrlError::Scheme(text.into())),
    };
    Ok((kind, rest.strip_suffix('/').unwrap_or(rest)))
}

impl FromStr for ProxyConfig {
    type Err = ProxyUrlError;

    /// `socks5://IP:PORT` or `http://IP:PORT` ([`split_url`]; a host name is resolved by
    /// the caller, which knows how it may look names up).
    fn from_str(text: &str) -> Result<Self, ProxyUrlError> {
        let (kind, host_port) = split_url(text)?;
        let addr: SocketAddr = host_port
            .parse()
            .map_err(|_| ProxyUrlError::Addr(text.into()))?;
        if addr.port() == 0 {
            return Err(ProxyUrlError::Port(text.into()));
        }
        Ok(ProxyConfig { kind, addr })
    }
}

#[cfg(test)]
mod tests;
