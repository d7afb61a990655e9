//! SOCKS5 (RFC 1928) as c-toxcore 0.2.18 speaks it (`TCP_client.c`,
//! `proxy_socks5_generate_greetings`, `proxy_socks5_generate_connection_request` and their
//! readers): one method offered (no authentication), then a CONNECT to the relay's IPv4 or
//! IPv6 address. The reply parsers take the front of what the proxy sent so far and say how
//! many bytes the answer took, or that more are needed; they never read past the answer.

use std::net::SocketAddr;

use super::ProxyError;

/// The protocol version, first byte of every message both ways.
pub const VERSION: u8 = 0x05;
/// The greeting: version, one method, "no authentication" (`TCP_SOCKS5_PROXY_HS_*`).
pub const GREETING: [u8; 3] = [VERSION, 0x01, METHOD_NO_AUTH];
/// Method 0: no authentication.
pub const METHOD_NO_AUTH: u8 = 0x00;
/// Method 0xFF: none of the offered methods is acceptable.
pub const METHOD_NONE_ACCEPTABLE: u8 = 0xFF;
/// Command 1: CONNECT.
pub const CMD_CONNECT: u8 = 0x01;
/// Address types of requests and replies.
pub const ATYP_IPV4: u8 = 0x01;
/// A length-prefixed domain name (only in replies here: we name relays by address).
pub const ATYP_DOMAIN: u8 = 0x03;
/// An IPv6 address.
pub const ATYP_IPV6: u8 = 0x04;
/// Reply code 0: succeeded.
pub const REPLY_SUCCEEDED: u8 = 0x00;
/// Bytes of a method selection reply: version and method.
pub const METHOD_REPLY_SIZE: usize = 2;

/// The CONNECT request for `target`: version, command, reserved, address type, the
/// address and the port in network order.
pub fn connect_request(target: SocketAddr) -> Vec<u8> {
    let mut out = vec![VERSION, CMD_CONNECT, 0x00];
    match target {
        SocketAddr::V4(a) => {
            out.push(ATYP_IPV4);
            out.extend_from_slice(&a.ip().octets());
        }
        SocketAddr::V6(a) => {
            out.push(ATYP_IPV6);
            out.extend_from_slice(&a.ip().octets());
        }
    }
    out.extend_from_slice(&target.port().to_be_bytes());
    out
}

/// The method selection reply at the front of `input`: `Ok(Some(2))` when the proxy
/// accepted "no authentication", `Ok(None)` until both bytes are there.
pub fn parse_method_reply(input: &[u8]) -> Result<Option<usize>, ProxyError> {
    let mut bytes = input.iter().copied();
    match second_byte(&mut bytes)? {
        None => Ok(None),
        Some(METHOD_NO_AUTH) => Ok(Some(METHOD_REPLY_SIZE)),
        Some(METHOD_NONE_ACCEPTABLE) => Err(ProxyError::Socks5AuthRequired),
        Some(m) => Err(ProxyError::Socks5Method(m)),
    }
}

/// The byte after a reply's version byte (the method or the reply code): `Ok(None)` until
/// it is there; an error at once when the first byte is not SOCKS5's version.
fn second_byte(bytes: &mut impl Iterator<Item = u8>) -> Result<Option<u8>, ProxyError> {
    match bytes.next() {
        None => Ok(None),
        Some(VERSION) => Ok(bytes.next()),
        Some(v) => Err(ProxyError::NotSocks5(v)),
    }
}

/// The CONNECT reply at the front of `input`: `Ok(Some(n))`, the reply's `n` bytes, when the
/// proxy connected us; `Ok(None)` until the whole reply is there. A refusal is an error as
/// soon as its code arrives, so a proxy that refuses and closes is not waited for. The
/// bound address (which may be of any type, whatever ours was) is skipped.
pub fn parse_connect_reply(input: &[u8]) -> Result<Option<usize>, ProxyError> {
    let mut bytes = input.iter().copied();
    match second_byte(&mut bytes)? {
        None => return Ok(None),
        Some(REPLY_SUCCEEDED) => {}
        Some(code) => return Err(ProxyError::Socks5Refused(code)),
    }
    // The reserved byte, then the address type.
    let Some(atyp) = bytes.nth(1) else {
        return Ok(None);
    };
    let addr_len = match atyp {
        ATYP_IPV4 => 4,
        ATYP_IPV6 => 16,
        ATYP_DOMAIN => match bytes.next() {
            None => return Ok(None),
            Some(len) => usize::from(len).saturating_add(1),
        },
        other => return Err(ProxyError::Socks5AddressType(other)),
    };
    // version, reply, reserved, type; the address; the port.
    let total = addr_len.saturating_add(4 + 2);
    Ok((input.len() >= total).then_some(total))
}
