//! What `tox_friend_add` checks before it looks at the friend list (c-toxcore 0.2.18
//! `m_addfriend` in `Messenger.c`, docs/protocol.md §6.5): the message length, the Tox ID's
//! key and checksum, an empty message, our own ID.
// Tox IDs come from users and the C ABI as text or bytes: no indexing, slicing or
// arithmetic that could panic or wrap.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use rustox_net_crypto::crypto::{PublicKey, PUBLIC_KEY_SIZE};

use super::request::MAX_SENT_MESSAGE_LEN;
use super::tox_id::{ToxId, TOX_ID_SIZE};

/// Why `tox_friend_add` refuses (c-toxcore `FAERR_*`, mapped onto `TOX_ERR_FRIEND_ADD` by
/// the C ABI). [`validate_friend_add`] decides the ones that need no friend list; the Node
/// decides `AlreadySent` and `SetNewNospam` (c-toxcore: a known key with a different nospam
/// updates the stored nospam and still reports this error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FriendAddError {
    /// `FAERR_TOOLONG`: the message is longer than [`MAX_SENT_MESSAGE_LEN`].
    #[error("friend request message too long: {0} bytes")]
    TooLong(usize),
    /// `FAERR_NOMESSAGE`: the message is empty.
    #[error("friend request message is empty")]
    NoMessage,
    /// `FAERR_OWNKEY`: the ID is our own.
    #[error("that is our own Tox ID")]
    OwnKey,
    /// `FAERR_ALREADYSENT`: already a friend, or a request with this nospam is pending.
    #[error("friend request already sent, or already a friend")]
    AlreadySent,
    /// `FAERR_BADCHECKSUM`: bad checksum, or a public key with its top bit set.
    #[error("bad Tox ID checksum or invalid public key")]
    BadChecksum,
    /// `FAERR_SETNEWNOSPAM`: a pending request's nospam was replaced.
    #[error("pending friend request updated with a new nospam")]
    SetNewNospam,
}

/// The checks `m_addfriend` makes before it looks at the friend list, in its order: message
/// length, key validity (`public_key_valid`, reported as a bad checksum), checksum, empty
/// message, own key. The length limit is ours (921, docs/protocol.md §6.5), not 0.2.18's 1016.
pub fn validate_friend_add(
    id: &[u8; TOX_ID_SIZE],
    message: &[u8],
    own_pk: &PublicKey,
) -> Result<ToxId, FriendAddError> {
    if message.len() > MAX_SENT_MESSAGE_LEN {
        return Err(FriendAddError::TooLong(message.len()));
    }
    let pk = PublicKey(id[..PUBLIC_KEY_SIZE].try_into().expect("32 bytes"));
    if !pk.is_valid() {
        return Err(FriendAddError::BadChecksum);
    }
    let tox_id = ToxId::from_bytes(id).map_err(|_| FriendAddError::BadChecksum)?;
    if message.is_empty() {
        return Err(FriendAddError::NoMessage);
    }
    if tox_id.pk == *own_pk {
        return Err(FriendAddError::OwnKey);
    }
    Ok(tox_id)
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use crate::friend::tox_id::NoSpam;

    #[test]
    fn friend_add_checks_in_messenger_order() {
        let own = PublicKey([1; 32]);
        let id = ToxId::new(PublicKey([2; 32]), NoSpam([9; 4])).to_bytes();
        assert!(validate_friend_add(&id, b"hi", &own).is_ok());
        assert_eq!(
            validate_friend_add(&id, &[b'x'; 922], &own),
            Err(FriendAddError::TooLong(922))
        );
        assert!(validate_friend_add(&id, &[b'x'; 921], &own).is_ok());
        assert_eq!(
            validate_friend_add(&id, b"", &own),
            Err(FriendAddError::NoMessage)
        );
        let mut bad = id;
        bad[36] ^= 1;
        assert_eq!(
            validate_friend_add(&bad, b"", &own),
            Err(FriendAddError::BadChecksum)
        );
        let mut high = [2u8; 32];
        high[31] = 0x80;
        let invalid = ToxId::new(PublicKey(high), NoSpam([9; 4])).to_bytes();
        assert_eq!(
            validate_friend_add(&invalid, b"hi", &own),
            Err(FriendAddError::BadChecksum)
        );
        let mine = ToxId::new(own, NoSpam([9; 4])).to_bytes();
        assert_eq!(
            validate_friend_add(&mine, b"hi", &own),
            Err(FriendAddError::OwnKey)
        );
    }
}
