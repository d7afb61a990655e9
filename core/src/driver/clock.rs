//! The drivers' clock: a monotonic [`Instant`] mapped onto the cores' [`Timestamp`].

use std::time::{Duration, Instant};

use rustox_net_crypto::Timestamp;

/// Microseconds since the driver started.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    origin: Instant,
}

impl Default for Clock {
    fn default() -> Self {
        Clock {
            origin: Instant::now(),
        }
    }
}

impl Clock {
    /// The current time.
    pub fn now(&self) -> Timestamp {
        Timestamp::from_micros(u64::try_from(self.origin.elapsed().as_micros()).unwrap_or(u64::MAX))
    }

    /// The instant a core deadline corresponds to.
    pub fn instant(&self, t: Timestamp) -> Instant {
        self.origin + Duration::from_micros(t.as_micros().min(u64::MAX / 2))
    }
}

/// Unix seconds now, from the system clock: what [`crate::node::NodeOptions::unix_time`]
/// wants (DHT-PK `no_replay` values must grow across restarts, docs/protocol.md §6.4). A clock
/// set before 1970 reads as 0.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
