//! Windowed minimum / maximum filters (Kathleen Nichols' algorithm, as used by BBR for
//! `max_bw` and `min_rtt`, Linux `lib/minmax.c`): keeps the best, second-best and
//! third-best values of the window in three samples so an old extreme expires without
//! storing every sample. Constant memory, no allocation.

/// One (time, value) sample; `time` is whatever the window is measured in (µs or rounds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Sample {
    time: u64,
    value: u64,
}

/// A windowed extreme over the last `window` time units.
#[derive(Debug, Clone)]
pub(crate) struct MinMax {
    window: u64,
    is_max: bool,
    s: [Sample; 3],
    has: bool,
}

impl MinMax {
    /// A windowed maximum.
    pub(crate) fn new_max(window: u64) -> Self {
        Self {
            window,
            is_max: true,
            s: [Sample::default(); 3],
            has: false,
        }
    }

    /// A windowed minimum.
    pub(crate) fn new_min(window: u64) -> Self {
        Self {
            window,
            is_max: false,
            s: [Sample::default(); 3],
            has: false,
        }
    }

    /// The current extreme, if any sample was taken.
    pub(crate) fn get(&self) -> Option<u64> {
        self.has.then_some(self.s[0].value)
    }

    /// Forgets everything and starts over from `value`.
    pub(crate) fn reset(&mut self, time: u64, value: u64) {
        let v = Sample { time, value };
        self.s = [v; 3];
        self.has = true;
    }

    /// True when `a` is at least as good as `b`.
    fn better(&self, a: u64, b: u64) -> bool {
        if self.is_max {
            a >= b
        } else {
            a <= b
        }
    }

    /// Adds a sample taken at `time` (non-decreasing).
    pub(crate) fn update(&mut self, time: u64, value: u64) {
        let v = Sample { time, value };
        if !self.has
            || self.better(value, self.s[0].value)
            || time.saturating_sub(self.s[2].time) > self.window
        {
            self.reset(time, value);
            return;
        }
        if self.better(value, self.s[1].value) {
            self.s[1] = v;
            self.s[2] = v;
        } else if self.better(value, self.s[2].value) {
            self.s[2] = v;
        }
        self.subwin_update(v);
    }

    /// Ages the three samples: the best expires after the window, the others after
    /// fractions of it so the filter stays representative.
    fn subwin_update(&mut self, v: Sample) {
        let dt = v.time.saturating_sub(self.s[0].time);
        if dt > self.window {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = v;
            if v.time.saturating_sub(self.s[0].time) > self.window {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = v;
            }
        } else if self.s[1].time == self.s[0].time && dt > self.window / 4 {
            self.s[1] = v;
            self.s[2] = v;
        } else if self.s[2].time == self.s[1].time && dt > self.window / 2 {
            self.s[2] = v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_expires_after_window() {
        let mut f = MinMax::new_max(10);
        f.update(0, 100);
        f.update(5, 50);
        assert_eq!(f.get(), Some(100));
        f.update(12, 40);
        assert_eq!(f.get(), Some(50));
        f.update(30, 10);
        assert_eq!(f.get(), Some(10));
    }

    #[test]
    fn min_tracks_lower_values_at_once() {
        let mut f = MinMax::new_min(10);
        assert_eq!(f.get(), None);
        f.update(0, 100);
        f.update(1, 120);
        assert_eq!(f.get(), Some(100));
        f.update(2, 90);
        assert_eq!(f.get(), Some(90));
    }
}
