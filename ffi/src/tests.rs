//! The C boundary misused as clients misuse it: NULL pointers, unknown friend numbers,
//! oversized inputs, enum values tox.h does not have, callbacks that call back into the
//! library, and `tox_kill` from inside a callback and from a neighbour thread. Each call
//! returns its documented error; nothing crashes, deadlocks or leaks an instance.

use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::files::*;
use crate::friends::*;
use crate::handle::Tox;
use crate::lifecycle::*;
use crate::options::*;
use crate::self_info::*;
use crate::types::*;

/// An instance on loopback: IPv4, no LAN discovery, a port of its own from the range.
fn instance(start_port: u16) -> *mut Tox {
    let mut options = Tox_Options {
        ipv6_enabled: false,
        local_discovery_enabled: false,
        start_port,
        end_port: start_port + 50,
        ..Tox_Options::default()
    };
    options.savedata_type = Tox_Savedata_Type::NONE as u32;
    let mut error = Tox_Err_New::MALLOC;
    // SAFETY: a valid options struct and error pointer.
    let tox = unsafe { tox_new(&options, &mut error) };
    assert_eq!(error, Tox_Err_New::OK);
    assert!(!tox.is_null());
    tox
}

#[test]
fn null_pointers_get_their_errors() {
    let tox = instance(41000);
    // SAFETY: every pointer is NULL or valid; that is what is tested.
    unsafe {
        let mut e = Tox_Err_Friend_Add::OK;
        assert_eq!(tox_friend_add(tox, null(), null(), 0, &mut e), u32::MAX);
        assert_eq!(e, Tox_Err_Friend_Add::NULL);
        assert_eq!(
            tox_friend_add(null_mut(), null(), null(), 0, &mut e),
            u32::MAX
        );
        assert_eq!(e, Tox_Err_Friend_Add::NULL);
        assert_eq!(tox_friend_add_norequest(tox, null(), &mut e), u32::MAX);
        assert_eq!(e, Tox_Err_Friend_Add::NULL);

        let mut e = Tox_Err_Friend_Send_Message::OK;
        assert_eq!(
            tox_friend_send_message(tox, 0, 0, null(), 5, &mut e),
            u32::MAX
        );
        assert_eq!(e, Tox_Err_Friend_Send_Message::NULL);

        let mut e = Tox_Err_Bootstrap::OK;
        assert!(!tox_bootstrap(
            tox,
            null(),
            33445,
            [1u8; 32].as_ptr(),
            &mut e
        ));
        assert_eq!(e, Tox_Err_Bootstrap::NULL);
        assert!(!tox_bootstrap(
            tox,
            c"127.0.0.1".as_ptr(),
            33445,
            null(),
            &mut e
        ));
        assert_eq!(e, Tox_Err_Bootstrap::NULL);
        assert!(!tox_bootstrap(
            tox,
            c"127.0.0.1".as_ptr(),
            0,
            [1u8; 32].as_ptr(),
            &mut e
        ));
        assert_eq!(e, Tox_Err_Bootstrap::BAD_PORT);
        assert!(!tox_bootstrap(
            tox,
            c"no such host.invalid".as_ptr(),
            1,
            [1u8; 32].as_ptr(),
            &mut e
        ));
        assert_eq!(e, Tox_Err_Bootstrap::BAD_HOST);

        let mut e = Tox_Err_Set_Info::OK;
        assert!(!tox_self_set_name(tox, null(), 3, &mut e));
        assert_eq!(e, Tox_Err_Set_Info::NULL);
        // NULL with length 0 is the empty name, as c-toxcore takes it.
        assert!(tox_self_set_name(tox, null(), 0, &mut e));
        assert_eq!(e, Tox_Err_Set_Info::OK);

        let mut e = Tox_Err_File_Send::OK;
        assert_eq!(
            tox_file_send(tox, 0, 0, 10, null(), null(), 4, &mut e),
            u32::MAX
        );
        assert_eq!(e, Tox_Err_File_Send::NULL);
        let mut e = Tox_Err_File_Send_Chunk::OK;
        assert!(!tox_file_send_chunk(tox, 0, 0, 0, null(), 10, &mut e));
        assert_eq!(e, Tox_Err_File_Send_Chunk::NULL);
        let mut e = Tox_Err_File_Get::OK;
        assert!(!tox_file_get_file_id(tox, 0, 0, null_mut(), &mut e));
        assert_eq!(e, Tox_Err_File_Get::NULL);

        let mut e = Tox_Err_Friend_Query::OK;
        tox_friend_add_norequest(tox, [7u8; 32].as_ptr(), null_mut());
        assert!(!tox_friend_get_name(tox, 0, null_mut(), &mut e));
        assert_eq!(e, Tox_Err_Friend_Query::NULL);

        // Getters with NULL buffers or instances write nothing and return.
        tox_self_get_address(tox, null_mut());
        tox_self_get_address(null(), null_mut());
        tox_self_get_friend_list(tox, null_mut());
        assert_eq!(tox_self_get_friend_list_size(null()), 0);
        assert_eq!(tox_get_savedata_size(null()), 0);
        tox_get_savedata(tox, null_mut());
        tox_iterate(null_mut(), null_mut());
        tox_options_set_ipv6_enabled(null_mut(), true);
        assert!(tox_options_get_ipv6_enabled(null()));
        tox_options_free(null_mut());
        tox_kill(null_mut());
        tox_kill(tox);
    }
}

