//! The Rust API end to end on loopback: two `Tox` handles and a bootstrap node; one sends
//! a friend request by Tox ID, the other (an echo bot, as in examples/echo_bot.rs) accepts
//! it and sends back a message and a file, which arrive verified.

#![cfg(feature = "tokio")]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngCore, SeedableRng};
use rustox_core::api::{Tox, ToxOptions};
use rustox_core::dht::DhtConfig;
use rustox_core::driver::workers::{NodeRunner, RunnerConfig};
use rustox_core::node::{FileVerification, FriendNumber, NodeEvent, NodeOptions};
use rustox_net_crypto::crypto::KeyPair;

fn options(boot: &NodeRunner) -> ToxOptions {
    ToxOptions {
        bind: SocketAddr::from(([127, 0, 0, 1], 0)),
        bootstrap: vec![(boot.local_addr(), boot.public_key())],
        node: NodeOptions {
            dht: DhtConfig {
                lan_discovery: false,
                ..DhtConfig::default()
            },
            unix_time: rustox_core::driver::clock::unix_now(),
            ..NodeOptions::default()
        },
        ..ToxOptions::default()
    }
}

/// What `rustox bootstrap` runs, on loopback: the node the handles bootstrap from.
fn bootstrap_node() -> NodeRunner {
    NodeRunner::start(
        KeyPair::generate(&mut StdRng::from_entropy()),
        RunnerConfig::loopback(0),
    )
    .expect("bootstrap node")
}

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rustox-api-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `len` bytes from a seeded generator.
fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut content = vec![0u8; len];
    StdRng::seed_from_u64(seed).fill_bytes(&mut content);
    content
}

/// Bob and Alice started on `boot`, and Alice's friend request (`note`) to Bob sent.
async fn befriended(boot: &NodeRunner, note: &[u8]) -> (Tox, Tox, FriendNumber) {
    let bob = Tox::start(options(boot)).await.expect("bob");
    let alice = Tox::start(options(boot)).await.expect("alice");
    let friend = alice
        .add_friend(bob.tox_id(), note)
        .await
        .expect("friend request");
    (bob, alice, friend)
}

