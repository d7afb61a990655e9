//! A minimal blocking TCP relay client made from `rustox_core::relay::wire`, for the relay
//! benchmark and tests: it connects, shakes hands, confirms with one ping, and sends and
//! reads packets. It speaks to any Tox TCP relay (ours or c-toxcore's), so the same load runs
//! against both. Not the node's relay client: no reconnects, no routing state.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use rustox_core::relay::wire::handshake::SERVER_REPLY_SIZE;
use rustox_core::relay::wire::{ClientHandshake, FrameDecoder, FrameEncoder, Packet};
use rustox_net_crypto::crypto::{CryptoRng, KeyPair, PublicKey};

/// One connection to a relay.
pub struct RelayProbe {
    /// Our long-term key (what other clients route to).
    pub keys: KeyPair,
    /// The socket.
    pub stream: TcpStream,
    enc: FrameEncoder,
    dec: FrameDecoder,
    pending: Vec<u8>,
    out: Vec<u8>,
}

impl RelayProbe {
    /// Connects and completes the handshake, then confirms the connection with a ping
    /// (answered by the relay's pong).
    pub fn connect(
        relay: SocketAddr,
        relay_pk: &PublicKey,
        rng: &mut dyn CryptoRng,
    ) -> io::Result<RelayProbe> {
        let keys = KeyPair::generate(rng);
        let mut stream = TcpStream::connect(relay)?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        let _ = stream.set_nodelay(true);
        let (hs, hello) = ClientHandshake::new(&keys, relay_pk, rng)
            .expect("the relay's key is not of small order");
        stream.write_all(&hello)?;
        let mut reply = [0u8; SERVER_REPLY_SIZE];
        stream.read_exact(&mut reply)?;
        let (enc, dec) = hs
            .open_reply(&reply)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?
            .split();
        let mut probe = RelayProbe {
            keys,
            stream,
            enc,
            dec,
            pending: Vec::new(),
            out: Vec::new(),
        };
        probe.send(&Packet::Ping { ping_id: 1 })?;
        match probe.recv()? {
            p if p == Packet::Pong { ping_id: 1 }.to_vec() => Ok(probe),
            other => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("expected a pong, got {other:?}"),
            )),
        }
    }

    /// Sends one packet.
    pub fn send(&mut self, p: &Packet<'_>) -> io::Result<()> {
        self.queue(p)?;
        self.flush()
    }

    /// Seals one packet into the write buffer without sending it.
    pub fn queue(&mut self, p: &Packet<'_>) -> io::Result<()> {
        self.enc
            .encode(&p.to_vec(), &mut self.out)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
    }

    /// Writes the buffered frames.
    pub fn flush(&mut self) -> io::Result<()> {
        self.stream.write_all(&self.out)?;
        self.out.clear();
        Ok(())
    }

    /// The next packet; the relay's pings are answered on the way.
    pub fn recv(&mut self) -> io::Result<Vec<u8>> {
        let mut buf = [0u8; 65536];
        loop {
            let mut input: &[u8] = &self.pending;
            let got = self
                .dec
                .decode(&mut input)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?
                .map(<[u8]>::to_vec);
            let consumed = self.pending.len() - input.len();
            self.pending.drain(..consumed);
            if let Some(p) = got {
                if let Ok(Packet::Ping { ping_id }) = Packet::parse(&p) {
                    self.send(&Packet::Pong { ping_id })?;
                    continue;
                }
                return Ok(p);
            }
            let n = self.stream.read(&mut buf)?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            self.pending.extend_from_slice(&buf[..n]);
        }
    }

    /// Asks for a route to `pk`; the connection id the relay gives (0 if refused).
    pub fn route(&mut self, pk: PublicKey) -> io::Result<u8> {
        self.send(&Packet::RoutingRequest { pk })?;
        loop {
            let p = self.recv()?;
            if let Ok(Packet::RoutingResponse { conn_id, pk: got }) = Packet::parse(&p) {
                if got == pk {
                    return Ok(conn_id);
                }
            }
        }
    }

    /// Waits for the connect notification of `conn_id`.
    pub fn wait_connected(&mut self, conn_id: u8) -> io::Result<()> {
        loop {
            let p = self.recv()?;
            if Packet::parse(&p) == Ok(Packet::ConnectNotification { conn_id }) {
                return Ok(());
            }
        }
    }
}

/// Two probes linked to each other; their connection ids.
pub fn linked_pair(
    relay: SocketAddr,
    relay_pk: &PublicKey,
    rng: &mut dyn CryptoRng,
) -> io::Result<(RelayProbe, u8, RelayProbe, u8)> {
    let mut a = RelayProbe::connect(relay, relay_pk, rng)?;
    let mut b = RelayProbe::connect(relay, relay_pk, rng)?;
    let ab = a.route(b.keys.public)?;
    let ba = b.route(a.keys.public)?;
    b.wait_connected(ba)?;
    a.wait_connected(ab)?;
    Ok((a, ab, b, ba))
}
