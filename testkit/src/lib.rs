//! What the crates' tests share, in one place: compiling a C program against a pkg-config
//! library ([`c`]), starting c-toxcore's `tox-bootstrapd` ([`bootstrapd`]), the rule that a
//! missing peer skips a test except under CI ([`ci`]), free loopback ports ([`net`]) and
//! scratch directories ([`temp`]).
//!
//! It depends on no rustox crate, so every crate's tests (and the auto_tests rig) can use it
//! without a dependency cycle. The C programs' shared helpers are in `c/testkit.h`
//! ([`c::HEADER_DIR`], [`c::HEADER`]).

pub mod bootstrapd;
pub mod c;
pub mod ci;
pub mod net;
pub mod temp;
