//! The one notion of time every rustox core uses.
//!
//! Cores never read a clock (docs/design.md, principle 2): the driver passes `now` into every
//! `handle_*`/`poll_*` call. A [`Timestamp`] is a count of microseconds since an arbitrary
//! origin chosen by the driver — the simulator starts at zero, the tokio driver at the
//! moment it was created. Arithmetic saturates, so a bogus value can never panic a core.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

/// A point in time, in microseconds since the driver's origin.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(u64);

impl Timestamp {
    /// The driver's origin.
    pub const ZERO: Timestamp = Timestamp(0);
    /// A time later than any real one; useful as "never".
    pub const MAX: Timestamp = Timestamp(u64::MAX);

    /// A timestamp `micros` microseconds after the origin.
    pub const fn from_micros(micros: u64) -> Self {
        Timestamp(micros)
    }

    /// A timestamp `millis` milliseconds after the origin (saturating).
    pub const fn from_millis(millis: u64) -> Self {
        Timestamp(millis.saturating_mul(1000))
    }

    /// A timestamp `secs` seconds after the origin (saturating).
    pub const fn from_secs(secs: u64) -> Self {
        Timestamp(secs.saturating_mul(1_000_000))
    }

    /// Microseconds since the origin.
    pub const fn as_micros(self) -> u64 {
        self.0
    }

    /// Whole milliseconds since the origin (c-toxcore's `current_time_monotonic` unit).
    pub const fn as_millis(self) -> u64 {
        self.0 / 1000
    }

    /// Whole seconds since the origin (c-toxcore's `mono_time_get` unit).
    pub const fn as_secs(self) -> u64 {
        self.0 / 1_000_000
    }

    /// Seconds since the origin as a float, for reports.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }

    /// The time elapsed from `earlier` to `self`, or zero if `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Timestamp) -> Duration {
        Duration::from_micros(self.0.saturating_sub(earlier.0))
    }

    /// `self + d`, saturating at [`Timestamp::MAX`].
    pub fn saturating_add(self, d: Duration) -> Timestamp {
        Timestamp(self.0.saturating_add(duration_micros(d)))
    }

    /// `self - d`, saturating at [`Timestamp::ZERO`].
    pub fn saturating_sub(self, d: Duration) -> Timestamp {
        Timestamp(self.0.saturating_sub(duration_micros(d)))
    }
}

/// A duration in whole microseconds, saturating at `u64::MAX`.
fn duration_micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

impl Add<Duration> for Timestamp {
    type Output = Timestamp;
    fn add(self, d: Duration) -> Timestamp {
        self.saturating_add(d)
    }
}

impl AddAssign<Duration> for Timestamp {
    fn add_assign(&mut self, d: Duration) {
        *self = self.saturating_add(d);
    }
}

impl Sub<Duration> for Timestamp {
    type Output = Timestamp;
    fn sub(self, d: Duration) -> Timestamp {
        self.saturating_sub(d)
    }
}

impl Sub<Timestamp> for Timestamp {
    type Output = Duration;
    /// Saturating: a later `rhs` gives zero.
    fn sub(self, rhs: Timestamp) -> Duration {
        self.saturating_duration_since(rhs)
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:06}s", self.0 / 1_000_000, self.0 % 1_000_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates_instead_of_panicking() {
        assert_eq!(Timestamp::MAX + Duration::from_secs(1), Timestamp::MAX);
        assert_eq!(Timestamp::ZERO - Duration::from_secs(1), Timestamp::ZERO);
        assert_eq!(Timestamp::ZERO - Timestamp::from_secs(3), Duration::ZERO);
        assert_eq!(
            Timestamp::from_millis(1500) - Timestamp::from_secs(1),
            Duration::from_millis(500)
        );
    }

    #[test]
    fn units_convert() {
        let t = Timestamp::from_millis(2_345);
        assert_eq!(t.as_micros(), 2_345_000);
        assert_eq!(t.as_millis(), 2_345);
        assert_eq!(t.as_secs(), 2);
    }
}
