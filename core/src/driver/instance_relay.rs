//! A TCP relay server run by a Tox instance (`Tox_Options.tcp_port`, `ToxOptions::tcp_port`,
//! `rustox recv --tcp-port`), as c-toxcore 0.2.18's `new_messenger` runs one: under the
//! instance's DHT keys, its onion requests handed to the instance's own onion server, and
//! the instance itself a client of it (`do_messenger` adds 127.0.0.1:port with its own key
//! as a TCP relay), so friends that reach only this relay reach the instance too.
//!
//! The server is the bootstrap node's ([`TcpRelay`]: one thread on `mio`). Between it and
//! the node, which the instance's own driver runs, only onion and forwarding packets cross:
//!
//! ```text
//!  relay thread ─► onion / forward request ─► bounded channel ─► (wake) ─► service ─► Node
//!  Node ─► poll_relay_onion_response / poll_relay_forward_reply ─► service ─► RelayHandle
//!       ─► relay thread ─► client
//! ```
//!
//! [`InstanceRelay::service`] is called by the driver after its reads and on the wake-up,
//! then the driver sends what the node has queued.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, TrySendError};
use std::sync::Arc;

use rustox_net_crypto::Timestamp;

use super::tcp_relay::{RelayHandle, RelayRequest, TcpRelay, TcpRelayConfig, TcpRelaySnapshot};
use super::Clock;
use crate::node::Node;
use crate::relay::server::RelayConfig;

/// A wake-up for the instance's driver: an onion or forward request is waiting.
pub type Wake = Arc<dyn Fn() + Send + Sync>;

/// Why the relay did not start.
#[derive(Debug, thiserror::Error)]
pub enum InstanceRelayError {
    /// The port is taken or cannot be bound (c-toxcore's `tox_new` fails with PORT_ALLOC).
    #[error("cannot listen on TCP {addr}: {source}")]
    Listen {
        /// Where.
        addr: SocketAddr,
        /// What the OS said.
        source: io::Error,
    },
}

/// The relay server of one instance.
pub struct InstanceRelay {
    relay: TcpRelay,
    handle: RelayHandle,
    requests: Receiver<RelayRequest>,
    /// Onion and forward requests the channel had no room for.
    requests_dropped: Arc<AtomicU64>,
    port: u16,
}

impl std::fmt::Debug for InstanceRelay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstanceRelay")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

impl InstanceRelay {
    /// Listens on `port` (0: any free port) on every address (`[::]`, which takes IPv4
    /// too, when `ipv6`; else `0.0.0.0`: c-toxcore's `new_TCP_server` binds the same),
    /// starts the relay's thread under `node`'s DHT keys, makes the node's onion server
    /// its onion relay, and adds the relay to the node's own TCP relays. `wake` is called
    /// when an onion request waits for [`Self::service`]; `clock` is the node's.
    pub fn start(
        node: &mut Node,
        now: Timestamp,
        port: u16,
        ipv6: bool,
        config: RelayConfig,
        clock: Clock,
        wake: Option<Wake>,
    ) -> Result<InstanceRelay, InstanceRelayError> {
        let ip: IpAddr = if ipv6 {
            std::net::Ipv6Addr::UNSPECIFIED.into()
        } else {
            Ipv4Addr::UNSPECIFIED.into()
        };
        let addr = SocketAddr::new(ip, port);
        // As many requests as the server itself holds for its onion relay.
        let (tx, rx) = sync_channel(config.onion_queue.max(1));
        let requests_dropped = Arc::new(AtomicU64::new(0));
        let dropped = requests_dropped.clone();
        let sink = Box::new(
            move |_: Timestamp, req: RelayRequest| match tx.try_send(req) {
                Ok(()) => {
                    if let Some(w) = &wake {
                        w();
                    }
                }
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                    dropped.fetch_add(1, Ordering::Relaxed);
                }
            },
        );
        let keys = node.dht().keys().clone();
        let (relay, handle) = TcpRelay::start(
            keys.clone(),
            TcpRelayConfig {
                listen: vec![addr],
                relay: config,
            },
            Some(sink),
            clock,
        )
        .map_err(|source| InstanceRelayError::Listen { addr, source })?;
        let port = relay.local_addrs().first().map_or(port, |a| a.port());
        node.serve_relay_onion();
        // A full relay table keeps the relays it has (the instance still serves others).
        let _ = node.add_tcp_relay(
            now,
            SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
            keys.public,
        );
        Ok(InstanceRelay {
            relay,
            handle,
            requests: rx,
            requests_dropped,
            port,
        })
    }

    /// The TCP port it listens on (`tox_self_get_tcp_port`).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Moves the onion and forwarding packets between the relay and the node: its clients'
    /// requests in (the node then has datagrams to send), the node's responses and replies
    /// for them out.
    pub fn service(&mut self, node: &mut Node, now: Timestamp) {
        while let Ok(req) = self.requests.try_recv() {
            match req {
                RelayRequest::Onion(req) => node.handle_relay_onion_request(now, &req),
                RelayRequest::Forward(req) => node.handle_relay_forward_request(now, &req),
            }
        }
        // A full queue drops a response or reply (counted by the handle); the client retries.
        while let Some((dest, response)) = node.poll_relay_onion_response() {
            self.handle.deliver(dest, response);
        }
        while let Some((con, serial, reply)) = node.poll_relay_forward_reply() {
            self.handle.deliver_forward_reply(con, serial, reply);
        }
    }

    /// The relay's counters and connections, and the requests dropped on the way in.
    pub fn snapshot(&self) -> (TcpRelaySnapshot, u64) {
        (
            self.relay.snapshot(),
            self.requests_dropped.load(Ordering::Relaxed),
        )
    }

    /// Stops the relay's thread and closes its sockets (dropping it does the same).
    pub fn shutdown(self) {
        self.relay.shutdown();
    }
}
