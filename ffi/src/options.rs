//! `struct Tox_Options` and its functions (tox.h): the struct is public in tox.h, so its
//! field order, types and sizes are ABI; clients also allocate it themselves.

use std::ffi::{c_char, c_void};

use crate::guard;
use crate::types::{Tox_Err_Options_New, Tox_Log_Level, Tox_Proxy_Type, Tox_Savedata_Type};

/// `tox_log_cb`: (tox, level, file, line, func, message, user_data).
pub type LogCallback = unsafe extern "C" fn(
    *mut crate::handle::Tox,
    Tox_Log_Level,
    *const c_char,
    u32,
    *const c_char,
    *const c_char,
    *mut c_void,
);

/// `Tox_System` (tox.h): c-toxcore's hooks for the operating system (clock, network,
/// randomness), used by its tests. Opaque: this library takes the system's own and ignores
/// a client's. Not `repr(C)`: C sees only its name (an incomplete type).
pub struct Tox_System {
    _private: [u8; 0],
}

/// `struct Tox_Options`, field for field as c-toxcore 0.2.18 lays it out. The two enum
/// fields are C enums (int-sized) kept as integers: C may store any value there, and
/// `tox_new` checks them.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Tox_Options {
    /// Bind a dual-stack IPv6 socket (IPv4 peers too).
    pub ipv6_enabled: bool,
    /// Use UDP (without it c-toxcore runs over TCP relays only).
    pub udp_enabled: bool,
    /// LAN discovery broadcasts (docs/protocol.md §5.7).
    pub local_discovery_enabled: bool,
    /// Group-chat DHT announcements (unused by 0.2.18's API).
    pub dht_announcements_enabled: bool,
    /// `Tox_Proxy_Type` as C passed it.
    pub proxy_type: crate::types::Tox_Proxy_Type_Value,
    /// The proxy's host name (the client's string, not copied).
    pub proxy_host: *const c_char,
    /// The proxy's port.
    pub proxy_port: u16,
    /// First UDP port to try (0 with `end_port` 0: 33445–33545).
    pub start_port: u16,
    /// Last UDP port to try.
    pub end_port: u16,
    /// Port of a TCP relay server to run (0: none).
    pub tcp_port: u16,
    /// NAT hole punching (docs/protocol.md §5.6).
    pub hole_punching_enabled: bool,
    /// `Tox_Savedata_Type` as C passed it.
    pub savedata_type: crate::types::Tox_Savedata_Type_Value,
    /// The profile or secret key (the client's bytes, not copied).
    pub savedata_data: *const u8,
    /// Its length.
    pub savedata_length: usize,
    /// Where log messages go.
    pub log_callback: Option<LogCallback>,
    /// Passed back to `log_callback`.
    pub log_user_data: *mut c_void,
    /// c-toxcore's opt-in locking (this library always locks).
    pub experimental_thread_safety: bool,
    /// c-toxcore's `Tox_System` (test hooks; ignored here).
    pub operating_system: *const Tox_System,
}

impl Default for Tox_Options {
    /// `tox_options_default`: IPv6, UDP, LAN discovery, DHT announcements and hole punching
    /// on; no proxy; any port of 33445–33545; no relay server; no savedata.
    fn default() -> Self {
        Tox_Options {
            ipv6_enabled: true,
            udp_enabled: true,
            local_discovery_enabled: true,
            dht_announcements_enabled: true,
            proxy_type: Tox_Proxy_Type::NONE as u32,
            proxy_host: std::ptr::null(),
            proxy_port: 0,
            start_port: 0,
            end_port: 0,
            tcp_port: 0,
            hole_punching_enabled: true,
            savedata_type: Tox_Savedata_Type::NONE as u32,
            savedata_data: std::ptr::null(),
            savedata_length: 0,
            log_callback: None,
            log_user_data: std::ptr::null_mut(),
            experimental_thread_safety: false,
            operating_system: std::ptr::null(),
        }
    }
}

/// A new options struct with the defaults (`tox_options_new`); free it with
/// `tox_options_free`.
#[no_mangle]
pub unsafe extern "C" fn tox_options_new(error: *mut Tox_Err_Options_New) -> *mut Tox_Options {
    guard::call(std::ptr::null_mut(), || {
        guard::set(error, Tox_Err_Options_New::OK);
        Box::into_raw(Box::default())
    })
}

/// Frees what `tox_options_new` returned (NULL is ignored).
#[no_mangle]
pub unsafe extern "C" fn tox_options_free(options: *mut Tox_Options) {
    // SAFETY: a non-NULL pointer here came from `tox_options_new` (tox.h).
    unsafe { guard::free(options) }
}

/// Resets `options` to the defaults (`tox_options_default`); NULL is ignored. Clients
/// call it on structs they allocated themselves.
#[no_mangle]
pub unsafe extern "C" fn tox_options_default(options: *mut Tox_Options) {
    guard::call((), || {
        if !options.is_null() {
            // SAFETY: a non-NULL pointer is a writable Tox_Options (tox.h).
            unsafe { options.write(Tox_Options::default()) };
        }
    })
}

