//! The conference entry points on what reaches them before any instance does: a NULL
//! `Tox *` (c-toxcore asserts; here each answers as for an unknown conference) and the
//! arguments checked before the node is asked.

use std::ffi::c_void;
use std::ptr::{null, null_mut};

use super::*;
use crate::handle::Tox;
use crate::types::{
    Tox_Conference_Type, Tox_Err_Conference_By_Id, Tox_Err_Conference_By_Uid,
    Tox_Err_Conference_Delete, Tox_Err_Conference_Get_Type, Tox_Err_Conference_Invite,
    Tox_Err_Conference_Join, Tox_Err_Conference_New, Tox_Err_Conference_Peer_Query,
    Tox_Err_Conference_Send_Message, Tox_Err_Conference_Set_Max_Offline, Tox_Err_Conference_Title,
};

#[test]
fn a_null_instance_has_no_conference() {
    type Q = Tox_Err_Conference_Peer_Query;
    let tox: *mut Tox = null_mut();
    let mut buf = [5u8; 1400];
    let b = buf.as_mut_ptr();
    // SAFETY (every call): `tox` is NULL; the other pointers are NULL or point to buffers
    // of tox.h's sizes.
    unsafe {
        let mut e = Tox_Err_Conference_New::OK;
        assert_eq!(tox_conference_new(tox, &mut e), u32::MAX);
        assert_eq!(e, Tox_Err_Conference_New::INIT);
        assert_eq!(tox_conference_get_chatlist_size(tox), 0);
        let mut list = [7u32; 2];
        tox_conference_get_chatlist(tox, list.as_mut_ptr());
        tox_conference_get_chatlist(tox, null_mut());
        assert_eq!(list, [7, 7], "nothing written");

        let mut e = Tox_Err_Conference_Delete::OK;
        assert!(!tox_conference_delete(tox, 0, &mut e));
        assert_eq!(e, Tox_Err_Conference_Delete::CONFERENCE_NOT_FOUND);

        let mut q = Q::OK;
        assert_eq!(tox_conference_peer_count(tox, 0, &mut q), u32::MAX);
        assert_eq!(q, Q::CONFERENCE_NOT_FOUND);
        q = Q::OK;
        assert_eq!(
            tox_conference_peer_get_name_size(tox, 0, 0, &mut q),
            usize::MAX
        );
        assert_eq!(q, Q::CONFERENCE_NOT_FOUND);
        q = Q::OK;
        assert!(!tox_conference_peer_get_name(tox, 0, 0, b, &mut q));
        assert_eq!(q, Q::CONFERENCE_NOT_FOUND);
        q = Q::OK;
        assert!(!tox_conference_peer_get_public_key(tox, 0, 0, b, &mut q));
        assert_eq!(q, Q::CONFERENCE_NOT_FOUND);
        q = Q::OK;
        assert!(!tox_conference_peer_number_is_ours(tox, 0, 0, &mut q));
        assert_eq!(q, Q::CONFERENCE_NOT_FOUND);
        q = Q::OK;
        assert_eq!(tox_conference_offline_peer_count(tox, 0, &mut q), u32::MAX);
        assert_eq!(q, Q::CONFERENCE_NOT_FOUND);
        q = Q::OK;
        assert_eq!(
            tox_conference_offline_peer_get_name_size(tox, 0, 0, &mut q),
            usize::MAX
        );
        assert_eq!(q, Q::CONFERENCE_NOT_FOUND);
        q = Q::OK;
        assert!(!tox_conference_offline_peer_get_name(tox, 0, 0, b, &mut q));
        assert_eq!(q, Q::CONFERENCE_NOT_FOUND);
        q = Q::OK;
        assert!(!tox_conference_offline_peer_get_public_key(
            tox, 0, 0, b, &mut q
        ));
        assert_eq!(q, Q::CONFERENCE_NOT_FOUND);
        q = Q::OK;
        assert_eq!(
            tox_conference_offline_peer_get_last_active(tox, 0, 0, &mut q),
            u64::MAX
        );
        assert_eq!(q, Q::CONFERENCE_NOT_FOUND);

        let mut e = Tox_Err_Conference_Set_Max_Offline::OK;
        assert!(!tox_conference_set_max_offline(tox, 0, 10, &mut e));
        assert_eq!(e, Tox_Err_Conference_Set_Max_Offline::CONFERENCE_NOT_FOUND);
        let mut e = Tox_Err_Conference_Invite::OK;
        assert!(!tox_conference_invite(tox, 0, 0, &mut e));
        assert_eq!(e, Tox_Err_Conference_Invite::CONFERENCE_NOT_FOUND);
        let mut e = Tox_Err_Conference_Send_Message::OK;
        assert!(!tox_conference_send_message(
            tox,
            0,
            0,
            b"hi".as_ptr(),
            2,
            &mut e
        ));
        assert_eq!(e, Tox_Err_Conference_Send_Message::CONFERENCE_NOT_FOUND);

        let mut t = Tox_Err_Conference_Title::OK;
        assert_eq!(tox_conference_get_title_size(tox, 0, &mut t), usize::MAX);
        assert_eq!(t, Tox_Err_Conference_Title::CONFERENCE_NOT_FOUND);
        t = Tox_Err_Conference_Title::OK;
        assert!(!tox_conference_get_title(tox, 0, b, &mut t));
        assert_eq!(t, Tox_Err_Conference_Title::CONFERENCE_NOT_FOUND);
        t = Tox_Err_Conference_Title::OK;
        assert!(!tox_conference_set_title(tox, 0, b"t".as_ptr(), 1, &mut t));
        assert_eq!(t, Tox_Err_Conference_Title::CONFERENCE_NOT_FOUND);

        let mut g = Tox_Err_Conference_Get_Type::OK;
        assert_eq!(tox_conference_get_type(tox, 0, &mut g), u32::MAX);
        assert_eq!(g, Tox_Err_Conference_Get_Type::CONFERENCE_NOT_FOUND);

        let id = [1u8; 32];
        let mut e = Tox_Err_Conference_By_Id::OK;
        assert_eq!(tox_conference_by_id(tox, id.as_ptr(), &mut e), u32::MAX);
        assert_eq!(e, Tox_Err_Conference_By_Id::NOT_FOUND);
        assert_eq!(tox_conference_by_id(tox, null(), &mut e), u32::MAX);
        assert_eq!(e, Tox_Err_Conference_By_Id::NULL);
        let mut e = Tox_Err_Conference_By_Uid::OK;
        assert_eq!(tox_conference_by_uid(tox, id.as_ptr(), &mut e), u32::MAX);
        assert_eq!(e, Tox_Err_Conference_By_Uid::NOT_FOUND);
        assert_eq!(tox_conference_by_uid(tox, null(), &mut e), u32::MAX);
        assert_eq!(e, Tox_Err_Conference_By_Uid::NULL);
        assert!(!tox_conference_get_id(tox, 0, b));
        assert!(!tox_conference_get_uid(tox, 0, b));
        assert!(!tox_conference_get_id(tox, 0, null_mut()));

        // No error pointer: nothing to write, the same answers.
        assert_eq!(tox_conference_new(tox, null_mut()), u32::MAX);
        assert_eq!(tox_conference_peer_count(tox, 0, null_mut()), u32::MAX);
    }
    assert!(buf.iter().all(|&x| x == 5), "no output buffer written");
}

