//! The eight-lane `u32` vector the XSalsa20 keystream (`xsalsa20.rs`) runs on, and the switch
//! that tests its code without SIMD.
//!
//! By default it is `wide::u32x8`, whose backend `wide` picks from the build's target
//! features alone: one AVX2 register when the build targets AVX2, else two SSE2 (x86-64's
//! baseline) or NEON registers, wasm's `simd128`, or plain arrays on targets with none of
//! these. The arrays are what a phone or router without those features runs, yet a build on
//! x86-64 can never select them (SSE2 is part of its ABI). The `scalar-cipher` feature swaps
//! in [`ScalarU32x8`], the same operations on a `[u32; 8]` written here, so that CI runs the
//! keystream code through that path too, against libsodium and the RustCrypto crates
//! (`.ci/run`). It changes no output: only which code computes it.

#[cfg(not(feature = "scalar-cipher"))]
pub(super) use wide::u32x8 as U32x8;

#[cfg(feature = "scalar-cipher")]
pub(super) use scalar::ScalarU32x8 as U32x8;

/// Which vector code computes the keystream in this build, for benchmarks and test logs.
pub const CIPHER_LANES: &str = if cfg!(feature = "scalar-cipher") {
    "scalar ([u32; 8], the scalar-cipher feature)"
} else if cfg!(target_feature = "avx2") {
    "wide u32x8 on AVX2"
} else if cfg!(target_feature = "sse2") {
    "wide u32x8 on 2 x SSE2"
} else if cfg!(target_feature = "simd128") {
    "wide u32x8 on 2 x wasm simd128"
} else if cfg!(all(target_feature = "neon", target_arch = "aarch64")) {
    "wide u32x8 on 2 x NEON"
} else {
    "wide u32x8 on arrays"
};

#[cfg(feature = "scalar-cipher")]
mod scalar {
    use std::ops::{Add, BitOr, BitXor, BitXorAssign, Shl, Shr};

    /// Eight `u32` lanes in an array, with the operations `xsalsa20.rs` uses and wide's
    /// semantics: wrapping addition, shifts by the same count in every lane.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(in crate::crypto) struct ScalarU32x8([u32; 8]);

    impl ScalarU32x8 {
        /// The lanes as given.
        pub(in crate::crypto) fn new(lanes: [u32; 8]) -> Self {
            ScalarU32x8(lanes)
        }

        /// One value in every lane.
        pub(in crate::crypto) fn splat(value: u32) -> Self {
            ScalarU32x8([value; 8])
        }

        /// The lanes, first lane first.
        pub(in crate::crypto) fn to_array(self) -> [u32; 8] {
            self.0
        }

        fn zip(self, other: Self, f: impl Fn(u32, u32) -> u32) -> Self {
            ScalarU32x8(std::array::from_fn(|i| f(self.0[i], other.0[i])))
        }
    }

    impl Add for ScalarU32x8 {
        type Output = Self;
        fn add(self, other: Self) -> Self {
            self.zip(other, u32::wrapping_add)
        }
    }

    impl BitXor for ScalarU32x8 {
        type Output = Self;
        fn bitxor(self, other: Self) -> Self {
            self.zip(other, |a, b| a ^ b)
        }
    }

    impl BitXorAssign for ScalarU32x8 {
        fn bitxor_assign(&mut self, other: Self) {
            *self = *self ^ other;
        }
    }

    impl BitOr for ScalarU32x8 {
        type Output = Self;
        fn bitor(self, other: Self) -> Self {
            self.zip(other, |a, b| a | b)
        }
    }

    impl Shl<u32> for ScalarU32x8 {
        type Output = Self;
        fn shl(self, count: u32) -> Self {
            ScalarU32x8(self.0.map(|lane| lane << count))
        }
    }

    impl Shr<u32> for ScalarU32x8 {
        type Output = Self;
        fn shr(self, count: u32) -> Self {
            ScalarU32x8(self.0.map(|lane| lane >> count))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The operations the keystream needs, lane by lane, on values that carry and wrap:
    /// whichever type this build uses must agree with plain `u32` arithmetic.
    #[test]
    fn lanes_compute_as_eight_u32s() {
        let a: [u32; 8] =
            std::array::from_fn(|i| 0xfff0_0000u32.wrapping_mul(i as u32 + 1) ^ 0x1234_5678);
        let b: [u32; 8] = std::array::from_fn(|i| 0x8000_0001u32.rotate_left(i as u32 * 3));
        let (va, vb) = (U32x8::new(a), U32x8::new(b));
        let each = |f: fn(u32, u32) -> u32| -> [u32; 8] { std::array::from_fn(|i| f(a[i], b[i])) };
        assert_eq!((va + vb).to_array(), each(u32::wrapping_add));
        assert_eq!((va ^ vb).to_array(), each(|x, y| x ^ y));
        assert_eq!((va | vb).to_array(), each(|x, y| x | y));
        assert_eq!((va << 7u32).to_array(), a.map(|x| x << 7));
        assert_eq!((va >> 25u32).to_array(), a.map(|x| x >> 25));
        let mut vc = va;
        vc ^= vb;
        assert_eq!(vc.to_array(), each(|x, y| x ^ y));
        assert_eq!(U32x8::splat(9).to_array(), [9; 8]);
    }

    #[cfg(feature = "scalar-cipher")]
    #[test]
    fn the_scalar_feature_selects_the_array_lanes() {
        assert!(CIPHER_LANES.starts_with("scalar"));
        assert_eq!(
            std::any::type_name::<U32x8>(),
            std::any::type_name::<scalar::ScalarU32x8>()
        );
    }
}
