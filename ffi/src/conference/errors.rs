//! The engine's [`ConferenceError`] as each tox.h function reports it: one mapping per
//! `Tox_Err_Conference_*` enum, following the return codes c-toxcore 0.2.18's tox.c
//! translates (`invite_friend`'s -1/-2/-3, `join_groupchat`'s -1 to -6,
//! `send_message_group`'s -1 to -4, `group_title_send`'s -1 to -3, the peer queries' -1 to
//! -3). An error a function cannot meet in c-toxcore (the engine's `Init` from a title
//! call, say) takes the code tox.h documents for "it did not work" in that function.

use rustox_core::conference::ConferenceError;

use crate::types::{
    Tox_Err_Conference_Delete, Tox_Err_Conference_Invite, Tox_Err_Conference_Join,
    Tox_Err_Conference_New, Tox_Err_Conference_Peer_Query, Tox_Err_Conference_Send_Message,
    Tox_Err_Conference_Set_Max_Offline, Tox_Err_Conference_Title,
};

/// `tox_conference_new`: its one failure, `INIT` (`add_groupchat` returned -1).
pub fn new_error(_: ConferenceError) -> Tox_Err_Conference_New {
    Tox_Err_Conference_New::INIT
}

/// `tox_conference_delete`: `del_groupchat` fails only for an unknown conference.
pub fn delete_error(_: ConferenceError) -> Tox_Err_Conference_Delete {
    Tox_Err_Conference_Delete::CONFERENCE_NOT_FOUND
}

/// `tox_conference_set_max_offline`: `group_set_max_frozen` fails only for an unknown
/// conference.
pub fn set_max_offline_error(_: ConferenceError) -> Tox_Err_Conference_Set_Max_Offline {
    Tox_Err_Conference_Set_Max_Offline::CONFERENCE_NOT_FOUND
}

/// The peer queries (`group_peername`, `group_peer_pubkey`, `group_peernumber_is_ours`,
/// `group_frozen_last_active`, ...): -1 conference, -2 peer, -3 not connected.
pub fn peer_query_error(e: ConferenceError) -> Tox_Err_Conference_Peer_Query {
    match e {
        ConferenceError::NotFound => Tox_Err_Conference_Peer_Query::CONFERENCE_NOT_FOUND,
        ConferenceError::NoConnection => Tox_Err_Conference_Peer_Query::NO_CONNECTION,
        _ => Tox_Err_Conference_Peer_Query::PEER_NOT_FOUND,
    }
}

/// `tox_conference_invite` (`invite_friend`): -1 conference, -3 not connected to it yet,
/// -2 the invite could not be sent (no such friend, or it is offline).
pub fn invite_error(e: ConferenceError) -> Tox_Err_Conference_Invite {
    match e {
        ConferenceError::NotFound => Tox_Err_Conference_Invite::CONFERENCE_NOT_FOUND,
        ConferenceError::NoConnection => Tox_Err_Conference_Invite::NO_CONNECTION,
        _ => Tox_Err_Conference_Invite::FAIL_SEND,
    }
}

/// `tox_conference_join` (`join_groupchat`): -1 cookie length, -2 type, -3 friend, -4
/// already in it, -5 no slot, -6 the invite response could not be sent.
pub fn join_error(e: ConferenceError) -> Tox_Err_Conference_Join {
    match e {
        ConferenceError::InvalidLength => Tox_Err_Conference_Join::INVALID_LENGTH,
        ConferenceError::WrongType => Tox_Err_Conference_Join::WRONG_TYPE,
        ConferenceError::FriendNotFound | ConferenceError::NotFound => {
            Tox_Err_Conference_Join::FRIEND_NOT_FOUND
        }
        ConferenceError::Duplicate => Tox_Err_Conference_Join::DUPLICATE,
        ConferenceError::FailSend | ConferenceError::NoConnection => {
            Tox_Err_Conference_Join::FAIL_SEND
        }
        ConferenceError::Init | ConferenceError::PeerNotFound => Tox_Err_Conference_Join::INIT_FAIL,
    }
}

/// `tox_conference_send_message` (`send_message_group`): -1 conference, -2 too long, -3
/// not connected (or no peer connected), -4 sent to no connection.
pub fn send_message_error(e: ConferenceError) -> Tox_Err_Conference_Send_Message {
    match e {
        ConferenceError::NotFound => Tox_Err_Conference_Send_Message::CONFERENCE_NOT_FOUND,
        ConferenceError::InvalidLength => Tox_Err_Conference_Send_Message::TOO_LONG,
        ConferenceError::NoConnection => Tox_Err_Conference_Send_Message::NO_CONNECTION,
        _ => Tox_Err_Conference_Send_Message::FAIL_SEND,
    }
}

/// The title calls (`group_title_get`, `group_title_send`): -1 conference, -2 length (or
/// no title set, for the getters), -3 the title could not be sent.
pub fn title_error(e: ConferenceError) -> Tox_Err_Conference_Title {
    match e {
        ConferenceError::NotFound => Tox_Err_Conference_Title::CONFERENCE_NOT_FOUND,
        ConferenceError::InvalidLength => Tox_Err_Conference_Title::INVALID_LENGTH,
        _ => Tox_Err_Conference_Title::FAIL_SEND,
    }
}

