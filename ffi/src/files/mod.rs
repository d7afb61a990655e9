//! tox.h's file transfers over the node's file layer (docs/protocol.md §3.2).
//!
//! tox.h moves file bytes through the client: a sender is asked for each chunk
//! (`tox_file_chunk_request_cb`) and answers with `tox_file_send_chunk`; a receiver gets
//! each chunk in `tox_file_recv_chunk_cb`. The node's file layer instead reads a source and
//! writes a sink when the session's send budget allows. The bridge between them:
//! * a file we send reads from a [`ChunkBuffer`] that the client fills; the bridge asks
//!   the client for chunks up to [`READ_AHEAD`] bytes ahead of what the node has taken, and
//!   a node that finds less than a chunk waits (`WouldBlock`, the file layer holds the
//!   file) until the client's chunk arrives;
//! * a file we receive is written into a `ChunkSink` (bridge.rs) that turns each write into a
//!   `tox_file_recv_chunk_cb` event, handed to the client after the step that wrote it.
//!
//! As in c-toxcore, an incoming file waits paused until the client resumes it
//! (`tox_file_control` RESUME, which is the node's accept), a seek is only allowed before
//! that, the last chunk request has length 0 (the file is sent) and the last received chunk
//! has length 0 (the file is complete).

use std::sync::{Arc, Mutex};

use rustox_core::node::{FriendNumber, NodeError, PreparedFile};
use rustox_file_transfer::number::UNKNOWN_FILE_SIZE;
use rustox_file_transfer::stream::StreamError;
use rustox_file_transfer::{FileControlError, FileKind, FileSendError};

use crate::guard;
use crate::handle::{tox_ref, Tox};
use crate::types::{
    Tox_Err_File_Control, Tox_Err_File_Get, Tox_Err_File_Seek, Tox_Err_File_Send,
    Tox_Err_File_Send_Chunk, Tox_File_Control,
};

pub(crate) mod bridge;
#[cfg(test)]
mod tests;

pub use bridge::{ChunkBuffer, FileBridge, READ_AHEAD};
use bridge::{ChunkReader, ChunkSink, CHUNK, FILE_ID_LENGTH, MAX_FILENAME_LENGTH};

/// Offers a file to a friend (`tox_file_send`): returns its file number, or `UINT32_MAX`.
/// A NULL `file_id` gets a random one, as in c-toxcore; for an avatar the client passes
/// the image's hash (`tox_hash`).
#[no_mangle]
pub unsafe extern "C" fn tox_file_send(
    tox: *mut Tox,
    friend_number: u32,
    kind: u32,
    file_size: u64,
    file_id: *const u8,
    filename: *const u8,
    filename_length: usize,
    error: *mut Tox_Err_File_Send,
) -> u32 {
    guard::call(u32::MAX, || {
        // SAFETY: tox.h's contract for `tox`.
        let Some(tox) = (unsafe { tox_ref(tox) }) else {
            return guard::fail(error, Tox_Err_File_Send::NULL, u32::MAX);
        };
        // SAFETY: `filename_length` bytes at `filename`, per tox.h.
        let Some(name) = (unsafe { guard::bytes(filename, filename_length) }) else {
            return guard::fail(error, Tox_Err_File_Send::NULL, u32::MAX);
        };
        if name.len() > MAX_FILENAME_LENGTH {
            return guard::fail(error, Tox_Err_File_Send::NAME_TOO_LONG, u32::MAX);
        }
        // Kinds other than data and avatar pass through as c-toxcore passes them.
        let kind = FileKind::from_u32(kind);
        // SAFETY: a non-NULL file id is TOX_FILE_ID_LENGTH bytes, per tox.h.
        let id = unsafe { guard::array::<FILE_ID_LENGTH>(file_id) }.unwrap_or_else(rand::random);
        let mut state = tox.lock();
        let state = &mut *state;
        let buffer = Arc::new(Mutex::new(ChunkBuffer::new(file_size)));
        let file = PreparedFile {
            source: Box::new(ChunkReader(buffer.clone())),
            size: file_size,
            sha256: id,
        };
        let now = state.now();
        match state
            .node
            .send_file_kind(now, FriendNumber(friend_number), kind, file, name)
        {
            Ok(number) => {
                state
                    .files
                    .outgoing
                    .insert((friend_number, number), (buffer, id));
                state.flush();
                guard::fail(error, Tox_Err_File_Send::OK, number)
            }
            Err(e) => guard::fail(error, send_error(&e), u32::MAX),
        }
    })
}

