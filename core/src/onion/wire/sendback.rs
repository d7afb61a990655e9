//! Sendbacks: how a response finds its way back along an onion path (docs/protocol.md §6.2;
//! c-toxcore 0.2.18 `onion_send_1`, `handle_send_1`, `handle_send_2`, `handle_recv_*`).
//!
//! Each relay appends one to the request it forwards; only that relay can open it, with the
//! symmetric key it replaces every two hours.
//!
//! | length | content                                                                  |
//! |--------|--------------------------------------------------------------------------|
//! | 24     | random nonce                                                             |
//! | 16 + n | `E(relay's symmetric key, nonce)[ previous hop IP_Port 19 | inner sendback ]` |
//!
//! The inner sendback is the one the previous relay added: none at A, A's 59 bytes at B,
//! B's 118 at C. So the sizes are [`RETURN_1`], [`RETURN_2`], [`RETURN_3`] = 59, 118, 177.

use rustox_net_crypto::crypto::{Nonce, SymmetricKey, MAC_SIZE, NONCE_SIZE};

use rustox_net_crypto::wire::Reader;

use super::ip_port::{IpPort, IpPortError, SIZE_IPPORT};
use super::{RETURN_1, RETURN_2, RETURN_3};

/// Why a sendback did not open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SendbackError {
    /// Not one of the three sendback sizes, or an inner sendback of the wrong size.
    #[error("bad sendback length {0}")]
    BadLength(usize),
    /// Not sealed under our current key: forged, corrupted, or from before a key refresh.
    #[error("sendback does not open")]
    Decrypt,
    /// The address inside is not one this hop may send to.
    #[error(transparent)]
    Address(#[from] IpPortError),
}

/// Which of the three sendbacks: the hop that made it, counted from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReturnLevel {
    /// Made by A: holds the client's address. 59 bytes.
    One,
    /// Made by B: holds A's address and A's sendback. 118 bytes.
    Two,
    /// Made by C: holds B's address and B's sendback. 177 bytes.
    Three,
}

impl ReturnLevel {
    /// Its size on the wire.
    pub const fn size(self) -> usize {
        match self {
            ReturnLevel::One => RETURN_1,
            ReturnLevel::Two => RETURN_2,
            ReturnLevel::Three => RETURN_3,
        }
    }

    /// Size of the sendback it wraps.
    pub const fn inner_size(self) -> usize {
        // Every level is at least RETURN_1 = NONCE_SIZE + SIZE_IPPORT + MAC_SIZE: never clamps.
        self.size()
            .saturating_sub(NONCE_SIZE + SIZE_IPPORT + MAC_SIZE)
    }
}

/// Appends a sendback of level `level` to `out`: `prev` is where the response goes next,
/// `inner` the sendback the previous hop added (`level.inner_size()` bytes).
pub fn seal_into(
    out: &mut Vec<u8>,
    level: ReturnLevel,
    key: &SymmetricKey,
    nonce: &Nonce,
    prev: &IpPort,
    inner: &[u8],
) -> Result<(), SendbackError> {
    if inner.len() != level.inner_size() {
        return Err(SendbackError::BadLength(inner.len()));
    }
    out.reserve(level.size());
    out.extend_from_slice(&nonce.0);
    let mac_at = out.len();
    out.extend_from_slice(&[0u8; MAC_SIZE]);
    out.extend_from_slice(&prev.encode());
    out.extend_from_slice(inner);
    super::seal_after(out, mac_at, |plain| key.encrypt_in_place(nonce, plain));
    Ok(())
}

/// A sendback opened by the relay that made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenedSendback {
    /// Where the response goes next (not checked for family: see [`open`]).
    pub prev: IpPort,
    /// The previous hop's sendback, to put in front of the response.
    pub inner: Vec<u8>,
}

/// Opens a sendback of `level` (its exact size is checked first). The family of the address
/// inside is not checked here: the relay checks it as 0.2.18 does (strictly except at A).
pub fn open(
    level: ReturnLevel,
    key: &SymmetricKey,
    sendback: &[u8],
) -> Result<OpenedSendback, SendbackError> {
    if sendback.len() != level.size() {
        return Err(SendbackError::BadLength(sendback.len()));
    }
    let mut r = Reader::new(sendback);
    let nonce = Nonce(
        r.array()
            .map_err(|_| SendbackError::BadLength(sendback.len()))?,
    );
    let plain = key
        .decrypt(&nonce, r.rest())
        .map_err(|_| SendbackError::Decrypt)?;
    let prev = IpPort::decode(&plain)?;
    Ok(OpenedSendback {
        prev,
        inner: plain.get(SIZE_IPPORT..).unwrap_or_default().to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key(b: u8) -> SymmetricKey {
        SymmetricKey::from_bytes([b; 32])
    }

    #[test]
    fn levels_nest() {
        let k = key(1);
        let a: IpPort = IpPort::Udp("1.2.3.4:5".parse().unwrap());
        let mut one = Vec::new();
        seal_into(&mut one, ReturnLevel::One, &k, &Nonce([1; 24]), &a, &[]).unwrap();
        assert_eq!(one.len(), 59);
        let mut two = Vec::new();
        seal_into(&mut two, ReturnLevel::Two, &k, &Nonce([2; 24]), &a, &one).unwrap();
        assert_eq!(two.len(), 118);
        let mut three = Vec::new();
        seal_into(
            &mut three,
            ReturnLevel::Three,
            &k,
            &Nonce([3; 24]),
            &a,
            &two,
        )
        .unwrap();
        assert_eq!(three.len(), 177);
        let o = open(ReturnLevel::Three, &k, &three).unwrap();
        assert_eq!(o.prev, a);
        assert_eq!(o.inner, two);
        assert_eq!(open(ReturnLevel::One, &k, &one).unwrap().inner, b"");
        assert_eq!(
            open(ReturnLevel::Three, &key(2), &three),
            Err(SendbackError::Decrypt)
        );
        assert_eq!(
            open(ReturnLevel::Two, &k, &three),
            Err(SendbackError::BadLength(177))
        );
        assert_eq!(
            seal_into(
                &mut Vec::new(),
                ReturnLevel::Two,
                &k,
                &Nonce([0; 24]),
                &a,
                &[0; 58]
            ),
            Err(SendbackError::BadLength(58))
        );
    }

    proptest! {
        #[test]
        fn open_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            for level in [ReturnLevel::One, ReturnLevel::Two, ReturnLevel::Three] {
                let _ = open(level, &key(3), &bytes);
            }
        }
    }
}
