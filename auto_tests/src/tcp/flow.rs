//! Putting TCP flows into a simulation: [`TcpNode`] (either end, for a simulator of TCP only),
//! [`TcpHost`] (what a mixed node type implements to hold TCP ends), and [`tcp_flow`], which adds a
//! sender/receiver pair the way `simulator/src/shared.rs` adds rustox sessions.
//!
//! A mixed simulator's node enum holds a `TcpNode` (or both ends directly) and implements
//! [`TcpHost`] by delegating:
//!
//! ```ignore
//! enum Mixed { Rustox(NetCryptoNode), Tcp(TcpNode) }
//! impl From<TcpSender> for Mixed { fn from(s: TcpSender) -> Self { Mixed::Tcp(s.into()) } }
//! impl From<TcpReceiver> for Mixed { fn from(r: TcpReceiver) -> Self { Mixed::Tcp(r.into()) } }
//! impl TcpHost for Mixed {
//!     fn tcp_sender(&self) -> Option<&TcpSender> {
//!         match self { Mixed::Tcp(t) => t.tcp_sender(), _ => None }
//!     }
//!     fn tcp_receiver(&self) -> Option<&TcpReceiver> {
//!         match self { Mixed::Tcp(t) => t.tcp_receiver(), _ => None }
//!     }
//! }
//! ```

use std::net::SocketAddr;

use rustox_net_crypto::Timestamp;
use rustox_simulator::{LinkId, NodeId, SimError, SimNode, Simulator};

use super::receiver::TcpReceiver;
use super::sender::TcpSender;

/// Either end of a TCP flow.
#[derive(Debug, Clone)]
pub enum TcpNode {
    /// The data sender (both ends are boxed: they differ in size by hundreds of bytes).
    Sender(Box<TcpSender>),
    /// The receiver.
    Receiver(Box<TcpReceiver>),
}

impl From<TcpSender> for TcpNode {
    fn from(s: TcpSender) -> Self {
        TcpNode::Sender(Box::new(s))
    }
}

impl From<TcpReceiver> for TcpNode {
    fn from(r: TcpReceiver) -> Self {
        TcpNode::Receiver(Box::new(r))
    }
}

impl SimNode for TcpNode {
    fn handle_datagram(&mut self, now: Timestamp, from: SocketAddr, to: SocketAddr, bytes: &[u8]) {
        match self {
            TcpNode::Sender(s) => s.handle_datagram(now, from, to, bytes),
            TcpNode::Receiver(r) => r.handle_datagram(now, from, to, bytes),
        }
    }
    fn handle_timeout(&mut self, now: Timestamp) {
        match self {
            TcpNode::Sender(s) => s.handle_timeout(now),
            TcpNode::Receiver(r) => r.handle_timeout(now),
        }
    }
    fn poll_transmit(&mut self, now: Timestamp) -> Option<(SocketAddr, Vec<u8>)> {
        match self {
            TcpNode::Sender(s) => s.poll_transmit(now),
            TcpNode::Receiver(r) => r.poll_transmit(now),
        }
    }
    fn poll_timeout(&self) -> Option<Timestamp> {
        match self {
            TcpNode::Sender(s) => s.poll_timeout(),
            TcpNode::Receiver(r) => r.poll_timeout(),
        }
    }
    fn check_invariants(&self) -> Result<(), String> {
        match self {
            TcpNode::Sender(s) => s.check_invariants(),
            TcpNode::Receiver(r) => r.check_invariants(),
        }
    }
}

/// A node type that can hold TCP ends, so [`tcp_flow`] can add them and read them back.
pub trait TcpHost: SimNode + From<TcpSender> + From<TcpReceiver> {
    /// The sender, if this node is one.
    fn tcp_sender(&self) -> Option<&TcpSender>;
    /// The receiver, if this node is one.
    fn tcp_receiver(&self) -> Option<&TcpReceiver>;
}

