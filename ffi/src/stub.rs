//! The entry points of what rustox does not implement (calls, group audio): each reads none
//! of its arguments and gives c-toxcore's answer for "not found" or "nothing", written as one
//! line of a table instead of a function body each.

/// Defines an entry point that reads none of its arguments and always gives the same answer,
/// for what rustox does not implement (calls, group audio): `fn name(args) -> ret = value`
/// returns `value`; with `, error: Err::CODE` after it the function takes a last `error`
/// out-parameter and sets it to `CODE`; without `-> ret` it returns nothing.
macro_rules! stub {
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty = $value:expr,
        error: $err:ident::$code:ident) => {
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty,)* error: *mut $err) -> $ret {
            $crate::guard::call($value, || {
                let _ = ($($arg,)*);
                $crate::guard::fail(error, $err::$code, $value)
            })
        }
    };
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty = $value:expr) => {
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
            $crate::guard::call($value, || {
                let _ = ($($arg,)*);
                $value
            })
        }
    };
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?)) => {
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) {
            $crate::guard::call((), || {
                let _ = ($($arg,)*);
            })
        }
    };
}
pub(crate) use stub;