/// Sets the savedata pointer and length together (`tox_options_set_savedata_data`); the
/// bytes are the client's and must live until `tox_new` returns.
#[no_mangle]
pub unsafe extern "C" fn tox_options_set_savedata_data(
    options: *mut Tox_Options,
    data: *const u8,
    length: usize,
) {
    guard::call((), || {
        // SAFETY: a non-NULL pointer is a writable Tox_Options (tox.h).
        if let Some(o) = unsafe { options.as_mut() } {
            o.savedata_data = data;
            o.savedata_length = length;
        }
    })
}

/// A getter and a setter per field; NULL options read as the default and ignore writes.
macro_rules! accessors {
    ($($field:ident: $ty:ty => $get:ident, $set:ident;)*) => {$(
        #[doc = concat!("`tox_options_get_", stringify!($field), "`.")]
        #[no_mangle]
        pub unsafe extern "C" fn $get(options: *const Tox_Options) -> $ty {
            guard::call(Tox_Options::default().$field, || {
                // SAFETY: a non-NULL pointer is a readable Tox_Options (tox.h).
                unsafe { options.as_ref() }.map_or(Tox_Options::default().$field, |o| o.$field)
            })
        }

        #[doc = concat!("`tox_options_set_", stringify!($field), "`.")]
        #[no_mangle]
        pub unsafe extern "C" fn $set(options: *mut Tox_Options, value: $ty) {
            guard::call((), || {
                // SAFETY: a non-NULL pointer is a writable Tox_Options (tox.h).
                if let Some(o) = unsafe { options.as_mut() } {
                    o.$field = value;
                }
            })
        }
    )*};
}

accessors! {
    ipv6_enabled: bool => tox_options_get_ipv6_enabled, tox_options_set_ipv6_enabled;
    udp_enabled: bool => tox_options_get_udp_enabled, tox_options_set_udp_enabled;
    local_discovery_enabled: bool => tox_options_get_local_discovery_enabled, tox_options_set_local_discovery_enabled;
    dht_announcements_enabled: bool => tox_options_get_dht_announcements_enabled, tox_options_set_dht_announcements_enabled;
    proxy_type: crate::types::Tox_Proxy_Type_Value => tox_options_get_proxy_type, tox_options_set_proxy_type;
    proxy_host: *const c_char => tox_options_get_proxy_host, tox_options_set_proxy_host;
    proxy_port: u16 => tox_options_get_proxy_port, tox_options_set_proxy_port;
    start_port: u16 => tox_options_get_start_port, tox_options_set_start_port;
    end_port: u16 => tox_options_get_end_port, tox_options_set_end_port;
    tcp_port: u16 => tox_options_get_tcp_port, tox_options_set_tcp_port;
    hole_punching_enabled: bool => tox_options_get_hole_punching_enabled, tox_options_set_hole_punching_enabled;
    savedata_type: crate::types::Tox_Savedata_Type_Value => tox_options_get_savedata_type, tox_options_set_savedata_type;
    savedata_length: usize => tox_options_get_savedata_length, tox_options_set_savedata_length;
    log_callback: Option<LogCallback> => tox_options_get_log_callback, tox_options_set_log_callback;
    log_user_data: *mut c_void => tox_options_get_log_user_data, tox_options_set_log_user_data;
    experimental_thread_safety: bool => tox_options_get_experimental_thread_safety, tox_options_set_experimental_thread_safety;
    operating_system: *const Tox_System => tox_options_get_operating_system, tox_options_set_operating_system;
}

/// `tox_options_get_savedata_data`.
#[no_mangle]
pub unsafe extern "C" fn tox_options_get_savedata_data(options: *const Tox_Options) -> *const u8 {
    guard::call(std::ptr::null(), || {
        // SAFETY: a non-NULL pointer is a readable Tox_Options (tox.h).
        unsafe { options.as_ref() }.map_or(std::ptr::null(), |o| o.savedata_data)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The struct's size and the offsets of its fields are c-toxcore 0.2.18's on x86-64
    /// (measured with `offsetof` against Debian's tox.h: 80 bytes).
    #[test]
    fn the_layout_is_c_toxcores() {
        assert_eq!(std::mem::offset_of!(Tox_Options, proxy_type), 4);
        assert_eq!(std::mem::offset_of!(Tox_Options, proxy_host), 8);
        assert_eq!(std::mem::offset_of!(Tox_Options, proxy_port), 16);
        assert_eq!(std::mem::offset_of!(Tox_Options, start_port), 18);
        assert_eq!(std::mem::offset_of!(Tox_Options, end_port), 20);
        assert_eq!(std::mem::offset_of!(Tox_Options, tcp_port), 22);
        assert_eq!(std::mem::offset_of!(Tox_Options, hole_punching_enabled), 24);
        assert_eq!(std::mem::offset_of!(Tox_Options, savedata_type), 28);
        assert_eq!(std::mem::offset_of!(Tox_Options, savedata_data), 32);
        assert_eq!(std::mem::offset_of!(Tox_Options, savedata_length), 40);
        assert_eq!(std::mem::offset_of!(Tox_Options, log_callback), 48);
        assert_eq!(std::mem::offset_of!(Tox_Options, log_user_data), 56);
        assert_eq!(
            std::mem::offset_of!(Tox_Options, experimental_thread_safety),
            64
        );
        assert_eq!(std::mem::offset_of!(Tox_Options, operating_system), 72);
        assert_eq!(std::mem::size_of::<Tox_Options>(), 80);
    }
}
