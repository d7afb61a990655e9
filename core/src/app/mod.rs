//! The layer above the drivers: it builds a [`Node`](crate::node::Node) or a bootstrap node
//! and runs it with a driver from [`crate::driver`] (the tokio session, the worker threads,
//! key files). Nothing below this layer and [`crate::driver`] imports either.
//!
//! * [`api`] — the Rust API: `Tox::start` runs a node with the tokio session driver on a
//!   thread of its own; its async methods hand work to that thread (docs/architecture.md).
//! * [`bootstrap_node`] — a bootstrap daemon: its key file, the worker threads and the TCP
//!   relay (`rustox bootstrap`).
//!
//! Both are reached from the crate root as `rustox_core::api` and
//! `rustox_core::bootstrap_node`.

#[cfg(feature = "tokio")]
pub mod api;
pub mod bootstrap_node;
