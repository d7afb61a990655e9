//! Two `FileTransfers` wired back to back through in-memory lossless pipes, each with a
//! small application that answers chunk requests from memory and stores what it receives.
#![allow(dead_code)]

use std::collections::HashMap;

use rustox_file_transfer::testing::MockSession;
use rustox_file_transfer::{FileControl, FileError, FileEvent, FileSendChunkError, FileTransfers};
use rustox_net_crypto::Timestamp;

/// Deterministic test content.
pub fn content(len: usize, seed: u8) -> Vec<u8> {
    let mut x = u32::from(seed).wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// What an application does with events.
#[derive(Default)]
pub struct App {
    /// Files we send, by API number: their bytes.
    pub contents: HashMap<u32, Vec<u8>>,
    /// For unknown-size files: where the stream ends (a short chunk follows).
    pub stream_ends: HashMap<u32, usize>,
    /// Files we receive, by API number.
    pub received: HashMap<u32, Vec<u8>>,
    /// Accept every offer at once.
    pub auto_accept: bool,
    /// Answer chunk requests (false: leave them unanswered).
    pub answer_requests: bool,
    pub sent_complete: Vec<u32>,
    pub recv_complete: Vec<u32>,
    pub offers: Vec<FileEvent>,
    pub controls: Vec<(u32, FileControl)>,
    pub requests: Vec<(u32, u64, usize)>,
    pub chunk_errors: Vec<FileSendChunkError>,
    pub packet_errors: Vec<FileError>,
}

pub struct Side {
    pub ft: FileTransfers,
    pub session: MockSession,
    pub app: App,
}

impl Side {
    fn new() -> Self {
        Side {
            ft: FileTransfers::new(),
            session: MockSession::new(),
            app: App {
                answer_requests: true,
                ..App::default()
            },
        }
    }

    /// Handle every pending event like an application would.
    pub fn handle_events(&mut self, now: Timestamp) {
        while let Some(event) = self.ft.poll_event() {
            match event {
                FileEvent::ChunkRequest {
                    file,
                    position,
                    length,
                } => {
                    self.app.requests.push((file, position, length));
                    if length == 0 {
                        self.app.sent_complete.push(file);
                        continue;
                    }
                    if !self.app.answer_requests {
                        continue;
                    }
                    let Some(data) = self.app.contents.get(&file) else {
                        continue;
                    };
                    let start = (position as usize).min(data.len());
                    let mut end = (start + length).min(data.len());
                    if let Some(&stream_end) = self.app.stream_ends.get(&file) {
                        end = end.min(stream_end.max(start));
                    }
                    let chunk = data[start..end].to_vec();
                    if let Err(e) =
                        self.ft
                            .send_chunk(now, &mut self.session, file, position, &chunk)
                    {
                        self.app.chunk_errors.push(e);
                    }
                }
                FileEvent::RecvChunk {
                    file,
                    position,
                    data,
                } => {
                    if data.is_empty() {
                        self.app.recv_complete.push(file);
                        continue;
                    }
                    let buf = self.app.received.entry(file).or_default();
                    let end = position as usize + data.len();
                    if buf.len() < end {
                        buf.resize(end, 0);
                    }
                    buf[position as usize..end].copy_from_slice(&data);
                }
                FileEvent::FileRecv { file, .. } => {
                    self.app.offers.push(event.clone());
                    if self.app.auto_accept {
                        self.ft
                            .control(now, &mut self.session, file, FileControl::Resume)
                            .unwrap();
                    }
                }
                FileEvent::RecvControl { file, control } => self.app.controls.push((file, control)),
            }
        }
    }

    /// Send a file from memory and remember its content.
    pub fn send(&mut self, now: Timestamp, data: Vec<u8>, name: &[u8]) -> u32 {
        let file = self
            .ft
            .file_send(
                now,
                &mut self.session,
                rustox_file_transfer::FileKind::Data,
                data.len() as u64,
                [7; 32],
                name,
            )
            .unwrap();
        self.app.contents.insert(file, data);
        file
    }
}

/// Alice (a) and Bob (b).
pub struct Pair {
    pub a: Side,
    pub b: Side,
    pub now: Timestamp,
}

impl Default for Pair {
    fn default() -> Self {
        Self::new()
    }
}

impl Pair {
    pub fn new() -> Self {
        let mut b = Side::new();
        b.app.auto_accept = true;
        Pair {
            a: Side::new(),
            b,
            now: Timestamp::ZERO,
        }
    }

    /// Move everything each side sent to the other, which handles it at once.
    pub fn deliver(&mut self) {
        let now = self.now;
        move_packets(now, &mut self.a, &mut self.b);
        move_packets(now, &mut self.b, &mut self.a);
    }

    /// One round: each side gets `budget` bulk packets, polls, answers; then the pipes move.
    pub fn step(&mut self, budget: usize) {
        let now = self.now;
        for side in [&mut self.a, &mut self.b] {
            side.session.grant(budget);
            side.ft.poll_send(now, &mut side.session);
            side.handle_events(now);
        }
        self.deliver();
        self.now += std::time::Duration::from_millis(1);
    }

    /// Step until `done` holds or `max` steps pass; returns the steps taken.
    pub fn run_until(
        &mut self,
        budget: usize,
        max: usize,
        mut done: impl FnMut(&Pair) -> bool,
    ) -> usize {
        for i in 0..max {
            if done(self) {
                return i;
            }
            self.step(budget);
        }
        assert!(done(self), "condition not reached in {max} steps");
        max
    }
}

/// Everything `from` sent, handed to `to` in order (and acknowledged).
pub fn move_packets(now: Timestamp, from: &mut Side, to: &mut Side) {
    for (_, _, payload) in from.session.drain() {
        if let Err(e) = to.ft.handle_packet(now, &payload) {
            to.app.packet_errors.push(e);
        }
        to.handle_events(now);
    }
}
