//! The proxy the node's TCP relay connections go through ([`NodeOptions::proxy`]): the
//! drivers ask [`Node::relay_proxy`] where to connect and run the handshake
//! (`crate::proxy`); a failed one comes back through [`Node::handle_relay_proxy_failed`],
//! which the program reads to tell its user what the proxy did.
//!
//! [`NodeOptions::proxy`]: super::NodeOptions::proxy

use rustox_net_crypto::Timestamp;

use super::Node;
use crate::proxy::{ProxyConfig, ProxyError};
use crate::relay::client::RelayId;

/// The proxy and its failures.
#[derive(Debug, Default)]
pub(super) struct ProxyState {
    config: Option<ProxyConfig>,
    failures: u64,
    last_error: Option<ProxyError>,
}

impl ProxyState {
    pub(super) fn new(config: Option<ProxyConfig>) -> Self {
        ProxyState {
            config,
            ..ProxyState::default()
        }
    }
}

impl Node {
    /// The proxy every relay connection goes through, if any: the driver connects to it
    /// instead of the relay and asks it for a tunnel (`crate::proxy::ProxyHandshake`)
    /// before [`Node::handle_relay_connected`].
    pub fn relay_proxy(&self) -> Option<ProxyConfig> {
        self.proxy.config
    }

    /// Relay connection `id` failed at the proxy (not reachable, refused, closed, or an
    /// answer that is not the protocol): counted, remembered for
    /// [`Node::relay_proxy_failure`], and the connection is closed as
    /// [`Node::handle_relay_closed`] closes it (the relay is retried later).
    pub fn handle_relay_proxy_failed(&mut self, now: Timestamp, id: RelayId, error: ProxyError) {
        self.proxy.failures = self.proxy.failures.saturating_add(1);
        self.proxy.last_error = Some(error);
        self.handle_relay_closed(now, id);
    }

    /// How many relay connections failed at the proxy, and the latest reason.
    pub fn relay_proxy_failure(&self) -> (u64, Option<&ProxyError>) {
        (self.proxy.failures, self.proxy.last_error.as_ref())
    }
}
