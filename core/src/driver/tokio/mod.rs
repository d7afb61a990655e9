//! The tokio drivers: [`session`] runs a [`Node`](crate::node::Node) on one socket for
//! the commands (`demo`, `send`, `recv`) and for embedding; [`dht`] runs a bare DHT node, the
//! baseline the bootstrap workers were measured against; `timer` is the microsecond
//! timerfd both can sleep on; [`relays`] carries the node's TCP relay connections, through
//! a proxy when the node has one (`proxy`); [`relay_server`] runs the instance's own TCP
//! relay server beside the application.

pub mod dht;
pub(crate) mod proxy;
pub mod relay_server;
pub mod relays;
pub mod session;
pub(crate) mod timer;

pub use session::{run, App, DriverError};