#[test]
fn unknown_friends_and_oversized_inputs_are_refused() {
    let tox = instance(41060);
    // SAFETY: valid pointers throughout.
    unsafe {
        let text = vec![b'x'; 2000];
        let mut e = Tox_Err_Friend_Send_Message::OK;
        assert_eq!(
            tox_friend_send_message(tox, 99, 0, text.as_ptr(), 5, &mut e),
            u32::MAX
        );
        assert_eq!(e, Tox_Err_Friend_Send_Message::FRIEND_NOT_FOUND);
        assert_eq!(
            tox_friend_send_message(tox, 99, 0, text.as_ptr(), 1373, &mut e),
            u32::MAX
        );
        assert_eq!(e, Tox_Err_Friend_Send_Message::TOO_LONG);
        assert_eq!(
            tox_friend_send_message(tox, 99, 0, text.as_ptr(), 0, &mut e),
            u32::MAX
        );
        assert_eq!(e, Tox_Err_Friend_Send_Message::EMPTY);
        // A message type tox.h does not have.
        assert_eq!(
            tox_friend_send_message(tox, 0, 7, text.as_ptr(), 5, &mut e),
            u32::MAX
        );
        assert_eq!(e, Tox_Err_Friend_Send_Message::NULL);

        let mut e = Tox_Err_Set_Info::OK;
        assert!(!tox_self_set_name(tox, text.as_ptr(), 129, &mut e));
        assert_eq!(e, Tox_Err_Set_Info::TOO_LONG);
        assert!(!tox_self_set_status_message(
            tox,
            text.as_ptr(),
            1008,
            &mut e
        ));
        assert_eq!(e, Tox_Err_Set_Info::TOO_LONG);
        assert_eq!(
            tox_self_get_name_size(tox),
            0,
            "a refused name changes nothing"
        );

        // A friend request whose message is too long, and one to ourselves.
        let mut own = [0u8; 38];
        tox_self_get_address(tox, own.as_mut_ptr());
        let mut e = Tox_Err_Friend_Add::OK;
        assert_eq!(
            tox_friend_add(tox, own.as_ptr(), text.as_ptr(), 1100, &mut e),
            u32::MAX
        );
        assert_eq!(e, Tox_Err_Friend_Add::TOO_LONG);
        assert_eq!(
            tox_friend_add(tox, own.as_ptr(), text.as_ptr(), 5, &mut e),
            u32::MAX
        );
        assert_eq!(e, Tox_Err_Friend_Add::OWN_KEY);
        let mut bad = own;
        bad[37] ^= 1;
        assert_eq!(
            tox_friend_add(tox, bad.as_ptr(), text.as_ptr(), 5, &mut e),
            u32::MAX
        );
        assert_eq!(e, Tox_Err_Friend_Add::BAD_CHECKSUM);
        assert_eq!(tox_self_get_friend_list_size(tox), 0);

        let mut e = Tox_Err_Friend_Custom_Packet::OK;
        let mut packet = vec![200u8; 1400];
        assert!(!tox_friend_send_lossy_packet(
            tox,
            99,
            packet.as_ptr(),
            10,
            &mut e
        ));
        assert_eq!(e, Tox_Err_Friend_Custom_Packet::FRIEND_NOT_FOUND);
        assert!(!tox_friend_send_lossy_packet(
            tox,
            99,
            packet.as_ptr(),
            0,
            &mut e
        ));
        assert_eq!(e, Tox_Err_Friend_Custom_Packet::EMPTY);
        packet[0] = 10;
        assert!(!tox_friend_send_lossless_packet(
            tox,
            99,
            packet.as_ptr(),
            10,
            &mut e
        ));
        assert_eq!(e, Tox_Err_Friend_Custom_Packet::INVALID);

        let mut e = Tox_Err_File_Control::OK;
        assert!(!tox_file_control(tox, 99, 0, 0, &mut e));
        assert_eq!(e, Tox_Err_File_Control::FRIEND_NOT_FOUND);
        let mut e = Tox_Err_File_Seek::OK;
        assert!(!tox_file_seek(tox, 99, 0, 0, &mut e));
        assert_eq!(e, Tox_Err_File_Seek::FRIEND_NOT_FOUND);
        let mut e = Tox_Err_File_Send::OK;
        assert_eq!(
            tox_file_send(tox, 99, 0, 10, null(), text.as_ptr(), 256, &mut e),
            u32::MAX
        );
        assert_eq!(e, Tox_Err_File_Send::NAME_TOO_LONG);
        assert_eq!(
            tox_file_send(tox, 99, 0, 10, null(), text.as_ptr(), 3, &mut e),
            u32::MAX
        );
        assert_eq!(e, Tox_Err_File_Send::FRIEND_NOT_FOUND);

        let mut e = Tox_Err_Friend_Delete::OK;
        assert!(!tox_friend_delete(tox, 99, &mut e));
        assert_eq!(e, Tox_Err_Friend_Delete::FRIEND_NOT_FOUND);
        let mut e = Tox_Err_Friend_Query::OK;
        assert_eq!(tox_friend_get_name_size(tox, 99, &mut e), usize::MAX);
        assert_eq!(e, Tox_Err_Friend_Query::FRIEND_NOT_FOUND);
        let mut e = Tox_Err_Set_Typing::OK;
        assert!(!tox_self_set_typing(tox, 99, true, &mut e));
        assert_eq!(e, Tox_Err_Set_Typing::FRIEND_NOT_FOUND);

        // An unknown user status is ignored.
        tox_self_set_status(tox, 9);
        assert_eq!(tox_self_get_status(tox), Tox_User_Status::NONE);
        tox_kill(tox);
    }
}

