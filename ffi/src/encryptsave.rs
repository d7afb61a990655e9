//! toxencryptsave.h: passphrase encryption of save data, over core's
//! [`rustox_core::savedata::crypt`] (the same "toxEsave" format, scrypt parameters and
//! XSalsa20-Poly1305 box as c-toxcore 0.2.18, so profiles move between the two libraries).
//!
//! Argument checks follow c-toxcore's `toxencryptsave.c` in its order, since clients see
//! which error comes first: the decrypt functions check the length before the pointers,
//! `tox_pass_decrypt` refuses a NULL passphrase even of length 0 (while the encrypt and
//! derive functions accept NULL with length 0 as the empty passphrase), and the empty
//! plaintext is `TOX_ERR_ENCRYPTION_NULL`. Salts and nonces come from the operating
//! system's generator (`OsRng`), as c-toxcore's come from `os_random`.

use rand::rngs::OsRng;
use rustox_core::savedata::crypt::{self, CryptError, PassKey};

use crate::guard;
use crate::types::{
    Tox_Err_Decryption, Tox_Err_Encryption, Tox_Err_Get_Salt, Tox_Err_Key_Derivation,
};

/// `TOX_PASS_SALT_LENGTH` (toxencryptsave.h): scrypt's salt, 32 bytes.
pub const PASS_SALT_LENGTH: u32 = crypt::SALT_SIZE as u32;
/// `TOX_PASS_KEY_LENGTH` (toxencryptsave.h): the derived box key, 32 bytes.
pub const PASS_KEY_LENGTH: u32 = crypt::KEY_SIZE as u32;
/// `TOX_PASS_ENCRYPTION_EXTRA_LENGTH` (toxencryptsave.h): magic, salt, nonce and MAC, 80
/// bytes.
pub const PASS_ENCRYPTION_EXTRA_LENGTH: u32 = crypt::ENCRYPTION_EXTRA_LENGTH as u32;
const _: () = assert!(PASS_SALT_LENGTH == 32 && PASS_KEY_LENGTH == 32);
const _: () = assert!(PASS_ENCRYPTION_EXTRA_LENGTH == 80);

/// `Tox_Pass_Key`: a key derived from a passphrase and a salt, opaque to C. Made by
/// `tox_pass_key_derive*` as a `Box`, freed by `tox_pass_key_free`; the key bytes are
/// zeroed when it is dropped (core's `PassKey`).
pub struct Tox_Pass_Key {
    key: PassKey,
}

/// `tox_pass_salt_length`: `TOX_PASS_SALT_LENGTH`, 32.
#[no_mangle]
pub extern "C" fn tox_pass_salt_length() -> u32 {
    guard::call(PASS_SALT_LENGTH, || PASS_SALT_LENGTH)
}

/// `tox_pass_key_length`: `TOX_PASS_KEY_LENGTH`, 32.
#[no_mangle]
pub extern "C" fn tox_pass_key_length() -> u32 {
    guard::call(PASS_KEY_LENGTH, || PASS_KEY_LENGTH)
}

/// `tox_pass_encryption_extra_length`: `TOX_PASS_ENCRYPTION_EXTRA_LENGTH`, 80.
#[no_mangle]
pub extern "C" fn tox_pass_encryption_extra_length() -> u32 {
    guard::call(PASS_ENCRYPTION_EXTRA_LENGTH, || {
        PASS_ENCRYPTION_EXTRA_LENGTH
    })
}

/// Encrypts `plain` with `key` into C's `ciphertext` buffer (`plain.len() + 80` bytes).
///
/// # Safety
/// `ciphertext` is non-NULL and points to `plain.len() + 80` writable bytes.
unsafe fn encrypt_into(
    key: &PassKey,
    plain: &[u8],
    ciphertext: *mut u8,
    error: *mut Tox_Err_Encryption,
) -> bool {
    match key.encrypt(plain, &mut OsRng) {
        Ok(sealed) => {
            // SAFETY: the caller's contract (toxencryptsave.h: the output array is at
            // least plaintext_len + TOX_PASS_ENCRYPTION_EXTRA_LENGTH bytes).
            unsafe { guard::copy_out(&sealed, ciphertext) };
            guard::fail(error, Tox_Err_Encryption::OK, true)
        }
        Err(_) => guard::fail(error, Tox_Err_Encryption::FAILED, false),
    }
}

