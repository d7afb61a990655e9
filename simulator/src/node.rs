//! The interface between the simulator and the code under test.
//!
//! A sans-IO core already has this shape (docs/design.md principle 1): inputs carry `now`, outputs
//! are pulled. The simulator calls `handle_*`, then drains `poll_transmit` and re-reads
//! `poll_timeout` — str0m's "after every input, drain outputs" discipline — so a node never
//! needs a clock or a socket of its own.

use std::net::SocketAddr;

use rustox_net_crypto::Timestamp;

/// A participant in a simulation: a protocol core plus whatever small application drives it.
pub trait SimNode {
    /// A datagram arrived on `to` (one of this node's addresses) from `from`.
    fn handle_datagram(&mut self, now: Timestamp, from: SocketAddr, to: SocketAddr, bytes: &[u8]);

    /// The deadline last returned by `poll_timeout` has passed.
    fn handle_timeout(&mut self, now: Timestamp);

    /// The next datagram to send, as `(destination, payload)`; it leaves from the node's
    /// first address. Called until it returns `None` after every input.
    fn poll_transmit(&mut self, now: Timestamp) -> Option<(SocketAddr, Vec<u8>)>;

    /// When `handle_timeout` should next be called, if ever. A deadline in the past means
    /// "as soon as possible".
    fn poll_timeout(&self) -> Option<Timestamp>;

    /// Like [`SimNode::poll_transmit`], with the address the datagram leaves from for a node
    /// that sends from more than one (a host with a UDP port and a TCP port): `None` is the
    /// first. The simulator calls this one; the default sends everything from the first.
    fn poll_transmit_from(
        &mut self,
        now: Timestamp,
    ) -> Option<(Option<SocketAddr>, SocketAddr, Vec<u8>)> {
        self.poll_transmit(now).map(|(to, bytes)| (None, to, bytes))
    }

    /// Internal consistency; the simulator calls this after every event the node handled and
    /// stops the run with the seed when it fails.
    fn check_invariants(&self) -> Result<(), String> {
        Ok(())
    }
}

impl<T: SimNode + ?Sized> SimNode for Box<T> {
    fn handle_datagram(&mut self, now: Timestamp, from: SocketAddr, to: SocketAddr, bytes: &[u8]) {
        (**self).handle_datagram(now, from, to, bytes)
    }
    fn handle_timeout(&mut self, now: Timestamp) {
        (**self).handle_timeout(now)
    }
    fn poll_transmit(&mut self, now: Timestamp) -> Option<(SocketAddr, Vec<u8>)> {
        (**self).poll_transmit(now)
    }
    fn poll_timeout(&self) -> Option<Timestamp> {
        (**self).poll_timeout()
    }
    fn poll_transmit_from(
        &mut self,
        now: Timestamp,
    ) -> Option<(Option<SocketAddr>, SocketAddr, Vec<u8>)> {
        (**self).poll_transmit_from(now)
    }
    fn check_invariants(&self) -> Result<(), String> {
        (**self).check_invariants()
    }
}
