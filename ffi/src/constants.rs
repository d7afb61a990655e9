//! tox.h's version and numeric constants as functions, and `tox_hash`.
//!
//! tox.h says the `#define`d values "are not part of the ABI" and asks clients to prefer the
//! functions; both must still agree with c-toxcore 0.2.18, whose headers a client was built
//! against. Each value below names the tox.h line it copies.

use sha2::{Digest, Sha256};

use crate::guard;

/// `TOX_VERSION_MAJOR` (tox.h): this library implements c-toxcore 0.2.18's API.
pub const VERSION_MAJOR: u32 = 0;
/// `TOX_VERSION_MINOR` (tox.h).
pub const VERSION_MINOR: u32 = 2;
/// `TOX_VERSION_PATCH` (tox.h).
pub const VERSION_PATCH: u32 = 18;

/// `TOX_PUBLIC_KEY_SIZE` (tox.h): a Curve25519 public key.
pub const PUBLIC_KEY_SIZE: u32 = 32;
/// `TOX_SECRET_KEY_SIZE` (tox.h): a Curve25519 secret key.
pub const SECRET_KEY_SIZE: u32 = 32;
/// `TOX_CONFERENCE_UID_SIZE` (tox.h).
pub const CONFERENCE_UID_SIZE: u32 = 32;
/// `TOX_CONFERENCE_ID_SIZE` (tox.h).
pub const CONFERENCE_ID_SIZE: u32 = 32;
/// `TOX_NOSPAM_SIZE` (tox.h: `sizeof(uint32_t)`).
pub const NOSPAM_SIZE: u32 = 4;
/// `TOX_ADDRESS_SIZE` (tox.h: public key, nospam, then a `uint16_t` checksum).
pub const ADDRESS_SIZE: u32 = PUBLIC_KEY_SIZE + NOSPAM_SIZE + 2;
/// `TOX_MAX_NAME_LENGTH` (tox.h).
pub const MAX_NAME_LENGTH: u32 = 128;
/// `TOX_MAX_STATUS_MESSAGE_LENGTH` (tox.h).
pub const MAX_STATUS_MESSAGE_LENGTH: u32 = 1007;
/// `TOX_MAX_FRIEND_REQUEST_LENGTH` (tox.h of 0.2.18).
pub const MAX_FRIEND_REQUEST_LENGTH: u32 = 1016;
/// `TOX_MAX_MESSAGE_LENGTH` (tox.h): a custom packet's room less the message packet's id.
pub const MAX_MESSAGE_LENGTH: u32 = 1372;
/// `TOX_MAX_CUSTOM_PACKET_SIZE` (tox.h): a whole lossless/lossy packet, id byte included.
pub const MAX_CUSTOM_PACKET_SIZE: u32 = 1373;
/// `TOX_HASH_LENGTH` (tox.h): a SHA-256 digest.
pub const HASH_LENGTH: u32 = 32;
/// `TOX_FILE_ID_LENGTH` (tox.h).
pub const FILE_ID_LENGTH: u32 = 32;
/// `TOX_MAX_FILENAME_LENGTH` (tox.h).
pub const MAX_FILENAME_LENGTH: u32 = 255;
/// `TOX_MAX_HOSTNAME_LENGTH` (tox.h).
pub const MAX_HOSTNAME_LENGTH: u32 = 255;

/// tox.h's `TOX_VERSION_IS_API_COMPATIBLE(MAJOR, MINOR, PATCH)` for a library of version
/// `lib` (major, minor, patch): from 1.0.0 on, the same major and no older minor/patch;
/// in 0.x.y the minor acts as the major (same minor, patch not newer than the library's);
/// 0.0.x only matches itself.
pub const fn api_compatible(lib: (u32, u32, u32), major: u32, minor: u32, patch: u32) -> bool {
    let (lib_major, lib_minor, lib_patch) = lib;
    (lib_major > 0
        && lib_major == major
        && (lib_minor > minor || (lib_minor == minor && lib_patch >= patch)))
        || (lib_major == 0
            && major == 0
            && ((lib_minor > 0 && lib_minor == minor && lib_patch >= patch)
                || (lib_minor == 0 && minor == 0 && lib_patch == patch)))
}

/// `tox_version_major`: 0, `TOX_VERSION_MAJOR` of c-toxcore 0.2.18.
#[no_mangle]
pub extern "C" fn tox_version_major() -> u32 {
    guard::call(VERSION_MAJOR, || VERSION_MAJOR)
}

/// `tox_version_minor`: 2, `TOX_VERSION_MINOR` of c-toxcore 0.2.18.
#[no_mangle]
pub extern "C" fn tox_version_minor() -> u32 {
    guard::call(VERSION_MINOR, || VERSION_MINOR)
}