#[test]
fn bad_savedata_and_options_are_refused() {
    let garbage = [0x55u8; 100];
    let mut options = Tox_Options {
        ipv6_enabled: false,
        local_discovery_enabled: false,
        start_port: 41120,
        end_port: 41170,
        savedata_type: Tox_Savedata_Type::TOX_SAVE as u32,
        savedata_data: garbage.as_ptr(),
        savedata_length: garbage.len(),
        ..Tox_Options::default()
    };
    let mut e = Tox_Err_New::OK;
    // SAFETY: valid options and pointers.
    unsafe {
        assert!(tox_new(&options, &mut e).is_null());
        assert_eq!(e, Tox_Err_New::LOAD_BAD_FORMAT);
        let mut encrypted = b"toxEsave".to_vec();
        encrypted.extend_from_slice(&[0u8; 80]);
        options.savedata_data = encrypted.as_ptr();
        options.savedata_length = encrypted.len();
        assert!(tox_new(&options, &mut e).is_null());
        assert_eq!(e, Tox_Err_New::LOAD_ENCRYPTED);
        options.savedata_data = null();
        options.savedata_length = 10;
        assert!(tox_new(&options, &mut e).is_null());
        assert_eq!(e, Tox_Err_New::NULL);
        options.savedata_type = Tox_Savedata_Type::SECRET_KEY as u32;
        options.savedata_data = garbage.as_ptr();
        options.savedata_length = 31;
        assert!(tox_new(&options, &mut e).is_null());
        assert_eq!(e, Tox_Err_New::LOAD_BAD_FORMAT);
        options.savedata_type = 17;
        assert!(tox_new(&options, &mut e).is_null());
        assert_eq!(e, Tox_Err_New::LOAD_BAD_FORMAT);
        options.savedata_type = Tox_Savedata_Type::NONE as u32;
        options.proxy_type = 9;
        assert!(tox_new(&options, &mut e).is_null());
        assert_eq!(e, Tox_Err_New::PROXY_BAD_TYPE);
        // tox_new's proxy checks, in c-toxcore's order: the port, then the host.
        options.proxy_type = crate::types::Tox_Proxy_Type::SOCKS5 as u32;
        let host = c"127.0.0.1";
        options.proxy_host = host.as_ptr();
        options.proxy_port = 0;
        assert!(tox_new(&options, &mut e).is_null());
        assert_eq!(e, Tox_Err_New::PROXY_BAD_PORT);
        options.proxy_port = 9050;
        options.proxy_host = null();
        assert!(tox_new(&options, &mut e).is_null());
        assert_eq!(e, Tox_Err_New::PROXY_BAD_HOST);
        for bad in [c"", c"no-such-host.invalid", c"::1"] {
            // ::1 is an IPv6 address, and ipv6_enabled is off.
            options.ipv6_enabled = false;
            options.proxy_host = bad.as_ptr();
            assert!(tox_new(&options, &mut e).is_null(), "{bad:?}");
            assert_eq!(e, Tox_Err_New::PROXY_BAD_HOST, "{bad:?}");
        }
    }
}

