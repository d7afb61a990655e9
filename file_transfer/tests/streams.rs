//! The streaming helper: `Read + Seek` source → `Write + Seek` sink, with SHA-256
//! verification and resume from an offset.

mod common;

use std::io::{Cursor, Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::content;
use rustox_file_transfer::stream::{FileStreams, StreamError, StreamEvent};
use rustox_file_transfer::testing::MockSession;
use rustox_file_transfer::{FileControl, FileKind, UNKNOWN_FILE_SIZE};
use rustox_net_crypto::Timestamp;
use sha2::{Digest, Sha256};

/// A source that counts the bytes read from it.
struct Counting {
    inner: Cursor<Vec<u8>>,
    read: Arc<AtomicU64>,
}

impl Read for Counting {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl Seek for Counting {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

/// A shared in-memory sink the test can inspect after the helper consumed the box.
#[derive(Clone, Default)]
struct SharedSink(Arc<Mutex<Cursor<Vec<u8>>>>);

impl std::io::Write for SharedSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Seek for SharedSink {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.0.lock().unwrap().seek(pos)
    }
}

impl Read for SharedSink {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().read(buf)
    }
}

struct Ends {
    a: FileStreams,
    b: FileStreams,
    sa: MockSession,
    sb: MockSession,
    now: Timestamp,
    a_events: Vec<StreamEvent>,
    b_events: Vec<StreamEvent>,
}

impl Ends {
    fn new() -> Self {
        Ends {
            a: FileStreams::new(),
            b: FileStreams::new(),
            sa: MockSession::new(),
            sb: MockSession::new(),
            now: Timestamp::ZERO,
            a_events: Vec::new(),
            b_events: Vec::new(),
        }
    }

    fn step(&mut self, budget: usize) {
        self.sa.grant(budget);
        self.sb.grant(budget);
        self.a.pump(self.now, &mut self.sa);
        self.b.pump(self.now, &mut self.sb);
        for (_, _, payload) in self.sa.drain() {
            let _ = self.b.handle_packet(self.now, &mut self.sb, &payload);
        }
        for (_, _, payload) in self.sb.drain() {
            let _ = self.a.handle_packet(self.now, &mut self.sa, &payload);
        }
        while let Some(e) = self.a.poll_event() {
            self.a_events.push(e);
        }
        while let Some(e) = self.b.poll_event() {
            self.b_events.push(e);
        }
        self.now += Duration::from_millis(1);
    }

    /// `a` offers `data` as a file named "x" of `size` bytes with `file_id`; `b` takes the
    /// offer into an in-memory sink, checking the hash if `verify`.
    fn offer_accepted_into_memory(
        &mut self,
        size: u64,
        file_id: [u8; 32],
        data: Vec<u8>,
        verify: bool,
    ) {
        self.a
            .send_with_id(
                self.now,
                &mut self.sa,
                FileKind::Data,
                size,
                file_id,
                Box::new(Cursor::new(data)),
                b"x",
            )
            .unwrap();
        self.step(0);
        let (incoming, _, _) = self.take_offer().unwrap();
        self.b
            .accept(
                self.now,
                &mut self.sb,
                incoming,
                Box::new(Cursor::new(Vec::new())),
                verify,
            )
            .unwrap();
    }

    fn take_offer(&mut self) -> Option<(u32, [u8; 32], u64)> {
        let i = self
            .b_events
            .iter()
            .position(|e| matches!(e, StreamEvent::Offered { .. }))?;
        match self.b_events.remove(i) {
            StreamEvent::Offered {
                file,
                file_id,
                size,
                ..
            } => Some((file, file_id, size)),
            _ => None,
        }
    }
}

#[test]
fn file_streams_byte_exact_and_verified() {
    let mut e = Ends::new();
    let data = content(300_000, 1);
    let read = Arc::new(AtomicU64::new(0));
    let source = Counting {
        inner: Cursor::new(data.clone()),
        read: read.clone(),
    };
    let file =
        e.a.send_file(
            e.now,
            &mut e.sa,
            FileKind::Data,
            Box::new(source),
            b"doc.pdf",
        )
        .unwrap();
    assert_eq!(
        read.load(Ordering::Relaxed),
        data.len() as u64,
        "one pass to hash"
    );
    e.step(0);
    let (incoming, file_id, size) = e.take_offer().unwrap();
    assert_eq!(file_id, <[u8; 32]>::from(Sha256::digest(&data)));
    assert_eq!(size, data.len() as u64);
    let sink = SharedSink::default();
    e.b.accept(e.now, &mut e.sb, incoming, Box::new(sink.clone()), true)
        .unwrap();
    e.step(0);
    // Reads follow the budget: after k steps of budget 3, at most 3k chunks were read.
    for k in 1..=10u64 {
        e.step(3);
        let streamed = read.load(Ordering::Relaxed) - data.len() as u64;
        assert!(
            streamed <= k * 3 * 1371,
            "read {streamed} bytes after {k} steps"
        );
    }
    for _ in 0..200 {
        e.step(3);
    }
    assert!(e.b_events.iter().any(|ev| matches!(ev,
        StreamEvent::Received { file, bytes, verified: true, sha256: Some(d) } if *file == incoming && *bytes == data.len() as u64 && d[..] == Sha256::digest(&data)[..])),
        "{:?}", e.b_events);
    assert!(e
        .a_events
        .iter()
        .any(|ev| matches!(ev, StreamEvent::Sent { file: f, .. } if *f == file)));
    assert_eq!(sink.0.lock().unwrap().get_ref(), &data);
}

#[test]
fn a_wrong_hash_fails_verification() {
    let mut e = Ends::new();
    let data = content(5000, 2);
    e.offer_accepted_into_memory(5000, [9; 32], data, true);
    for _ in 0..20 {
        e.step(4);
    }
    assert!(
        e.b_events.iter().any(|ev| matches!(
            ev,
            StreamEvent::Failed {
                error: StreamError::HashMismatch,
                ..
            }
        )),
        "{:?}",
        e.b_events
    );
    assert!(!e
        .b_events
        .iter()
        .any(|ev| matches!(ev, StreamEvent::Received { .. })));
}

#[test]
fn resume_from_a_partial_sink_is_byte_exact_and_verified() {
    let mut e = Ends::new();
    let data = content(100_000, 3);
    let read = Arc::new(AtomicU64::new(0));
    e.a.send_file(
        e.now,
        &mut e.sa,
        FileKind::Data,
        Box::new(Counting {
            inner: Cursor::new(data.clone()),
            read: read.clone(),
        }),
        b"x",
    )
    .unwrap();
    e.step(0);
    let (incoming, _, _) = e.take_offer().unwrap();
    let offset = 40_000;
    let sink = SharedSink::default();
    sink.0
        .lock()
        .unwrap()
        .get_mut()
        .extend_from_slice(&data[..offset]);
    e.b.accept_from(
        e.now,
        &mut e.sb,
        incoming,
        sink.clone(),
        offset as u64,
        true,
    )
    .unwrap();
    for _ in 0..100 {
        e.step(4);
    }
    assert!(
        e.b_events
            .iter()
            .any(|ev| matches!(ev, StreamEvent::Received { verified: true, .. })),
        "{:?}",
        e.b_events
    );
    assert_eq!(sink.0.lock().unwrap().get_ref(), &data);
    assert_eq!(
        read.load(Ordering::Relaxed) - data.len() as u64,
        (data.len() - offset) as u64,
        "only the missing part was read"
    );
}

#[test]
fn unknown_size_source_streams_to_its_end() {
    let mut e = Ends::new();
    let data = content(12_345, 4);
    e.a.send_with_id(
        e.now,
        &mut e.sa,
        FileKind::Data,
        UNKNOWN_FILE_SIZE,
        [0; 32],
        Box::new(Cursor::new(data.clone())),
        b"pipe",
    )
    .unwrap();
    e.step(0);
    let (incoming, _, size) = e.take_offer().unwrap();
    assert_eq!(size, u64::MAX);
    let sink = SharedSink::default();
    e.b.accept(e.now, &mut e.sb, incoming, Box::new(sink.clone()), false)
        .unwrap();
    for _ in 0..50 {
        e.step(2);
    }
    assert!(
        e.b_events.iter().any(|ev| matches!(
            ev,
            StreamEvent::Received {
                verified: false,
                bytes: 12_345,
                ..
            }
        )),
        "{:?}",
        e.b_events
    );
    assert_eq!(sink.0.lock().unwrap().get_ref(), &data);
}

#[test]
fn a_source_shorter_than_announced_fails_and_cancels() {
    let mut e = Ends::new();
    e.offer_accepted_into_memory(10_000, [0; 32], vec![1; 3000], false);
    for _ in 0..10 {
        e.step(4);
    }
    assert!(
        e.a_events.iter().any(|ev| matches!(
            ev,
            StreamEvent::Failed {
                error: StreamError::SourceEnded(3000),
                ..
            }
        )),
        "{:?}",
        e.a_events
    );
    assert!(
        e.b_events.iter().any(|ev| matches!(
            ev,
            StreamEvent::PeerControl {
                control: FileControl::Cancel,
                ..
            }
        )),
        "{:?}",
        e.b_events
    );
    assert_eq!(e.a.transfers().active(), (0, 0));
    assert_eq!(e.b.transfers().active(), (0, 0));
    assert!(
        !e.a_events
            .iter()
            .any(|ev| matches!(ev, StreamEvent::Other(_))),
        "{:?}",
        e.a_events
    );
}

/// A source filled from elsewhere: it has the first `available` bytes, and answers a read it
/// cannot fill whole with `WouldBlock` (as the Rust API's async sources do).
struct Trickle {
    data: Vec<u8>,
    available: Arc<AtomicU64>,
    pos: u64,
    would_block: Arc<AtomicU64>,
}

impl Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let available = self.available.load(Ordering::Relaxed);
        let end = self.data.len() as u64;
        let want = (buf.len() as u64).min(end - self.pos);
        if self.pos + want > available {
            self.would_block.fetch_add(1, Ordering::Relaxed);
            return Err(std::io::ErrorKind::WouldBlock.into());
        }
        let n = want as usize;
        buf[..n].copy_from_slice(&self.data[self.pos as usize..self.pos as usize + n]);
        self.pos += want;
        Ok(n)
    }
}

