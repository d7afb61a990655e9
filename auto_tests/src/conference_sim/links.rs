//! The links between conference members: friend connections (and the hidden ones the engine
//! opens to strangers) as net_crypto carries them over one of the simulator's named paths.
//!
//! A link is wanted when both members run and each has a reason to keep it (they are
//! friends, or it holds an `Open` for the other); it comes up a connect delay after it is
//! wanted, and goes down at once when either side stops wanting it. A lossless packet
//! (96–100) is never lost: each time the path loses it, net_crypto sends it again about one
//! RTT later, and the stream stays in order (a later packet waits for an earlier one). A
//! lossy packet (199) the path loses is gone. What a packet costs on the wire is its net_crypto
//! data packet (`net_crypto/src/packets/data.rs`): kind 1, nonce 2, MAC 16, buffer start and
//! packet number 8, the padding, then the payload — once per transmission.

use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rustox_net_crypto::crypto::MAC_SIZE;
use rustox_net_crypto::packets::{padding_len, DATA_HEADER_SIZE};
use rustox_net_crypto::Timestamp;
use rustox_simulator::{LossModel, Profile};

/// Bytes a net_crypto data packet adds to a payload of `len` bytes (id byte included):
/// kind 1 + nonce 2 + MAC 16 + the 8-byte plaintext header + padding.
pub fn net_crypto_overhead(len: usize) -> usize {
    1 + 2 + MAC_SIZE + DATA_HEADER_SIZE + padding_len(len)
}

/// How long a link takes to come up once both sides want it: net_crypto's cookie request,
/// cookie response, handshake and first data (two RTTs), and the time to learn where the
/// other is. For friends that is the onion's and DHT's search; for strangers the conference
/// hands the node the peer's DHT key, so it is the DHT's direct search. One second of it is
/// an assumption of this model, the same on every profile (c-toxcore's DHT asks its close
/// nodes every second).
pub fn connect_delay(profile: &Profile) -> Duration {
    profile.rtt * 2 + Duration::from_secs(1)
}

/// One direction's loss process: the profile's model, Gilbert–Elliott stepped once per packet.
#[derive(Debug, Clone)]
pub struct Loss {
    model: LossModel,
    bad: bool,
}

impl Loss {
    /// Starts in the good state.
    pub fn new(model: LossModel) -> Self {
        Loss { model, bad: false }
    }

    /// Whether the next packet is lost.
    pub fn lost(&mut self, rng: &mut ChaCha8Rng) -> bool {
        match self.model {
            LossModel::None => false,
            LossModel::Random(p) => p > 0.0 && rng.gen_bool(p.clamp(0.0, 1.0)),
            LossModel::GilbertElliott {
                p,
                r,
                loss_bad,
                loss_good,
            } => {
                let flip = if self.bad { r } else { p };
                if rng.gen_bool(flip.clamp(0.0, 1.0)) {
                    self.bad = !self.bad;
                }
                let l = if self.bad { loss_bad } else { loss_good };
                l > 0.0 && rng.gen_bool(l.clamp(0.0, 1.0))
            }
        }
    }
}

/// A link's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Not connected.
    Down,
    /// Connecting; up at the `LinkUp` event of this epoch.
    Connecting,
    /// Connected.
    Up,
}

/// One link between members `a < b`.
#[derive(Debug, Clone)]
pub struct Link {
    /// Its state.
    pub state: State,
    /// Bumped on every change: events of an older epoch are stale.
    pub epoch: u64,
    /// Loss from `a` to `b`, and from `b` to `a`.
    pub loss: [Loss; 2],
    /// When the last lossless packet in each direction arrives (net_crypto keeps order).
    pub last_arrival: [Timestamp; 2],
}

impl Link {
    /// A link that is down.
    pub fn new(model: LossModel) -> Self {
        Link {
            state: State::Down,
            epoch: 0,
            loss: [Loss::new(model), Loss::new(model)],
            last_arrival: [Timestamp::ZERO; 2],
        }
    }
}

/// What sending one packet on an up link comes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Carried {
    /// When it arrives; `None` for a lossy packet the path lost.
    pub arrival: Option<Timestamp>,
    /// Wire bytes spent on it, every transmission counted.
    pub bytes: u64,
    /// Transmissions (1 + resends).
    pub transmissions: u32,
}

/// Resends after which a lossless packet is taken to be through: net_crypto would keep going,
/// but at 5 % loss twelve losses in a row happen once in 4·10^15 packets.
const MAX_RESENDS: u32 = 12;

/// Sends `len` bytes in direction `dir` (0: a→b, 1: b→a) at `now` on `link`, which is up.
pub fn carry(
    link: &mut Link,
    dir: usize,
    len: usize,
    lossy: bool,
    now: Timestamp,
    profile: &Profile,
    rng: &mut ChaCha8Rng,
) -> Carried {
    let wire = (len + net_crypto_overhead(len)) as u64;
    let one_way = profile.rtt / 2;
    let loss = &mut link.loss[dir];
    if lossy {
        let lost = loss.lost(rng);
        return Carried {
            arrival: (!lost).then(|| now.saturating_add(one_way)),
            bytes: wire,
            transmissions: 1,
        };
    }
    let mut resends = 0;
    while resends < MAX_RESENDS && loss.lost(rng) {
        resends += 1;
    }
    let arrival = now
        .saturating_add(one_way)
        .saturating_add(profile.rtt * resends)
        .max(link.last_arrival[dir]);
    link.last_arrival[dir] = arrival;
    Carried {
        arrival: Some(arrival),
        bytes: wire * u64::from(resends + 1),
        transmissions: resends + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn overhead_is_a_data_packets_header_mac_and_padding() {
        // A 20-byte payload: 27 bytes of header and MAC, (1373 − 20) mod 8 = 1 of padding.
        assert_eq!(net_crypto_overhead(20), 28);
        assert_eq!(net_crypto_overhead(1373), 27);
    }

    #[test]
    fn lossless_packets_arrive_in_order_one_rtt_later_per_loss() {
        let profile = Profile::lan().with_loss(LossModel::Random(0.5));
        let mut link = Link::new(profile.loss);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut last = Timestamp::ZERO;
        let mut resent = 0;
        for i in 0..200 {
            let now = Timestamp::from_micros(i * 10);
            let c = carry(&mut link, 0, 100, false, now, &profile, &mut rng);
            let at = c.arrival.unwrap();
            assert!(at >= last, "in order");
            assert!(at >= now.saturating_add(profile.rtt * (c.transmissions - 1)));
            assert_eq!(c.bytes, u64::from(c.transmissions) * (100 + 28));
            resent += c.transmissions - 1;
            last = at;
        }
        assert!(resent > 100, "half of the transmissions lost: {resent}");
    }

    #[test]
    fn lossy_packets_are_dropped_at_the_paths_rate() {
        let profile = Profile::lan().with_loss(LossModel::Random(0.05));
        let mut link = Link::new(profile.loss);
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let lost = (0..10_000)
            .filter(|_| {
                carry(&mut link, 1, 50, true, Timestamp::ZERO, &profile, &mut rng)
                    .arrival
                    .is_none()
            })
            .count();
        assert!((400..600).contains(&lost), "{lost}");
    }
}
