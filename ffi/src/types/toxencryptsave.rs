//! toxencryptsave.h's enums.

/// `Tox_Err_Key_Derivation` (toxencryptsave.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Key_Derivation {
    /// `TOX_ERR_KEY_DERIVATION_OK`
    OK = 0,
    /// `TOX_ERR_KEY_DERIVATION_NULL`
    NULL = 1,
    /// `TOX_ERR_KEY_DERIVATION_FAILED`
    FAILED = 2,
}

/// `Tox_Err_Encryption` (toxencryptsave.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Encryption {
    /// `TOX_ERR_ENCRYPTION_OK`
    OK = 0,
    /// `TOX_ERR_ENCRYPTION_NULL`
    NULL = 1,
    /// `TOX_ERR_ENCRYPTION_KEY_DERIVATION_FAILED`
    KEY_DERIVATION_FAILED = 2,
    /// `TOX_ERR_ENCRYPTION_FAILED`
    FAILED = 3,
}

/// `Tox_Err_Decryption` (toxencryptsave.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Decryption {
    /// `TOX_ERR_DECRYPTION_OK`
    OK = 0,
    /// `TOX_ERR_DECRYPTION_NULL`
    NULL = 1,
    /// `TOX_ERR_DECRYPTION_INVALID_LENGTH`
    INVALID_LENGTH = 2,
    /// `TOX_ERR_DECRYPTION_BAD_FORMAT`
    BAD_FORMAT = 3,
    /// `TOX_ERR_DECRYPTION_KEY_DERIVATION_FAILED`
    KEY_DERIVATION_FAILED = 4,
    /// `TOX_ERR_DECRYPTION_FAILED`
    FAILED = 5,
}

/// `Tox_Err_Get_Salt` (toxencryptsave.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Get_Salt {
    /// `TOX_ERR_GET_SALT_OK`
    OK = 0,
    /// `TOX_ERR_GET_SALT_NULL`
    NULL = 1,
    /// `TOX_ERR_GET_SALT_BAD_FORMAT`
    BAD_FORMAT = 2,
}
