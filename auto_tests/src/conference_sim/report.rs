//! What a conference delivery run measured, and the figures the benchmark prints from it.

/// What a run measured.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Members.
    pub peers: usize,
    /// Members connected when messages started.
    pub joined: usize,
    /// Seconds the chain of invitations took.
    pub join_secs: f64,
    /// Messages sent.
    pub messages: usize,
    /// Sends the engine refused (the sender had no connection).
    pub send_failures: usize,
    /// Messages that reached every member online for them within the window.
    pub reached_all: usize,
    /// (message, member) pairs that should have arrived and did not.
    pub missed: usize,
    /// Members expected per message, on average.
    pub mean_targets: f64,
    /// Times from sending until the last online member has it, ms, of the messages that
    /// reached all.
    pub time_to_all_ms: Vec<f64>,
    /// Largest hop count of each such message.
    pub hops: Vec<u32>,
    /// Of them, how many arrived within RTT × hops + 100 ms.
    pub within_budget: usize,
    /// Wire bytes of chat packets (packet 99, message or action), resends included.
    pub chat_bytes: u64,
    /// Wire bytes of everything else the engines sent during the message phase.
    pub other_bytes: u64,
    /// Links (friend connections, hidden ones included) each running member holds at the end.
    pub links_per_peer: f64,
    /// Times members left (and came back).
    pub churn_events: usize,
    /// Messages that reached a member that had left and come back (and was online for them).
    pub heard_after_return: usize,
    /// Mean heap of one engine at the end, bytes (when the counting allocator is installed).
    pub heap_per_peer: Option<u64>,
    /// Mean of the engines' own estimate, bytes.
    pub estimate_per_peer: u64,
    /// Duration of the message phase, seconds.
    pub phase_secs: f64,
}

impl Report {
    /// Share of the messages that reached every online member.
    pub fn delivered_share(&self) -> f64 {
        if self.messages == 0 {
            return 0.0;
        }
        self.reached_all as f64 / self.messages as f64
    }

    /// Chat wire bytes per message per member.
    pub fn bytes_per_message_per_peer(&self) -> f64 {
        if self.messages == 0 || self.peers == 0 {
            return 0.0;
        }
        self.chat_bytes as f64 / self.messages as f64 / self.peers as f64
    }

    /// Other wire bytes per member per minute (pings, names, joins, rejoins).
    pub fn other_bytes_per_peer_per_minute(&self) -> f64 {
        if self.peers == 0 || self.phase_secs <= 0.0 {
            return 0.0;
        }
        self.other_bytes as f64 / self.peers as f64 / (self.phase_secs / 60.0)
    }

    /// The `p`-quantile (0..=1) of the time to all, ms.
    pub fn time_to_all_quantile(&self, p: f64) -> Option<f64> {
        quantile(&self.time_to_all_ms, p)
    }

    /// The `p`-quantile of the hop counts.
    pub fn hops_quantile(&self, p: f64) -> Option<u32> {
        let v: Vec<f64> = self.hops.iter().map(|&h| f64::from(h)).collect();
        quantile(&v, p).map(|h| h as u32)
    }
}

fn quantile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((p.clamp(0.0, 1.0) * v.len() as f64).ceil() as usize).clamp(1, v.len());
    Some(v[rank - 1])
}
