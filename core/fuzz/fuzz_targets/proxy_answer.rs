//! A proxy's answers (core/src/proxy, c-toxcore `TCP_client.c`'s `proxy_*` readers): the
//! SOCKS5 and HTTP CONNECT parsers on any bytes, and a whole handshake fed any byte stream
//! in any chunks, never panic; a parser that accepts names a length within its input; a
//! handshake that completes hands on exactly the bytes that followed the answers, and one
//! that fails stays failed.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::proxy::{http, socks5, Progress, ProxyHandshake, ProxyKind};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, stream)) = data.split_first() else {
        return;
    };
    for parsed in [
        socks5::parse_method_reply(stream),
        socks5::parse_connect_reply(stream),
        http::parse_response(stream),
    ] {
        if let Ok(Some(n)) = parsed {
            assert!(n <= stream.len());
        }
    }
    let kind = if mode & 1 == 0 {
        ProxyKind::Socks5
    } else {
        ProxyKind::Http
    };
    let target = if mode & 2 == 0 {
        std::net::SocketAddr::from(([203, 0, 113, 1], 33445))
    } else {
        std::net::SocketAddr::from(([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1], 443))
    };
    let chunk = usize::from(mode >> 2).max(1);
    let mut hs = ProxyHandshake::new(kind, target);
    let mut fed = 0usize;
    for piece in stream.chunks(chunk) {
        let out = hs.poll_transmit().len();
        assert!(out <= 128);
        hs.consume(out);
        match hs.handle_bytes(piece) {
            Ok(Progress::Pending) => fed += piece.len(),
            Ok(Progress::Done(rest)) => {
                // The relay's bytes are the stream's tail, whole.
                let end = fed + piece.len();
                assert!(rest.len() <= end);
                assert_eq!(&stream[end - rest.len()..end], &rest[..]);
                assert!(hs.is_done());
                return;
            }
            Err(e) => {
                assert_eq!(hs.handle_bytes(b"more"), Err(e.clone()));
                assert_eq!(hs.handle_eof(), e);
                return;
            }
        }
    }
});