/// The decryption error code for a core error.
fn decryption_error(e: CryptError) -> Tox_Err_Decryption {
    match e {
        CryptError::NotEncrypted => Tox_Err_Decryption::BAD_FORMAT,
        CryptError::Truncated { .. } => Tox_Err_Decryption::INVALID_LENGTH,
        CryptError::WrongPassphrase => Tox_Err_Decryption::FAILED,
        CryptError::KeyDerivation => Tox_Err_Decryption::KEY_DERIVATION_FAILED,
        CryptError::EmptyPlaintext => Tox_Err_Decryption::FAILED,
    }
}

/// What both decryptions do: `INVALID_LENGTH` for a `ciphertext_len` of
/// `ENCRYPTION_EXTRA_LENGTH` bytes or fewer (checked first, as c-toxcore), `NULL` for a NULL
/// `plaintext` or when `decrypt` meets a NULL input (it returns `None`), else `decrypt`'s
/// plaintext copied to `plaintext`, or its error.
///
/// # Safety
/// A non-NULL `plaintext` points to `ciphertext_len - ENCRYPTION_EXTRA_LENGTH` writable
/// bytes (toxencryptsave.h's size of the output array).
unsafe fn decrypt_into(
    ciphertext_len: usize,
    plaintext: *mut u8,
    error: *mut Tox_Err_Decryption,
    decrypt: impl FnOnce() -> Option<Result<Vec<u8>, CryptError>>,
) -> bool {
    guard::call(false, || {
        if ciphertext_len <= crypt::ENCRYPTION_EXTRA_LENGTH {
            return guard::fail(error, Tox_Err_Decryption::INVALID_LENGTH, false);
        }
        let decrypted = if plaintext.is_null() { None } else { decrypt() };
        match decrypted {
            None => guard::fail(error, Tox_Err_Decryption::NULL, false),
            Some(Ok(plain)) => {
                // SAFETY: non-NULL, and the caller's contract for its size.
                unsafe { guard::copy_out(&plain, plaintext) };
                guard::fail(error, Tox_Err_Decryption::OK, true)
            }
            Some(Err(e)) => guard::fail(error, decryption_error(e), false),
        }
    })
}

/// `tox_pass_encrypt`: derives a key from the passphrase with a fresh random salt and
/// encrypts `plaintext_len` bytes into `ciphertext` (`plaintext_len + 80` bytes). NULL: a
/// NULL passphrase with a nonzero length, or an empty/NULL plaintext, or a NULL
/// ciphertext; `KEY_DERIVATION_FAILED` if scrypt fails.
#[no_mangle]
pub unsafe extern "C" fn tox_pass_encrypt(
    plaintext: *const u8,
    plaintext_len: usize,
    passphrase: *const u8,
    passphrase_len: usize,
    ciphertext: *mut u8,
    error: *mut Tox_Err_Encryption,
) -> bool {
    guard::call(false, || {
        // SAFETY: toxencryptsave.h: a non-NULL passphrase has passphrase_len bytes.
        let Some(passphrase) = (unsafe { guard::bytes(passphrase, passphrase_len) }) else {
            return guard::fail(error, Tox_Err_Encryption::NULL, false);
        };
        if plaintext.is_null() || plaintext_len == 0 || ciphertext.is_null() {
            return guard::fail(error, Tox_Err_Encryption::NULL, false);
        }
        // SAFETY: non-NULL, and toxencryptsave.h: plaintext_len readable bytes.
        let Some(plain) = (unsafe { guard::bytes(plaintext, plaintext_len) }) else {
            return guard::fail(error, Tox_Err_Encryption::NULL, false);
        };
        let Ok(key) = PassKey::derive_random(passphrase, &mut OsRng) else {
            return guard::fail(error, Tox_Err_Encryption::KEY_DERIVATION_FAILED, false);
        };
        // SAFETY: `ciphertext` is non-NULL; its size is the caller's contract.
        unsafe { encrypt_into(&key, plain, ciphertext, error) }
    })
}

