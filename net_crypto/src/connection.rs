//! A net_crypto connection.
