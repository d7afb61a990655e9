//! A connection's output and its end: frames queued on its bounded buffer, the ready queue
//! and timers, and closing (with what a closed connection leaves behind: routes, counts).

use super::{AddrKey, CloseReason, ConnId, RelayDrop, RelayServer, Sent};
use crate::relay::outbuf::{Admit, FrameClass};
use crate::relay::wire::frame::frame_size;
use crate::relay::wire::packet::NUM_RESERVED_PORTS;
use crate::relay::wire::Packet;

impl RelayServer {
    /// Seals `packet` into `to`'s output buffer if its class has room. Ordinary frames that
    /// do not fit are dropped and counted; control frames that do not fit are `Overflow`, and
    /// the caller closes `to`.
    pub(super) fn send(&mut self, to: ConnId, packet: &Packet<'_>, class: FrameClass) -> Sent {
        let Some(c) = self.conns.get_mut(&to) else {
            return Sent::Dropped;
        };
        let Some(session) = c.session.as_mut() else {
            return Sent::Dropped;
        };
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        packet.encode(&mut scratch);
        let result = match c
            .out
            .admit(class, frame_size(scratch.len()), self.config.output_limit)
        {
            Admit::Yes => {
                if c.out.append(|v| session.enc.encode(&scratch, v)).is_ok() {
                    Sent::Queued
                } else {
                    Sent::Dropped
                }
            }
            Admit::Full => {
                self.stats.drops[RelayDrop::OutputFull as usize] += 1;
                Sent::Dropped
            }
            Admit::Overflow => Sent::Overflow,
        };
        self.scratch = scratch;
        if result == Sent::Queued {
            self.mark_ready(to);
        }
        result
    }

    pub(super) fn mark_ready(&mut self, id: ConnId) {
        if let Some(c) = self.conns.get_mut(&id) {
            if !c.ready {
                c.ready = true;
                self.ready.push_back(id);
            }
        }
    }

    pub(super) fn reschedule(&mut self, id: ConnId) {
        if let Some(c) = self.conns.get_mut(&id) {
            self.timers.remove(&(c.deadline, id));
            c.deadline = c.next_deadline(&self.config);
            self.timers.insert((c.deadline, id));
        }
    }

    pub(super) fn drop(&mut self, reason: RelayDrop) {
        self.stats.drops[reason as usize] += 1;
    }

    /// Closes `conn` for `reason` and tells the driver.
    pub(super) fn close(&mut self, conn: ConnId, reason: CloseReason) {
        self.close_inner(conn, Some(reason));
    }

    /// Forgets `conn`; its linked peers get disconnect notifications. A peer that cannot take
    /// one is closed in turn, from a work list rather than by recursion.
    pub(super) fn close_inner(&mut self, conn: ConnId, reason: Option<CloseReason>) {
        let mut work = vec![(conn, reason)];
        while let Some((id, reason)) = work.pop() {
            let Some(c) = self.conns.remove(&id) else {
                continue;
            };
            self.timers.remove(&(c.deadline, id));
            let key = AddrKey::of(&c.addr);
            if let Some(n) = self.per_addr.get_mut(&key) {
                *n -= 1;
                if *n == 0 {
                    self.per_addr.remove(&key);
                }
            }
            match &c.session {
                Some(s) if s.confirmed => {
                    if self.by_pk.get(&s.pk) == Some(&id) {
                        self.by_pk.remove(&s.pk);
                    }
                }
                _ => self.handshaking -= 1,
            }
            if let Some(reason) = reason {
                self.stats.closed[reason as usize] += 1;
                self.closes.push_back((id, reason));
            }
            for (_, link) in c.routes.links() {
                let Some(r) = self
                    .conns
                    .get_mut(&link.conn)
                    .and_then(|o| o.routes.get_mut(link.slot))
                else {
                    continue;
                };
                r.link = None;
                let n = Packet::DisconnectNotification {
                    conn_id: link.slot + NUM_RESERVED_PORTS,
                };
                if self.send(link.conn, &n, FrameClass::Control) == Sent::Overflow {
                    work.push((link.conn, Some(CloseReason::SlowReader)));
                }
            }
        }
    }
}
