//! What the process itself costs: CPU time and resident memory, read from `/proc/self`.
//!
//! Linux only; elsewhere every reading is `None` and the report says so rather than
//! printing a zero.

use std::time::Duration;

/// Clock ticks per second of `/proc/*/stat`'s `utime`/`stime`: `USER_HZ`, which Linux fixes
/// at 100 for user space (proc(5): "measured in clock ticks (divide by
/// sysconf(_SC_CLK_TCK))", 100 on every architecture Linux ships).
const USER_HZ: u64 = 100;

/// User plus system CPU time this process has used so far (10 ms resolution).
pub fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may contain spaces) are split by one space; the
    // first of them is field 3 (`state`), so utime (14) and stime (15) are at 11 and 12.
    let after = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = after.split(' ').collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks.saturating_mul(1000 / USER_HZ)))
}

/// A `kB` line of `/proc/self/status`, in bytes.
fn status_kb(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kb = line.get(key.len()..)?.trim().trim_end_matches("kB").trim();
    kb.parse::<u64>().ok().map(|k| k.saturating_mul(1024))
}

/// Resident set size now (`VmRSS`), in bytes.
pub fn rss_bytes() -> Option<u64> {
    status_kb("VmRSS:")
}

/// Peak resident set size of the process so far (`VmHWM`), in bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    status_kb("VmHWM:")
}

/// CPU time (user + system) of this process's children that have been waited for.
pub fn children_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = after.split(' ').collect();
    // cutime (16) and cstime (17).
    let ticks = fields.get(13)?.parse::<u64>().ok()? + fields.get(14)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks.saturating_mul(1000 / USER_HZ)))
}
