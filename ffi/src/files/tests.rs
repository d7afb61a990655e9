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