fn send_error(e: &NodeError) -> Tox_Err_File_Send {
    match e {
        NodeError::UnknownFriend => Tox_Err_File_Send::FRIEND_NOT_FOUND,
        NodeError::Stream(StreamError::Send(FileSendError::NameTooLong)) => {
            Tox_Err_File_Send::NAME_TOO_LONG
        }
        NodeError::Stream(StreamError::Send(FileSendError::TooMany)) => Tox_Err_File_Send::TOO_MANY,
        _ => Tox_Err_File_Send::FRIEND_NOT_CONNECTED,
    }
}

/// Sends a chunk the client was asked for (`tox_file_send_chunk`). c-toxcore's rules: the
/// chunk starts where the last one ended and was requested, is 1371 bytes unless it is the
/// file's last, and the transfer is running.
#[no_mangle]
pub unsafe extern "C" fn tox_file_send_chunk(
    tox: *mut Tox,
    friend_number: u32,
    file_number: u32,
    position: u64,
    data: *const u8,
    length: usize,
    error: *mut Tox_Err_File_Send_Chunk,
) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`.
        let Some(tox) = (unsafe { tox_ref(tox) }) else {
            return guard::fail(error, Tox_Err_File_Send_Chunk::NULL, false);
        };
        // SAFETY: `length` bytes at `data`, per tox.h.
        let Some(data) = (unsafe { guard::bytes(data, length) }) else {
            return guard::fail(error, Tox_Err_File_Send_Chunk::NULL, false);
        };
        let mut state = tox.lock();
        let state = &mut *state;
        let friend = FriendNumber(friend_number);
        if state.node.friend_public_key(friend).is_none() {
            return guard::fail(error, Tox_Err_File_Send_Chunk::FRIEND_NOT_FOUND, false);
        }
        if !state.node.is_friend_online(friend) {
            return guard::fail(error, Tox_Err_File_Send_Chunk::FRIEND_NOT_CONNECTED, false);
        }
        let Some((buffer, _)) = state.files.outgoing.get(&(friend_number, file_number)) else {
            return guard::fail(error, Tox_Err_File_Send_Chunk::NOT_FOUND, false);
        };
        let wake = {
            let mut b = buffer.lock().unwrap_or_else(|e| e.into_inner());
            if !b.reading {
                return guard::fail(error, Tox_Err_File_Send_Chunk::NOT_TRANSFERRING, false);
            }
            let length = data.len() as u64;
            let streamed = b.size == UNKNOWN_FILE_SIZE;
            let fits = b
                .size
                .checked_sub(position)
                .is_some_and(|left| length <= left);
            let last = streamed || position + length == b.size;
            if length > CHUNK || !fits || (length != CHUNK && !last) || b.ended {
                return guard::fail(error, Tox_Err_File_Send_Chunk::INVALID_LENGTH, false);
            }
            if position != b.end() || (position >= b.requested && length > 0) {
                return guard::fail(error, Tox_Err_File_Send_Chunk::WRONG_POSITION, false);
            }
            b.bytes.extend(data);
            // A streamed file ends with its first chunk shorter than 1371 bytes.
            b.ended = streamed && length < CHUNK;
            b.take_wake()
        };
        if wake {
            let now = state.now();
            state.node.file_source_ready(now, friend, file_number);
            state.flush();
        }
        guard::fail(error, Tox_Err_File_Send_Chunk::OK, true)
    })
}

/// Resumes (or accepts), pauses or cancels a transfer (`tox_file_control`). RESUME of a
/// file a friend offers accepts it, from where `tox_file_seek` said.
#[no_mangle]
pub unsafe extern "C" fn tox_file_control(
    tox: *mut Tox,
    friend_number: u32,
    file_number: u32,
    control: crate::types::Tox_File_Control_Value,
    error: *mut Tox_Err_File_Control,
) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`.
        let Some(tox) = (unsafe { tox_ref(tox) }) else {
            // tox.h has no NULL code here: a NULL instance has no such friend.
            return guard::fail(error, Tox_Err_File_Control::FRIEND_NOT_FOUND, false);
        };
        let Some(control) = Tox_File_Control::from_raw(control) else {
            return guard::fail(error, Tox_Err_File_Control::NOT_FOUND, false);
        };
        let mut state = tox.lock();
        let state = &mut *state;
        let friend = FriendNumber(friend_number);
        let now = state.now();
        let key = (friend_number, file_number);
        let result = match control {
            Tox_File_Control::RESUME => match state.files.incoming.get(&key).copied() {
                Some(offer) if !offer.accepted => {
                    let sink = ChunkSink {
                        friend_number,
                        file_number,
                        position: offer.seek,
                        received: state.files.received.clone(),
                    };
                    let accepted = if offer.seek > 0 {
                        state.node.accept_file_from(
                            now,
                            friend,
                            file_number,
                            sink,
                            offer.seek,
                            false,
                        )
                    } else {
                        state
                            .node
                            .accept_file(now, friend, file_number, Box::new(sink), None)
                    };
                    if accepted.is_ok() {
                        if let Some(i) = state.files.incoming.get_mut(&key) {
                            i.accepted = true;
                        }
                    }
                    accepted
                }
                _ => state.node.resume_file(now, friend, file_number),
            },
            Tox_File_Control::PAUSE => state.node.pause_file(now, friend, file_number),
            Tox_File_Control::CANCEL => {
                let cancelled = state.node.cancel_file(now, friend, file_number);
                if cancelled.is_ok() {
                    state.files.finished(friend_number, file_number);
                }
                cancelled
            }
        };
        state.flush();
        match result {
            Ok(()) => guard::fail(error, Tox_Err_File_Control::OK, true),
            Err(e) => guard::fail(error, control_error(&e), false),
        }
    })
}

