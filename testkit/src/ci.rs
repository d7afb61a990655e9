//! A test whose peer program or library is missing (c-toxcore, a C compiler, a proxy, root)
//! is skipped with a printed reason on a developer's machine, and fails under CI (the
//! environment variable `CI` set), where every interop test must run.

use std::fmt::Display;

/// `true` when `CI` is set: a missing peer is then a failure.
pub fn under_ci() -> bool {
    std::env::var_os("CI").is_some()
}

/// Panics with `reason` under CI; elsewhere prints `SKIPPED: reason` and returns `true`, so
/// the caller can skip (`if skip_or_fail(..) { return; }`).
pub fn skip_or_fail(reason: impl Display) -> bool {
    if under_ci() {
        panic!("CI is set, so a missing dependency is a failure: {reason}");
    }
    eprintln!("SKIPPED: {reason}");
    true
}
