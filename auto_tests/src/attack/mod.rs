//! What `attack-bench` needs to attack a running `rustox recv` over real sockets (loopback,
//! or veths between namespaces) and measure what it cost.
//!
//! Data flows one way: [`forge`] builds datagrams with the project's own packet types
//! (net_crypto's `packets`, core's DHT and onion wire formats), [`session`] completes real
//! handshakes with the victim where an attack needs a cookie or session keys, and [`flood`]
//! paces whatever a [`flood::Source`] yields onto UDP sockets (or a raw socket for UDP source
//! port 0) at a target rate. [`victim`] starts `rustox recv` and the honest `rustox send`
//! as child processes and reads the victim's CPU time, peak memory and socket drops from
//! `/proc`. [`link`] builds the namespaces that put the honest transfer on a shaped link and
//! the attacker on a link of its own.

pub mod flood;
pub mod forge;
pub mod link;
pub mod session;
pub mod victim;
