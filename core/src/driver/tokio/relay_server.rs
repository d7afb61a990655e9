//! An instance's own TCP relay server ([`InstanceRelay`]) under the tokio session driver:
//! [`WithRelayServer`] wraps the application the loop runs, so every command and the Rust
//! API get the relay without a loop of their own.
//!
//! The relay thread wakes the loop through the application's waker (a shared
//! `tokio::sync::Notify`) when its clients' onion requests wait; the loop then moves them
//! into the node and sends what they caused before it sleeps again. Responses for the
//! relay's clients are handed over after every turn.

use std::sync::Arc;

use rustox_net_crypto::Timestamp;
use tokio::sync::Notify;

use super::session::App;
use crate::driver::instance_relay::{InstanceRelay, InstanceRelayError};
use crate::driver::Clock;
use crate::node::{Node, NodeEvent};
use crate::relay::server::RelayConfig;

/// An [`App`] with the instance's relay server beside it.
pub struct WithRelayServer<A> {
    /// The application.
    pub app: A,
    relay: InstanceRelay,
    wake: Arc<Notify>,
}

impl<A: App> WithRelayServer<A> {
    /// Starts the relay on TCP `port` (0: any) for `node` (see [`InstanceRelay::start`])
    /// and wraps `app`, whose waker (if it has one) the relay shares.
    pub fn start(
        app: A,
        node: &mut Node,
        now: Timestamp,
        port: u16,
        ipv6: bool,
        config: RelayConfig,
        clock: Clock,
    ) -> Result<Self, InstanceRelayError> {
        let wake = app.waker().unwrap_or_else(|| Arc::new(Notify::new()));
        let notify = wake.clone();
        let relay = InstanceRelay::start(
            node,
            now,
            port,
            ipv6,
            config,
            clock,
            Some(Arc::new(move || notify.notify_one())),
        )?;
        Ok(WithRelayServer { app, relay, wake })
    }

    /// The relay server.
    pub fn relay(&self) -> &InstanceRelay {
        &self.relay
    }
}

impl<A: App> App for WithRelayServer<A> {
    type Output = A::Output;

    fn on_event(&mut self, node: &mut Node, now: Timestamp, event: NodeEvent) -> Option<A::Output> {
        self.app.on_event(node, now, event)
    }

    fn after_io(&mut self, node: &mut Node, now: Timestamp) {
        // Responses the turn's datagrams made go to the relay's clients now; a request
        // taken here left a wake-up behind, so what it caused is sent at once.
        self.relay.service(node, now);
        self.app.after_io(node, now);
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        self.app.poll_timeout()
    }

    fn on_timeout(&mut self, node: &mut Node, now: Timestamp) -> Option<A::Output> {
        self.app.on_timeout(node, now)
    }

    fn waker(&self) -> Option<Arc<Notify>> {
        Some(self.wake.clone())
    }

    fn on_wake(&mut self, node: &mut Node, now: Timestamp) -> Option<A::Output> {
        self.relay.service(node, now);
        self.app.on_wake(node, now)
    }

    fn wake_tally(&mut self) -> Option<&mut crate::driver::WakeTally> {
        self.app.wake_tally()
    }
}
