//! Wire layouts of the net_crypto packets (protocol.md §2.2, §2.5).
