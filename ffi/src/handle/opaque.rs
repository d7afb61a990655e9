//! The type C's `Tox *` points to. C never sees inside it: the instance behind the pointer
//! is an [`Instance`](super::Instance), and only handle/mod.rs turns one into the other. Kept
//! apart so that the callback types can name `Tox` without depending on the instance, which
//! holds them.

/// One Tox instance (opaque to C).
pub struct Tox {
    _opaque: [u8; 0],
}
