//! Two hosts in two network namespaces, whatever joins them: the userspace emulator
//! ([`Testbed`](super::Testbed)) or a kernel-shaped veth pair
//! ([`KernelLink`](crate::kernel_link::KernelLink)). What a transfer between them needs to
//! know of either.

use std::net::Ipv4Addr;
use std::process::Command;

/// A pair of namespaced hosts, A and B.
pub trait TwoHosts {
    /// `ip netns exec NS program`: a command that runs inside `side`'s namespace.
    fn command(&self, side: Side, program: &str) -> Command;
    /// The address of `side`.
    fn addr(&self, side: Side) -> Ipv4Addr;
}

/// One end of the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The first host (a sender, usually).
    A,
    /// The second host.
    B,
}

impl Side {
    /// 0 for A, 1 for B: the index of its namespace, device and outgoing direction.
    pub fn index(self) -> usize {
        match self {
            Side::A => 0,
            Side::B => 1,
        }
    }
}
