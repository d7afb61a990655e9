//! The save file (docs/protocol.md §8): `Profile::parse` never panics, and whatever it accepts
//! writes back to bytes that parse and write identically.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::savedata::Profile;

fuzz_target!(|data: &[u8]| {
    if let Ok(profile) = Profile::parse(data) {
        let written = profile.to_bytes();
        let back = Profile::parse(&written).expect("what we write parses");
        assert_eq!(back.to_bytes(), written);
    }
});