/// With a proxy the instance starts (it connects to relays through it) and sends no UDP:
/// its socket is on loopback, as with `udp_enabled = false`, whatever `udp_enabled` says.
#[test]
fn a_proxy_starts_an_instance_without_udp() {
    for kind in [
        crate::types::Tox_Proxy_Type::SOCKS5,
        crate::types::Tox_Proxy_Type::HTTP,
    ] {
        let host = c"127.0.0.1";
        let options = Tox_Options {
            udp_enabled: true,
            local_discovery_enabled: true,
            proxy_type: kind as u32,
            proxy_host: host.as_ptr(),
            proxy_port: 3128,
            ..Tox_Options::default()
        };
        let mut e = Tox_Err_New::OK;
        // SAFETY: valid options; the instance is killed below.
        unsafe {
            let tox = tox_new(&options, &mut e);
            assert_eq!(e, Tox_Err_New::OK);
            assert!(!tox.is_null());
            let addr = crate::handle::tox_ref(tox)
                .and_then(|t| t.lock().stepper.socket().local_addr().ok())
                .expect("the instance's socket");
            assert!(addr.ip().is_loopback(), "{addr}");
            tox_kill(tox);
        }
    }
}

/// A secret key given as savedata is the instance's identity, and its savedata loads back
/// into the same identity with its name and friends.
#[test]
fn savedata_round_trips_through_a_new_instance() {
    let secret = [0x42u8; 32];
    let mut options = Tox_Options {
        ipv6_enabled: false,
        local_discovery_enabled: false,
        start_port: 41180,
        end_port: 41230,
        savedata_type: Tox_Savedata_Type::SECRET_KEY as u32,
        savedata_data: secret.as_ptr(),
        savedata_length: 32,
        ..Tox_Options::default()
    };
    // SAFETY: valid options and pointers.
    unsafe {
        let tox = tox_new(&options, null_mut());
        assert!(!tox.is_null());
        let mut sk = [0u8; 32];
        tox_self_get_secret_key(tox, sk.as_mut_ptr());
        assert_eq!(sk, secret);
        assert!(tox_self_set_name(tox, b"rustox".as_ptr(), 6, null_mut()));
        assert_eq!(
            tox_friend_add_norequest(tox, [9u8; 32].as_ptr(), null_mut()),
            0
        );
        let mut address = [0u8; 38];
        tox_self_get_address(tox, address.as_mut_ptr());
        let mut saved = vec![0u8; tox_get_savedata_size(tox)];
        tox_get_savedata(tox, saved.as_mut_ptr());
        tox_kill(tox);

        options.savedata_type = Tox_Savedata_Type::TOX_SAVE as u32;
        options.savedata_data = saved.as_ptr();
        options.savedata_length = saved.len();
        let tox = tox_new(&options, null_mut());
        assert!(!tox.is_null());
        let mut again = [0u8; 38];
        tox_self_get_address(tox, again.as_mut_ptr());
        assert_eq!(again, address);
        let mut name = [0u8; 6];
        assert_eq!(tox_self_get_name_size(tox), 6);
        tox_self_get_name(tox, name.as_mut_ptr());
        assert_eq!(&name, b"rustox");
        assert_eq!(tox_self_get_friend_list_size(tox), 1);
        let mut pk = [0u8; 32];
        assert!(tox_friend_get_public_key(
            tox,
            0,
            pk.as_mut_ptr(),
            null_mut()
        ));
        assert_eq!(pk, [9u8; 32]);
        tox_kill(tox);
    }
}

