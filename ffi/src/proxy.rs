//! `tox_new`'s proxy options (tox.h `proxy_type`, `proxy_host`, `proxy_port`) checked and
//! turned into the node's [`ProxyConfig`], as c-toxcore's `tox_new` (tox.c) checks them: a
//! type tox.h does not define is PROXY_BAD_TYPE, port 0 PROXY_BAD_PORT, a host that is
//! missing or does not resolve PROXY_BAD_HOST (an IPv6 address only with `ipv6_enabled`).
//! The proxy's own name is resolved here, once; relays are named to it by address.

use std::ffi::CStr;
use std::net::{SocketAddr, ToSocketAddrs};

use rustox_core::proxy::{ProxyConfig, ProxyKind};

use crate::options::Tox_Options;
use crate::types::{Tox_Err_New, Tox_Proxy_Type};

/// The proxy `options` ask for, `None` for TOX_PROXY_TYPE_NONE.
pub fn from_options(options: &Tox_Options) -> Result<Option<ProxyConfig>, Tox_Err_New> {
    let kind = match Tox_Proxy_Type::from_raw(options.proxy_type) {
        Some(Tox_Proxy_Type::NONE) => return Ok(None),
        Some(Tox_Proxy_Type::HTTP) => ProxyKind::Http,
        Some(Tox_Proxy_Type::SOCKS5) => ProxyKind::Socks5,
        None => return Err(Tox_Err_New::PROXY_BAD_TYPE),
    };
    if options.proxy_port == 0 {
        return Err(Tox_Err_New::PROXY_BAD_PORT);
    }
    if options.proxy_host.is_null() {
        return Err(Tox_Err_New::PROXY_BAD_HOST);
    }
    // SAFETY: tox.h: a NUL-terminated string that lives as long as the options.
    let host = unsafe { CStr::from_ptr(options.proxy_host) }
        .to_str()
        .map_err(|_| Tox_Err_New::PROXY_BAD_HOST)?;
    let addr = resolve(host, options.proxy_port, options.ipv6_enabled)
        .ok_or(Tox_Err_New::PROXY_BAD_HOST)?;
    Ok(Some(ProxyConfig { kind, addr }))
}

/// The first address of `host` (a literal or a name), IPv4 only unless `ipv6`.
fn resolve(host: &str, port: u16, ipv6: bool) -> Option<SocketAddr> {
    // A bracketed IPv6 literal, as a URL writes it.
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if host.is_empty() {
        return None;
    }
    (host, port)
        .to_socket_addrs()
        .ok()?
        .find(|a| ipv6 || a.is_ipv4())
}
