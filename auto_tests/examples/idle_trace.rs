//! What wakes an idle node with friends online, by cause, in virtual time
//! (`rustox_auto_tests::idle`), and its heap (measured by dropping it under a counting
//! allocator). With `IDLE_TRACE_FORGET=1`, A is leaked instead of dropped, so that
//! `heaptrack` lists its heap by allocation site as the program's leaks.
//!
//! ```text
//! cargo run --release -p rustox-auto-tests --example idle_trace -- FRIENDS FILLERS SECONDS [OFFLINE]
//! cargo run --release -p rustox-auto-tests --example idle_trace -- 100 20 120
//! cargo run --release -p rustox-auto-tests --example idle_trace -- 0 20 300 100
//! ```
//!
//! OFFLINE adds that many friends nobody runs (random keys), as a profile's friends who
//! are all offline.
use rustox_auto_tests::heap_meter::{live_bytes, CountingAlloc};
use rustox_auto_tests::idle::run_idle_with;

#[global_allocator]
static HEAP: CountingAlloc = CountingAlloc;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("counts: FRIENDS FILLERS SECONDS"))
        .collect();
    let friends = args.first().copied().unwrap_or(1);
    let fillers = args.get(1).copied().unwrap_or(20);
    let seconds = args.get(2).copied().unwrap_or(300) as u64;
    let offline = args.get(3).copied().unwrap_or(0);
    let Some((r, a)) = run_idle_with(friends, offline, fillers, seconds) else {
        println!("not everyone came online");
        return;
    };
    println!("all online at {:.2} s", r.online_at);
    println!(
        "A, {friends} friends online, {offline} offline, {fillers} other nodes: {} wake-ups in {seconds} s = {:.2}/s ({:.2}/s by timers)",
        r.wakeups,
        r.wakeups_per_sec(),
        r.timer_wakeups_per_sec()
    );
    println!("timer wake-ups by due timers: {:?}", r.timer_wakeups);
    println!("datagrams received by first byte: {:?}", r.received);
    println!("session packets sent: {}", r.session_packets_sent);
    let before = live_bytes().unwrap_or(0);
    if std::env::var_os("IDLE_TRACE_FORGET").is_some() {
        // For heaptrack: A's heap is then what leaks, with the stacks that allocated it.
        std::mem::forget(a);
    } else {
        drop(a);
    }
    let after = live_bytes().unwrap_or(0);
    println!(
        "A's heap: {:.1} KiB ({:.1} KiB in its friends' records and sessions)",
        before.saturating_sub(after) as f64 / 1024.0,
        r.friend_memory as f64 / 1024.0
    );
}