#[test]
fn join_checks_the_cookie_before_the_instance() {
    let join = |cookie: *const u8, length: usize| {
        let mut e = Tox_Err_Conference_Join::OK;
        // SAFETY: `tox` is NULL; `cookie` is NULL or has `length` bytes.
        let n = unsafe { tox_conference_join(null_mut(), 0, cookie, length, &mut e) };
        assert_eq!(n, u32::MAX);
        e
    };
    let mut cookie = [0u8; COOKIE_LENGTH + 1];
    assert_eq!(
        join(cookie.as_ptr(), COOKIE_LENGTH - 1),
        Tox_Err_Conference_Join::INVALID_LENGTH
    );
    assert_eq!(
        join(cookie.as_ptr(), COOKIE_LENGTH + 1),
        Tox_Err_Conference_Join::INVALID_LENGTH
    );
    assert_eq!(join(null(), 0), Tox_Err_Conference_Join::INVALID_LENGTH);
    assert_eq!(
        join(null(), COOKIE_LENGTH),
        Tox_Err_Conference_Join::INVALID_LENGTH
    );
    for kind in [Tox_Conference_Type::AV as u8, 2, 255] {
        cookie[2] = kind;
        assert_eq!(
            join(cookie.as_ptr(), COOKIE_LENGTH),
            Tox_Err_Conference_Join::WRONG_TYPE,
            "type byte {kind}"
        );
    }
    // A well-formed text cookie gets past the checks to the (missing) instance.
    cookie[2] = Tox_Conference_Type::TEXT as u8;
    assert_eq!(
        join(cookie.as_ptr(), COOKIE_LENGTH),
        Tox_Err_Conference_Join::FRIEND_NOT_FOUND
    );
}

