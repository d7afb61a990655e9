//! Counters of the relay server: connections, bytes, and every drop and close by its reason.

/// Why a new connection was refused at accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The server holds [`super::RelayConfig::max_connections`] connections.
    #[error("connection limit reached")]
    TooManyConnections,
    /// Its source address holds [`super::RelayConfig::max_per_ip`] connections.
    #[error("per-address connection limit reached")]
    TooManyFromAddress,
    /// The driver reused the id of a connection the server still holds.
    #[error("connection id in use")]
    DuplicateId,
}

/// Why the server closed a connection (the driver closes the socket when told,
/// [`super::RelayServer::poll_close`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CloseReason {
    /// The hello and the first frame did not both arrive within the handshake timeout.
    HandshakeTimeout,
    /// The hello did not open.
    BadHandshake,
    /// A frame was malformed or did not open (the stream is desynchronised).
    BadFrame,
    /// A packet c-toxcore closes the connection for (bad length, wrong direction, a route
    /// slot not in use, a pong with id 0).
    BadPacket,
    /// No pong within the ping timeout.
    PingTimeout,
    /// Its control frames no longer fit its output buffer: the peer stopped reading.
    SlowReader,
    /// A newer connection authenticated with the same key (c-toxcore `add_accepted`).
    Replaced,
    /// The oldest connection still in its handshake, closed to make room for a new one
    /// when [`super::RelayConfig::max_handshaking`] were in progress.
    HandshakeEvicted,
}

impl CloseReason {
    /// Every reason, in counter order.
    pub const ALL: [CloseReason; 8] = [
        CloseReason::HandshakeTimeout,
        CloseReason::BadHandshake,
        CloseReason::BadFrame,
        CloseReason::BadPacket,
        CloseReason::PingTimeout,
        CloseReason::SlowReader,
        CloseReason::Replaced,
        CloseReason::HandshakeEvicted,
    ];

    /// A short name for statistics lines.
    pub fn name(self) -> &'static str {
        match self {
            CloseReason::HandshakeTimeout => "handshake_timeout",
            CloseReason::BadHandshake => "bad_handshake",
            CloseReason::BadFrame => "bad_frame",
            CloseReason::BadPacket => "bad_packet",
            CloseReason::PingTimeout => "ping_timeout",
            CloseReason::SlowReader => "slow_reader",
            CloseReason::Replaced => "replaced",
            CloseReason::HandshakeEvicted => "handshake_evicted",
        }
    }
}

/// Why a packet was dropped without closing anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RelayDrop {
    /// The destination's output buffer is full (data, OOB or onion response): the
    /// backpressure that keeps a slow reader from growing the server. net_crypto resends.
    OutputFull,
    /// Data on a slot whose peer has not asked back yet (c-toxcore ignores it too).
    RouteNotLinked,
    /// OOB data for a key with no connection here.
    OobUnknownDestination,
    /// Onion requests waiting for the onion relay hit their bound.
    OnionQueueFull,
    /// An onion response for a connection that is gone.
    OnionUnknownConnection,
    /// Forward requests (packet 10) waiting for the DHT hit their bound.
    ForwardQueueFull,
    /// A forward reply (packet 11) for a connection that is gone.
    ForwardUnknownConnection,
}

impl RelayDrop {
    /// Every reason, in counter order.
    pub const ALL: [RelayDrop; 7] = [
        RelayDrop::OutputFull,
        RelayDrop::RouteNotLinked,
        RelayDrop::OobUnknownDestination,
        RelayDrop::OnionQueueFull,
        RelayDrop::OnionUnknownConnection,
        RelayDrop::ForwardQueueFull,
        RelayDrop::ForwardUnknownConnection,
    ];

    /// A short name for statistics lines.
    pub fn name(self) -> &'static str {
        match self {
            RelayDrop::OutputFull => "output_full",
            RelayDrop::RouteNotLinked => "route_not_linked",
            RelayDrop::OobUnknownDestination => "oob_unknown_destination",
            RelayDrop::OnionQueueFull => "onion_queue_full",
            RelayDrop::OnionUnknownConnection => "onion_unknown_connection",
            RelayDrop::ForwardQueueFull => "forward_queue_full",
            RelayDrop::ForwardUnknownConnection => "forward_unknown_connection",
        }
    }
}

/// Counters of a relay server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RelayStats {
    /// Connections accepted.
    pub accepted: u64,
    /// Connections refused at accept: \[0\] in all, \[1\] per address.
    pub refused: [u64; 2],
    /// Connections whose first frame opened.
    pub confirmed: u64,
    /// Connections the driver reported closed by the peer.
    pub closed_by_peer: u64,
    /// Connections closed by the server, indexed like [`CloseReason::ALL`].
    pub closed: [u64; CloseReason::ALL.len()],
    /// Bytes received from clients.
    pub bytes_in: u64,
    /// Bytes written to clients (reported by the driver).
    pub bytes_out: u64,
    /// Data packets relayed between linked routes.
    pub data_forwarded: u64,
    /// Their payload bytes.
    pub data_bytes_forwarded: u64,
    /// OOB packets delivered.
    pub oob_forwarded: u64,
    /// Routes linked (both sides asked).
    pub routes_linked: u64,
    /// Onion requests handed to the onion relay.
    pub onion_requests: u64,
    /// Onion responses delivered to clients.
    pub onion_responses: u64,
    /// Forward requests (packet 10) handed to the DHT.
    pub forward_requests: u64,
    /// Forward replies delivered to clients (packet 11).
    pub forward_replies: u64,
    /// Pings sent.
    pub pings_sent: u64,
    /// Drops, indexed like [`RelayDrop::ALL`].
    pub drops: [u64; RelayDrop::ALL.len()],
}

impl RelayStats {
    /// Closes counted for `reason`.
    pub fn closed_for(&self, reason: CloseReason) -> u64 {
        self.closed[reason as usize]
    }

    /// Drops counted for `reason`.
    pub fn dropped(&self, reason: RelayDrop) -> u64 {
        self.drops[reason as usize]
    }
}
