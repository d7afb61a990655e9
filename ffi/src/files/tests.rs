use std::collections::VecDeque;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex};

use super::bridge::*;
use super::*;
use crate::event::Event;

/// The node reads only whole chunks (or the file's tail), waits while the client has
/// not answered, and asks for chunks only once it has read, up to READ_AHEAD ahead.
#[test]
fn a_sent_file_is_asked_for_in_chunks_and_read_whole() {
    let size = 3 * CHUNK + 10;
    let buffer = Arc::new(Mutex::new(ChunkBuffer::new(size)));
    let mut reader = ChunkReader(buffer.clone());
    let mut out = Vec::new();
    buffer.lock().unwrap().request(0, 0, &mut out);
    assert!(out.is_empty(), "no request before the node reads");
    let mut chunk = vec![0u8; CHUNK as usize];
    let e = reader.read(&mut chunk).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
    buffer.lock().unwrap().request(0, 0, &mut out);
    let asked: Vec<(u64, u16)> = out
        .iter()
        .map(|e| match e {
            Event::FileChunkRequest {
                position, length, ..
            } => (*position, *length),
            _ => panic!("{e:?}"),
        })
        .collect();
    assert_eq!(
        asked,
        vec![(0, 1371), (1371, 1371), (2742, 1371), (4113, 10)]
    );
    {
        let mut b = buffer.lock().unwrap();
        b.bytes.extend(std::iter::repeat_n(7u8, 1371 * 3 + 10));
    }
    let mut total = 0;
    loop {
        match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => total += n,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(total as u64, size);
}

/// A seek before the transfer runs moves where the chunk requests start.
#[test]
fn a_seek_moves_the_requests() {
    let buffer = Arc::new(Mutex::new(ChunkBuffer::new(10 * CHUNK)));
    let mut reader = ChunkReader(buffer.clone());
    reader.seek(SeekFrom::Start(5 * CHUNK)).unwrap();
    let mut chunk = vec![0u8; CHUNK as usize];
    assert!(reader.read(&mut chunk).is_err());
    let mut out = Vec::new();
    buffer.lock().unwrap().request(0, 0, &mut out);
    assert!(matches!(out[0], Event::FileChunkRequest { position, .. } if position == 5 * CHUNK));
    assert_eq!(out.len(), 5);
    assert!(reader.seek(SeekFrom::Start(11 * CHUNK)).is_err());
}

/// A streamed file (unknown size) is asked for until its short last chunk arrives, and
/// read to that chunk's end.
#[test]
fn a_streamed_file_ends_with_its_short_chunk() {
    let buffer = Arc::new(Mutex::new(ChunkBuffer::new(UNKNOWN_FILE_SIZE)));
    let mut reader = ChunkReader(buffer.clone());
    let mut chunk = vec![0u8; CHUNK as usize];
    assert!(reader.read(&mut chunk).is_err());
    let mut out = Vec::new();
    buffer.lock().unwrap().request(0, 0, &mut out);
    assert_eq!(out.len() as u64, READ_AHEAD.div_ceil(CHUNK));
    {
        let mut b = buffer.lock().unwrap();
        b.bytes
            .extend(std::iter::repeat_n(1u8, CHUNK as usize + 10));
        b.ended = true;
    }
    assert_eq!(reader.read(&mut chunk).unwrap(), CHUNK as usize);
    assert_eq!(reader.read(&mut chunk).unwrap(), 10);
    assert_eq!(reader.read(&mut chunk).unwrap(), 0);
    out.clear();
    buffer.lock().unwrap().request(0, 0, &mut out);
    assert!(out.is_empty(), "no request after the last chunk");
}

/// Every write of the node becomes one chunk event at its position.
#[test]
fn received_writes_become_chunks_in_order() {
    let received = Arc::new(Mutex::new(VecDeque::new()));
    let mut sink = ChunkSink {
        friend_number: 3,
        file_number: 1 << 16,
        position: 0,
        received: received.clone(),
    };
    sink.write_all(b"hello").unwrap();
    sink.seek(SeekFrom::Start(100)).unwrap();
    sink.write_all(b"world").unwrap();
    let got: Vec<Event> = received.lock().unwrap().drain(..).collect();
    assert_eq!(
        got,
        vec![
            Event::FileRecvChunk {
                friend_number: 3,
                file_number: 1 << 16,
                position: 0,
                data: b"hello".to_vec()
            },
            Event::FileRecvChunk {
                friend_number: 3,
                file_number: 1 << 16,
                position: 100,
                data: b"world".to_vec()
            },
        ]
    );
}

/// A buffer the node has read from and the client filled as asked.
fn reading_buffer(size: u64) -> (Arc<Mutex<ChunkBuffer>>, ChunkReader) {
    let buffer = Arc::new(Mutex::new(ChunkBuffer::new(size)));
    let mut reader = ChunkReader(buffer.clone());
    let mut chunk = vec![0u8; CHUNK as usize];
    assert!(reader.read(&mut chunk).is_err(), "nothing given yet");
    (buffer, reader)
}

/// Answers every request the buffer raises now, as a client does from its callback, and
/// says after which chunks the node would have been woken.
fn answer_all(buffer: &Arc<Mutex<ChunkBuffer>>) -> Vec<usize> {
    let mut out = Vec::new();
    buffer.lock().unwrap().request(0, 0, &mut out);
    let mut woken = Vec::new();
    for (i, e) in out.iter().enumerate() {
        let Event::FileChunkRequest { length, .. } = e else {
            panic!("{e:?}")
        };
        let mut b = buffer.lock().unwrap();
        b.bytes
            .extend(std::iter::repeat_n(3u8, usize::from(*length)));
        if b.take_wake() {
            woken.push(i);
        }
    }
    woken
}

/// A starved node is woken once per batch of the client's chunks, not once per chunk:
/// each wake tops up the file layer for its whole budget.
#[test]
fn a_starved_node_is_woken_once_per_batch() {
    let (buffer, mut reader) = reading_buffer(100 * READ_AHEAD);
    let batch = WAKE_BATCH.div_ceil(CHUNK) as usize;
    // The read-ahead is asked for at once and answered in one callback round: the node
    // is woken once, when a batch is there, not for each of the ~190 chunks.
    assert_eq!(answer_all(&buffer), [batch - 1]);
    // The node takes everything and finds less than a chunk: the refill wakes it once.
    let mut chunk = vec![0u8; CHUNK as usize];
    while reader.read(&mut chunk).is_ok() {}
    assert!(buffer.lock().unwrap().starved);
    assert_eq!(answer_all(&buffer), [batch - 1]);
    assert!(!buffer.lock().unwrap().starved);
}

/// A client that answers over several iterations wakes the node at the next step with a
/// whole chunk; a client that gave all it was asked for, or the file's end, at once.
#[test]
fn the_step_the_last_answer_and_the_end_wake_a_starved_node() {
    let (buffer, _reader) = reading_buffer(2 * CHUNK + 10);
    let mut out = Vec::new();
    buffer.lock().unwrap().request(0, 0, &mut out);
    assert_eq!(out.len(), 3);
    let mut b = buffer.lock().unwrap();
    b.bytes.extend(std::iter::repeat_n(1u8, CHUNK as usize));
    assert!(!b.take_wake(), "one chunk of three, less than a batch");
    assert!(b.take_wake_at_step(), "the step hands over a whole chunk");
    assert!(!b.take_wake_at_step(), "once");
    // Asked for two chunks only (the third taken back, as a pause does): both given.
    b.starved = true;
    b.requested = 2 * CHUNK;
    b.bytes.extend(std::iter::repeat_n(1u8, CHUNK as usize));
    assert!(b.take_wake(), "every chunk asked for is there");
    b.starved = true;
    b.requested = b.size;
    b.bytes.extend(std::iter::repeat_n(1u8, 10));
    assert!(b.take_wake(), "the file's end");
}

/// `tox_iteration_interval` answers 0 for a file only when its read-ahead ran low or the
/// node waits for the client; a read-ahead taken from a little is topped up at the next
/// regular iteration.
#[test]
fn a_refill_is_urgent_only_below_half_the_read_ahead_or_when_starved() {
    let (buffer, mut reader) = reading_buffer(100 * READ_AHEAD);
    answer_all(&buffer);
    let mut chunk = vec![0u8; CHUNK as usize];
    let mut reads = 0;
    loop {
        let b = buffer.lock().unwrap();
        let ahead = b.requested - b.start;
        // Once the node has taken from it, the old rule (any room in the read-ahead)
        // answered 0 ms.
        assert_eq!(b.wants_chunks(), reads > 0);
        assert_eq!(
            b.refill_urgent(),
            ahead < REFILL_BELOW,
            "{ahead} bytes ahead"
        );
        if ahead < REFILL_BELOW {
            break;
        }
        drop(b);
        assert_eq!(reader.read(&mut chunk).unwrap(), CHUNK as usize);
        reads += 1;
    }
    assert!(reads > 90, "{reads}");
    // Topped up: not urgent; starved with requests still to ask for: urgent.
    answer_all(&buffer);
    let mut b = buffer.lock().unwrap();
    assert!(!b.refill_urgent());
    b.requested -= CHUNK;
    b.starved = true;
    assert!(b.refill_urgent());
}