#[test]
fn the_callbacks_register_on_a_null_instance_without_effect() {
    unsafe extern "C" fn connected(_: *mut Tox, _: u32, _: *mut c_void) {}
    // SAFETY (every call): a NULL instance is ignored.
    unsafe {
        crate::callbacks::tox_callback_conference_invite(null_mut(), None);
        crate::callbacks::tox_callback_conference_connected(null_mut(), Some(connected));
        crate::callbacks::tox_callback_conference_message(null_mut(), None);
        crate::callbacks::tox_callback_conference_title(null_mut(), None);
        crate::callbacks::tox_callback_conference_peer_name(null_mut(), None);
        crate::callbacks::tox_callback_conference_peer_list_changed(null_mut(), Some(connected));
    }
}

/// An instance on loopback with the name `name`, from `savedata` when given.
fn instance(name: &[u8], savedata: Option<&[u8]>) -> *mut Tox {
    use crate::options::Tox_Options;
    use crate::types::{Tox_Err_New, Tox_Savedata_Type};
    let port = rustox_testkit::net::free_udp_port();
    let mut options = Tox_Options {
        ipv6_enabled: false,
        local_discovery_enabled: false,
        start_port: port,
        end_port: port,
        ..Tox_Options::default()
    };
    options.savedata_type = Tox_Savedata_Type::NONE as u32;
    if let Some(data) = savedata {
        options.savedata_type = Tox_Savedata_Type::TOX_SAVE as u32;
        options.savedata_data = data.as_ptr();
        options.savedata_length = data.len();
    }
    let mut error = Tox_Err_New::MALLOC;
    // SAFETY: a valid options struct (its savedata alive during the call) and error pointer.
    let tox = unsafe { crate::lifecycle::tox_new(&options, &mut error) };
    assert_eq!(error, Tox_Err_New::OK);
    // SAFETY: a live instance; `name` has its length.
    assert!(unsafe {
        crate::self_info::tox_self_set_name(tox, name.as_ptr(), name.len(), null_mut())
    });
    tox
}

/// The conference numbers `tox` lists.
fn chatlist(tox: *mut Tox) -> Vec<u32> {
    // SAFETY: a live instance; the list is sized by its size.
    unsafe {
        let mut list = vec![0u32; tox_conference_get_chatlist_size(tox)];
        tox_conference_get_chatlist(tox, list.as_mut_ptr());
        list
    }
}