/// `tox_pass_decrypt`: derives the key from the passphrase and the salt stored in the data
/// and decrypts `ciphertext_len - 80` bytes into `plaintext`. As in c-toxcore: 80 bytes or
/// fewer is `INVALID_LENGTH` (checked first), any NULL pointer (the passphrase too, even of
/// length 0) is `NULL`, no "toxEsave" magic is `BAD_FORMAT`, a wrong passphrase or altered
/// data is `FAILED`.
#[no_mangle]
pub unsafe extern "C" fn tox_pass_decrypt(
    ciphertext: *const u8,
    ciphertext_len: usize,
    passphrase: *const u8,
    passphrase_len: usize,
    plaintext: *mut u8,
    error: *mut Tox_Err_Decryption,
) -> bool {
    let decrypt = || {
        if ciphertext.is_null() || passphrase.is_null() {
            return None;
        }
        // SAFETY: both non-NULL; their lengths are the caller's contract.
        let (data, passphrase) = unsafe {
            (
                guard::bytes(ciphertext, ciphertext_len),
                guard::bytes(passphrase, passphrase_len),
            )
        };
        Some(crypt::decrypt(passphrase?, data?))
    };
    // SAFETY: toxencryptsave.h's contract for `plaintext`.
    unsafe { decrypt_into(ciphertext_len, plaintext, error, decrypt) }
}

/// `tox_pass_key_free`: frees a key from `tox_pass_key_derive*`; NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn tox_pass_key_free(key: *mut Tox_Pass_Key) {
    // SAFETY: toxencryptsave.h: `key` came from tox_pass_key_derive* (Box::into_raw)
    // and is freed once.
    unsafe { guard::free(key) }
}

/// Boxes a derived key for C, or reports why there is none.
fn key_out(
    derived: Result<PassKey, CryptError>,
    error: *mut Tox_Err_Key_Derivation,
) -> *mut Tox_Pass_Key {
    match derived {
        Ok(key) => {
            guard::set(error, Tox_Err_Key_Derivation::OK);
            Box::into_raw(Box::new(Tox_Pass_Key { key }))
        }
        Err(_) => guard::fail(error, Tox_Err_Key_Derivation::FAILED, std::ptr::null_mut()),
    }
}

/// `tox_pass_key_derive`: a key from the passphrase (NULL with length 0 is the empty
/// passphrase) and a fresh random salt, to be freed with `tox_pass_key_free`. NULL for a
/// NULL passphrase with a nonzero length, `FAILED` if scrypt fails.
#[no_mangle]
pub unsafe extern "C" fn tox_pass_key_derive(
    passphrase: *const u8,
    passphrase_len: usize,
    error: *mut Tox_Err_Key_Derivation,
) -> *mut Tox_Pass_Key {
    guard::call(std::ptr::null_mut(), || {
        // SAFETY: toxencryptsave.h: a non-NULL passphrase has passphrase_len bytes.
        let Some(passphrase) = (unsafe { guard::bytes(passphrase, passphrase_len) }) else {
            return guard::fail(error, Tox_Err_Key_Derivation::NULL, std::ptr::null_mut());
        };
        key_out(PassKey::derive_random(passphrase, &mut OsRng), error)
    })
}

/// `tox_pass_key_derive_with_salt`: the key for a passphrase and a known salt
/// (`TOX_PASS_SALT_LENGTH` bytes, e.g. from `tox_get_salt`), to be freed with
/// `tox_pass_key_free`. NULL for a NULL salt or a NULL passphrase with a nonzero length.
#[no_mangle]
pub unsafe extern "C" fn tox_pass_key_derive_with_salt(
    passphrase: *const u8,
    passphrase_len: usize,
    salt: *const u8,
    error: *mut Tox_Err_Key_Derivation,
) -> *mut Tox_Pass_Key {
    guard::call(std::ptr::null_mut(), || {
        // SAFETY: toxencryptsave.h: a non-NULL salt has TOX_PASS_SALT_LENGTH bytes, a
        // non-NULL passphrase passphrase_len bytes.
        let (salt, passphrase) = unsafe {
            (
                guard::array::<{ crypt::SALT_SIZE }>(salt),
                guard::bytes(passphrase, passphrase_len),
            )
        };
        let (Some(salt), Some(passphrase)) = (salt, passphrase) else {
            return guard::fail(error, Tox_Err_Key_Derivation::NULL, std::ptr::null_mut());
        };
        key_out(PassKey::derive(passphrase, salt), error)
    })
}