/// `tox_version_patch`: 18, `TOX_VERSION_PATCH` of c-toxcore 0.2.18.
#[no_mangle]
pub extern "C" fn tox_version_patch() -> u32 {
    guard::call(VERSION_PATCH, || VERSION_PATCH)
}

/// `tox_version_is_compatible`: whether a client built against headers of version
/// major.minor.patch can use this library. c-toxcore returns
/// `TOX_VERSION_IS_API_COMPATIBLE(major, minor, patch)` with its own version as the
/// library's, so with 0.2.18 that is exactly 0.2.0 to 0.2.18.
#[no_mangle]
pub extern "C" fn tox_version_is_compatible(major: u32, minor: u32, patch: u32) -> bool {
    guard::call(false, || {
        api_compatible(
            (VERSION_MAJOR, VERSION_MINOR, VERSION_PATCH),
            major,
            minor,
            patch,
        )
    })
}

/// `tox_public_key_size`: `TOX_PUBLIC_KEY_SIZE`, 32.
#[no_mangle]
pub extern "C" fn tox_public_key_size() -> u32 {
    guard::call(PUBLIC_KEY_SIZE, || PUBLIC_KEY_SIZE)
}

/// `tox_secret_key_size`: `TOX_SECRET_KEY_SIZE`, 32.
#[no_mangle]
pub extern "C" fn tox_secret_key_size() -> u32 {
    guard::call(SECRET_KEY_SIZE, || SECRET_KEY_SIZE)
}

/// `tox_conference_uid_size`: `TOX_CONFERENCE_UID_SIZE`, 32 (conferences never exist here,
/// the size is still tox.h's).
#[no_mangle]
pub extern "C" fn tox_conference_uid_size() -> u32 {
    guard::call(CONFERENCE_UID_SIZE, || CONFERENCE_UID_SIZE)
}

/// `tox_conference_id_size`: `TOX_CONFERENCE_ID_SIZE`, 32.
#[no_mangle]
pub extern "C" fn tox_conference_id_size() -> u32 {
    guard::call(CONFERENCE_ID_SIZE, || CONFERENCE_ID_SIZE)
}

/// `tox_nospam_size`: `TOX_NOSPAM_SIZE`, 4.
#[no_mangle]
pub extern "C" fn tox_nospam_size() -> u32 {
    guard::call(NOSPAM_SIZE, || NOSPAM_SIZE)
}

/// `tox_address_size`: `TOX_ADDRESS_SIZE`, 38.
#[no_mangle]
pub extern "C" fn tox_address_size() -> u32 {
    guard::call(ADDRESS_SIZE, || ADDRESS_SIZE)
}

/// `tox_max_name_length`: `TOX_MAX_NAME_LENGTH`, 128.
#[no_mangle]
pub extern "C" fn tox_max_name_length() -> u32 {
    guard::call(MAX_NAME_LENGTH, || MAX_NAME_LENGTH)
}

/// `tox_max_status_message_length`: `TOX_MAX_STATUS_MESSAGE_LENGTH`, 1007.
#[no_mangle]
pub extern "C" fn tox_max_status_message_length() -> u32 {
    guard::call(MAX_STATUS_MESSAGE_LENGTH, || MAX_STATUS_MESSAGE_LENGTH)
}

/// `tox_max_friend_request_length`: `TOX_MAX_FRIEND_REQUEST_LENGTH`, 1016.
#[no_mangle]
pub extern "C" fn tox_max_friend_request_length() -> u32 {
    guard::call(MAX_FRIEND_REQUEST_LENGTH, || MAX_FRIEND_REQUEST_LENGTH)
}

/// `tox_max_message_length`: `TOX_MAX_MESSAGE_LENGTH`, 1372.
#[no_mangle]
pub extern "C" fn tox_max_message_length() -> u32 {
    guard::call(MAX_MESSAGE_LENGTH, || MAX_MESSAGE_LENGTH)
}

/// `tox_max_custom_packet_size`: `TOX_MAX_CUSTOM_PACKET_SIZE`, 1373.
#[no_mangle]
pub extern "C" fn tox_max_custom_packet_size() -> u32 {
    guard::call(MAX_CUSTOM_PACKET_SIZE, || MAX_CUSTOM_PACKET_SIZE)
}

/// `tox_hash_length`: `TOX_HASH_LENGTH`, 32.
#[no_mangle]
pub extern "C" fn tox_hash_length() -> u32 {
    guard::call(HASH_LENGTH, || HASH_LENGTH)
}

/// `tox_file_id_length`: `TOX_FILE_ID_LENGTH`, 32.
#[no_mangle]
pub extern "C" fn tox_file_id_length() -> u32 {
    guard::call(FILE_ID_LENGTH, || FILE_ID_LENGTH)
}

