//! The save file (docs/protocol.md §8): `Profile::parse` never panics, and whatever it accepts
//! writes back to bytes that parse and write identically. The same input is also read as a
//! CONFERENCES section's body, whose every accepted form writes back to the very same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::savedata::{parse_conferences, write_conferences, Profile};

fuzz_target!(|data: &[u8]| {
    if let Ok(profile) = Profile::parse(data) {
        let written = profile.to_bytes();
        let back = Profile::parse(&written).expect("what we write parses");
        assert_eq!(back.to_bytes(), written);
    }
    if let Ok(conferences) = parse_conferences(data) {
        let mut written = Vec::new();
        write_conferences(&conferences, &mut written);
        assert_eq!(written, data);
    }
});