/// `tox_pass_key_encrypt`: encrypts `plaintext_len` bytes with a derived key into
/// `ciphertext` (`plaintext_len + 80` bytes), with a fresh random nonce. NULL for a NULL
/// key, plaintext or ciphertext, or an empty plaintext.
#[no_mangle]
pub unsafe extern "C" fn tox_pass_key_encrypt(
    key: *const Tox_Pass_Key,
    plaintext: *const u8,
    plaintext_len: usize,
    ciphertext: *mut u8,
    error: *mut Tox_Err_Encryption,
) -> bool {
    guard::call(false, || {
        if plaintext_len == 0 || plaintext.is_null() || key.is_null() || ciphertext.is_null() {
            return guard::fail(error, Tox_Err_Encryption::NULL, false);
        }
        // SAFETY: non-NULL; toxencryptsave.h: `key` came from tox_pass_key_derive* and was
        // not freed, `plaintext` has plaintext_len bytes.
        let (key, plain) = unsafe { (&*key, guard::bytes(plaintext, plaintext_len)) };
        let Some(plain) = plain else {
            return guard::fail(error, Tox_Err_Encryption::NULL, false);
        };
        // SAFETY: `ciphertext` is non-NULL; its size is the caller's contract.
        unsafe { encrypt_into(&key.key, plain, ciphertext, error) }
    })
}

/// `tox_pass_key_decrypt`: decrypts with a derived key (the salt stored in the data is not
/// looked at) into `plaintext` (`ciphertext_len - 80` bytes). As c-toxcore: 80 bytes or
/// fewer is `INVALID_LENGTH` (checked first), a NULL key, ciphertext or plaintext is
/// `NULL`, no magic is `BAD_FORMAT`, the wrong key or altered data is `FAILED`.
#[no_mangle]
pub unsafe extern "C" fn tox_pass_key_decrypt(
    key: *const Tox_Pass_Key,
    ciphertext: *const u8,
    ciphertext_len: usize,
    plaintext: *mut u8,
    error: *mut Tox_Err_Decryption,
) -> bool {
    let decrypt = || {
        if ciphertext.is_null() || key.is_null() {
            return None;
        }
        // SAFETY: non-NULL; toxencryptsave.h: `key` came from tox_pass_key_derive* and
        // was not freed, `ciphertext` has ciphertext_len bytes.
        let (key, data) = unsafe { (&*key, guard::bytes(ciphertext, ciphertext_len)) };
        Some(key.key.decrypt(data?))
    };
    // SAFETY: toxencryptsave.h's contract for `plaintext`.
    unsafe { decrypt_into(ciphertext_len, plaintext, error, decrypt) }
}

/// `tox_get_salt`: copies the salt of encrypted data (`TOX_PASS_SALT_LENGTH` bytes) to
/// `salt`, for `tox_pass_key_derive_with_salt`. NULL for a NULL pointer, `BAD_FORMAT`
/// without the "toxEsave" magic. As in c-toxcore, the data has no length argument: it must
/// hold at least the magic and the salt (toxencryptsave.h asks for 80 bytes); only the
/// 8-byte magic is read unless it matches.
#[no_mangle]
pub unsafe extern "C" fn tox_get_salt(
    ciphertext: *const u8,
    salt: *mut u8,
    error: *mut Tox_Err_Get_Salt,
) -> bool {
    guard::call(false, || {
        if ciphertext.is_null() || salt.is_null() {
            return guard::fail(error, Tox_Err_Get_Salt::NULL, false);
        }
        // SAFETY: non-NULL; toxencryptsave.h: the data holds at least 80 bytes.
        let magic = unsafe { guard::bytes(ciphertext, crypt::MAGIC.len()) };
        if !magic.is_some_and(crypt::is_encrypted) {
            return guard::fail(error, Tox_Err_Get_Salt::BAD_FORMAT, false);
        }
        // SAFETY: as above.
        let head = unsafe { guard::bytes(ciphertext, crypt::MAGIC.len() + crypt::SALT_SIZE) };
        let Some(found) = head.and_then(crypt::salt) else {
            return guard::fail(error, Tox_Err_Get_Salt::BAD_FORMAT, false);
        };
        // SAFETY: `salt` is non-NULL; toxencryptsave.h: TOX_PASS_SALT_LENGTH bytes.
        unsafe { guard::copy_out(&found, salt) };
        guard::fail(error, Tox_Err_Get_Salt::OK, true)
    })
}