/// A raw instance pointer that a test hands to another thread.
#[derive(Clone, Copy)]
struct Shared(*mut Tox);
// SAFETY: the library guards every instance for use from several threads (handle/mod.rs).
unsafe impl Send for Shared {}

/// The user data that tells side B's callbacks from A's (A passes NULL, 0).
const SIDE_B: *mut c_void = std::ptr::dangling_mut::<c_void>();

static ONLINE: [AtomicBool; 2] = [AtomicBool::new(false), AtomicBool::new(false)];
static ECHOED: AtomicU32 = AtomicU32::new(0);
static HEARD_ECHO: AtomicBool = AtomicBool::new(false);

unsafe extern "C" fn on_request(
    tox: *mut Tox,
    pk: *const u8,
    _: *const u8,
    _: usize,
    _: *mut c_void,
) {
    // SAFETY: called from tox_iterate with tox.h's arguments.
    unsafe { tox_friend_add_norequest(tox, pk, null_mut()) };
}

unsafe extern "C" fn on_connection(_: *mut Tox, _: u32, status: Tox_Connection, side: *mut c_void) {
    let side = side as usize;
    ONLINE[side].store(status != Tox_Connection::NONE, Ordering::SeqCst);
}

/// Side 1 echoes every message from inside the callback, and asks the library things
/// while it is there: the lock is not held against it.
unsafe extern "C" fn on_message(
    tox: *mut Tox,
    friend: u32,
    kind: Tox_Message_Type,
    text: *const u8,
    len: usize,
    side: *mut c_void,
) {
    // SAFETY: called from tox_iterate with tox.h's arguments.
    unsafe {
        if side as usize == 1 {
            let _ = tox_iteration_interval(tox);
            let _ = tox_self_get_name_size(tox);
            let mut e = Tox_Err_Friend_Send_Message::SENDQ;
            tox_friend_send_message(tox, friend, kind as u32, text, len, &mut e);
            assert_eq!(e, Tox_Err_Friend_Send_Message::OK);
            ECHOED.fetch_add(1, Ordering::SeqCst);
        } else {
            HEARD_ECHO.store(true, Ordering::SeqCst);
        }
    }
}

