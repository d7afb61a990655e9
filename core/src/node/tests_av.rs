//! Calls and group audio between real nodes in memory.