/// `tox_is_data_encrypted`: whether the data starts with the "toxEsave" magic that the
/// encrypt functions write. Reads 8 bytes; NULL (undefined in c-toxcore) is false.
#[no_mangle]
pub unsafe extern "C" fn tox_is_data_encrypted(data: *const u8) -> bool {
    guard::call(false, || {
        if data.is_null() {
            return false;
        }
        // SAFETY: non-NULL; toxencryptsave.h: the data holds at least 80 bytes.
        let magic = unsafe { guard::bytes(data, crypt::MAGIC.len()) };
        magic.is_some_and(crypt::is_encrypted)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr::{null, null_mut};

    const PLAIN: &[u8] = b"libtoxcore.so.2 drop-in fixture";
    const PASS: &[u8] = b"tr0ub4dor&3";

    /// Made once by Debian's libtoxcore.so.2 (c-toxcore 0.2.18) with a small C program:
    /// `tox_pass_encrypt(PLAIN, PASS)`.
    const C_PASS_ENCRYPT: &str = "746f7845736176655e7e781d6fd26ed1b05ff7cf9c3774d120b2b106c0ef946f1bb5f3889829b7ea226e3b95bc6e8e339b3757f653916f93b927aba268c46062e922f77c02d451e8bdc896da70367010490d6664a2b446f5a7c0ce983bbcd77a74759f236f3effa762e1e25a49d210";
    /// The same program: `tox_pass_encrypt(PLAIN, NULL, 0)`, the empty passphrase.
    const C_EMPTY_PASS_ENCRYPT: &str = "746f784573617665131277653a1f8633ac26bb595b52cf4302523c80c08f267f99df80a2a8eefe463d89dedfa149df4b9a72915bdbcedb375a9e3ab007eb63fd95578ece257c9344a11c844d5c4b773c4ceeb41b452db2cedb068fe5719af603853fa272d4207a2c1e1be791181c25";
    /// The same program: `tox_pass_key_encrypt` with the key of
    /// `tox_pass_key_derive_with_salt(PASS, salt = 0, 1, ..., 31)`.
    const C_KEY_ENCRYPT_SALT_0_TO_31: &str = "746f784573617665000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f3404d64c507d4ace0a95b4d5e6dc6257977eefd151bcdcc5e5c5b26bd0603892cb8c0bcb1b88b6b39ae22a2dc9e0764578892da3c593c66ab994de0419e8625dd96e6cd10ee982";

    fn encrypt(plain: &[u8], pass: &[u8]) -> Vec<u8> {
        let mut out = vec![0u8; plain.len() + 80];
        let mut err = Tox_Err_Encryption::FAILED;
        // SAFETY: buffers of the documented sizes.
        let ok = unsafe {
            tox_pass_encrypt(
                plain.as_ptr(),
                plain.len(),
                pass.as_ptr(),
                pass.len(),
                out.as_mut_ptr(),
                &mut err,
            )
        };
        assert!(ok);
        assert_eq!(err, Tox_Err_Encryption::OK);
        out
    }

    fn decrypt(data: &[u8], pass: &[u8]) -> Result<Vec<u8>, Tox_Err_Decryption> {
        let mut out = vec![0u8; data.len().saturating_sub(80)];
        let mut err = Tox_Err_Decryption::OK;
        // SAFETY: buffers of the documented sizes; a non-NULL (dangling) pointer for an
        // empty passphrase, which is never read.
        let ok = unsafe {
            tox_pass_decrypt(
                data.as_ptr(),
                data.len(),
                pass.as_ptr(),
                pass.len(),
                out.as_mut_ptr(),
                &mut err,
            )
        };
        assert_eq!(ok, err == Tox_Err_Decryption::OK);
        if ok {
            Ok(out)
        } else {
            Err(err)
        }
    }

    fn derive_with_salt(pass: &[u8], salt: &[u8; 32]) -> *mut Tox_Pass_Key {
        let mut err = Tox_Err_Key_Derivation::FAILED;
        // SAFETY: a 32-byte salt and a passphrase of its length.
        let key = unsafe {
            tox_pass_key_derive_with_salt(pass.as_ptr(), pass.len(), salt.as_ptr(), &mut err)
        };
        assert_eq!(err, Tox_Err_Key_Derivation::OK);
        assert!(!key.is_null());
        key
    }

    fn key_decrypt(key: *const Tox_Pass_Key, data: &[u8]) -> Result<Vec<u8>, Tox_Err_Decryption> {
        let mut out = vec![0u8; data.len().saturating_sub(80)];
        let mut err = Tox_Err_Decryption::OK;
        // SAFETY: a live key and buffers of the documented sizes.
        let ok = unsafe {
            tox_pass_key_decrypt(key, data.as_ptr(), data.len(), out.as_mut_ptr(), &mut err)
        };
        assert_eq!(ok, err == Tox_Err_Decryption::OK);
        if ok {
            Ok(out)
        } else {
            Err(err)
        }
    }

    fn salt_of(data: &[u8]) -> Result<[u8; 32], Tox_Err_Get_Salt> {
        let mut salt = [0u8; 32];
        let mut err = Tox_Err_Get_Salt::OK;
        // SAFETY: `data` holds at least 40 bytes in every use; a 32-byte salt buffer.
        let ok = unsafe { tox_get_salt(data.as_ptr(), salt.as_mut_ptr(), &mut err) };
        assert_eq!(ok, err == Tox_Err_Get_Salt::OK);
        if ok {
            Ok(salt)
        } else {
            Err(err)
        }
    }

    #[test]
    fn lengths_are_toxencryptsave_h() {
        assert_eq!(tox_pass_salt_length(), 32);
        assert_eq!(tox_pass_key_length(), 32);
        assert_eq!(tox_pass_encryption_extra_length(), 80);
    }

    #[test]
    fn decrypts_what_c_toxcore_encrypted() {
        let sealed = hex::decode(C_PASS_ENCRYPT).unwrap();
        assert_eq!(sealed.len(), PLAIN.len() + 80);
        // SAFETY: `sealed` holds more than 8 bytes.
        assert!(unsafe { tox_is_data_encrypted(sealed.as_ptr()) });
        assert_eq!(decrypt(&sealed, PASS).unwrap(), PLAIN);
        assert_eq!(
            decrypt(&sealed, b"tr0ub4dor&4"),
            Err(Tox_Err_Decryption::FAILED)
        );

        let sealed = hex::decode(C_EMPTY_PASS_ENCRYPT).unwrap();
        assert_eq!(decrypt(&sealed, b"").unwrap(), PLAIN);

        // A key derived here from c-toxcore's salt opens what c-toxcore sealed with it.
        let sealed = hex::decode(C_KEY_ENCRYPT_SALT_0_TO_31).unwrap();
        let salt: [u8; 32] = std::array::from_fn(|i| i as u8);
        assert_eq!(salt_of(&sealed), Ok(salt));
        let key = derive_with_salt(PASS, &salt);
        assert_eq!(key_decrypt(key, &sealed).unwrap(), PLAIN);
        // SAFETY: `key` came from tox_pass_key_derive_with_salt.
        unsafe { tox_pass_key_free(key) };
        assert_eq!(decrypt(&sealed, PASS).unwrap(), PLAIN);
    }

    #[test]
    fn round_trip_through_passphrase_and_key_functions() {
        let sealed = encrypt(PLAIN, PASS);
        assert_eq!(&sealed[..8], b"toxEsave");
        assert_eq!(decrypt(&sealed, PASS).unwrap(), PLAIN);

        // The key of that salt decrypts it, and what it seals the passphrase opens.
        let salt = salt_of(&sealed).unwrap();
        let key = derive_with_salt(PASS, &salt);
        assert_eq!(key_decrypt(key, &sealed).unwrap(), PLAIN);
        let mut resealed = vec![0u8; PLAIN.len() + 80];
        let mut err = Tox_Err_Encryption::FAILED;
        // SAFETY: a live key and buffers of the documented sizes.
        assert!(unsafe {
            tox_pass_key_encrypt(
                key,
                PLAIN.as_ptr(),
                PLAIN.len(),
                resealed.as_mut_ptr(),
                &mut err,
            )
        });
        assert_eq!(err, Tox_Err_Encryption::OK);
        assert_eq!(salt_of(&resealed), Ok(salt));
        assert_ne!(resealed, sealed, "a fresh nonce each time");
        assert_eq!(decrypt(&resealed, PASS).unwrap(), PLAIN);
        // SAFETY: `key` came from tox_pass_key_derive_with_salt.
        unsafe { tox_pass_key_free(key) };

        // tox_pass_key_derive: a random salt, usable the same way.
        let mut err = Tox_Err_Key_Derivation::FAILED;
        // SAFETY: NULL with length 0 is the empty passphrase.
        let key = unsafe { tox_pass_key_derive(null(), 0, &mut err) };
        assert_eq!(err, Tox_Err_Key_Derivation::OK);
        let mut sealed = vec![0u8; 1 + 80];
        // SAFETY: a live key and buffers of the documented sizes; no error out-parameter.
        assert!(unsafe {
            tox_pass_key_encrypt(key, b"x".as_ptr(), 1, sealed.as_mut_ptr(), null_mut())
        });
        assert_eq!(decrypt(&sealed, b"").unwrap(), b"x");
        // SAFETY: `key` came from tox_pass_key_derive.
        unsafe { tox_pass_key_free(key) };
    }

    #[test]
    fn wrong_passphrase_or_key_is_failed() {
        let sealed = encrypt(PLAIN, PASS);
        assert_eq!(
            decrypt(&sealed, b"tr0ub4dor"),
            Err(Tox_Err_Decryption::FAILED)
        );
        let key = derive_with_salt(b"other", &[7; 32]);
        assert_eq!(key_decrypt(key, &sealed), Err(Tox_Err_Decryption::FAILED));
        // SAFETY: `key` came from tox_pass_key_derive_with_salt.
        unsafe { tox_pass_key_free(key) };
    }

    #[test]
    fn truncated_is_invalid_length_before_anything_else() {
        let sealed = encrypt(b"x", PASS);
        assert_eq!(sealed.len(), 81);
        for len in [0, 1, 8, 40, 79, 80] {
            assert_eq!(
                decrypt(&sealed[..len], PASS),
                Err(Tox_Err_Decryption::INVALID_LENGTH),
                "length {len}"
            );
        }
        // c-toxcore checks the length before the pointers.
        let mut err = Tox_Err_Decryption::OK;
        // SAFETY: every pointer is NULL and refused before use.
        assert!(!unsafe { tox_pass_decrypt(null(), 80, null(), 0, null_mut(), &mut err) });
        assert_eq!(err, Tox_Err_Decryption::INVALID_LENGTH);
    }

    #[test]
    fn data_without_the_magic_is_bad_format() {
        let mut sealed = encrypt(PLAIN, PASS);
        sealed[0] = b'T';
        // SAFETY: `sealed` holds more than 8 bytes.
        assert!(!unsafe { tox_is_data_encrypted(sealed.as_ptr()) });
        assert_eq!(decrypt(&sealed, PASS), Err(Tox_Err_Decryption::BAD_FORMAT));
        assert_eq!(salt_of(&sealed), Err(Tox_Err_Get_Salt::BAD_FORMAT));
        let key = derive_with_salt(PASS, &[0; 32]);
        assert_eq!(
            key_decrypt(key, &sealed),
            Err(Tox_Err_Decryption::BAD_FORMAT)
        );
        // SAFETY: `key` came from tox_pass_key_derive_with_salt.
        unsafe { tox_pass_key_free(key) };
        let plain_save = vec![0u8; 200];
        assert_eq!(
            decrypt(&plain_save, PASS),
            Err(Tox_Err_Decryption::BAD_FORMAT)
        );
    }

    #[test]
    fn null_arguments_are_refused_as_c_toxcore_refuses_them() {
        let sealed = encrypt(PLAIN, PASS);
        let mut out = vec![0u8; 256];
        let o = out.as_mut_ptr();
        let (p, n) = (PLAIN.as_ptr(), PLAIN.len());
        let mut e = Tox_Err_Encryption::OK;
        // SAFETY (every call below): the NULL pointers are refused before any access, the
        // others point to buffers of the documented sizes.
        unsafe {
            assert!(!tox_pass_encrypt(
                null(),
                n,
                PASS.as_ptr(),
                PASS.len(),
                o,
                &mut e
            ));
            assert_eq!(e, Tox_Err_Encryption::NULL);
            e = Tox_Err_Encryption::OK;
            assert!(!tox_pass_encrypt(
                p,
                0,
                PASS.as_ptr(),
                PASS.len(),
                o,
                &mut e
            ));
            assert_eq!(e, Tox_Err_Encryption::NULL, "the empty plaintext");
            e = Tox_Err_Encryption::OK;
            assert!(!tox_pass_encrypt(p, n, null(), 3, o, &mut e));
            assert_eq!(e, Tox_Err_Encryption::NULL);
            e = Tox_Err_Encryption::OK;
            assert!(!tox_pass_encrypt(
                p,
                n,
                PASS.as_ptr(),
                PASS.len(),
                null_mut(),
                &mut e
            ));
            assert_eq!(e, Tox_Err_Encryption::NULL);
            assert!(!tox_pass_key_encrypt(null(), p, n, o, &mut e));
            // No error out-parameter: still refused, nothing written.
            assert!(!tox_pass_encrypt(null(), n, null(), 0, o, null_mut()));

            let mut d = Tox_Err_Decryption::OK;
            let (c, cn) = (sealed.as_ptr(), sealed.len());
            assert!(!tox_pass_decrypt(c, cn, null(), 0, o, &mut d));
            assert_eq!(
                d,
                Tox_Err_Decryption::NULL,
                "c-toxcore: a NULL passphrase even of length 0"
            );
            d = Tox_Err_Decryption::OK;
            assert!(!tox_pass_decrypt(
                null(),
                cn,
                PASS.as_ptr(),
                PASS.len(),
                o,
                &mut d
            ));
            assert_eq!(d, Tox_Err_Decryption::NULL);
            d = Tox_Err_Decryption::OK;
            assert!(!tox_pass_decrypt(
                c,
                cn,
                PASS.as_ptr(),
                PASS.len(),
                null_mut(),
                &mut d
            ));
            assert_eq!(d, Tox_Err_Decryption::NULL);
            d = Tox_Err_Decryption::OK;
            assert!(!tox_pass_key_decrypt(null(), c, cn, o, &mut d));
            assert_eq!(d, Tox_Err_Decryption::NULL);

            let mut k = Tox_Err_Key_Derivation::OK;
            assert!(tox_pass_key_derive(null(), 1, &mut k).is_null());
            assert_eq!(k, Tox_Err_Key_Derivation::NULL);
            k = Tox_Err_Key_Derivation::OK;
            assert!(
                tox_pass_key_derive_with_salt(PASS.as_ptr(), PASS.len(), null(), &mut k).is_null()
            );
            assert_eq!(k, Tox_Err_Key_Derivation::NULL);

            let mut s = Tox_Err_Get_Salt::OK;
            assert!(!tox_get_salt(null(), o, &mut s));
            assert_eq!(s, Tox_Err_Get_Salt::NULL);
            s = Tox_Err_Get_Salt::OK;
            assert!(!tox_get_salt(c, null_mut(), &mut s));
            assert_eq!(s, Tox_Err_Get_Salt::NULL);

            assert!(!tox_is_data_encrypted(null()));
            tox_pass_key_free(null_mut());
        }
    }
}