fn control_error(e: &NodeError) -> Tox_Err_File_Control {
    match e {
        NodeError::UnknownFriend => Tox_Err_File_Control::FRIEND_NOT_FOUND,
        NodeError::FriendOffline => Tox_Err_File_Control::FRIEND_NOT_CONNECTED,
        NodeError::FileControl(c) | NodeError::Stream(StreamError::Control(c)) => match c {
            FileControlError::NotFound => Tox_Err_File_Control::NOT_FOUND,
            FileControlError::NotPaused => Tox_Err_File_Control::NOT_PAUSED,
            FileControlError::Denied => Tox_Err_File_Control::DENIED,
            FileControlError::AlreadyPaused => Tox_Err_File_Control::ALREADY_PAUSED,
            FileControlError::SendQ => Tox_Err_File_Control::SENDQ,
        },
        NodeError::Send(_) => Tox_Err_File_Control::SENDQ,
        _ => Tox_Err_File_Control::NOT_FOUND,
    }
}

/// Asks the sender of an offered file to start at `position` (`tox_file_seek`): only
/// before the file is accepted, and only inside it.
#[no_mangle]
pub unsafe extern "C" fn tox_file_seek(
    tox: *mut Tox,
    friend_number: u32,
    file_number: u32,
    position: u64,
    error: *mut Tox_Err_File_Seek,
) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`.
        let Some(tox) = (unsafe { tox_ref(tox) }) else {
            return guard::fail(error, Tox_Err_File_Seek::FRIEND_NOT_FOUND, false);
        };
        let mut state = tox.lock();
        let friend = FriendNumber(friend_number);
        if state.node.friend_public_key(friend).is_none() {
            return guard::fail(error, Tox_Err_File_Seek::FRIEND_NOT_FOUND, false);
        }
        if !state.node.is_friend_online(friend) {
            return guard::fail(error, Tox_Err_File_Seek::FRIEND_NOT_CONNECTED, false);
        }
        let Some(offer) = state.files.incoming.get_mut(&(friend_number, file_number)) else {
            return guard::fail(error, Tox_Err_File_Seek::NOT_FOUND, false);
        };
        if offer.accepted {
            return guard::fail(error, Tox_Err_File_Seek::DENIED, false);
        }
        if position >= offer.size {
            return guard::fail(error, Tox_Err_File_Seek::INVALID_POSITION, false);
        }
        offer.seek = position;
        guard::fail(error, Tox_Err_File_Seek::OK, true)
    })
}

/// The file id of a transfer (`tox_file_get_file_id`): 32 bytes into `file_id`.
#[no_mangle]
pub unsafe extern "C" fn tox_file_get_file_id(
    tox: *const Tox,
    friend_number: u32,
    file_number: u32,
    file_id: *mut u8,
    error: *mut Tox_Err_File_Get,
) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`.
        let Some(tox) = (unsafe { tox_ref(tox) }) else {
            return guard::fail(error, Tox_Err_File_Get::NULL, false);
        };
        if file_id.is_null() {
            return guard::fail(error, Tox_Err_File_Get::NULL, false);
        }
        let state = tox.lock();
        if state
            .node
            .friend_public_key(FriendNumber(friend_number))
            .is_none()
        {
            return guard::fail(error, Tox_Err_File_Get::FRIEND_NOT_FOUND, false);
        }
        let Some(id) = state.files.file_id(friend_number, file_number) else {
            return guard::fail(error, Tox_Err_File_Get::NOT_FOUND, false);
        };
        // SAFETY: tox.h: `file_id` has room for TOX_FILE_ID_LENGTH bytes; checked non-NULL.
        unsafe { guard::copy_out(&id, file_id) };
        guard::fail(error, Tox_Err_File_Get::OK, true)
    })
}
