/*
 * conference.c: tox.h's conferences as a C client sees them, written against c-toxcore
 * 0.2.18's tox.h.
 *
 * Three Tox instances in one process on loopback, each bootstrapped from its friends:
 * alice befriends bob, bob befriends carol (alice and carol are strangers). alice creates a
 * conference, sets its title and invites bob; bob joins and invites carol; carol joins
 * through bob. Everyone sends a message and an action, alice a message of the longest
 * length; everyone changes its name; carol changes the title. Then the error codes of
 * every function for bad conference numbers, bad peer numbers, too long titles and
 * messages, bad cookies and NULL arguments; carol is saved, killed and brought back from
 * its savedata (the conference listed with its title, its peers offline until it rejoins);
 * bob deletes the conference; alice's conference numbers are reused lowest first.
 *
 * Output: `LIB <path>`, then phases (`PHASE <name>`), each followed by the callbacks each
 * instance saw in it (`CB <who> ...`, sorted, each distinct line once: how often a peer
 * list change or a repeated name is reported depends on packet timing) and the answers of
 * the queries made after it (`Q <who> ...`, in call order). Keys, ids and cookies never
 * appear: a key is printed as the name of the instance it belongs to, an id as whether it
 * equals alice's. The same source is built against Debian's libtoxcore.so.2 and rustox's;
 * ffi/tests/conference.rs compares the two outputs line by line.
 *
 * Usage: conference <port a> <port b> <port c>. Ends with `OK`; failures print
 * `FAIL <reason>` on stderr and exit 1.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tox/tox.h>

#include "testkit.h"

#define MAX_LINES 512
#define LINE 256
/* MAX_GROUP_MESSAGE_DATA_LEN of group.c: the longest conference message. */
#define MAX_MESSAGE 1363

struct who {
    const char *label;
    Tox *tox;
    uint16_t port;
    uint8_t pk[TOX_PUBLIC_KEY_SIZE];
    /* this phase's callback lines */
    char lines[MAX_LINES][LINE];
    int n_lines;
    /* the last invite */
    uint8_t cookie[64];
    size_t cookie_len;
    uint32_t inviter;
    bool invited;
    bool connected;
    int messages; /* messages from other peers, this phase */
    char order[LINE]; /* this phase's callbacks but messages, in the order they came */
};

static struct who people[3];
static struct who *alice = &people[0], *bob = &people[1], *carol = &people[2];
static uint8_t alice_id[TOX_CONFERENCE_ID_SIZE];
/* While carol rejoins after her reload, the order in which her peers come back, and which
 * name and peer list callbacks that takes, depend on packet timing: those callbacks are
 * not recorded, and her peers are listed by name rather than by number from then on. */
static bool rejoining;
static const char *current_phase = "";
static bool carol_reloaded;

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

/* Appends a callback's code to `w`'s order of this phase: I(nvite), C(onnected),
 * T(itle), N(ame) and whose, P(eer list changed). */
static void order(struct who *w, const char *code)
{
    size_t len = strlen(w->order);
    if (len + strlen(code) + 2 < sizeof w->order) {
        snprintf(w->order + len, sizeof w->order - len, "%s%s", len == 0 ? "" : " ", code);
    }
}

