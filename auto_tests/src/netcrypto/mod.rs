//! net_crypto sessions in the simulator: a node wrapping `rustox_net_crypto::Endpoint`
//! ([`node`]) and the verifying bulk-transfer application ([`bulk`]).

pub mod bulk;
pub mod node;

pub use bulk::{BulkError, BulkReceiver, BulkSender, BULK_PACKET_ID, CHUNK_SIZE};
pub use node::{IncomingTransfer, NetCryptoNode, OutgoingTransfer};
