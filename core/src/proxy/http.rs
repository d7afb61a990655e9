//! HTTP CONNECT (RFC 9110 §9.3.6), as c-toxcore 0.2.18 uses it (`TCP_client.c`,
//! `proxy_http_generate_connection_request`, `proxy_http_read_connection_response`): a
//! `CONNECT` to the relay's address, and a tunnel if the proxy answers 200.
//!
//! Where c-toxcore differs, we follow the RFC: it ends its request line with a bare `\n`,
//! writes an IPv6 address without brackets and takes any answer whose first 15 bytes
//! contain "200" for success; we send CRLF lines and `[v6]:port`, accept a 2xx status line
//! and read the answer to the blank line that ends its headers (so none of it is taken for
//! the relay's bytes), within [`MAX_RESPONSE`] bytes.

use std::net::SocketAddr;

use super::ProxyError;

/// Bytes of a proxy's answer we read at most before its headers must have ended (ours; an
/// answer to CONNECT is a status line and a few headers).
pub const MAX_RESPONSE: usize = 4096;
/// Characters of a refusal's reason phrase kept for the error message.
pub const MAX_REASON: usize = 80;

/// The request: `CONNECT host:port HTTP/1.1`, a `Host` header of the same, a blank line.
pub fn connect_request(target: SocketAddr) -> Vec<u8> {
    // SocketAddr's Display writes IPv6 in brackets, as the authority form needs.
    format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n").into_bytes()
}

/// The answer at the front of `input`: `Ok(Some(n))`, its `n` bytes up to and including the
/// blank line, when the proxy opened the tunnel (a 2xx status); `Ok(None)` until the headers
/// have ended. A refusal is an error as soon as its status line is complete; anything that
/// does not start as an HTTP status line is an error at its first wrong byte.
pub fn parse_response(input: &[u8]) -> Result<Option<usize>, ProxyError> {
    const PREFIX: &[u8] = b"HTTP/";
    if !input.iter().zip(PREFIX).all(|(a, b)| a == b) {
        return Err(ProxyError::HttpGarbage);
    }
    let Some(line_end) = input.iter().position(|&b| b == b'\n') else {
        return bound(input, None);
    };
    let line = input.get(..line_end).unwrap_or_default();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let (status, reason) = status_line(line).ok_or(ProxyError::HttpGarbage)?;
    if !(200..300).contains(&status) {
        return Err(ProxyError::HttpRefused(status, reason));
    }
    bound(input, header_end(input))
}

/// `Some(end)` as it is; `None` is an error once `input` reached the bound.
fn bound(input: &[u8], end: Option<usize>) -> Result<Option<usize>, ProxyError> {
    match end {
        Some(n) if n <= MAX_RESPONSE => Ok(Some(n)),
        Some(_) => Err(ProxyError::TooLong(MAX_RESPONSE)),
        None if input.len() >= MAX_RESPONSE => Err(ProxyError::TooLong(MAX_RESPONSE)),
        None => Ok(None),
    }
}

/// `HTTP/1.x SP 3DIGIT [SP reason]`: the status and the reason phrase, printable ASCII only.
fn status_line(line: &[u8]) -> Option<(u16, String)> {
    let rest = line.strip_prefix(b"HTTP/1.")?;
    let (version, rest) = rest.split_first()?;
    if !version.is_ascii_digit() {
        return None;
    }
    let rest = rest.strip_prefix(b" ")?;
    let digits = rest.get(..3)?;
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let status: u16 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    let after = rest.get(3..).unwrap_or_default();
    let reason = match after.split_first() {
        None => &[][..],
        Some((b' ', reason)) => reason,
        Some(_) => return None,
    };
    let reason = reason
        .iter()
        .filter(|b| b.is_ascii_graphic() || **b == b' ')
        .take(MAX_REASON)
        .map(|&b| char::from(b))
        .collect();
    Some((status, reason))
}

/// Where the headers end: just past the first blank line (`\r\n\r\n`, or `\n\n` from a
/// proxy that writes bare newlines).
fn header_end(input: &[u8]) -> Option<usize> {
    let mut line_start = 0usize;
    for (i, &b) in input.iter().enumerate() {
        if b != b'\n' {
            continue;
        }
        let line = input.get(line_start..i).unwrap_or_default();
        if line.is_empty() || line == b"\r" {
            return i.checked_add(1);
        }
        line_start = i.checked_add(1)?;
    }
    None
}
