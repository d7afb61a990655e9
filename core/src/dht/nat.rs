//! NAT hole punching state and port guessing (docs/protocol.md §5.6, c-toxcore `do_NAT`,
//! `punch_holes`, `nat_commonip`, `nat_getports`).

use std::net::{IpAddr, SocketAddr};

use rustox_net_crypto::Timestamp;

use super::timers::{MAX_NORMAL_PUNCHING_TRIES, MAX_PUNCHING_PORTS};

/// Per-friend punching state (`NAT` in `DHT.c`).
#[derive(Debug, Clone, Default)]
pub struct NatState {
    /// A response with the current ping id arrived: punch at the next round.
    pub hole_punching: bool,
    /// The id our current NAT ping request carries.
    pub nat_ping_id: u64,
    /// When our last NAT ping request went out.
    pub nat_ping_sent: Option<Timestamp>,
    /// When the friend's NAT ping request last reached us.
    pub nat_ping_received: Option<Timestamp>,
    /// When we last punched.
    pub punching_at: Option<Timestamp>,
    /// Next guessed-port index (`punching_index`).
    pub punching_index: u32,
    /// Next sequential sweep offset from 1024 (`punching_index2`).
    pub punching_index2: u32,
    /// Rounds done (`tries`).
    pub tries: u32,
}

impl NatState {
    /// Fresh state with a random ping id.
    pub fn new(nat_ping_id: u64) -> Self {
        NatState {
            nat_ping_id,
            ..Default::default()
        }
    }

    /// Resets the guessing after `PUNCH_RESET_TIME`.
    pub fn reset_guessing(&mut self) {
        self.punching_index = 0;
        self.punching_index2 = 0;
        self.tries = 0;
    }
}

/// The IP reported at least `min` times, if any (`nat_commonip`: the first that reaches it).
pub fn common_ip(reported: &[SocketAddr], min: usize) -> Option<IpAddr> {
    reported
        .iter()
        .map(|a| a.ip())
        .find(|ip| reported.iter().filter(|a| a.ip() == *ip).count() >= min)
}

/// The ports reported together with `ip` (`nat_getports`).
pub fn ports_for(reported: &[SocketAddr], ip: IpAddr) -> Vec<u16> {
    reported
        .iter()
        .filter(|a| a.ip() == ip)
        .map(|a| a.port())
        .collect()
}

/// The ports to ping in one punching round, updating the state as `punch_holes` does:
/// one port if every report agrees, else `MAX_PUNCHING_PORTS` guesses fanning out around the
/// reported ports, plus a sequential sweep from 1024 after `MAX_NORMAL_PUNCHING_TRIES` rounds.
pub fn punch_ports(state: &mut NatState, ports: &[u16]) -> Vec<u16> {
    let mut out = Vec::new();
    let Some(&first) = ports.first() else {
        return out;
    };
    if ports.iter().all(|&p| p == first) {
        out.push(first);
    } else {
        let n = ports.len() as u32;
        let start = state.punching_index;
        let top = start.wrapping_add(MAX_PUNCHING_PORTS);
        let mut i = start;
        while i != top {
            let it = i.wrapping_sub(start);
            let delta = (it / (2 * n)) as u16;
            let index = ((it / 2) % n) as usize;
            let port = if it % 2 == 1 {
                ports[index].wrapping_sub(delta)
            } else {
                ports[index].wrapping_add(delta)
            };
            out.push(port);
            i = i.wrapping_add(1);
        }
        state.punching_index = i;
    }
    if state.tries > MAX_NORMAL_PUNCHING_TRIES {
        let start = state.punching_index2;
        for i in start..start.saturating_add(MAX_PUNCHING_PORTS) {
            out.push(1024u16.wrapping_add(i as u16));
        }
        state.punching_index2 = start.saturating_add(MAX_PUNCHING_PORTS) - MAX_PUNCHING_PORTS / 2;
    }
    state.tries += 1;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreeing_ports_give_one_ping() {
        let mut s = NatState::new(1);
        assert_eq!(punch_ports(&mut s, &[4000, 4000, 4000, 4000]), vec![4000]);
        assert_eq!(s.tries, 1);
    }

    #[test]
    fn disagreeing_ports_fan_out_and_sweep_later() {
        let mut s = NatState::new(1);
        let ports = punch_ports(&mut s, &[4000, 4002]);
        assert_eq!(ports.len(), 48);
        assert_eq!(&ports[..6], &[4000, 4000, 4002, 4002, 4001, 3999]);
        s.tries = MAX_NORMAL_PUNCHING_TRIES + 1;
        let ports = punch_ports(&mut s, &[4000, 4002]);
        assert_eq!(ports.len(), 96);
        assert_eq!(ports[48], 1024);
        assert_eq!(s.punching_index2, 24);
    }

    #[test]
    fn common_ip_needs_min_reports() {
        let a: Vec<SocketAddr> = ["1.1.1.1:1", "2.2.2.2:2", "1.1.1.1:3", "1.1.1.1:4"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        assert_eq!(common_ip(&a, 3), Some("1.1.1.1".parse().unwrap()));
        assert_eq!(common_ip(&a, 4), None);
        assert_eq!(ports_for(&a, "1.1.1.1".parse().unwrap()), vec![1, 3, 4]);
    }
}
