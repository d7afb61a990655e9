//! net_crypto sessions in the simulator: a node wrapping `rustox_net_crypto::Endpoint`
//! ([`node`]) and the verifying bulk-transfer application ([`bulk`]).

mod bulk;
mod node;

pub(crate) use node::poll_udp_transmit;
pub use node::NetCryptoNode;
