//! The session and transport settings and figures a user of core picks or reads, from
//! net_crypto (docs/transport.md), re-exported so that the CLI, the C library and the tests
//! need no direct dependency on net_crypto: the congestion controller, the transport's
//! settings and counters, which path a session takes, why it closed, and the time type
//! every input carries.

pub use rustox_net_crypto::{
    CloseReason, ControllerKind, PathKind, Timestamp, TransportConfig, TransportStats,
};
