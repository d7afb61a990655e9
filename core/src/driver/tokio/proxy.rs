//! A relay connection's proxy handshake ([`crate::proxy::ProxyHandshake`]) on a tokio
//! socket, for the connection tasks of [`super::relays`]. The caller bounds it in time.

use ::tokio::io::{AsyncReadExt, AsyncWriteExt};
use ::tokio::net::TcpStream;

use crate::proxy::{Progress, ProxyError, ProxyHandshake};

/// Bytes one read of the proxy's answer takes: more than any answer we accept needs is
/// fine, as bytes past it are the relay's and are handed on.
const READ_CHUNK: usize = 4096;

/// Runs `handshake` on `stream` (connected to the proxy) until the tunnel is open; the
/// relay's first bytes (often none) or why the proxy failed.
pub async fn run_handshake(
    stream: &mut TcpStream,
    mut handshake: ProxyHandshake,
) -> Result<Vec<u8>, ProxyError> {
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        let out = handshake.poll_transmit().to_vec();
        if !out.is_empty() {
            stream
                .write_all(&out)
                .await
                .map_err(|e| ProxyError::from_io(&e))?;
            handshake.consume(out.len());
        }
        let n = stream
            .read(&mut buf)
            .await
            .map_err(|e| ProxyError::from_io(&e))?;
        if n == 0 {
            return Err(handshake.handle_eof());
        }
        let bytes = buf.get(..n).unwrap_or_default();
        if let Progress::Done(rest) = handshake.handle_bytes(bytes)? {
            return Ok(rest);
        }
    }
}
