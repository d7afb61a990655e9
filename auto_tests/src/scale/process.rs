//! What a process costs — this one or another by pid: CPU time and resident memory, read
//! from `/proc`.
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
    stat_ticks("self", 11)
}

/// User plus system CPU time process `pid` has used so far, all its threads.
pub fn cpu_time_of(pid: u32) -> Option<Duration> {
    stat_ticks(&pid.to_string(), 11)
}

/// Resident set size now (`VmRSS`), in bytes.
pub fn rss_bytes() -> Option<u64> {
    status_kb("self", "VmRSS:")
}

/// Peak resident set size of the process so far (`VmHWM`), in bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    status_kb("self", "VmHWM:")
}

/// Peak resident set size of process `pid` so far (`VmHWM`), in bytes.
pub fn peak_rss_bytes_of(pid: u32) -> Option<u64> {
    status_kb(&pid.to_string(), "VmHWM:")
}

/// CPU time (user + system) of this process's children that have been waited for.
pub fn children_cpu_time() -> Option<Duration> {
    // cutime (16) and cstime (17).
    stat_ticks("self", 13)
}

/// Two adjacent tick counts of `/proc/ENTRY/stat`, summed, as a duration. Fields after the
/// command name (which may contain spaces and parentheses) are split by one space; the first
/// of them is field 3 (`state`), so utime (14) and stime (15) are at 11 and 12.
fn stat_ticks(entry: &str, first: usize) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{entry}/stat")).ok()?;
    let after = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = after.split(' ').collect();
    let ticks =
        fields.get(first)?.parse::<u64>().ok()? + fields.get(first + 1)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks.saturating_mul(1000 / USER_HZ)))
}

/// A `kB` line of `/proc/ENTRY/status`, in bytes.
fn status_kb(entry: &str, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{entry}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kb = line.get(key.len()..)?.trim().trim_end_matches("kB").trim();
    kb.parse::<u64>().ok().map(|k| k.saturating_mul(1024))
}
