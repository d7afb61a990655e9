//! The handshakes byte for byte, fed whole and one byte at a time, and every refusal and
//! malformed answer.

// Test code: indexing a known-length vector is the clearest assertion.
#![allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use std::net::SocketAddr;

use super::*;

fn v4() -> SocketAddr {
    "192.0.2.7:33445".parse().unwrap()
}

fn v6() -> SocketAddr {
    "[2001:db8::1]:443".parse().unwrap()
}

/// Runs a handshake against scripted answers (each sent once the previous request was
/// written), `split` bytes per read; the requests it wrote and its result.
fn run(
    kind: ProxyKind,
    target: SocketAddr,
    answers: &[&[u8]],
    split: usize,
) -> (Vec<Vec<u8>>, Result<Vec<u8>, ProxyError>) {
    let mut hs = ProxyHandshake::new(kind, target);
    let mut written = Vec::new();
    for answer in answers {
        let out = hs.poll_transmit().to_vec();
        hs.consume(out.len());
        assert!(hs.poll_transmit().is_empty());
        written.push(out);
        for chunk in answer.chunks(split.max(1)) {
            match hs.handle_bytes(chunk) {
                Ok(Progress::Pending) => {}
                Ok(Progress::Done(rest)) => return (written, Ok(rest)),
                Err(e) => return (written, Err(e)),
            }
        }
    }
    (written, Err(hs.handle_eof()))
}

const SOCKS_OK_V4: &[u8] = &[5, 0, 0, 1, 10, 0, 0, 1, 0x12, 0x34];

#[test]
fn socks5_sends_what_c_toxcore_sends() {
    for split in [1, 3, 100] {
        let (w, r) = run(ProxyKind::Socks5, v4(), &[&[5, 0], SOCKS_OK_V4], split);
        assert_eq!(r, Ok(vec![]));
        assert_eq!(w[0], [5, 1, 0]);
        assert_eq!(w[1], [5, 1, 0, 1, 192, 0, 2, 7, 0x82, 0xa5]);
    }
    let (w, r) = run(ProxyKind::Socks5, v6(), &[&[5, 0], SOCKS_OK_V4], 2);
    assert_eq!(r, Ok(vec![]));
    let mut want = vec![5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8];
    want.extend_from_slice(&[0; 11]);
    want.extend_from_slice(&[1, 0x01, 0xbb]);
    assert_eq!(w[1], want);
}

#[test]
fn socks5_replies_of_every_address_type_end_where_they_should() {
    let mut v6_reply = vec![5, 0, 0, 4];
    v6_reply.extend_from_slice(&[0; 16]);
    v6_reply.extend_from_slice(&[0, 80]);
    let domain_reply: &[u8] = &[5, 0, 0, 3, 4, b'h', b'o', b's', b't', 0, 80];
    for reply in [SOCKS_OK_V4, &v6_reply, domain_reply] {
        let mut with_relay_bytes = reply.to_vec();
        with_relay_bytes.extend_from_slice(b"relay");
        for split in [1, 7, 1000] {
            let (_, r) = run(
                ProxyKind::Socks5,
                v4(),
                &[&[5, 0], &with_relay_bytes],
                split,
            );
            // The handshake ends at the reply's last byte; the relay's bytes of the same read
            // are handed on, for the relay client.
            let rest = r.unwrap();
            assert!(b"relay".starts_with(&rest), "{rest:?}");
            if split >= with_relay_bytes.len() {
                assert_eq!(rest, b"relay");
            }
        }
    }
}

#[test]
fn socks5_refusals_and_garbage_are_typed_errors() {
    let cases: &[(&[u8], &[u8], ProxyError)] = &[
        (&[5, 0xff], &[], ProxyError::Socks5AuthRequired),
        (&[5, 2], &[], ProxyError::Socks5Method(2)),
        (&[4, 0], &[], ProxyError::NotSocks5(4)),
        (b"HTTP/1.1 400", &[], ProxyError::NotSocks5(b'H')),
        (&[5, 0], &[5, 5], ProxyError::Socks5Refused(5)),
        (&[5, 0], &[5, 2, 0, 1], ProxyError::Socks5Refused(2)),
        (&[5, 0], &[0, 0], ProxyError::NotSocks5(0)),
        (
            &[5, 0],
            &[5, 0, 0, 9, 1, 2],
            ProxyError::Socks5AddressType(9),
        ),
        // Closed mid-answer.
        (&[5], &[], ProxyError::Closed),
        (&[5, 0], &[5, 0, 0, 1, 10], ProxyError::Closed),
    ];
    for (first, second, want) in cases {
        for split in [1, 100] {
            let (_, r) = run(ProxyKind::Socks5, v4(), &[first, second], split);
            assert_eq!(r.as_ref(), Err(want), "{first:?} {second:?}");
        }
    }
    assert!(ProxyError::Socks5Refused(5)
        .to_string()
        .contains("connection refused"));
}