/// What c-toxcore 0.2.18 answers for a conference whose only peer is its founder (checked
/// against Debian's library by ffi/tests/conference.rs, whose C client makes the same
/// calls), and the conferences a profile brings back.
#[test]
fn a_conference_of_one_answers_as_c_toxcores_and_comes_back_from_the_savedata() {
    type Q = Tox_Err_Conference_Peer_Query;
    let tox = instance(b"me", None);
    // SAFETY (every call): `tox` is live until the `tox_kill` at the end; every buffer
    // has tox.h's size for its call.
    unsafe {
        assert_eq!(chatlist(tox), Vec::<u32>::new());
        let mut e = Tox_Err_Conference_New::INIT;
        assert_eq!(tox_conference_new(tox, &mut e), 0);
        assert_eq!(e, Tox_Err_Conference_New::OK);
        assert_eq!(chatlist(tox), [0]);
        let mut g = Tox_Err_Conference_Get_Type::CONFERENCE_NOT_FOUND;
        assert_eq!(tox_conference_get_type(tox, 0, &mut g), 0);
        assert_eq!(g, Tox_Err_Conference_Get_Type::OK);

        let mut q = Q::CONFERENCE_NOT_FOUND;
        assert_eq!(tox_conference_peer_count(tox, 0, &mut q), 1);
        assert_eq!(q, Q::OK);
        assert_eq!(tox_conference_offline_peer_count(tox, 0, &mut q), 0);
        assert_eq!(tox_conference_peer_get_name_size(tox, 0, 0, &mut q), 2);
        let mut name = [0u8; 2];
        assert!(tox_conference_peer_get_name(
            tox,
            0,
            0,
            name.as_mut_ptr(),
            &mut q
        ));
        assert_eq!(&name, b"me");
        assert!(tox_conference_peer_number_is_ours(tox, 0, 0, &mut q));
        assert_eq!(q, Q::OK);
        assert!(!tox_conference_peer_number_is_ours(tox, 0, 1, &mut q));
        assert_eq!(q, Q::PEER_NOT_FOUND);
        assert!(!tox_conference_offline_peer_get_name(
            tox,
            0,
            0,
            name.as_mut_ptr(),
            &mut q
        ));
        assert_eq!(q, Q::PEER_NOT_FOUND);
        assert_eq!(
            tox_conference_offline_peer_get_last_active(tox, 0, 0, &mut q),
            u64::MAX
        );
        assert_eq!(q, Q::PEER_NOT_FOUND);

        let mut t = Tox_Err_Conference_Title::OK;
        assert_eq!(tox_conference_get_title_size(tox, 0, &mut t), usize::MAX);
        assert_eq!(t, Tox_Err_Conference_Title::INVALID_LENGTH, "no title yet");
        assert!(tox_conference_set_title(
            tox,
            0,
            b"Topic".as_ptr(),
            5,
            &mut t
        ));
        assert_eq!(t, Tox_Err_Conference_Title::OK);
        assert!(tox_conference_set_title(
            tox,
            0,
            b"Topic".as_ptr(),
            5,
            &mut t
        ));
        let long = [b'x'; 129];
        assert!(!tox_conference_set_title(
            tox,
            0,
            long.as_ptr(),
            129,
            &mut t
        ));
        assert_eq!(t, Tox_Err_Conference_Title::INVALID_LENGTH);
        assert!(!tox_conference_set_title(tox, 0, null(), 0, &mut t));
        assert_eq!(t, Tox_Err_Conference_Title::INVALID_LENGTH);
        assert_eq!(tox_conference_get_title_size(tox, 0, &mut t), 5);
        let mut title = [0u8; 5];
        assert!(tox_conference_get_title(tox, 0, title.as_mut_ptr(), &mut t));
        assert_eq!(&title, b"Topic");

        let mut s = Tox_Err_Conference_Send_Message::OK;
        let text = [b'm'; MAX_MESSAGE_LEN + 1];
        assert!(!tox_conference_send_message(
            tox,
            0,
            0,
            text.as_ptr(),
            MAX_MESSAGE_LEN,
            &mut s
        ));
        assert_eq!(s, Tox_Err_Conference_Send_Message::NO_CONNECTION, "alone");
        assert!(!tox_conference_send_message(
            tox,
            0,
            1,
            text.as_ptr(),
            MAX_MESSAGE_LEN + 1,
            &mut s
        ));
        assert_eq!(s, Tox_Err_Conference_Send_Message::TOO_LONG);
        let mut i = Tox_Err_Conference_Invite::OK;
        assert!(!tox_conference_invite(tox, 0, 0, &mut i));
        assert_eq!(i, Tox_Err_Conference_Invite::FAIL_SEND, "no friend 0");
        let mut j = Tox_Err_Conference_Join::OK;
        let mut cookie = [0u8; COOKIE_LENGTH];
        assert_eq!(
            tox_conference_join(tox, 0, cookie.as_ptr(), COOKIE_LENGTH, &mut j),
            u32::MAX
        );
        assert_eq!(j, Tox_Err_Conference_Join::FRIEND_NOT_FOUND);

        let mut id = [0u8; 32];
        assert!(tox_conference_get_id(tox, 0, id.as_mut_ptr()));
        assert!(tox_conference_get_id(tox, 0, null_mut()));
        let mut uid = [0u8; 32];
        assert!(tox_conference_get_uid(tox, 0, uid.as_mut_ptr()));
        assert_eq!(id, uid);
        let mut b = Tox_Err_Conference_By_Id::NULL;
        assert_eq!(tox_conference_by_id(tox, id.as_ptr(), &mut b), 0);
        assert_eq!(b, Tox_Err_Conference_By_Id::OK);
        let mut bu = Tox_Err_Conference_By_Uid::NULL;
        assert_eq!(tox_conference_by_uid(tox, id.as_ptr(), &mut bu), 0);
        assert_eq!(bu, Tox_Err_Conference_By_Uid::OK);
        cookie[3..].copy_from_slice(&id);
        assert_eq!(
            tox_conference_join(tox, 0, cookie.as_ptr(), COOKIE_LENGTH, &mut j),
            u32::MAX
        );
        assert_eq!(j, Tox_Err_Conference_Join::FRIEND_NOT_FOUND, "friend first");

        let mut m = Tox_Err_Conference_Set_Max_Offline::CONFERENCE_NOT_FOUND;
        assert!(tox_conference_set_max_offline(tox, 0, 3, &mut m));
        assert_eq!(m, Tox_Err_Conference_Set_Max_Offline::OK);

        // Numbers: the lowest free one is reused.
        assert_eq!(tox_conference_new(tox, null_mut()), 1);
        assert_eq!(tox_conference_new(tox, null_mut()), 2);
        let mut d = Tox_Err_Conference_Delete::OK;
        assert!(tox_conference_delete(tox, 1, &mut d));
        assert_eq!(d, Tox_Err_Conference_Delete::OK);
        assert!(!tox_conference_delete(tox, 1, &mut d));
        assert_eq!(d, Tox_Err_Conference_Delete::CONFERENCE_NOT_FOUND);
        assert_eq!(chatlist(tox), [0, 2]);
        assert_eq!(tox_conference_peer_count(tox, 1, &mut q), u32::MAX);
        assert_eq!(q, Q::CONFERENCE_NOT_FOUND);
        assert_eq!(tox_conference_new(tox, null_mut()), 1);
        assert_eq!(chatlist(tox), [0, 1, 2]);

        // The profile keeps the conferences; the titled one comes back with its title.
        let mut save = vec![0u8; crate::lifecycle::tox_get_savedata_size(tox)];
        crate::lifecycle::tox_get_savedata(tox, save.as_mut_ptr());
        crate::lifecycle::tox_kill(tox);
        let again = instance(b"me", Some(&save));
        assert_eq!(chatlist(again).len(), 3);
        let n = tox_conference_by_id(again, id.as_ptr(), &mut b);
        assert_eq!(b, Tox_Err_Conference_By_Id::OK);
        assert_eq!(tox_conference_get_title_size(again, n, &mut t), 5);
        assert!(tox_conference_get_title(
            again,
            n,
            title.as_mut_ptr(),
            &mut t
        ));
        assert_eq!(&title, b"Topic");
        assert_eq!(tox_conference_peer_count(again, n, &mut q), 1);
        assert!(tox_conference_peer_number_is_ours(again, n, 0, &mut q));
        crate::lifecycle::tox_kill(again);
    }
}