impl Seek for Trickle {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        match pos {
            SeekFrom::Start(p) if p == self.pos => Ok(p),
            _ => Err(std::io::ErrorKind::Unsupported.into()),
        }
    }
}

#[test]
fn a_source_without_data_yet_holds_its_file_until_it_is_ready() {
    let mut e = Ends::new();
    let data = content(100_000, 7);
    let available = Arc::new(AtomicU64::new(0));
    let would_block = Arc::new(AtomicU64::new(0));
    let source = Trickle {
        data: data.clone(),
        available: available.clone(),
        pos: 0,
        would_block: would_block.clone(),
    };
    let id: [u8; 32] = Sha256::digest(&data).into();
    let file =
        e.a.send_with_id(
            e.now,
            &mut e.sa,
            FileKind::Data,
            data.len() as u64,
            id,
            Box::new(source),
            b"later.bin",
        )
        .unwrap();
    e.step(0);
    let (incoming, _, _) = e.take_offer().unwrap();
    let sink = SharedSink::default();
    e.b.accept(e.now, &mut e.sb, incoming, Box::new(sink.clone()), true)
        .unwrap();
    // Nothing to read: the file waits, without failing and without asking again and again.
    for _ in 0..50 {
        e.step(8);
    }
    assert_eq!(sink.0.lock().unwrap().get_ref().len(), 0);
    assert_eq!(
        would_block.load(Ordering::Relaxed),
        1,
        "asked once, then held"
    );
    assert!(!e
        .a_events
        .iter()
        .any(|ev| matches!(ev, StreamEvent::Failed { .. })));
    // Half the file arrives: it flows up to there and waits again.
    available.store(50_000, Ordering::Relaxed);
    e.a.source_ready(file);
    for _ in 0..50 {
        e.step(8);
    }
    let got = sink.0.lock().unwrap().get_ref().len();
    assert!((50_000 - 1371..=50_000).contains(&got), "{got} bytes");
    // The rest: complete and verified.
    available.store(data.len() as u64, Ordering::Relaxed);
    e.a.source_ready(file);
    for _ in 0..50 {
        e.step(8);
    }
    assert!(e.b_events.iter().any(|ev| matches!(ev,
        StreamEvent::Received { file, bytes, verified: true, sha256: Some(d) } if *file == incoming && *bytes == data.len() as u64 && d[..] == Sha256::digest(&data)[..])),
        "{:?}", e.b_events);
    assert_eq!(sink.0.lock().unwrap().get_ref(), &data);
}