/* Records one callback line for `w`, once per phase. */
static void note(struct who *w, const char *fmt, ...)
{
    char line[LINE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    for (int i = 0; i < w->n_lines; ++i) {
        if (strcmp(w->lines[i], line) == 0) {
            return;
        }
    }
    if (w->n_lines == MAX_LINES) {
        fail("%s: too many callback lines", w->label);
    }
    strcpy(w->lines[w->n_lines++], line);
}

/* The name of the instance whose key `pk` is, or "stranger". */
static const char *whose(const uint8_t *pk)
{
    for (int i = 0; i < 3; ++i) {
        if (memcmp(pk, people[i].pk, TOX_PUBLIC_KEY_SIZE) == 0) {
            return people[i].label;
        }
    }
    return "stranger";
}

/* Whose key peer `peer` of `conference` has, as `w` sees it, or "?". */
static const char *peer_whose(struct who *w, uint32_t conference, uint32_t peer)
{
    uint8_t pk[TOX_PUBLIC_KEY_SIZE];
    if (!tox_conference_peer_get_public_key(w->tox, conference, peer, pk, NULL)) {
        return "?";
    }
    return whose(pk);
}

static void text(char *out, size_t cap, const uint8_t *bytes, size_t len)
{
    if (len > 40) {
        snprintf(out, cap, "<%zu bytes>", len);
        return;
    }
    snprintf(out, cap, "%.*s", (int)len, (const char *)bytes);
}

static void on_invite(Tox *tox, uint32_t friend_number, Tox_Conference_Type type, const uint8_t *cookie,
                      size_t length, void *user_data)
{
    struct who *w = user_data;
    if (length <= sizeof w->cookie) {
        memcpy(w->cookie, cookie, length);
    }
    w->cookie_len = length;
    w->inviter = friend_number;
    w->invited = true;
    bool id_is_alices = length == 35 && memcmp(cookie + 3, alice_id, TOX_CONFERENCE_ID_SIZE) == 0;
    order(w, "I");
    note(w, "invite friend=%u type=%d length=%zu number=%u type_byte=%u id_is_alices=%d", friend_number,
         (int)type, length, length >= 2 ? (unsigned)(cookie[0] << 8 | cookie[1]) : 0u,
         length >= 3 ? (unsigned)cookie[2] : 0u, id_is_alices);
}

static void on_connected(Tox *tox, uint32_t conference_number, void *user_data)
{
    struct who *w = user_data;
    w->connected = true;
    order(w, "C");
    note(w, "connected conference=%u", conference_number);
}

static void on_message(Tox *tox, uint32_t conference_number, uint32_t peer_number, Tox_Message_Type type,
                       const uint8_t *message, size_t length, void *user_data)
{
    struct who *w = user_data;
    Tox_Err_Conference_Peer_Query err;
    bool ours = tox_conference_peer_number_is_ours(tox, conference_number, peer_number, &err);
    if (ours) {
        /* c-toxcore hears its own message when a peer relays it back (packet timing). */
        fprintf(stderr, "%s heard its own message back\n", w->label);
        return;
    }
    if (message[length] != 0) {
        fail("%s: conference message not NUL-terminated", w->label);
    }
    char t[64];
    text(t, sizeof t, message, length);
    ++w->messages;
    note(w, "message conference=%u peer=%u(%s) type=%d \"%s\"", conference_number, peer_number,
         peer_whose(w, conference_number, peer_number), (int)type, t);
}

static void on_title(Tox *tox, uint32_t conference_number, uint32_t peer_number, const uint8_t *title,
                     size_t length, void *user_data)
{
    struct who *w = user_data;
    char t[64];
    text(t, sizeof t, title, length);
    order(w, "T");
    note(w, "title conference=%u peer=%u(%s) \"%s\"", conference_number, peer_number,
         peer_number == UINT32_MAX ? "none" : peer_whose(w, conference_number, peer_number), t);
}

static void on_peer_name(Tox *tox, uint32_t conference_number, uint32_t peer_number, const uint8_t *name,
                         size_t length, void *user_data)
{
    struct who *w = user_data;
    if (rejoining) {
        return;
    }
    char t[64];
    text(t, sizeof t, name, length);
    char code[32];
    snprintf(code, sizeof code, "N:%s", peer_whose(w, conference_number, peer_number));
    order(w, code);
    note(w, "peer_name conference=%u peer=%u(%s) \"%s\"", conference_number, peer_number,
         peer_whose(w, conference_number, peer_number), t);
}

static void on_peer_list_changed(Tox *tox, uint32_t conference_number, void *user_data)
{
    struct who *w = user_data;
    if (rejoining) {
        return;
    }
    order(w, "P");
    note(w, "peer_list_changed conference=%u", conference_number);
}

static Tox *make_tox(uint16_t port, const uint8_t *savedata, size_t savedata_len)
{
    struct Tox_Options *o = tox_options_new(NULL);
    tox_options_set_ipv6_enabled(o, false);
    tox_options_set_udp_enabled(o, true);
    tox_options_set_local_discovery_enabled(o, false);
    tox_options_set_start_port(o, port);
    tox_options_set_end_port(o, port);
    if (savedata != NULL) {
        tox_options_set_savedata_type(o, TOX_SAVEDATA_TYPE_TOX_SAVE);
        tox_options_set_savedata_data(o, savedata, savedata_len);
    }
    Tox_Err_New err;
    Tox *tox = tox_new(o, &err);
    tox_options_free(o);
    if (tox == NULL) {
        fail("tox_new on port %u: error %d", port, (int)err);
    }
    tox_callback_conference_invite(tox, on_invite);
    tox_callback_conference_connected(tox, on_connected);
    tox_callback_conference_message(tox, on_message);
    tox_callback_conference_title(tox, on_title);
    tox_callback_conference_peer_name(tox, on_peer_name);
    tox_callback_conference_peer_list_changed(tox, on_peer_list_changed);
    return tox;
}

static void iterate_all(void)
{
    uint32_t wait = 20;
    for (int i = 0; i < 3; ++i) {
        if (people[i].tox == NULL) {
            continue;
        }
        tox_iterate(people[i].tox, &people[i]);
        uint32_t w = tox_iteration_interval(people[i].tox);
        if (w < wait) {
            wait = w;
        }
    }
    usleep(wait * 1000);
}

/* Iterates until `done` holds (failing after 60 s), then 1 s more for late callbacks. */
static void wait_for(const char *what, bool (*done)(void))
{
    double deadline = now_s() + 60;
    while (!done()) {
        if (now_s() > deadline) {
            fail("timed out waiting for %s", what);
        }
        iterate_all();
    }
    double settle = now_s() + 1;
    while (now_s() < settle) {
        iterate_all();
    }
}

static int cmp_lines(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* Starts a phase: prints what the last one's callbacks said and forgets it. The order of
 * the callbacks is printed for the joins, where c-toxcore's comes from the order of the
 * packets of one exchange (invite, peer list, title, names) and not from timing. */
static void phase(const char *name)
{
    bool print_order = strcmp(current_phase, "bob joins") == 0 || strcmp(current_phase, "carol joins") == 0;
    current_phase = name;
    static double started;
    double now = now_s();
    if (started != 0) {
        fprintf(stderr, "phase took %.2f s\n", now - started);
    }
    started = now;
    for (int i = 0; i < 3; ++i) {
        struct who *w = &people[i];
        qsort(w->lines, w->n_lines, LINE, cmp_lines);
        for (int j = 0; j < w->n_lines; ++j) {
            say("CB %s %s", w->label, w->lines[j]);
        }
        if (print_order && w->order[0] != 0) {
            say("ORDER %s %s", w->label, w->order);
        }
        w->order[0] = 0;
        w->n_lines = 0;
        w->messages = 0;
    }
    say("PHASE %s", name);
    fprintf(stderr, "PHASE %s\n", name);
}

static uint32_t count(struct who *w, uint32_t c)
{
    return tox_conference_peer_count(w->tox, c, NULL);
}

/* Everything `w` can say about conference `c`: counts, peers, title, type, id. */
static void describe(struct who *w, uint32_t c)
{
    Tox_Err_Conference_Peer_Query q;
    uint32_t n = tox_conference_peer_count(w->tox, c, &q);
    uint32_t off = tox_conference_offline_peer_count(w->tox, c, NULL);
    say("Q %s conference=%u peers=%u err=%d offline=%u", w->label, c, n, (int)q, off);
    bool by_name = carol_reloaded && w == carol;
    char lines[8][LINE];
    uint32_t listed = 0;
    for (uint32_t p = 0; p < n && n != UINT32_MAX && listed < 8; ++p) {
        uint8_t name[TOX_MAX_NAME_LENGTH + 1] = {0};
        size_t size = tox_conference_peer_get_name_size(w->tox, c, p, &q);
        bool got = tox_conference_peer_get_name(w->tox, c, p, name, NULL);
        bool ours = tox_conference_peer_number_is_ours(w->tox, c, p, NULL);
        char number[16] = "#";
        if (!by_name) {
            snprintf(number, sizeof number, "%u", p);
        }
        snprintf(lines[listed++], LINE, "Q %s   peer %s: %s name=\"%s\" size=%zu got=%d ours=%d", w->label,
                 number, peer_whose(w, c, p), (char *)name, size, got, ours);
    }
    if (by_name) {
        qsort(lines, listed, LINE, cmp_lines);
    }
    for (uint32_t i = 0; i < listed; ++i) {
        say("%s", lines[i]);
    }
    uint8_t title[TOX_MAX_NAME_LENGTH + 1] = {0};
    Tox_Err_Conference_Title te;
    size_t tsize = tox_conference_get_title_size(w->tox, c, &te);
    say("Q %s   title_size=%zu err=%d", w->label, tsize == SIZE_MAX ? 0 : tsize, (int)te);
    if (tox_conference_get_title(w->tox, c, title, &te)) {
        say("Q %s   title=\"%s\"", w->label, (char *)title);
    }
    Tox_Err_Conference_Get_Type ge;
    Tox_Conference_Type type = tox_conference_get_type(w->tox, c, &ge);
    uint8_t id[TOX_CONFERENCE_ID_SIZE];
    bool got_id = tox_conference_get_id(w->tox, c, id);
    Tox_Err_Conference_By_Id be;
    uint32_t back = tox_conference_by_id(w->tox, id, &be);
    say("Q %s   type=%d err=%d got_id=%d id_is_alices=%d by_id=%u err=%d", w->label, (int)type, (int)ge,
        got_id, got_id && memcmp(id, alice_id, sizeof id) == 0, back, (int)be);
}

static void chatlist(struct who *w)
{
    size_t n = tox_conference_get_chatlist_size(w->tox);
    uint32_t list[16] = {0};
    if (n > 16) {
        fail("%s: %zu conferences", w->label, n);
    }
    tox_conference_get_chatlist(w->tox, list);
    char buf[128] = "";
    for (size_t i = 0; i < n; ++i) {
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " %u", list[i]);
    }
    say("Q %s chatlist size=%zu [%s ]", w->label, n, buf);
}

static bool friends_online(void)
{
    return tox_friend_get_connection_status(alice->tox, 0, NULL) != TOX_CONNECTION_NONE
           && tox_friend_get_connection_status(bob->tox, 0, NULL) != TOX_CONNECTION_NONE
           && tox_friend_get_connection_status(bob->tox, 1, NULL) != TOX_CONNECTION_NONE
           && tox_friend_get_connection_status(carol->tox, 0, NULL) != TOX_CONNECTION_NONE;
}

static bool bob_invited(void)
{
    return bob->invited;
}

static bool carol_invited(void)
{
    return carol->invited;
}

static bool named(struct who *w, uint32_t c, int peers)
{
    if (count(w, c) != (uint32_t)peers) {
        return false;
    }
    for (int p = 0; p < peers; ++p) {
        if (tox_conference_peer_get_name_size(w->tox, c, p, NULL) == 0) {
            return false;
        }
    }
    return true;
}

static bool bob_joined(void)
{
    return bob->connected && named(alice, 0, 2) && named(bob, 0, 2)
           && tox_conference_get_title_size(bob->tox, 0, NULL) != SIZE_MAX;
}

static bool carol_joined(void)
{
    return carol->connected && named(alice, 0, 3) && named(bob, 0, 3) && named(carol, 0, 3)
           && tox_conference_get_title_size(carol->tox, 0, NULL) != SIZE_MAX;
}

static bool messages_heard(void)
{
    /* two messages and an action from... each of the two others: alice sends 3 */
    return alice->messages == 4 && bob->messages == 5 && carol->messages == 5;
}

static bool has_name(struct who *w, uint32_t c, const char *name)
{
    for (uint32_t p = 0; p < 3; ++p) {
        uint8_t buf[TOX_MAX_NAME_LENGTH + 1] = {0};
        if (tox_conference_peer_get_name_size(w->tox, c, p, NULL) == strlen(name)
                && tox_conference_peer_get_name(w->tox, c, p, buf, NULL) && strcmp((char *)buf, name) == 0) {
            return true;
        }
    }
    return false;
}

static bool renamed(void)
{
    for (int i = 0; i < 3; ++i) {
        if (!has_name(&people[i], 0, "alice-2") || !has_name(&people[i], 0, "bob-2")
                || !has_name(&people[i], 0, "carol-2")) {
            return false;
        }
    }
    return true;
}

static bool title_is(struct who *w, const char *title)
{
    uint8_t buf[TOX_MAX_NAME_LENGTH + 1] = {0};
    return tox_conference_get_title_size(w->tox, 0, NULL) == strlen(title)
           && tox_conference_get_title(w->tox, 0, buf, NULL) && strcmp((char *)buf, title) == 0;
}

static bool retitled(void)
{
    return title_is(alice, "Gamma's title") && title_is(bob, "Gamma's title");
}

static bool carol_back(void)
{
    return count(alice, 0) == 3 && count(bob, 0) == 3 && count(carol, 0) == 3
           && tox_conference_offline_peer_count(carol->tox, 0, NULL) == 0 && named(carol, 0, 3);
}

static bool bob_left(void)
{
    return count(alice, 0) == 2 && count(carol, 0) == 2;
}

static void send(struct who *w, Tox_Message_Type type, const char *message)
{
    Tox_Err_Conference_Send_Message e;
    bool ok = tox_conference_send_message(w->tox, 0, type, (const uint8_t *)message, strlen(message), &e);
    say("Q %s send type=%d \"%s\" -> %d err=%d", w->label, (int)type, message, ok, (int)e);
}

static void rename_self(struct who *w, const char *name)
{
    if (!tox_self_set_name(w->tox, (const uint8_t *)name, strlen(name), NULL)) {
        fail("%s: tox_self_set_name", w->label);
    }
}

/* The error code of every call on a conference number that designates none, peer numbers
 * past the lists, bad lengths, cookies and NULL arguments, on `w`'s conference 0. */
static void errors(struct who *w)
{
    Tox *t = w->tox;
    const uint32_t bad = 7;
    uint8_t buf[2048];
    memset(buf, 'x', sizeof buf);
    Tox_Err_Conference_Peer_Query q;
    Tox_Err_Conference_Title te;

#define SAY_Q(call) do { q = 99; long long r = (long long)(call); say("Q %s %s -> %lld err=%d", w->label, #call, r, (int)q); } while (0)
    SAY_Q(tox_conference_peer_count(t, bad, &q));
    SAY_Q(tox_conference_peer_get_name_size(t, bad, 0, &q));
    SAY_Q(tox_conference_peer_get_name(t, bad, 0, buf, &q));
    SAY_Q(tox_conference_peer_get_public_key(t, bad, 0, buf, &q));
    SAY_Q(tox_conference_peer_number_is_ours(t, bad, 0, &q));
    SAY_Q(tox_conference_offline_peer_count(t, bad, &q));
    SAY_Q(tox_conference_offline_peer_get_name_size(t, bad, 0, &q));
    SAY_Q(tox_conference_offline_peer_get_name(t, bad, 0, buf, &q));
    SAY_Q(tox_conference_offline_peer_get_public_key(t, bad, 0, buf, &q));
    SAY_Q(tox_conference_offline_peer_get_last_active(t, bad, 0, &q));
    SAY_Q(tox_conference_peer_get_name_size(t, 0, 3, &q));
    SAY_Q(tox_conference_peer_get_name_size(t, 0, UINT32_MAX, &q));
    SAY_Q(tox_conference_peer_get_name(t, 0, 3, buf, &q));
    SAY_Q(tox_conference_peer_get_public_key(t, 0, 3, buf, &q));
    SAY_Q(tox_conference_peer_number_is_ours(t, 0, 3, &q));
    SAY_Q(tox_conference_offline_peer_get_name_size(t, 0, 0, &q));
    SAY_Q(tox_conference_offline_peer_get_name(t, 0, 0, buf, &q));
    SAY_Q(tox_conference_offline_peer_get_public_key(t, 0, 0, buf, &q));
    SAY_Q(tox_conference_offline_peer_get_last_active(t, 0, 0, &q));
#undef SAY_Q

#define SAY_E(type, call) do { type e = 99; long long r = (long long)(call); say("Q %s %s -> %lld err=%d", w->label, #call, r, (int)e); } while (0)
    SAY_E(Tox_Err_Conference_Delete, tox_conference_delete(t, bad, &e));
    SAY_E(Tox_Err_Conference_Set_Max_Offline, tox_conference_set_max_offline(t, bad, 5, &e));
    SAY_E(Tox_Err_Conference_Invite, tox_conference_invite(t, 0, bad, &e));
    SAY_E(Tox_Err_Conference_Invite, tox_conference_invite(t, 99, 0, &e));
    SAY_E(Tox_Err_Conference_Send_Message, tox_conference_send_message(t, bad, TOX_MESSAGE_TYPE_NORMAL, buf, 5, &e));
    SAY_E(Tox_Err_Conference_Send_Message,
          tox_conference_send_message(t, bad, TOX_MESSAGE_TYPE_NORMAL, buf, MAX_MESSAGE + 1, &e));
    SAY_E(Tox_Err_Conference_Send_Message,
          tox_conference_send_message(t, 0, TOX_MESSAGE_TYPE_NORMAL, buf, MAX_MESSAGE + 1, &e));
    SAY_E(Tox_Err_Conference_Send_Message,
          tox_conference_send_message(t, 0, TOX_MESSAGE_TYPE_ACTION, buf, 2000, &e));
    SAY_E(Tox_Err_Conference_Send_Message, tox_conference_send_message(t, 0, TOX_MESSAGE_TYPE_NORMAL, NULL, 0, &e));
    SAY_E(Tox_Err_Conference_Title, tox_conference_get_title_size(t, bad, &e));
    SAY_E(Tox_Err_Conference_Title, tox_conference_get_title(t, bad, buf, &e));
    SAY_E(Tox_Err_Conference_Title, tox_conference_set_title(t, bad, buf, 5, &e));
    SAY_E(Tox_Err_Conference_Title, tox_conference_set_title(t, bad, buf, 129, &e));
    SAY_E(Tox_Err_Conference_Title, tox_conference_set_title(t, 0, buf, 129, &e));
    SAY_E(Tox_Err_Conference_Title, tox_conference_set_title(t, 0, buf, 256, &e));
    SAY_E(Tox_Err_Conference_Title, tox_conference_set_title(t, 0, buf, 0, &e));
    SAY_E(Tox_Err_Conference_Title, tox_conference_set_title(t, 0, NULL, 0, &e));
    SAY_E(Tox_Err_Conference_Title,
          tox_conference_set_title(t, 0, (const uint8_t *)"Gamma's title", strlen("Gamma's title"), &e));
    SAY_E(Tox_Err_Conference_Get_Type, tox_conference_get_type(t, bad, &e));
    SAY_E(Tox_Err_Conference_By_Id, tox_conference_by_id(t, NULL, &e));
    SAY_E(Tox_Err_Conference_By_Id, tox_conference_by_id(t, buf, &e));
    SAY_E(Tox_Err_Conference_By_Uid, tox_conference_by_uid(t, NULL, &e));
    SAY_E(Tox_Err_Conference_By_Uid, tox_conference_by_uid(t, buf, &e));
    SAY_E(Tox_Err_Conference_By_Uid, tox_conference_by_uid(t, alice_id, &e));

    /* cookies: the one of the last invite, spoiled in each way join_groupchat checks */
    uint8_t cookie[64];
    memcpy(cookie, w->cookie, sizeof cookie);
    uint32_t f = w->inviter;
    SAY_E(Tox_Err_Conference_Join, tox_conference_join(t, f, cookie, 34, &e));
    SAY_E(Tox_Err_Conference_Join, tox_conference_join(t, f, cookie, 36, &e));
    SAY_E(Tox_Err_Conference_Join, tox_conference_join(t, f, NULL, 0, &e));
    cookie[2] = 1;
    SAY_E(Tox_Err_Conference_Join, tox_conference_join(t, f, cookie, 35, &e));
    cookie[2] = 7;
    SAY_E(Tox_Err_Conference_Join, tox_conference_join(t, f, cookie, 35, &e));
    cookie[2] = 0;
    SAY_E(Tox_Err_Conference_Join, tox_conference_join(t, 99, cookie, 35, &e));
    SAY_E(Tox_Err_Conference_Join, tox_conference_join(t, f, cookie, 35, &e));
#undef SAY_E

    /* NULL output buffers c-toxcore skips; NULL error pointers */
    say("Q %s get_id(NULL) -> %d get_id(bad) -> %d get_uid(bad) -> %d", w->label,
        tox_conference_get_id(t, 0, NULL), tox_conference_get_id(t, bad, buf), tox_conference_get_uid(t, bad, buf));
    tox_conference_get_chatlist(t, NULL);
    say("Q %s no error pointers: %u %d %d", w->label, tox_conference_peer_count(t, bad, NULL),
        tox_conference_delete(t, bad, NULL), tox_conference_send_message(t, bad, TOX_MESSAGE_TYPE_NORMAL, buf, 1, NULL));
    (void)te;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: conference <port a> <port b> <port c>\n");
        return 2;
    }
    Dl_info info;
    if (dladdr((void *)tox_new, &info) && info.dli_fname != NULL) {
        printf("LIB %s\n", info.dli_fname);
    }
    const char *labels[3] = {"alice", "bob", "carol"};
    for (int i = 0; i < 3; ++i) {
        people[i].label = labels[i];
        people[i].port = (uint16_t)atoi(argv[1 + i]);
        people[i].tox = make_tox(people[i].port, NULL, 0);
        tox_self_get_public_key(people[i].tox, people[i].pk);
        if (!tox_self_set_name(people[i].tox, (const uint8_t *)labels[i], strlen(labels[i]), NULL)) {
            fail("tox_self_set_name");
        }
    }
    uint8_t dht[3][TOX_PUBLIC_KEY_SIZE];
    for (int i = 0; i < 3; ++i) {
        tox_self_get_dht_id(people[i].tox, dht[i]);
    }
    /* alice - bob - carol */
    if (tox_friend_add_norequest(alice->tox, bob->pk, NULL) != 0 || tox_friend_add_norequest(bob->tox, alice->pk, NULL) != 0
            || tox_friend_add_norequest(bob->tox, carol->pk, NULL) != 1
            || tox_friend_add_norequest(carol->tox, bob->pk, NULL) != 0) {
        fail("tox_friend_add_norequest");
    }
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            if (i != j && !tox_bootstrap(people[i].tox, "127.0.0.1", people[j].port, dht[j], NULL)) {
                fail("tox_bootstrap");
            }
        }
    }
    phase("friends");
    wait_for("the friends to connect", friends_online);

    phase("create");
    chatlist(alice);
    Tox_Err_Conference_New ne;
    uint32_t c = tox_conference_new(alice->tox, &ne);
    say("Q alice new -> %u err=%d", c, (int)ne);
    if (c != 0) {
        fail("tox_conference_new");
    }
    tox_conference_get_id(alice->tox, 0, alice_id);
    chatlist(alice);
    describe(alice, 0);
    Tox_Err_Conference_Title te;
    say("Q alice set_title -> %d", tox_conference_set_title(alice->tox, 0, (const uint8_t *)"Alpha's title",
            strlen("Alpha's title"), &te));
    say("Q alice set_title err=%d", (int)te);
    describe(alice, 0);
    send(alice, TOX_MESSAGE_TYPE_NORMAL, "nobody hears this");
    Tox_Err_Conference_Invite ie;
    say("Q alice invite friend 5 -> %d", tox_conference_invite(alice->tox, 5, 0, &ie));
    say("Q alice invite err=%d", (int)ie);
    say("Q alice invite bob -> %d", tox_conference_invite(alice->tox, 0, 0, &ie));
    say("Q alice invite err=%d", (int)ie);
    wait_for("bob's invite", bob_invited);

    phase("bob joins");
    Tox_Err_Conference_Join je;
    uint32_t bc = tox_conference_join(bob->tox, bob->inviter, bob->cookie, bob->cookie_len, &je);
    say("Q bob join -> %u err=%d", bc, (int)je);
    if (bc != 0) {
        fail("bob could not join");
    }
    Tox_Err_Conference_Peer_Query q;
    say("Q bob right after joining: peers=%u offline=%u", tox_conference_peer_count(bob->tox, 0, &q),
        tox_conference_offline_peer_count(bob->tox, 0, NULL));
    say("Q bob is_ours(0) -> %d", tox_conference_peer_number_is_ours(bob->tox, 0, 0, &q));
    say("Q bob is_ours err=%d", (int)q);
    send(bob, TOX_MESSAGE_TYPE_NORMAL, "too early");
    say("Q bob invite carol early -> %d", tox_conference_invite(bob->tox, 1, 0, &ie));
    say("Q bob invite err=%d", (int)ie);
    say("Q bob join again -> %u", tox_conference_join(bob->tox, bob->inviter, bob->cookie, bob->cookie_len, &je));
    say("Q bob join again err=%d", (int)je);
    chatlist(bob);
    wait_for("bob to join", bob_joined);

    phase("carol joins");
    describe(alice, 0);
    describe(bob, 0);
    say("Q bob invite carol -> %d", tox_conference_invite(bob->tox, 1, 0, &ie));
    say("Q bob invite err=%d", (int)ie);
    wait_for("carol's invite", carol_invited);
    uint32_t cc = tox_conference_join(carol->tox, carol->inviter, carol->cookie, carol->cookie_len, &je);
    say("Q carol join -> %u err=%d", cc, (int)je);
    wait_for("carol to join", carol_joined);

    phase("messages");
    for (int i = 0; i < 3; ++i) {
        describe(&people[i], 0);
    }
    send(alice, TOX_MESSAGE_TYPE_NORMAL, "hello from alice");
    send(bob, TOX_MESSAGE_TYPE_NORMAL, "hello from bob");
    send(carol, TOX_MESSAGE_TYPE_NORMAL, "hello from carol");
    send(alice, TOX_MESSAGE_TYPE_ACTION, "alice waves");
    send(bob, TOX_MESSAGE_TYPE_ACTION, "bob waves");
    send(carol, TOX_MESSAGE_TYPE_ACTION, "carol waves");
    {
        static uint8_t longest[MAX_MESSAGE];
        memset(longest, 'L', sizeof longest);
        Tox_Err_Conference_Send_Message se;
        say("Q alice send longest -> %d", tox_conference_send_message(alice->tox, 0, TOX_MESSAGE_TYPE_NORMAL, longest,
                sizeof longest, &se));
        say("Q alice send longest err=%d", (int)se);
    }
    wait_for("every message", messages_heard);

    phase("names");
    rename_self(alice, "alice-2");
    rename_self(bob, "bob-2");
    rename_self(carol, "carol-2");
    wait_for("the new names", renamed);

    phase("title");
    say("Q carol set_title -> %d", tox_conference_set_title(carol->tox, 0, (const uint8_t *)"Gamma's title",
            strlen("Gamma's title"), &te));
    say("Q carol set_title err=%d", (int)te);
    wait_for("the new title", retitled);

    phase("errors");
    for (int i = 0; i < 3; ++i) {
        describe(&people[i], 0);
    }
    errors(bob);
    errors(carol);

    phase("reload");
    size_t size = tox_get_savedata_size(carol->tox);
    uint8_t *save = malloc(size);
    tox_get_savedata(carol->tox, save);
    tox_kill(carol->tox);
    carol->tox = make_tox(carol->port, save, size);
    free(save);
    carol->connected = false;
    chatlist(carol);
    describe(carol, 0);
    {
        uint32_t off = tox_conference_offline_peer_count(carol->tox, 0, NULL);
        time_t now = time(NULL);
        /* sorted by name, so that the list order (the save's) does not matter */
        char lines[4][LINE];
        uint32_t n = 0;
        for (uint32_t p = 0; p < off && p < 4; ++p) {
            uint8_t name[TOX_MAX_NAME_LENGTH + 1] = {0};
            uint8_t pk[TOX_PUBLIC_KEY_SIZE];
            size_t ns = tox_conference_offline_peer_get_name_size(carol->tox, 0, p, &q);
            bool got = tox_conference_offline_peer_get_name(carol->tox, 0, p, name, NULL);
            bool gpk = tox_conference_offline_peer_get_public_key(carol->tox, 0, p, pk, NULL);
            uint64_t last = tox_conference_offline_peer_get_last_active(carol->tox, 0, p, NULL);
            snprintf(lines[n++], LINE, "Q carol   offline: name=\"%s\" size=%zu got=%d pk=%s last_active_recent=%d",
                     (char *)name, ns, got, gpk ? whose(pk) : "?",
                     last <= (uint64_t)now + 5 && last + 600 >= (uint64_t)now);
        }
        qsort(lines, n, LINE, cmp_lines);
        for (uint32_t i = 0; i < n; ++i) {
            say("%s", lines[i]);
        }
        Tox_Err_Conference_Set_Max_Offline me;
        say("Q carol set_max_offline 1 -> %d", tox_conference_set_max_offline(carol->tox, 0, 1, &me));
        say("Q carol set_max_offline err=%d offline=%u", (int)me, tox_conference_offline_peer_count(carol->tox, 0, NULL));
        say("Q carol set_max_offline 128 -> %d", tox_conference_set_max_offline(carol->tox, 0, 128, &me));
        say("Q carol set_max_offline err=%d offline=%u", (int)me, tox_conference_offline_peer_count(carol->tox, 0, NULL));
    }
    carol_reloaded = true;
    rejoining = true;
    tox_self_get_dht_id(carol->tox, dht[2]);
    for (int i = 0; i < 2; ++i) {
        tox_bootstrap(carol->tox, "127.0.0.1", people[i].port, dht[i], NULL);
        tox_bootstrap(people[i].tox, "127.0.0.1", carol->port, dht[2], NULL);
    }
    wait_for("carol to rejoin", carol_back);
    rejoining = false;

    phase("delete");
    for (int i = 0; i < 3; ++i) {
        describe(&people[i], 0);
    }
    Tox_Err_Conference_Delete de;
    say("Q bob delete -> %d", tox_conference_delete(bob->tox, 0, &de));
    say("Q bob delete err=%d", (int)de);
    say("Q bob delete again -> %d", tox_conference_delete(bob->tox, 0, &de));
    say("Q bob delete again err=%d", (int)de);
    chatlist(bob);
    say("Q bob peer_count after delete -> %u", tox_conference_peer_count(bob->tox, 0, &q));
    say("Q bob peer_count err=%d", (int)q);
    wait_for("alice and carol to see bob leave", bob_left);

    phase("numbers");
    say("Q alice new -> %u", tox_conference_new(alice->tox, NULL));
    say("Q alice new -> %u", tox_conference_new(alice->tox, NULL));
    chatlist(alice);
    say("Q alice delete 1 -> %d", tox_conference_delete(alice->tox, 1, NULL));
    say("Q alice delete 0 -> %d", tox_conference_delete(alice->tox, 0, NULL));
    chatlist(alice);
    say("Q alice new -> %u", tox_conference_new(alice->tox, NULL));
    chatlist(alice);
    describe(alice, 0);
    phase("end");

    for (int i = 0; i < 3; ++i) {
        tox_kill(people[i].tox);
    }
    say("OK");
    return 0;
}
