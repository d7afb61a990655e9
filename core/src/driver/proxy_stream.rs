//! A relay connection's proxy handshake ([`crate::proxy::ProxyHandshake`]) over a
//! non-blocking std socket, for the step driver ([`super::relay_streams`]): each call writes
//! what the handshake has queued and reads what the proxy sent, never blocking. The node's
//! relay timeout bounds a proxy that never finishes.

use std::io::{self, Read, Write};
use std::net::TcpStream;

use crate::proxy::{Progress, ProxyError, ProxyHandshake};

/// Rounds of write and read per call at most (a SOCKS5 handshake takes two).
pub const MAX_ROUNDS_PER_STEP: usize = 8;

/// Advances the handshake on `tcp` as far as the socket allows: `Ok(Some(bytes))` once the
/// tunnel is open (the relay's first bytes, often none), `Ok(None)` while the proxy has not
/// answered in full. `buf` is the read buffer.
pub fn step_handshake(
    tcp: &mut TcpStream,
    handshake: &mut ProxyHandshake,
    buf: &mut [u8],
) -> Result<Option<Vec<u8>>, ProxyError> {
    for _ in 0..MAX_ROUNDS_PER_STEP {
        write_queued(tcp, handshake)?;
        match tcp.read(buf) {
            Ok(0) => return Err(handshake.handle_eof()),
            Ok(n) => {
                let bytes = buf.get(..n).unwrap_or_default();
                if let Progress::Done(rest) = handshake.handle_bytes(bytes)? {
                    return Ok(Some(rest));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ProxyError::from_io(&e)),
        }
    }
    Ok(None)
}

/// Writes what the handshake has queued, as much as the socket takes.
fn write_queued(tcp: &mut TcpStream, handshake: &mut ProxyHandshake) -> Result<(), ProxyError> {
    while !handshake.poll_transmit().is_empty() {
        match tcp.write(handshake.poll_transmit()) {
            Ok(0) => return Err(ProxyError::Closed),
            Ok(n) => handshake.consume(n),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ProxyError::from_io(&e)),
        }
    }
    Ok(())
}
