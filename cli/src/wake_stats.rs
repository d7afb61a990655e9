//! `RUSTOX_WAKE_STATS=1`: the node's driver counts what woke it, by cause (core's
//! `driver::wake_tally`), and each SIGUSR1 prints the counts so far as one line on stdout:
//! `wake-ups total=N timer:dht=N recv:session=N ...`. A benchmark (`idle-bench`) signals
//! the process at the start and the end of a measurement and subtracts. Off by default:
//! then no signal handler is installed and nothing is counted.

use std::sync::Arc;

use anyhow::Context;
use rustox_core::driver::WakeTally;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::Notify;

/// The counts and the signal that asks for them.
pub struct WakeStats {
    /// What woke the driver so far.
    pub tally: WakeTally,
    /// Notified on each SIGUSR1.
    pub signal: Arc<Notify>,
}

impl WakeStats {
    /// With `RUSTOX_WAKE_STATS` set, the counts and a task that turns each SIGUSR1 into a
    /// notification. Must be called inside the runtime the node runs on.
    pub fn from_env() -> anyhow::Result<Option<WakeStats>> {
        if std::env::var_os("RUSTOX_WAKE_STATS").is_none() {
            return Ok(None);
        }
        let signal_notify = Arc::new(Notify::new());
        let notify = signal_notify.clone();
        let mut usr1 = signal(SignalKind::user_defined1()).context("cannot listen for SIGUSR1")?;
        tokio::spawn(async move {
            while usr1.recv().await.is_some() {
                notify.notify_one();
            }
        });
        Ok(Some(WakeStats {
            tally: WakeTally::default(),
            signal: signal_notify,
        }))
    }

    /// Prints the counts (the signal's own turn included, as `app`).
    pub fn print(&self) {
        println!("wake-ups {}", self.tally.line());
    }
}
