//! DHT constants (docs/protocol.md §5.3, §5.4, §5.6; c-toxcore 0.2.18 `DHT.h`, `ping.c`).

use std::time::Duration;

/// `PING_INTERVAL`: each known node gets a get-nodes at most this often.
pub const PING_INTERVAL: Duration = Duration::from_secs(60);
/// `GET_NODE_INTERVAL`: per list, one get-nodes to a random good node this often.
pub const GET_NODE_INTERVAL: Duration = Duration::from_secs(20);
/// While no node has answered us, the nodes we were bootstrapped from are asked again this
/// often (ours: 0.2.18 asks them once and leaves retrying to the client, as toxic and qTox
/// do when offline). The same rate as `GET_NODE_INTERVAL`, so a node whose UDP comes back
/// rejoins within one interval of it and costs its bootstrap nodes no more than a peer.
pub const REBOOTSTRAP_INTERVAL: Duration = Duration::from_secs(20);
/// Bootstrap nodes remembered for [`REBOOTSTRAP_INTERVAL`] (ours: the first ones given win;
/// clients pass a handful).
pub const MAX_BOOTSTRAP_NODES: usize = 16;
/// `MAX_BOOTSTRAP_TIMES`: the first rounds ignore `GET_NODE_INTERVAL`.
pub const MAX_BOOTSTRAP_TIMES: u32 = 5;
/// `BAD_NODE_TIMEOUT` = PING_INTERVAL + PINGS_MISSED_NODE_GOES_BAD × (PING_INTERVAL +
/// PING_ROUNDTRIP) = 60 + 1 × 62 s: a node not heard from for this long is never handed out.
pub const BAD_NODE_TIMEOUT: Duration = Duration::from_secs(122);
/// `KILL_NODE_TIMEOUT` = BAD_NODE_TIMEOUT + PING_INTERVAL: the slot is free.
pub const KILL_NODE_TIMEOUT: Duration = Duration::from_secs(182);
/// `PING_TIMEOUT`: the reply window of a ping or get-nodes.
pub const PING_TIMEOUT: Duration = Duration::from_secs(5);
/// `do_dht` runs once per second in c-toxcore (it runs only when `mono_time`'s seconds
/// change). Ours runs when its earliest deadline is due, but never more often than this.
pub const DHT_TICK: Duration = Duration::from_secs(1);
/// How early a round may do work that falls due soon after it: a ping due within this is
/// sent with the round that is running (so every node is asked every 55–60 s where
/// c-toxcore asks every 60–61 s). Gathering the DHT's work into rounds at least this far
/// apart is what lets an idle node sleep (about one wake-up a second in all).
pub const ROUND_SLACK: Duration = Duration::from_secs(5);
/// The longest a node goes without a round when nothing is due: lists whose every node died
/// are revived to "bad" (so pinged again) within this.
pub const MAX_ROUND_GAP: Duration = Duration::from_secs(10);
/// ping.c `TIME_TO_PING`: the batch of nodes to ping is sent every 2 s.
pub const TIME_TO_PING: Duration = Duration::from_secs(2);
/// ping.c `MAX_TO_PING`.
pub const MAX_TO_PING: usize = 32;
/// `PUNCH_INTERVAL`: NAT pings and punch rounds.
pub const PUNCH_INTERVAL: Duration = Duration::from_secs(3);
/// `PUNCH_RESET_TIME`: punching state is reset after this.
pub const PUNCH_RESET_TIME: Duration = Duration::from_secs(40);
/// `MAX_PUNCHING_PORTS`.
pub const MAX_PUNCHING_PORTS: u32 = 48;
/// `MAX_NORMAL_PUNCHING_TRIES`: after this many, also sweep ports from 1024.
pub const MAX_NORMAL_PUNCHING_TRIES: u32 = 5;
/// friend_connection's `LAN_DISCOVERY_INTERVAL` (10 s).
pub const LAN_DISCOVERY_INTERVAL: Duration = Duration::from_secs(10);
/// `LCLIENT_LENGTH`: close-list buckets (0.2.18 caps the bucket index here).
pub const LCLIENT_LENGTH: usize = 128;
/// `LCLIENT_NODES`: nodes per bucket.
pub const LCLIENT_NODES: usize = 8;
/// `MAX_FRIEND_CLIENTS`: nodes kept per searched key.
pub const MAX_FRIEND_CLIENTS: usize = 8;
/// `DHT_FAKE_FRIEND_NUMBER`: random keys always searched.
pub const DHT_FAKE_FRIEND_NUMBER: usize = 2;
/// `PING_ARRAY_SIZE` / `DHT_PING_ARRAY_SIZE`: outstanding requests remembered.
pub const PING_ARRAY_SIZE: usize = 512;
