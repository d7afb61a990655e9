//! File-transfer benchmark (work in progress).

fn main() {}