#[test]
fn http_sends_a_connect_and_accepts_2xx() {
    let ok: &[u8] = b"HTTP/1.0 200 Connection established\r\nProxy-agent: tinyproxy\r\n\r\n";
    for split in [1, 5, 1000] {
        let (w, r) = run(ProxyKind::Http, v4(), &[ok], split);
        assert_eq!(r, Ok(vec![]));
        assert_eq!(
            w[0],
            b"CONNECT 192.0.2.7:33445 HTTP/1.1\r\nHost: 192.0.2.7:33445\r\n\r\n"
        );
    }
    let (w, r) = run(ProxyKind::Http, v6(), &[b"HTTP/1.1 200 OK\n\nRELAY"], 1000);
    assert_eq!(r, Ok(b"RELAY".to_vec()));
    assert!(w[0].starts_with(b"CONNECT [2001:db8::1]:443 HTTP/1.1\r\n"));
    // Bytes of the relay that arrive with the answer are kept.
    let (_, r) = run(
        ProxyKind::Http,
        v4(),
        &[b"HTTP/1.1 204 \r\n\r\n\x01\x02"],
        1000,
    );
    assert_eq!(r, Ok(vec![1, 2]));
}

#[test]
fn http_refusals_and_garbage_are_typed_errors() {
    let cases: &[(&[u8], ProxyError)] = &[
        (
            b"HTTP/1.1 403 Forbidden\r\n\r\n",
            ProxyError::HttpRefused(403, "Forbidden".into()),
        ),
        // Refused at the status line, whether or not headers follow.
        (
            b"HTTP/1.0 502 Bad\x07Gateway\r\n",
            ProxyError::HttpRefused(502, "BadGateway".into()),
        ),
        (b"SSH-2.0-OpenSSH\r\n", ProxyError::HttpGarbage),
        (b"\x05\x00", ProxyError::HttpGarbage),
        (b"HTTP/1.1 2000 OK\r\n\r\n", ProxyError::HttpGarbage),
        (b"HTTP/2 200\r\n\r\n", ProxyError::HttpGarbage),
        (b"HTTP/1.1 20", ProxyError::Closed),
        (b"HTTP/1.1 200 OK\r\nVia: x\r\n", ProxyError::Closed),
    ];
    for (answer, want) in cases {
        for split in [1, 1000] {
            let (_, r) = run(ProxyKind::Http, v4(), &[answer], split);
            assert_eq!(
                r.as_ref(),
                Err(want),
                "{:?}",
                String::from_utf8_lossy(answer)
            );
        }
    }
}

#[test]
fn an_endless_answer_is_cut_at_the_bound() {
    let mut answer = b"HTTP/1.1 200 OK\r\n".to_vec();
    while answer.len() < 3 * http::MAX_RESPONSE {
        answer.extend_from_slice(b"X-Pad: aaaaaaaaaaaaaaaaaaaaaaaa\r\n");
    }
    for split in [1, 1000, 1 << 20] {
        let (_, r) = run(ProxyKind::Http, v4(), &[&answer], split);
        assert_eq!(r, Err(ProxyError::TooLong(http::MAX_RESPONSE)));
    }
    // A status line that never ends, too.
    let endless = [b"HTTP/1.1 200 ".as_slice(), &[b'a'; 2 * http::MAX_RESPONSE]].concat();
    let (_, r) = run(ProxyKind::Http, v4(), &[&endless], 64);
    assert_eq!(r, Err(ProxyError::TooLong(http::MAX_RESPONSE)));
}

#[test]
fn a_failed_handshake_stays_failed() {
    let mut hs = ProxyHandshake::new(ProxyKind::Socks5, v4());
    hs.consume(3);
    assert_eq!(
        hs.handle_bytes(&[5, 0xff]),
        Err(ProxyError::Socks5AuthRequired)
    );
    assert_eq!(
        hs.handle_bytes(&[5, 0]),
        Err(ProxyError::Socks5AuthRequired)
    );
    assert!(hs.poll_transmit().is_empty());
    assert!(!hs.is_done());
}

#[test]
fn proxy_urls_parse() {
    let p: ProxyConfig = "socks5://127.0.0.1:9050".parse().unwrap();
    assert_eq!(p.kind, ProxyKind::Socks5);
    assert_eq!(p.addr, "127.0.0.1:9050".parse().unwrap());
    assert_eq!(p.to_string(), "socks5://127.0.0.1:9050");
    let p: ProxyConfig = "HTTP://[::1]:3128/".parse().unwrap();
    assert_eq!(p.kind, ProxyKind::Http);
    assert!(p.addr.is_ipv6());
    assert_eq!(
        split_url("socks5h://tor:9050"),
        Ok((ProxyKind::Socks5, "tor:9050"))
    );
    assert!(matches!(
        "ftp://1.2.3.4:5".parse::<ProxyConfig>(),
        Err(ProxyUrlError::Scheme(_))
    ));
    assert!(matches!(
        "1.2.3.4:5".parse::<ProxyConfig>(),
        Err(ProxyUrlError::Scheme(_))
    ));
    assert!(matches!(
        "http://1.2.3.4".parse::<ProxyConfig>(),
        Err(ProxyUrlError::Addr(_))
    ));
    assert!(matches!(
        "http://1.2.3.4:0".parse::<ProxyConfig>(),
        Err(ProxyUrlError::Port(_))
    ));
}
