//! The per-socket endpoint.