/// `tox_max_filename_length`: `TOX_MAX_FILENAME_LENGTH`, 255.
#[no_mangle]
pub extern "C" fn tox_max_filename_length() -> u32 {
    guard::call(MAX_FILENAME_LENGTH, || MAX_FILENAME_LENGTH)
}

/// `tox_max_hostname_length`: `TOX_MAX_HOSTNAME_LENGTH`, 255.
#[no_mangle]
pub extern "C" fn tox_max_hostname_length() -> u32 {
    guard::call(MAX_HOSTNAME_LENGTH, || MAX_HOSTNAME_LENGTH)
}

/// `tox_hash`: writes the SHA-256 of the `length` bytes at `data` to `hash`
/// (`TOX_HASH_LENGTH` bytes). As tox.h says, false when `hash` is NULL or `data` is NULL
/// with a nonzero length; NULL data of length 0 hashes the empty string.
#[no_mangle]
pub unsafe extern "C" fn tox_hash(hash: *mut u8, data: *const u8, length: usize) -> bool {
    guard::call(false, || {
        if hash.is_null() {
            return false;
        }
        // SAFETY: tox.h: a non-NULL `data` points to `length` readable bytes.
        let Some(data) = (unsafe { guard::bytes(data, length) }) else {
            return false;
        };
        let digest: [u8; HASH_LENGTH as usize] = Sha256::digest(data).into();
        // SAFETY: tox.h: `hash` points to at least TOX_HASH_LENGTH writable bytes.
        unsafe { guard::copy_out(&digest, hash) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_tox_h_0_2_18() {
        assert_eq!(
            (
                tox_version_major(),
                tox_version_minor(),
                tox_version_patch()
            ),
            (0, 2, 18)
        );
        assert_eq!(tox_public_key_size(), 32);
        assert_eq!(tox_secret_key_size(), 32);
        assert_eq!(tox_conference_uid_size(), 32);
        assert_eq!(tox_conference_id_size(), 32);
        assert_eq!(tox_nospam_size(), 4);
        assert_eq!(tox_address_size(), 38);
        assert_eq!(tox_max_name_length(), 128);
        assert_eq!(tox_max_status_message_length(), 1007);
        assert_eq!(tox_max_friend_request_length(), 1016);
        assert_eq!(tox_max_message_length(), 1372);
        assert_eq!(tox_max_custom_packet_size(), 1373);
        assert_eq!(tox_hash_length(), 32);
        assert_eq!(tox_file_id_length(), 32);
        assert_eq!(tox_max_filename_length(), 255);
        assert_eq!(tox_max_hostname_length(), 255);
    }

    #[test]
    fn compatible_with_0_2_x_up_to_18_only() {
        assert!(tox_version_is_compatible(0, 2, 0));
        assert!(tox_version_is_compatible(0, 2, 18));
        assert!(!tox_version_is_compatible(0, 2, 19));
        assert!(!tox_version_is_compatible(0, 1, 0));
        assert!(!tox_version_is_compatible(0, 3, 0));
        assert!(!tox_version_is_compatible(1, 2, 18));
        assert!(!tox_version_is_compatible(0, 0, 18));
    }

    #[test]
    fn api_compatibility_follows_the_tox_h_macro_for_other_versions() {
        // 1.x: the same major, any older minor, or the same minor and an older patch.
        assert!(api_compatible((1, 4, 2), 1, 3, 9));
        assert!(api_compatible((1, 4, 2), 1, 4, 2));
        assert!(!api_compatible((1, 4, 2), 1, 4, 3));
        assert!(!api_compatible((1, 4, 2), 1, 5, 0));
        assert!(!api_compatible((2, 0, 0), 1, 0, 0));
        // 0.0.x: only itself.
        assert!(api_compatible((0, 0, 5), 0, 0, 5));
        assert!(!api_compatible((0, 0, 5), 0, 0, 4));
    }

    #[test]
    fn hash_is_sha256_and_checks_its_pointers() {
        let mut hash = [0u8; 32];
        // SAFETY: valid buffers of the stated sizes.
        assert!(unsafe { tox_hash(hash.as_mut_ptr(), b"abc".as_ptr(), 3) });
        assert_eq!(
            hash.to_vec(),
            hex::decode("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
                .unwrap()
        );
        // SAFETY: NULL data with length 0 is the empty input.
        assert!(unsafe { tox_hash(hash.as_mut_ptr(), std::ptr::null(), 0) });
        assert_eq!(
            hash.to_vec(),
            hex::decode("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
                .unwrap()
        );
        // SAFETY: the NULL pointers are refused before any access.
        assert!(!unsafe { tox_hash(hash.as_mut_ptr(), std::ptr::null(), 1) });
        assert!(!unsafe { tox_hash(std::ptr::null_mut(), b"abc".as_ptr(), 3) });
    }
}