static IN_SLOW_CALLBACK: AtomicBool = AtomicBool::new(false);
static SLOW_CALLBACK_DONE: AtomicBool = AtomicBool::new(false);

/// A callback that takes its time and uses the instance at its end, while another thread
/// kills it.
unsafe extern "C" fn slow_receipt(tox: *mut Tox, _: u32, _: u32, _: *mut c_void) {
    IN_SLOW_CALLBACK.store(true, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: the instance is alive: tox_kill waits for this call's tox_iterate.
    unsafe {
        // Refused (the instance is being killed), not a use after free.
        let _ = tox_self_get_nospam(tox);
    }
    SLOW_CALLBACK_DONE.store(true, Ordering::SeqCst);
}

static KILLED_INSIDE: AtomicBool = AtomicBool::new(false);

/// Answers (its data packet acknowledges the message, so A gets a read receipt), then
/// kills its own instance.
unsafe extern "C" fn kill_from_inside(
    tox: *mut Tox,
    friend: u32,
    _: Tox_Message_Type,
    _: *const u8,
    _: usize,
    _: *mut c_void,
) {
    // SAFETY: tox.h's arguments; the kill is deferred to the end of tox_iterate.
    unsafe {
        tox_friend_send_message(tox, friend, 0, b"bye".as_ptr(), 3, null_mut());
        tox_kill(tox);
    }
    KILLED_INSIDE.store(true, Ordering::SeqCst);
}

fn iterate_until(toxes: &[*mut Tox], secs: u64, done: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(secs) {
        for (side, &tox) in toxes.iter().enumerate() {
            // SAFETY: live instances; the side number is the user data.
            unsafe { tox_iterate(tox, side as *mut c_void) };
        }
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    false
}

/// Two instances become friends over loopback; callbacks call back into the library; a
/// neighbour thread's `tox_kill` waits for a running callback; a callback's `tox_kill` takes
/// effect when its `tox_iterate` returns.
#[test]
fn callbacks_call_back_and_kill_waits_for_them() {
    let a = instance(41240);
    let b = instance(41300);
    // SAFETY: live instances and valid buffers throughout.
    unsafe {
        for (side, &tox) in [a, b].iter().enumerate() {
            crate::callbacks::tox_callback_friend_request(tox, Some(on_request));
            crate::callbacks::tox_callback_friend_connection_status(tox, Some(on_connection));
            crate::callbacks::tox_callback_friend_message(tox, Some(on_message));
            assert!(side < 2);
        }
        let mut dht = [[0u8; 32]; 2];
        let mut port = [0u16; 2];
        for (i, &tox) in [a, b].iter().enumerate() {
            tox_self_get_dht_id(tox, dht[i].as_mut_ptr());
            port[i] = tox_self_get_udp_port(tox, null_mut());
        }
        assert!(tox_bootstrap(
            a,
            c"127.0.0.1".as_ptr(),
            port[1],
            dht[1].as_ptr(),
            null_mut()
        ));
        assert!(tox_bootstrap(
            b,
            c"127.0.0.1".as_ptr(),
            port[0],
            dht[0].as_ptr(),
            null_mut()
        ));
        let mut address = [0u8; 38];
        tox_self_get_address(b, address.as_mut_ptr());
        assert_eq!(
            tox_friend_add(a, address.as_ptr(), b"hi".as_ptr(), 2, null_mut()),
            0
        );
        assert!(
            iterate_until(&[a, b], 60, || ONLINE[0].load(Ordering::SeqCst)
                && ONLINE[1].load(Ordering::SeqCst)),
            "the two instances never came online"
        );
        let mut e = Tox_Err_Friend_Send_Message::SENDQ;
        tox_friend_send_message(a, 0, 0, b"ping".as_ptr(), 4, &mut e);
        assert_eq!(e, Tox_Err_Friend_Send_Message::OK);
        assert!(
            iterate_until(&[a, b], 20, || HEARD_ECHO.load(Ordering::SeqCst)),
            "the echo sent from inside the callback never arrived"
        );
        assert_eq!(ECHOED.load(Ordering::SeqCst), 1);

        // B kills itself from inside the callback of A's next message (after its node
        // acknowledged it); A's read receipt callback is slow, and a neighbour thread kills A
        // while it runs.
        crate::callbacks::tox_callback_friend_message(b, Some(kill_from_inside));
        crate::callbacks::tox_callback_friend_read_receipt(a, Some(slow_receipt));
        tox_friend_send_message(a, 0, 0, b"again".as_ptr(), 5, &mut e);
        let b_port = port[1];
        let shared = Shared(a);
        let killer = std::thread::spawn(move || {
            let shared = shared;
            while !IN_SLOW_CALLBACK.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            tox_kill(shared.0);
            SLOW_CALLBACK_DONE.load(Ordering::SeqCst)
        });
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) {
            tox_iterate(a, null_mut());
            if IN_SLOW_CALLBACK.load(Ordering::SeqCst) {
                break;
            }
            if !KILLED_INSIDE.load(Ordering::SeqCst) {
                tox_iterate(b, SIDE_B);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        assert!(
            KILLED_INSIDE.load(Ordering::SeqCst),
            "B's message never arrived"
        );
        assert!(
            IN_SLOW_CALLBACK.load(Ordering::SeqCst),
            "A's read receipt never arrived"
        );
        assert!(
            killer.join().unwrap(),
            "tox_kill returned before the callback running on another thread was done"
        );
        // B's socket was closed when the tox_iterate that ran its callback returned.
        assert!(
            std::net::UdpSocket::bind(("0.0.0.0", b_port)).is_ok(),
            "the instance killed from its callback still holds its port"
        );
    }
}

static TYPING_SEEN: std::sync::Mutex<Vec<(bool, bool)>> = std::sync::Mutex::new(Vec::new());

unsafe extern "C" fn record_typing(tox: *mut Tox, friend: u32, typing: bool, _: *mut c_void) {
    // SAFETY: called from tox_iterate with tox.h's arguments.
    let getter = unsafe { tox_friend_get_typing(tox, friend, null_mut()) };
    TYPING_SEEN.lock().unwrap().push((typing, getter));
}

/// Inside a callback the getters say what that callback says, even when a later event of
/// the same iteration changes it again (as c-toxcore's getters do): the node's own state
/// runs ahead of the callbacks.
#[test]
fn getters_agree_with_the_callback_being_run() {
    let tox = instance(41460);
    // SAFETY: a live instance; events injected as the node would produce them.
    unsafe {
        assert_eq!(
            tox_friend_add_norequest(tox, [3u8; 32].as_ptr(), null_mut()),
            0
        );
        crate::callbacks::tox_callback_friend_typing(tox, Some(record_typing));
        {
            let instance = crate::handle::tox_ref(tox).unwrap();
            let mut state = instance.lock();
            for typing in [true, false, true] {
                state.pending.push(crate::event::Event::FriendTyping {
                    friend_number: 0,
                    typing,
                });
            }
        }
        tox_iterate(tox, null_mut());
        assert_eq!(
            *TYPING_SEEN.lock().unwrap(),
            vec![(true, true), (false, false), (true, true)]
        );
        assert!(tox_friend_get_typing(tox, 0, null_mut()));
        // A deleted friend's delivered state goes with it.
        assert!(tox_friend_delete(tox, 0, null_mut()));
        assert_eq!(
            tox_friend_add_norequest(tox, [4u8; 32].as_ptr(), null_mut()),
            0
        );
        assert!(!tox_friend_get_typing(tox, 0, null_mut()));
        tox_kill(tox);
    }
}
