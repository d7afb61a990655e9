//! The keys and crypto primitives a user of core handles, from net_crypto's
//! [`crypto`](rustox_net_crypto::crypto) (docs/protocol.md §1), re-exported so that the CLI,
//! the C library and the tests need no direct dependency on net_crypto.

pub use rustox_net_crypto::crypto::{
    KeyPair, Nonce, PrecomputedKey, PublicKey, SecretKey, CIPHER_LANES, PUBLIC_KEY_SIZE,
    SECRET_KEY_SIZE,
};
