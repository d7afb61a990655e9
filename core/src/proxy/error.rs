//! Why a proxy did not give us a tunnel to the relay.

use std::io;

/// A failed proxy handshake or connection: what the user is told about their proxy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProxyError {
    /// The TCP connection to the proxy itself failed (nothing listening, unreachable).
    #[error("cannot connect to the proxy: {0}")]
    Connect(io::ErrorKind),
    /// The proxy closed the connection before its answer was complete.
    #[error("the proxy closed the connection during its handshake")]
    Closed,
    /// Reading from or writing to the proxy failed.
    #[error("the connection to the proxy failed: {0}")]
    Io(io::ErrorKind),
    /// No answer in time (the drivers' bound; the node's relay timeout on top).
    #[error("the proxy did not answer in time")]
    Timeout,
    /// A SOCKS5 answer with another version byte: not a SOCKS5 proxy.
    #[error("not a SOCKS5 proxy (its answer starts with {0:#04x}, not 0x05)")]
    NotSocks5(u8),
    /// The SOCKS5 proxy wants authentication (method 0xFF: none of ours is acceptable).
    #[error("the SOCKS5 proxy requires authentication, which is not supported")]
    Socks5AuthRequired,
    /// The SOCKS5 proxy chose a method we did not offer.
    #[error("the SOCKS5 proxy chose method {0:#04x}, which was not offered")]
    Socks5Method(u8),
    /// The SOCKS5 proxy refused the connection to the relay (its reply code, RFC 1928 §6).
    #[error("the SOCKS5 proxy refused: {text} (reply {code})", text = socks5_reply_text(*.0), code = .0)]
    Socks5Refused(u8),
    /// A SOCKS5 reply with an address type RFC 1928 does not define.
    #[error("the SOCKS5 proxy answered with unknown address type {0:#04x}")]
    Socks5AddressType(u8),
    /// The HTTP proxy refused the `CONNECT` (its status code and reason phrase).
    #[error("the HTTP proxy refused: {0} {1}")]
    HttpRefused(u16, String),
    /// The HTTP proxy's answer is not an HTTP status line.
    #[error("the HTTP proxy's answer is not HTTP")]
    HttpGarbage,
    /// The proxy's answer did not end within the bound we read.
    #[error("the proxy's answer is longer than {0} bytes")]
    TooLong(usize),
}

impl ProxyError {
    /// The error for a failed read or write of the proxy connection.
    pub fn from_io(e: &io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::UnexpectedEof => ProxyError::Closed,
            io::ErrorKind::TimedOut => ProxyError::Timeout,
            kind => ProxyError::Io(kind),
        }
    }
}

/// What a SOCKS5 reply code means (RFC 1928 §6).
fn socks5_reply_text(code: u8) -> &'static str {
    match code {
        0x00 => "succeeded",
        0x01 => "general SOCKS server failure",
        0x02 => "connection not allowed by ruleset",
        0x03 => "network unreachable",
        0x04 => "host unreachable",
        0x05 => "connection refused",
        0x06 => "TTL expired",
        0x07 => "command not supported",
        0x08 => "address type not supported",
        _ => "unknown reply code",
    }
}