impl TcpHost for TcpNode {
    fn tcp_sender(&self) -> Option<&TcpSender> {
        match self {
            TcpNode::Sender(s) => Some(s.as_ref()),
            TcpNode::Receiver(_) => None,
        }
    }
    fn tcp_receiver(&self) -> Option<&TcpReceiver> {
        match self {
            TcpNode::Receiver(r) => Some(r.as_ref()),
            TcpNode::Sender(_) => None,
        }
    }
}

/// What [`tcp_flow`] should set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpFlowSpec {
    /// The sender's address.
    pub sender_addr: SocketAddr,
    /// The receiver's address.
    pub receiver_addr: SocketAddr,
    /// Bytes to send; `None` sends until the run ends.
    pub bytes: Option<u64>,
    /// When the sender starts.
    pub start: Timestamp,
    /// (sender→receiver, receiver→sender) links, e.g. a shared bottleneck; `None` leaves the
    /// routes to the simulator's default link.
    pub links: Option<(LinkId, LinkId)>,
}

impl TcpFlowSpec {
    /// An unlimited flow from `sender_addr` to `receiver_addr` starting at time zero.
    pub fn new(sender_addr: SocketAddr, receiver_addr: SocketAddr) -> Self {
        TcpFlowSpec {
            sender_addr,
            receiver_addr,
            bytes: None,
            start: Timestamp::ZERO,
            links: None,
        }
    }

    /// Send exactly `bytes`.
    pub fn bytes(mut self, bytes: u64) -> Self {
        self.bytes = Some(bytes);
        self
    }

    /// Start at `start`.
    pub fn start(mut self, start: Timestamp) -> Self {
        self.start = start;
        self
    }

    /// Route data over `forward` and ACKs over `reverse`.
    pub fn over(mut self, forward: LinkId, reverse: LinkId) -> Self {
        self.links = Some((forward, reverse));
        self
    }
}

/// The nodes of one flow in a simulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpFlow {
    /// The sender's node.
    pub sender: NodeId,
    /// The receiver's node.
    pub receiver: NodeId,
    /// The flow id both ends check.
    pub flow: u32,
}

impl TcpFlow {
    /// The sending end (`None` if the node is not a TCP sender).
    pub fn sender<'a, N: TcpHost>(&self, sim: &'a Simulator<N>) -> Option<&'a TcpSender> {
        sim.node(self.sender).tcp_sender()
    }

    /// The receiving end.
    pub fn receiver<'a, N: TcpHost>(&self, sim: &'a Simulator<N>) -> Option<&'a TcpReceiver> {
        sim.node(self.receiver).tcp_receiver()
    }

    /// Goodput over `[from, to]`, bytes per second, as the receiver delivered it.
    pub fn goodput_between<N: TcpHost>(
        &self,
        sim: &Simulator<N>,
        from: Timestamp,
        to: Timestamp,
    ) -> f64 {
        self.receiver(sim)
            .map_or(0.0, |r| r.goodput_between(from, to))
    }
}

/// Add a TCP sender/receiver pair to `sim` as `spec` says. The flow id is the sender's node
/// index, unique within the simulator.
pub fn tcp_flow<N: TcpHost>(
    sim: &mut Simulator<N>,
    spec: TcpFlowSpec,
) -> Result<TcpFlow, SimError> {
    let flow = u32::try_from(sim.next_node_id().0)
        .map_err(|_| SimError::Scenario("too many nodes for a flow id".into()))?;
    let sender = sim
        .add_node(
            vec![spec.sender_addr],
            TcpSender::new(flow, spec.receiver_addr, spec.bytes, spec.start).into(),
        )
        .ok_or_else(|| SimError::Scenario(format!("address {} taken", spec.sender_addr)))?;
    let receiver = sim
        .add_node(
            vec![spec.receiver_addr],
            TcpReceiver::new(flow, spec.bytes).into(),
        )
        .ok_or_else(|| SimError::Scenario(format!("address {} taken", spec.receiver_addr)))?;
    if let Some((forward, reverse)) = spec.links {
        sim.set_route(sender, receiver, forward);
        sim.set_route(receiver, sender, reverse);
    }
    Ok(TcpFlow {
        sender,
        receiver,
        flow,
    })
}
