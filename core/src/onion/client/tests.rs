//! Onion client tests.
