//! The endpoint-wide memory budget for send and receive arrays (docs/design.md principle 5).
//!
//! A receive array may hold up to 32 768 payloads (docs/protocol.md §2.8): a peer that sends only
//! packets past a hole pins about 45 MiB in one session, and an endpoint holds up to 1024
//! sessions. So the bytes that all arrays of an endpoint hold — payloads and the slots of the
//! rings — are accounted in one budget, and an array grows past what is needed for in-order
//! delivery only while
//!
//! - the endpoint as a whole is within its budget (one busy session may use all of it: its
//!   window, not a share, sets its speed), or
//! - the session is within its fair share, `budget / sessions holding bytes`: once the budget
//!   is full, a session that holds more than its share cannot grow, and any other still can
//!   up to its share. So a peer cannot hold more than its share of a full budget, and all
//!   arrays together hold at most twice the budget.
//!
//! What is refused is what a session can do without: an out-of-order payload (dropped and
//! counted; the peer resends it once our requests name it as missing, §2.7) or a new
//! payload of ours (the layer above sees `SendQueueFull` and tries again). The next expected
//! packet is always stored: it is delivered at once, and refusing it would stall the session.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// One endpoint's budget, shared by its sessions' transports.
#[derive(Debug, Clone)]
pub struct ArrayBudget(Arc<Pool>);

#[derive(Debug)]
struct Pool {
    limit: usize,
    /// Bytes all accounts hold.
    held: AtomicUsize,
    /// Accounts that hold any bytes.
    holders: AtomicUsize,
}

impl ArrayBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> Self {
        ArrayBudget(Arc::new(Pool {
            limit,
            held: AtomicUsize::new(0),
            holders: AtomicUsize::new(0),
        }))
    }

    /// No limit: a transport outside any endpoint (simulations, tests).
    pub fn unlimited() -> Self {
        Self::new(usize::MAX)
    }

    /// The limit in bytes.
    pub fn limit(&self) -> usize {
        self.0.limit
    }

    /// Bytes all sessions' arrays hold now.
    pub fn held(&self) -> usize {
        self.0.held.load(Ordering::Relaxed)
    }
}

/// One transport's share of a budget. Dropping it gives its bytes back.
#[derive(Debug)]
pub(crate) struct Account {
    budget: ArrayBudget,
    held: usize,
}

impl Account {
    pub(crate) fn new(budget: ArrayBudget) -> Self {
        Account { budget, held: 0 }
    }

    /// May this transport hold `extra` more bytes (see the module docs)?
    pub(crate) fn may_grow(&self, extra: usize) -> bool {
        let pool = &self.budget.0;
        if pool.held.load(Ordering::Relaxed).saturating_add(extra) <= pool.limit {
            return true;
        }
        let holders = pool.holders.load(Ordering::Relaxed) + usize::from(self.held == 0);
        self.held.saturating_add(extra) <= pool.limit / holders.max(1)
    }

    /// Records that this transport holds `bytes` now.
    pub(crate) fn set_held(&mut self, bytes: usize) {
        let pool = &self.budget.0;
        if bytes >= self.held {
            pool.held.fetch_add(bytes - self.held, Ordering::Relaxed);
        } else {
            pool.held.fetch_sub(self.held - bytes, Ordering::Relaxed);
        }
        match (self.held == 0, bytes == 0) {
            (true, false) => {
                pool.holders.fetch_add(1, Ordering::Relaxed);
            }
            (false, true) => {
                pool.holders.fetch_sub(1, Ordering::Relaxed);
            }
            _ => {}
        }
        self.held = bytes;
    }

    /// Bytes this transport holds, as last recorded.
    pub(crate) fn held(&self) -> usize {
        self.held
    }
}

impl Drop for Account {
    fn drop(&mut self) {
        self.set_held(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_session_may_use_the_whole_budget_and_others_still_get_their_share() {
        let budget = ArrayBudget::new(1000);
        let mut pinner = Account::new(budget.clone());
        assert!(pinner.may_grow(1000));
        pinner.set_held(1000);
        assert!(!pinner.may_grow(1));
        // A second session: the budget is full, but its share (1000 / 2) is free.
        let mut honest = Account::new(budget.clone());
        assert!(honest.may_grow(500));
        assert!(!honest.may_grow(501));
        honest.set_held(500);
        assert_eq!(budget.held(), 1500, "at most twice the budget");
        assert!(!pinner.may_grow(1), "over its share, the pinner stays put");
        drop(pinner);
        assert_eq!(budget.held(), 500);
        assert!(honest.may_grow(500), "room again once the pinner is gone");
    }

    #[test]
    fn accounts_give_back_what_they_held() {
        let budget = ArrayBudget::new(100);
        let mut a = Account::new(budget.clone());
        a.set_held(60);
        a.set_held(20);
        assert_eq!(budget.held(), 20);
        assert_eq!(a.held(), 20);
        a.set_held(0);
        assert_eq!(budget.held(), 0);
        assert_eq!(budget.0.holders.load(Ordering::Relaxed), 0);
    }
}
