//! Two hosts in two network namespaces, whatever joins them: the userspace emulator
//! ([`Testbed`](super::Testbed)) or a kernel-shaped veth pair
//! ([`KernelLink`](crate::kernel_link::KernelLink)). What a transfer between them needs to
//! know of either.

use std::net::Ipv4Addr;
use std::process::Command;

use super::testbed::Side;

/// A pair of namespaced hosts, A and B.
pub trait TwoHosts {
    /// `ip netns exec NS program`: a command that runs inside `side`'s namespace.
    fn command(&self, side: Side, program: &str) -> Command;
    /// The address of `side`.
    fn addr(&self, side: Side) -> Ipv4Addr;
}