/// Stops both handles and removes the test's directory.
async fn shut_down(alice: Tox, bob: Tox, dir: &Path) {
    alice.shutdown().await;
    bob.shutdown().await;
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_friend_request_a_message_and_a_file_echo_through_the_api() {
    let boot = bootstrap_node();
    let dir = scratch("test");
    let content = random_bytes(300_000, 3);
    let source = dir.join("hello.bin");
    std::fs::write(&source, &content).unwrap();

    let mut bot = Tox::start(options(&boot)).await.expect("bot");
    let mut alice = Tox::start(options(&boot)).await.expect("alice");
    let bot_id = bot.tox_id();
    let bot_dir = dir.clone();
    let bot_task = tokio::spawn(async move {
        let mut received = None;
        while let Some(event) = bot.next_event().await {
            match event {
                NodeEvent::FriendRequest { pk, .. } => {
                    bot.add_friend_norequest(pk).await.unwrap();
                }
                NodeEvent::Message { friend, kind, text } => {
                    bot.send_message_kind(friend, kind, &text).await.unwrap();
                }
                NodeEvent::FileOffered(offer) => {
                    let path = bot_dir.join("at-bot.bin");
                    received = Some(path.clone());
                    bot.accept_file(offer.friend, offer.file, path)
                        .await
                        .unwrap();
                }
                NodeEvent::FileReceived {
                    friend,
                    verification: FileVerification::Sha256FileId,
                    ..
                } => {
                    let path = received.take().unwrap();
                    bot.send_file(friend, &path).await.unwrap();
                }
                _ => {}
            }
        }
    });

    let friend = alice
        .add_friend(bot_id, b"echo me")
        .await
        .expect("friend request");
    let outcome = tokio::time::timeout(Duration::from_secs(60), async {
        let mut echoed = None;
        loop {
            match alice.next_event().await.expect("alice runs") {
                NodeEvent::FriendConnection { online: true, .. } => {
                    alice.send_message(friend, b"ping").await.unwrap();
                    alice.send_file(friend, &source).await.unwrap();
                }
                NodeEvent::Message { text, .. } => echoed = Some(text),
                NodeEvent::FileOffered(offer) => {
                    alice
                        .accept_file(offer.friend, offer.file, dir.join("back.bin"))
                        .await
                        .unwrap();
                }
                NodeEvent::FileReceived {
                    bytes,
                    verification,
                    ..
                } => return (echoed, bytes, verification.is_verified()),
                _ => {}
            }
        }
    })
    .await
    .expect("the echo came back within 60 s");
    assert_eq!(outcome.0.as_deref(), Some(&b"ping"[..]));
    assert_eq!(outcome.1, content.len() as u64);
    assert!(outcome.2, "the echoed file matched its SHA-256 id");
    assert!(std::fs::read(dir.join("back.bin")).unwrap() == content);
    alice.shutdown().await;
    bot_task.abort();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program without an async runtime: the blocking start, a plain poll loop for events,
/// and node calls that block until done. A friend request, acceptance and a message each way.
#[test]
fn a_program_without_a_runtime_chats_through_a_poll_loop() {
    let boot = bootstrap_node();
    let mut bob = Tox::start_blocking(options(&boot)).expect("bob");
    let mut alice = Tox::start_blocking(options(&boot)).expect("alice");
    let bob_id = bob.tox_id();
    let friend = alice
        .with_node_blocking(move |n, now| n.add_friend(now, &bob_id, b"hi bob"))
        .expect("alice's node runs")
        .expect("friend request queued");
    let end = std::time::Instant::now() + Duration::from_secs(60);
    let (mut bob_got, mut alice_got) = (None, None);
    while std::time::Instant::now() < end && (bob_got.is_none() || alice_got.is_none()) {
        let mut idle = true;
        while let Some(event) = bob.poll_event() {
            idle = false;
            match event {
                NodeEvent::FriendRequest { pk, .. } => {
                    bob.with_node_blocking(move |n, now| n.add_friend_norequest(now, pk))
                        .unwrap()
                        .unwrap();
                }
                NodeEvent::Message { friend, text, .. } => {
                    bob_got = Some(text);
                    bob.with_node_blocking(move |n, now| n.send_message(now, friend, b"hi alice"))
                        .unwrap()
                        .unwrap();
                }
                _ => {}
            }
        }
        while let Some(event) = alice.poll_event() {
            idle = false;
            match event {
                NodeEvent::FriendConnection { online: true, .. } => {
                    alice
                        .with_node_blocking(move |n, now| n.send_message(now, friend, b"hello"))
                        .unwrap()
                        .unwrap();
                }
                NodeEvent::Message { text, .. } => alice_got = Some(text),
                _ => {}
            }
        }
        if idle {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    assert_eq!(bob_got.as_deref(), Some(&b"hello"[..]));
    assert_eq!(alice_got.as_deref(), Some(&b"hi alice"[..]));
}

/// An in-memory sink that yields between writes (as a network upload would), and can be
/// told to fail after some bytes.
struct MemorySink {
    bytes: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    fail_after: Option<usize>,
    finished: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

#[rustox_core::api::async_trait]
impl rustox_core::api::FileSink for MemorySink {
    async fn write_all(&mut self, data: &[u8]) -> std::io::Result<()> {
        tokio::task::yield_now().await;
        let mut bytes = self.bytes.lock().unwrap();
        if self.fail_after.is_some_and(|n| bytes.len() >= n) {
            return Err(std::io::Error::other("disk full"));
        }
        bytes.extend_from_slice(data);
        Ok(())
    }

    async fn finish(&mut self) -> std::io::Result<()> {
        self.finished
            .store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
}

/// A file received into a caller's async sink arrives whole and verified; a sink that fails
/// part-way cancels the transfer and its task reports the error.
#[tokio::test]
async fn files_arrive_in_a_callers_async_sink_and_a_failing_sink_cancels_the_transfer() {
    let boot = bootstrap_node();
    let dir = scratch("sink");
    let content = random_bytes(2_000_000, 5);
    let source = dir.join("to-sink.bin");
    std::fs::write(&source, &content).unwrap();

    let (mut bob, mut alice, friend) = befriended(&boot, b"sink test").await;
    let bytes = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let finished = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let outcome = tokio::time::timeout(Duration::from_secs(60), async {
        let mut offers = 0;
        let mut tasks = Vec::new();
        let mut received = None;
        let mut cancelled = false;
        loop {
            tokio::select! {
                Some(event) = alice.next_event() => {
                    if let NodeEvent::FriendConnection { online: true, .. } = event {
                        alice.send_file(friend, &source).await.unwrap();
                        alice.send_file(friend, &source).await.unwrap();
                    }
                }
                Some(event) = bob.next_event() => match event {
                    NodeEvent::FriendRequest { pk, .. } => {
                        bob.add_friend_norequest(pk).await.unwrap();
                    }
                    NodeEvent::FileOffered(offer) => {
                        // The first offer goes to a good sink, the second to one that fails
                        // after 300 kB.
                        offers += 1;
                        let sink = MemorySink {
                            bytes: if offers == 1 { bytes.clone() } else { Default::default() },
                            fail_after: (offers == 2).then_some(300_000),
                            finished: if offers == 1 { finished.clone() } else { Default::default() },
                        };
                        tasks.push(bob.accept_file_into(offer.friend, offer.file, sink).await.unwrap());
                    }
                    NodeEvent::FileReceived { bytes, verification, .. } => received = Some((bytes, verification.is_verified())),
                    NodeEvent::FileFailed { .. } => cancelled = true,
                    _ => {}
                },
            }
            if let (Some(received), true, 2) = (received, cancelled, tasks.len()) {
                let mut results = Vec::new();
                for t in tasks {
                    results.push(t.await.unwrap());
                }
                return (received, results);
            }
        }
    })
    .await
    .expect("both transfers ended within 60 s");
    let ((received_bytes, verified), results) = outcome;
    assert_eq!(received_bytes, content.len() as u64);
    assert!(verified, "the file in the sink matched its SHA-256 id");
    assert_eq!(results[0].as_ref().ok(), Some(&(content.len() as u64)));
    assert!(*bytes.lock().unwrap() == content, "the sink holds the file");
    assert!(finished.load(std::sync::atomic::Ordering::SeqCst));
    let err = results[1]
        .as_ref()
        .expect_err("the failing sink reports its error");
    assert_eq!(err.to_string(), "disk full");
    shut_down(alice, bob, &dir).await;
}

/// A source that hands out its bytes a few hundred at a time, with pauses (as a relayed
/// download would).
struct SlowSource {
    data: Vec<u8>,
    pos: usize,
}

#[rustox_core::api::async_trait]
impl rustox_core::api::FileSource for SlowSource {
    async fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos % 100_000 < 700 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        } else {
            tokio::task::yield_now().await;
        }
        let n = buf.len().min(700).min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// A file sent from a caller's async source, slower than the path, arrives whole and
/// verified against the SHA-256 the caller gave as its id.
#[tokio::test]
async fn files_leave_from_a_callers_async_source() {
    let boot = bootstrap_node();
    let dir = scratch("source");
    let content = random_bytes(1_000_000, 9);
    let id: [u8; 32] = <sha2::Sha256 as sha2::Digest>::digest(&content).into();
    let (mut bob, mut alice, friend) = befriended(&boot, b"source test").await;
    let target = dir.join("from-source.bin");
    let (received, read) = tokio::time::timeout(Duration::from_secs(60), async {
        let mut task = None;
        loop {
            tokio::select! {
                Some(event) = alice.next_event() => {
                    if let NodeEvent::FriendConnection { online: true, .. } = event {
                        let source = SlowSource { data: content.clone(), pos: 0 };
                        let (_, t) = alice
                            .send_file_from(friend, b"slow.bin", content.len() as u64, id, source)
                            .await
                            .unwrap();
                        task = Some(t);
                    }
                }
                Some(event) = bob.next_event() => match event {
                    NodeEvent::FriendRequest { pk, .. } => {
                        bob.add_friend_norequest(pk).await.unwrap();
                    }
                    NodeEvent::FileOffered(offer) => {
                        bob.accept_file(offer.friend, offer.file, target.clone()).await.unwrap();
                    }
                    NodeEvent::FileReceived { bytes, verification, .. } => {
                        let verified = verification.is_verified();
                        let read = task.take().expect("the source's task").await.unwrap();
                        return ((bytes, verified), read);
                    }
                    NodeEvent::FileFailed { .. } => panic!("the transfer failed"),
                    _ => {}
                },
            }
        }
    })
    .await
    .expect("the file arrived within 60 s");
    assert_eq!(received, (content.len() as u64, true));
    assert_eq!(read.ok(), Some(content.len() as u64));
    assert!(std::fs::read(&target).unwrap() == content);
    shut_down(alice, bob, &dir).await;
}

/// Streams of unknown size (`UNKNOWN_FILE_SIZE`) from a caller's async source end where the
/// source ends — mid-chunk (102 400 bytes) and on a chunk boundary (5 × 1371, ended by an
/// empty chunk) — as in c-toxcore. Their ids are random, as a c-toxcore client's are: each
/// file is kept whole, with the SHA-256 of what arrived and `OpaqueFileId`, and the sender
/// hears it is done at exactly the stream's end.
#[tokio::test]
async fn streams_end_where_their_source_ends_and_opaque_ids_are_kept() {
    let boot = bootstrap_node();
    let dir = scratch("stream");
    let sizes = [102_400usize, 5 * 1371];
    let contents: Vec<Vec<u8>> = sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let mut c = vec![0u8; n];
            StdRng::seed_from_u64(20 + i as u64).fill_bytes(&mut c);
            c
        })
        .collect();
    let (mut bob, mut alice, friend) = befriended(&boot, b"stream test").await;
    let results = tokio::time::timeout(Duration::from_secs(60), async {
        let mut results = Vec::new();
        let mut sent = Vec::new();
        let mut next = 0;
        let mut offer_next = false;
        loop {
            if offer_next && next < contents.len() {
                offer_next = false;
                let source = SlowSource {
                    data: contents[next].clone(),
                    pos: 0,
                };
                let mut id = [0u8; 32];
                StdRng::seed_from_u64(99 + next as u64).fill_bytes(&mut id);
                alice
                    .send_file_from(
                        friend,
                        b"stream.bin",
                        rustox_file_transfer::UNKNOWN_FILE_SIZE,
                        id,
                        source,
                    )
                    .await
                    .unwrap();
                next += 1;
            }
            tokio::select! {
                Some(event) = alice.next_event() => match event {
                    NodeEvent::FriendConnection { online: true, .. } => offer_next = true,
                    NodeEvent::FileSent { bytes, .. } => {
                        sent.push(bytes);
                        offer_next = true;
                    }
                    _ => {}
                },
                Some(event) = bob.next_event() => match event {
                    NodeEvent::FriendRequest { pk, .. } => {
                        bob.add_friend_norequest(pk).await.unwrap();
                    }
                    NodeEvent::FileOffered(offer) => {
                        assert_eq!(offer.size, rustox_file_transfer::UNKNOWN_FILE_SIZE);
                        let path = dir.join(format!("stream-{}.bin", results.len()));
                        bob.accept_file(offer.friend, offer.file, path).await.unwrap();
                    }
                    NodeEvent::FileReceived { bytes, sha256, verification, .. } => {
                        results.push((bytes, sha256, verification));
                    }
                    NodeEvent::FileFailed { reason, .. } => panic!("a stream failed: {reason}"),
                    _ => {}
                },
            }
            if results.len() == contents.len() && sent.len() == contents.len() {
                return (results, sent);
            }
        }
    })
    .await
    .expect("both streams arrived within 60 s");
    let (received, sent) = results;
    for (i, content) in contents.iter().enumerate() {
        let sha: [u8; 32] = <sha2::Sha256 as sha2::Digest>::digest(content).into();
        assert_eq!(
            received[i],
            (
                content.len() as u64,
                Some(sha),
                FileVerification::OpaqueFileId
            ),
            "stream {i}"
        );
        assert_eq!(
            sent[i],
            content.len() as u64,
            "stream {i}: the sender's end"
        );
        let path = dir.join(format!("stream-{i}.bin"));
        assert!(
            std::fs::read(path).unwrap() == *content,
            "stream {i} differs"
        );
    }
    shut_down(alice, bob, &dir).await;
}

/// `ToxOptions::tcp_port`: Bob runs a TCP relay under his DHT key; Alice, with UDP off and
/// that relay as her only way in (the bootstrap node is only her onion path node), finds
/// him by Tox ID through it and they exchange a message.
#[tokio::test]
async fn a_node_with_tcp_port_is_the_relay_its_udp_off_friend_reaches_it_through() {
    let boot = bootstrap_node();
    let mut bob = Tox::start(ToxOptions {
        tcp_port: Some(0),
        ..options(&boot)
    })
    .await
    .expect("bob");
    let port = bob.tcp_port().expect("bob runs a relay");
    assert_ne!(port, 0);
    let mut alice_options = options(&boot);
    alice_options.node.udp_disabled = true;
    alice_options.tcp_relays = vec![(
        SocketAddr::from(([127, 0, 0, 1], port)),
        bob.dht_public_key(),
    )];
    let mut alice = Tox::start(alice_options).await.expect("alice");
    assert_eq!(alice.tcp_port(), None);
    let bob_id = bob.tox_id();
    let bob_task = tokio::spawn(async move {
        while let Some(event) = bob.next_event().await {
            match event {
                NodeEvent::FriendRequest { pk, .. } => {
                    bob.add_friend_norequest(pk).await.unwrap();
                }
                NodeEvent::Message { friend, kind, text } => {
                    bob.send_message_kind(friend, kind, &text).await.unwrap();
                }
                _ => {}
            }
        }
    });
    let friend = alice
        .add_friend(bob_id, b"through your relay")
        .await
        .expect("friend request");
    let echoed = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            match alice.next_event().await.expect("alice runs") {
                NodeEvent::FriendConnection { online: true, .. } => {
                    alice.send_message(friend, b"over tcp").await.unwrap();
                }
                NodeEvent::Message { text, .. } => return text,
                _ => {}
            }
        }
    })
    .await
    .expect("online and echoed within 60 s");
    assert_eq!(echoed, b"over tcp");
    alice.shutdown().await;
    bob_task.abort();
}
