//! Connecting and closing relays: which relay connects next, surplus relays closed, failures
//! backed off, and what a connection's events do to the relays and routes (0.2.18
//! `do_tcp_conns`, `kill_nonused_tcp`).

use std::time::Duration;

use rustox_net_crypto::Timestamp;

use super::RelayEvent;
use super::{Candidate, Link, RelayClients, MAX_QUEUED_CLOSES, TCP_CONNECTION_ANNOUNCE_TIMEOUT};
use crate::relay::client::connection::ConnectionEvent;

impl RelayClients {
    /// The relay [`Self::poll_connect`] picks at `now`: the idle relay a non-direct peer
    /// lists that has waited out its backoff longest ago, else, while fewer than
    /// `keep_connected` connections are open or opening, any such idle relay.
    pub(super) fn next_to_connect(&self, now: Timestamp) -> Option<usize> {
        let (wanted, any) = self.connect_candidates(now);
        wanted.or(any).map(|(i, _)| i)
    }

    /// When [`Self::poll_connect`] next has a relay to give (possibly in the past).
    pub(super) fn next_connect_time(&self) -> Option<Timestamp> {
        let (wanted, any) = self.connect_candidates(Timestamp::MAX);
        [wanted, any].into_iter().flatten().map(|(_, t)| t).min()
    }

    /// The earliest eligible idle relay a non-direct peer lists, and the earliest eligible
    /// idle relay of all if fewer than `keep_connected` are open or opening; each with the
    /// time it became eligible. Nothing while `max_connections` are open or opening.
    pub(super) fn connect_candidates(
        &self,
        now: Timestamp,
    ) -> (Option<Candidate>, Option<Candidate>) {
        let busy = self.relays.iter().filter(|r| r.is_busy()).count();
        if busy >= self.config.max_connections {
            return (None, None);
        }
        let idle = (0..self.relays.len()).filter(|&i| {
            let r = &self.relays[i];
            !r.is_busy() && r.retry_at <= now
        });
        let earliest = |it: &mut dyn Iterator<Item = usize>| {
            it.map(|i| (i, self.relays[i].retry_at))
                .min_by_key(|&(i, t)| (t, i))
        };
        let wanted = earliest(&mut idle.clone().filter(|&i| self.is_wanted(i)));
        let any = if busy < self.config.keep_connected {
            earliest(&mut idle.clone())
        } else {
            None
        };
        (wanted, any)
    }

    pub(super) fn established_count(&self) -> usize {
        self.relays
            .iter()
            .filter(|r| r.established().is_some())
            .count()
    }

    /// When the next surplus relay may be closed.
    pub(super) fn next_surplus_close(&self) -> Option<Timestamp> {
        if self.established_count() <= self.config.keep_connected {
            return None;
        }
        (0..self.relays.len())
            .filter(|&i| self.relays[i].established().is_some() && !self.is_in_use(i))
            .map(|i| self.relays[i].last_request + TCP_CONNECTION_ANNOUNCE_TIMEOUT)
            .min()
    }

    /// Closes relays beyond `keep_connected` that carry no online route to a non-direct
    /// peer and whose last routing request is [`TCP_CONNECTION_ANNOUNCE_TIMEOUT`] old
    /// (0.2.18 `kill_nonused_tcp`, `sleep_tcp_relay_connection`).
    pub(super) fn close_surplus(&mut self, now: Timestamp) {
        let mut surplus = self
            .established_count()
            .saturating_sub(self.config.keep_connected);
        for i in 0..self.relays.len() {
            if surplus == 0 {
                break;
            }
            let relay = &self.relays[i];
            if relay.established().is_none()
                || self.is_in_use(i)
                || now < relay.last_request + TCP_CONNECTION_ANNOUNCE_TIMEOUT
            {
                continue;
            }
            // Peers whose session is direct keep the relay for when they leave UDP; the
            // others lose it, as in 0.2.18 (they re-share their relays).
            self.unlink(i, |p| p.direct);
            self.close(now, i, true, None);
            surplus -= 1;
        }
    }

    /// Relay `i` failed: counted against its backoff.
    pub(super) fn fail(&mut self, now: Timestamp, i: usize, close_socket: bool) {
        self.stats.failures += 1;
        let delay = self.relays[i].backoff.fail();
        self.close(now, i, close_socket, Some(delay));
    }

    /// Ends relay `i`'s connection; a retry no sooner than `now + delay` (at once if
    /// `None`). Reports the relay down and every peer whose last route went with it.
    pub(super) fn close(
        &mut self,
        now: Timestamp,
        i: usize,
        close_socket: bool,
        delay: Option<Duration>,
    ) {
        let relay = &mut self.relays[i];
        let was_up = matches!(relay.link, Link::Open { up: true, .. });
        if let (Some(id), true) = (relay.id(), close_socket) {
            if self.closes.len() >= MAX_QUEUED_CLOSES {
                self.closes.pop_front();
                self.stats.closes_dropped += 1;
            }
            self.closes.push_back(id);
        }
        relay.link = Link::Idle;
        relay.last_request = Timestamp::ZERO;
        relay.retry_at = now + delay.unwrap_or(Duration::ZERO);
        let (addr, pk) = (relay.addr, relay.pk);
        if was_up {
            self.push_event(RelayEvent::RelayDown { addr, pk });
        }
        for k in 0..self.relays[i].listed_by.len() {
            let peer = self.relays[i].listed_by[k];
            self.update_peer_online(&peer);
        }
        self.unlisted = true;
    }

    /// Handles what relay `i`'s connection reported.
    pub(super) fn drain_connection(&mut self, now: Timestamp, i: usize) {
        loop {
            let event = match &mut self.relays[i].link {
                Link::Open { conn, .. } => conn.poll_event(),
                _ => None,
            };
            let Some(event) = event else {
                return;
            };
            self.on_connection_event(now, i, event);
        }
    }

    pub(super) fn on_connection_event(&mut self, now: Timestamp, i: usize, event: ConnectionEvent) {
        let (addr, pk) = (self.relays[i].addr, self.relays[i].pk);
        match event {
            ConnectionEvent::Established => {
                let relay = &mut self.relays[i];
                if let Link::Open { up, .. } = &mut relay.link {
                    *up = true;
                }
                relay.backoff.succeed();
                relay.last_request = Timestamp::ZERO;
                self.push_event(RelayEvent::RelayUp { addr, pk });
                // 0.2.18 `tcp_relay_on_online`: a route for every peer listing the relay.
                for k in 0..self.relays[i].listed_by.len() {
                    let peer = self.relays[i].listed_by[k];
                    self.request_route(now, i, peer);
                }
            }
            ConnectionEvent::RouteRefused(_) => {}
            ConnectionEvent::RouteOnline(peer) | ConnectionEvent::RouteOffline(peer) => {
                self.update_peer_online(&peer);
            }
            ConnectionEvent::Data { from, data } => {
                self.push_event(RelayEvent::Data { from, data });
            }
            ConnectionEvent::Oob { from, data } => {
                let listed = self.peers.get(&from).is_some_and(|p| p.has_relay(&pk));
                let event = if listed {
                    RelayEvent::Data { from, data }
                } else {
                    RelayEvent::Oob {
                        relay_addr: addr,
                        relay_pk: pk,
                        from,
                        data,
                    }
                };
                self.push_event(event);
            }
            ConnectionEvent::OnionResponse(data) => {
                self.push_event(RelayEvent::OnionResponse {
                    relay_addr: addr,
                    data,
                });
            }
        }
    }
}
