//! One measured file transfer between two c-toxcore peers: start the receiver, point the
//! sender at it, wait for both summaries.

use std::process::ExitStatus;
use std::time::Duration;

use rand::rngs::OsRng;
use rand::RngCore;
use rustox_net_crypto::crypto::SecretKey;

use super::bootstrap::BootstrapSpec;
use super::build::PeerBinary;
use super::error::CToxcoreError;
use super::peer::{
    ContentCheck, FileIdChoice, PeerOptions, PeerReady, RecvOptions, RecvPeer, RecvSummary,
    SendOptions, SendPeer, SendSummary,
};

/// How long the receiver may take to exit after its summary: its linger plus this.
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// How the two peers find each other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Discovery {
    /// The sender bootstraps off the receiver's own DHT node, reached at this host (the
    /// receiver's address as the sender sees it).
    Direct {
        /// The receiver's address.
        recv_host: String,
    },
    /// Both bootstrap off these nodes.
    Nodes(Vec<BootstrapSpec>),
}

/// How the peers become friends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Friendship {
    /// Each adds the other's public key (`tox_friend_add_norequest`), as friends from an
    /// earlier session would: keys are generated here and given to both.
    #[default]
    Mutual,
    /// The sender sends a friend request to the receiver's Tox ID; the receiver accepts it.
    Request,
}

/// A transfer to run.
#[derive(Debug, Clone)]
pub struct TransferOptions {
    /// Bytes to send.
    pub size: u64,
    /// How the peers find each other.
    pub discovery: Discovery,
    /// How they become friends.
    pub friendship: Friendship,
    /// The receiver's options; its bootstrap list, key and friend are set here.
    pub recv: PeerOptions,
    /// The sender's options; its bootstrap list, key and friend are set here.
    pub send: PeerOptions,
    /// How the receiver checks the content.
    pub check: ContentCheck,
    /// The file id the sender announces.
    pub file_id: FileIdChoice,
    /// The sender offers the file over a TCP relay connection too (needed when UDP is off).
    pub allow_tcp: bool,
}

impl TransferOptions {
    /// A transfer of `size` bytes on loopback, the sender bootstrapping off the receiver.
    pub fn loopback(size: u64) -> TransferOptions {
        TransferOptions {
            size,
            discovery: Discovery::Direct {
                recv_host: "127.0.0.1".to_string(),
            },
            friendship: Friendship::Mutual,
            recv: PeerOptions::default(),
            send: PeerOptions::default(),
            check: ContentCheck::Pattern,
            file_id: FileIdChoice::Random,
            allow_tcp: false,
        }
    }
}

/// What both peers reported.
#[derive(Debug, Clone)]
pub struct TransferReport {
    /// The receiver's ready line.
    pub recv_ready: PeerReady,
    /// The sender's ready line.
    pub send_ready: PeerReady,
    /// The sender's summary.
    pub send: SendSummary,
    /// The receiver's summary.
    pub recv: RecvSummary,
    /// How the receiver exited (non-zero when its content check failed); `None` if it was
    /// still running after its linger and was killed.
    pub recv_exit: Option<ExitStatus>,
}

/// Runs one transfer. Process failures are errors; the content verdict is in the report.
pub fn run_transfer(
    binary: &PeerBinary,
    options: &TransferOptions,
) -> Result<TransferReport, CToxcoreError> {
    let recv_key = random_secret_key();
    let send_key = random_secret_key();
    let recv_pk = SecretKey::from_bytes(recv_key).public_key().to_hex();
    let send_pk = SecretKey::from_bytes(send_key).public_key().to_hex();

    let mut recv_peer = options.recv.clone();
    recv_peer.secret_key = Some(recv_key);
    recv_peer.friend = match options.friendship {
        Friendship::Mutual => Some(send_pk.clone()),
        Friendship::Request => None,
    };
    if let Discovery::Nodes(nodes) = &options.discovery {
        recv_peer.bootstrap.extend(nodes.iter().cloned());
    }
    let recv_options = RecvOptions {
        peer: recv_peer,
        expect_size: Some(options.size),
        check: options.check,
        ..RecvOptions::default()
    };
    let mut recv = RecvPeer::start(binary, &recv_options)?;
    check_key("recv", &recv.ready().public_key, &recv_pk)?;

    let mut send_peer = options.send.clone();
    send_peer.secret_key = Some(send_key);
    send_peer.friend = Some(match options.friendship {
        Friendship::Mutual => recv_pk,
        Friendship::Request => recv.ready().address.clone(),
    });
    match &options.discovery {
        Discovery::Direct { recv_host } => send_peer
            .bootstrap
            .push(recv.as_bootstrap(recv_host.clone())),
        Discovery::Nodes(nodes) => send_peer.bootstrap.extend(nodes.iter().cloned()),
    }
    let mut send = SendPeer::start(
        binary,
        &SendOptions {
            peer: send_peer,
            size: options.size,
            file_id: options.file_id,
            allow_tcp: options.allow_tcp,
        },
    )?;
    check_key("send", &send.ready().public_key, &send_pk)?;

    let send_summary = send.wait_summary()?;
    let recv_summary = recv.wait_summary()?;
    let recv_exit = recv.wait_exit(recv_options.linger + EXIT_GRACE);
    Ok(TransferReport {
        recv_ready: recv.ready().clone(),
        send_ready: send.ready().clone(),
        send: send_summary,
        recv: recv_summary,
        recv_exit,
    })
}

fn random_secret_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    OsRng.fill_bytes(&mut key);
    key
}

/// The peer must be using the key we derived the friend's view of it from.
fn check_key(role: &str, printed: &str, derived: &str) -> Result<(), CToxcoreError> {
    if printed.eq_ignore_ascii_case(derived) {
        Ok(())
    } else {
        Err(CToxcoreError::TransferFailed(format!(
            "{role} runs with public key {printed}, but its secret key gives {derived}"
        )))
    }
}
