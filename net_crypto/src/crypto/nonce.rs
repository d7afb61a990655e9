//! 24-byte nonces with Tox's big-endian increment (docs/protocol.md §1, `increment_nonce`).

use super::CryptoRng;

/// Size of an XSalsa20 nonce.
pub const NONCE_SIZE: usize = 24;

/// A 24-byte nonce, treated by Tox as one big-endian 192-bit number.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Nonce(pub [u8; NONCE_SIZE]);

impl Nonce {
    /// A random nonce (`random_nonce`).
    pub fn random(rng: &mut dyn CryptoRng) -> Self {
        let mut n = [0u8; NONCE_SIZE];
        rng.fill_bytes(&mut n);
        Nonce(n)
    }

    /// Reads a nonce from the first 24 bytes of `bytes`, if there are that many.
    pub fn from_slice(bytes: &[u8]) -> Option<Self> {
        bytes
            .get(..NONCE_SIZE)
            .map(|b| Nonce(b.try_into().expect("24-byte slice")))
    }

    /// Adds one, carrying from byte 23 towards byte 0 and wrapping at 2^192.
    pub fn increment(&mut self) {
        self.add(1);
    }

    /// Adds a 32-bit number (`increment_nonce_number`), carrying through all 24 bytes.
    pub fn add(&mut self, x: u32) {
        let mut carry = u64::from(x);
        for byte in self.0.iter_mut().rev() {
            if carry == 0 {
                break;
            }
            let sum = u64::from(*byte) + (carry & 0xff);
            *byte = sum as u8;
            carry = (carry >> 8) + (sum >> 8);
        }
    }

    /// The last two bytes, big-endian: what a data packet carries in clear (docs/protocol.md §2.4).
    pub fn low_u16(&self) -> u16 {
        u16::from_be_bytes([self.0[22], self.0[23]])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn increment_carries_big_endian() {
        let mut n = Nonce([0; 24]);
        n.0[23] = 0xff;
        n.0[22] = 0xff;
        n.increment();
        assert_eq!(&n.0[20..], &[0, 1, 0, 0]);
    }

    #[test]
    fn increment_wraps_at_2_pow_192() {
        let mut n = Nonce([0xff; 24]);
        n.increment();
        assert_eq!(n, Nonce([0; 24]));
    }

    #[test]
    fn add_matches_repeated_increment() {
        let mut a = Nonce([0; 24]);
        a.0[23] = 0xfe;
        a.0[21] = 0xff;
        let mut b = a;
        a.add(70_000);
        for _ in 0..70_000 {
            b.increment();
        }
        assert_eq!(a, b);
        let mut c = Nonce([0xff; 24]);
        c.add(u32::MAX);
        let mut d = Nonce([0; 24]);
        d.add(u32::MAX - 1);
        assert_eq!(c, d);
    }
}