#[cfg(test)]
mod tests {
    use super::{
        delete_error, invite_error, join_error, new_error, peer_query_error, send_message_error,
        set_max_offline_error, title_error, ConferenceError, Tox_Err_Conference_Delete,
        Tox_Err_Conference_Invite, Tox_Err_Conference_Join, Tox_Err_Conference_New,
        Tox_Err_Conference_Peer_Query, Tox_Err_Conference_Send_Message,
        Tox_Err_Conference_Set_Max_Offline, Tox_Err_Conference_Title,
    };

    const ALL: [ConferenceError; 9] = [
        ConferenceError::NotFound,
        ConferenceError::PeerNotFound,
        ConferenceError::NoConnection,
        ConferenceError::FailSend,
        ConferenceError::InvalidLength,
        ConferenceError::FriendNotFound,
        ConferenceError::WrongType,
        ConferenceError::Duplicate,
        ConferenceError::Init,
    ];

    #[test]
    fn an_unknown_conference_is_conference_not_found_wherever_tox_h_has_the_code() {
        let e = ConferenceError::NotFound;
        assert_eq!(
            delete_error(e),
            Tox_Err_Conference_Delete::CONFERENCE_NOT_FOUND
        );
        assert_eq!(
            set_max_offline_error(e),
            Tox_Err_Conference_Set_Max_Offline::CONFERENCE_NOT_FOUND
        );
        assert_eq!(
            peer_query_error(e),
            Tox_Err_Conference_Peer_Query::CONFERENCE_NOT_FOUND
        );
        assert_eq!(
            invite_error(e),
            Tox_Err_Conference_Invite::CONFERENCE_NOT_FOUND
        );
        assert_eq!(
            send_message_error(e),
            Tox_Err_Conference_Send_Message::CONFERENCE_NOT_FOUND
        );
        assert_eq!(
            title_error(e),
            Tox_Err_Conference_Title::CONFERENCE_NOT_FOUND
        );
    }

    #[test]
    fn peer_queries_tell_peer_from_conference_from_connection() {
        assert_eq!(
            peer_query_error(ConferenceError::PeerNotFound),
            Tox_Err_Conference_Peer_Query::PEER_NOT_FOUND
        );
        assert_eq!(
            peer_query_error(ConferenceError::NoConnection),
            Tox_Err_Conference_Peer_Query::NO_CONNECTION
        );
    }

    #[test]
    fn invite_fails_to_send_unless_the_conference_is_missing_or_unconnected() {
        assert_eq!(
            invite_error(ConferenceError::NoConnection),
            Tox_Err_Conference_Invite::NO_CONNECTION
        );
        for e in ALL {
            if !matches!(e, ConferenceError::NotFound | ConferenceError::NoConnection) {
                assert_eq!(
                    invite_error(e),
                    Tox_Err_Conference_Invite::FAIL_SEND,
                    "{e:?}"
                );
            }
        }
    }

    #[test]
    fn join_has_a_code_for_each_of_join_groupchats_failures() {
        use Tox_Err_Conference_Join as J;
        let expected = [
            (ConferenceError::InvalidLength, J::INVALID_LENGTH),
            (ConferenceError::WrongType, J::WRONG_TYPE),
            (ConferenceError::FriendNotFound, J::FRIEND_NOT_FOUND),
            (ConferenceError::Duplicate, J::DUPLICATE),
            (ConferenceError::Init, J::INIT_FAIL),
            (ConferenceError::FailSend, J::FAIL_SEND),
        ];
        for (e, code) in expected {
            assert_eq!(join_error(e), code, "{e:?}");
        }
        for e in ALL {
            assert_ne!(join_error(e), J::OK, "{e:?}");
        }
    }

    #[test]
    fn send_message_and_title_map_length_and_connection() {
        assert_eq!(
            send_message_error(ConferenceError::InvalidLength),
            Tox_Err_Conference_Send_Message::TOO_LONG
        );
        assert_eq!(
            send_message_error(ConferenceError::NoConnection),
            Tox_Err_Conference_Send_Message::NO_CONNECTION
        );
        assert_eq!(
            send_message_error(ConferenceError::FailSend),
            Tox_Err_Conference_Send_Message::FAIL_SEND
        );
        assert_eq!(
            title_error(ConferenceError::InvalidLength),
            Tox_Err_Conference_Title::INVALID_LENGTH
        );
        assert_eq!(
            title_error(ConferenceError::FailSend),
            Tox_Err_Conference_Title::FAIL_SEND
        );
        for e in ALL {
            assert_ne!(send_message_error(e), Tox_Err_Conference_Send_Message::OK);
            assert_ne!(title_error(e), Tox_Err_Conference_Title::OK);
            assert_ne!(new_error(e), Tox_Err_Conference_New::OK);
        }
    }
}
