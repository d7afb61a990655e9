//! What a scale run measured, and its markdown row.

use std::time::Duration;

/// Time from the friend add to both sides online, one entry per pair (`None`: not online
/// by the end of the run).
#[derive(Debug, Clone, Default)]
pub struct OnlineTimes(pub Vec<Option<Duration>>);

impl OnlineTimes {
    /// Pairs online.
    pub fn online(&self) -> usize {
        self.0.iter().filter(|t| t.is_some()).count()
    }

    /// The `q`-quantile (nearest rank) over all pairs, counting a pair that never came
    /// online as slower than any that did: `None` when the rank falls on such a pair.
    pub fn quantile(&self, q: f64) -> Option<Duration> {
        let mut sorted: Vec<Option<Duration>> = self.0.clone();
        // `None` last: Some(_) < None under this key.
        sorted.sort_by_key(|t| (t.is_none(), *t));
        if sorted.is_empty() {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * sorted.len() as f64).ceil() as usize).max(1);
        sorted.get(rank - 1).copied().flatten()
    }
}

/// Memory figures, each labelled by how it was obtained.
#[derive(Debug, Clone, Default)]
pub struct MemoryReport {
    /// Exact heap bytes held by the nodes still in the network at the end, measured by
    /// dropping each one under the counting allocator (crate::heap_meter) and reading the
    /// bytes freed: mean per node. `None` without the counting allocator.
    pub heap_per_node: Option<u64>,
    /// The same, the largest single node (a bootstrap node, typically).
    pub heap_max_node: Option<u64>,
    /// Exact heap of one ordinary node right after it was built, before it knew any peer:
    /// what is allocated up front, whatever the network's size.
    pub heap_fresh_node: Option<u64>,
    /// The same, mean over the well-known bootstrap nodes only.
    pub heap_per_bootstrap_node: Option<u64>,
    /// Peak resident set of the process (VmHWM) at the end minus the resident set before
    /// the first node was built, over the node count: includes the simulator (event heap,
    /// datagrams in flight), allocator slack and departed nodes' freed-but-kept pages.
    pub peak_rss_growth_per_node: Option<u64>,
    /// Peak resident set of the whole process at the end.
    pub peak_rss: Option<u64>,
}

/// Mean table sizes over the nodes in the network at the end: what the memory is made of.
#[derive(Debug, Clone, Copy, Default)]
pub struct TableReport {
    /// DHT close-list entries.
    pub close_list: f64,
    /// Onion path-node candidates (≤ 32).
    pub onion_path_nodes: f64,
    /// Onion announce-list nodes (≤ 12).
    pub onion_announce_nodes: f64,
    /// Of those, nodes that store our announce.
    pub onion_announced_on: f64,
}

/// One run's results.
#[derive(Debug, Clone, Default)]
pub struct ScaleReport {
    /// Nodes in the network (constant: every departure is paired with an arrival).
    pub nodes: usize,
    /// Friend pairs.
    pub pairs: usize,
    /// Per pair, from the add to both online.
    pub online: OnlineTimes,
    /// Nodes that left (and as many joined).
    pub replaced: usize,
    /// Simulated time from start to the end of the run.
    pub simulated: Duration,
    /// Wall-clock time of the run.
    pub wall: Duration,
    /// CPU time of the run (user + system, whole process), if readable.
    pub cpu: Option<Duration>,
    /// Simulator events handled.
    pub events: u64,
    /// Datagrams delivered to nodes.
    pub datagrams: u64,
    /// Their payload bytes.
    pub bytes: u64,
    /// Datagrams lost to a departed node (in flight, or sent to its released address).
    pub to_departed: u64,
    /// Deadlines a node left at the instant its timers had just run, moved 1 ms on
    /// (scale/node.rs).
    pub stalls: u64,
    /// Memory.
    pub memory: MemoryReport,
    /// Table sizes.
    pub tables: TableReport,
}

impl ScaleReport {
    /// Datagrams delivered per node per simulated second.
    pub fn datagrams_per_node_sec(&self) -> f64 {
        self.datagrams as f64 / self.node_seconds()
    }

    /// Payload bytes delivered per node per simulated second.
    pub fn bytes_per_node_sec(&self) -> f64 {
        self.bytes as f64 / self.node_seconds()
    }

    /// CPU seconds per node per simulated minute: the simulator's cost of one node.
    pub fn cpu_per_node_min(&self) -> Option<f64> {
        Some(self.cpu?.as_secs_f64() / self.node_seconds() * 60.0)
    }

    fn node_seconds(&self) -> f64 {
        (self.nodes as f64 * self.simulated.as_secs_f64()).max(f64::MIN_POSITIVE)
    }

    /// The markdown table header matching [`ScaleReport::row`].
    pub fn header() -> String {
        [
            "| nodes | pairs online | p50 s | p95 s | max s | replaced | sim s | wall s | CPU s \
             | CPU ms/node/sim-min | dgrams/node/s | bytes/node/s | heap/node B (exact) \
             | heap/fresh node B | heap/bootstrap node B | peak RSS growth/node B | peak RSS MB | close list \
             | onion paths | announce nodes | announced on |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        .join("\n")
    }

    /// One markdown table row.
    pub fn row(&self) -> String {
        let secs = |d: Option<Duration>| match d {
            Some(d) => format!("{:.1}", d.as_secs_f64()),
            None => "—".to_string(),
        };
        let num = |v: Option<u64>| v.map_or("—".to_string(), |v| v.to_string());
        let m = &self.memory;
        let t = &self.tables;
        format!(
            "| {} | {}/{} | {} | {} | {} | {} | {:.0} | {:.1} | {} | {} | {:.1} | {:.0} | {} | {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} |",
            self.nodes,
            self.online.online(),
            self.pairs,
            secs(self.online.quantile(0.5)),
            secs(self.online.quantile(0.95)),
            secs(self.online.quantile(1.0)),
            self.replaced,
            self.simulated.as_secs_f64(),
            self.wall.as_secs_f64(),
            self.cpu.map_or("—".to_string(), |c| format!("{:.1}", c.as_secs_f64())),
            self.cpu_per_node_min()
                .map_or("—".to_string(), |c| format!("{:.2}", c * 1000.0)),
            self.datagrams_per_node_sec(),
            self.bytes_per_node_sec(),
            num(m.heap_per_node),
            num(m.heap_fresh_node),
            num(m.heap_per_bootstrap_node),
            num(m.peak_rss_growth_per_node),
            m.peak_rss
                .map_or("—".to_string(), |b| format!("{:.0}", b as f64 / 1e6)),
            t.close_list,
            t.onion_path_nodes,
            t.onion_announce_nodes,
            t.onion_announced_on,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_that_never_came_online_is_slower_than_all_that_did() {
        let s = Duration::from_secs;
        let t = OnlineTimes(vec![Some(s(3)), None, Some(s(1)), Some(s(2))]);
        assert_eq!(t.online(), 3);
        assert_eq!(t.quantile(0.5), Some(s(2)));
        assert_eq!(t.quantile(0.75), Some(s(3)));
        assert_eq!(t.quantile(0.95), None);
    }
}
