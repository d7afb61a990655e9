/* c-toxcore 0.2.18 as the judge of rustox's CONFERENCES section (core/src/savedata/conference.rs):
 * it saves conferences the way a c-toxcore client does, and loads a save file and lists the
 * conferences it finds there.
 *
 * Built at run time against Debian's libtoxcore by auto_tests/tests/interop_conference_savedata.rs
 * with rustox_testkit::c::Cc, pinned to that library; a separate process, so nothing of ours is
 * ever linked with c-toxcore. Uses tox.h and toxav.h (the AV conference) only.
 *
 * usage:
 *   toxconfsave make FILE PORT_A PORT_B
 *       Two toxes in this process, A (name "alice") on UDP PORT_A and B (name "bob") on PORT_B,
 *       127.0.0.1 only, each the other's friend, bootstrapped from each other. A creates a text
 *       conference titled "rustox ♥ c-toxcore" and an AV conference without a title and
 *       invites B to both; B joins both. When A sees B in both with B's name, A's
 *       tox_get_savedata goes to FILE. Gives up after 90 seconds (exit 3).
 *   toxconfsave show FILE [--resave OUT]
 *       Loads FILE with tox_new (UDP off, nothing bootstrapped) and lists its conferences; with
 *       --resave writes c-toxcore's own tox_get_savedata of what it loaded to OUT.
 * Both print one JSON line on stdout (byte strings upper-case hex), the conferences in
 * tox_conference_get_chatlist order:
 *   {"self_pk":HEX,"conferences":[{"number":N,"type":T,"id":HEX,"title_hex":HEX,
 *     "peers":[{"pk":HEX,"name_hex":HEX,"ours":B},...],
 *     "offline":[{"pk":HEX,"name_hex":HEX,"last_active":N},...]},...]}
 * Errors go to stderr with exit status 2.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tox/tox.h>
#include <tox/toxav.h>

#define TITLE "rustox \xe2\x99\xa5 c-toxcore"

static void die(const char *what, int code)
{
    fprintf(stderr, "toxconfsave: %s (error %d)\n", what, code);
    exit(2);
}

static void print_hex(const uint8_t *b, size_t n)
{
    putchar('"');
    for (size_t i = 0; i < n; ++i) printf("%02X", b[i]);
    putchar('"');
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static Tox *new_tox(const uint8_t *save, size_t len, uint16_t port)
{
    struct Tox_Options *o = tox_options_new(NULL);
    tox_options_set_ipv6_enabled(o, false);
    tox_options_set_local_discovery_enabled(o, false);
    tox_options_set_tcp_port(o, 0);
    if (port == 0) {
        tox_options_set_udp_enabled(o, false);
    } else {
        tox_options_set_start_port(o, port);
        tox_options_set_end_port(o, port);
    }
    if (save) {
        tox_options_set_savedata_type(o, TOX_SAVEDATA_TYPE_TOX_SAVE);
        tox_options_set_savedata_data(o, save, len);
    }
    Tox_Err_New err;
    Tox *tox = tox_new(o, &err);
    tox_options_free(o);
    if (!tox) die("tox_new failed", err);
    return tox;
}

/* One conference's name or title into `out` (≤ 128 bytes); 0 when it has none. */
static size_t title_of(Tox *tox, uint32_t n, uint8_t *out)
{
    Tox_Err_Conference_Title err;
    size_t len = tox_conference_get_title_size(tox, n, &err);
    if (err != TOX_ERR_CONFERENCE_TITLE_OK || len > TOX_MAX_NAME_LENGTH) return 0;
    if (!tox_conference_get_title(tox, n, out, &err)) return 0;
    return len;
}

static void report(Tox *tox)
{
    uint8_t pk[TOX_PUBLIC_KEY_SIZE];
    tox_self_get_public_key(tox, pk);
    printf("{\"self_pk\":");
    print_hex(pk, sizeof pk);
    printf(",\"conferences\":[");
    size_t count = tox_conference_get_chatlist_size(tox);
    uint32_t *list = calloc(count ? count : 1, sizeof(uint32_t));
    if (!list) die("out of memory", 0);
    tox_conference_get_chatlist(tox, list);
    for (size_t i = 0; i < count; ++i) {
        uint32_t n = list[i];
        uint8_t id[TOX_CONFERENCE_ID_SIZE];
        uint8_t buf[TOX_MAX_NAME_LENGTH];
        Tox_Err_Conference_Get_Type type_err;
        Tox_Conference_Type type = tox_conference_get_type(tox, n, &type_err);
        if (!tox_conference_get_id(tox, n, id)) die("tox_conference_get_id failed", (int)n);
        printf("%s{\"number\":%u,\"type\":%d,\"id\":", i ? "," : "", n, (int)type);
        print_hex(id, sizeof id);
        printf(",\"title_hex\":");
        print_hex(buf, title_of(tox, n, buf));
        printf(",\"peers\":[");
        Tox_Err_Conference_Peer_Query q;
        uint32_t peers = tox_conference_peer_count(tox, n, &q);
        for (uint32_t p = 0; p < peers; ++p) {
            tox_conference_peer_get_public_key(tox, n, p, pk, &q);
            size_t len = tox_conference_peer_get_name_size(tox, n, p, &q);
            if (len > sizeof buf || !tox_conference_peer_get_name(tox, n, p, buf, &q)) len = 0;
            printf("%s{\"pk\":", p ? "," : "");
            print_hex(pk, sizeof pk);
            printf(",\"name_hex\":");
            print_hex(buf, len);
            printf(",\"ours\":%s}", tox_conference_peer_number_is_ours(tox, n, p, &q) ? "true" : "false");
        }
        printf("],\"offline\":[");
        uint32_t frozen = tox_conference_offline_peer_count(tox, n, &q);
        for (uint32_t p = 0; p < frozen; ++p) {
            tox_conference_offline_peer_get_public_key(tox, n, p, pk, &q);
            size_t len = tox_conference_offline_peer_get_name_size(tox, n, p, &q);
            if (len > sizeof buf || !tox_conference_offline_peer_get_name(tox, n, p, buf, &q)) len = 0;
            uint64_t last = tox_conference_offline_peer_get_last_active(tox, n, p, &q);
            printf("%s{\"pk\":", p ? "," : "");
            print_hex(pk, sizeof pk);
            printf(",\"name_hex\":");
            print_hex(buf, len);
            printf(",\"last_active\":%llu}", (unsigned long long)last);
        }
        printf("]}");
    }
    printf("]}\n");
    fflush(stdout);
    free(list);
}

static void write_save(Tox *tox, const char *path)
{
    size_t size = tox_get_savedata_size(tox);
    uint8_t *data = malloc(size);
    if (!data) die("out of memory", 0);
    tox_get_savedata(tox, data);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) die("cannot write the save file", 0);
    free(data);
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open the save file", 0);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc(size > 0 ? (size_t)size : 1);
    if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) die("cannot read the save file", 0);
    fclose(f);
    *len = (size_t)size;
    return data;
}

/* B joins whatever A invites it to, with the call its type needs. */
static void on_invite(Tox *tox, uint32_t friend_number, Tox_Conference_Type type, const uint8_t *cookie,
                      size_t length, void *user_data)
{
    (void)user_data;
    if (type == TOX_CONFERENCE_TYPE_AV) {
        if (toxav_join_av_groupchat(tox, friend_number, cookie, (uint16_t)length, NULL, NULL) < 0) {
            die("toxav_join_av_groupchat failed", 0);
        }
    } else {
        Tox_Err_Conference_Join err;
        tox_conference_join(tox, friend_number, cookie, length, &err);
        if (err != TOX_ERR_CONFERENCE_JOIN_OK) die("tox_conference_join failed", err);
    }
}

/* A sees B in conference `n`, named. */
static bool has_named_peer(Tox *a, uint32_t n)
{
    Tox_Err_Conference_Peer_Query q;
    uint32_t peers = tox_conference_peer_count(a, n, &q);
    for (uint32_t p = 0; p < peers; ++p) {
        if (!tox_conference_peer_number_is_ours(a, n, p, &q)
                && tox_conference_peer_get_name_size(a, n, p, &q) > 0) {
            return true;
        }
    }
    return false;
}

static int make(const char *path, uint16_t port_a, uint16_t port_b)
{
    Tox *a = new_tox(NULL, 0, port_a);
    Tox *b = new_tox(NULL, 0, port_b);
    tox_self_set_name(a, (const uint8_t *)"alice", 5, NULL);
    tox_self_set_name(b, (const uint8_t *)"bob", 3, NULL);
    uint8_t pk_a[TOX_PUBLIC_KEY_SIZE], pk_b[TOX_PUBLIC_KEY_SIZE];
    uint8_t dht_a[TOX_PUBLIC_KEY_SIZE], dht_b[TOX_PUBLIC_KEY_SIZE];
    tox_self_get_public_key(a, pk_a);
    tox_self_get_public_key(b, pk_b);
    tox_self_get_dht_id(a, dht_a);
    tox_self_get_dht_id(b, dht_b);
    uint32_t b_in_a = tox_friend_add_norequest(a, pk_b, NULL);
    tox_friend_add_norequest(b, pk_a, NULL);
    tox_bootstrap(a, "127.0.0.1", port_b, dht_b, NULL);
    tox_bootstrap(b, "127.0.0.1", port_a, dht_a, NULL);
    tox_callback_conference_invite(b, on_invite);

    Tox_Err_Conference_New new_err;
    uint32_t text = tox_conference_new(a, &new_err);
    if (new_err != TOX_ERR_CONFERENCE_NEW_OK) die("tox_conference_new failed", new_err);
    Tox_Err_Conference_Title title_err;
    tox_conference_set_title(a, text, (const uint8_t *)TITLE, strlen(TITLE), &title_err);
    if (title_err != TOX_ERR_CONFERENCE_TITLE_OK) die("tox_conference_set_title failed", title_err);
    int av = toxav_add_av_groupchat(a, NULL, NULL);
    if (av < 0) die("toxav_add_av_groupchat failed", av);

    bool invited = false;
    for (int step = 0; step < 90 * 50; ++step) {
        tox_iterate(a, NULL);
        tox_iterate(b, NULL);
        if (!invited && tox_friend_get_connection_status(a, b_in_a, NULL) != TOX_CONNECTION_NONE) {
            Tox_Err_Conference_Invite err;
            tox_conference_invite(a, b_in_a, text, &err);
            if (err != TOX_ERR_CONFERENCE_INVITE_OK) die("tox_conference_invite failed", err);
            tox_conference_invite(a, b_in_a, (uint32_t)av, &err);
            if (err != TOX_ERR_CONFERENCE_INVITE_OK) die("tox_conference_invite failed", err);
            invited = true;
        }
        if (invited && has_named_peer(a, text) && has_named_peer(a, (uint32_t)av)) {
            write_save(a, path);
            report(a);
            tox_kill(b);
            tox_kill(a);
            return 0;
        }
        sleep_ms(20);
    }
    fprintf(stderr, "toxconfsave: B did not join both conferences within 90 s (invited: %d)\n", invited);
    return 3;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "make") == 0) {
        return make(argv[2], (uint16_t)atoi(argv[3]), (uint16_t)atoi(argv[4]));
    }
    if ((argc == 3 || (argc == 5 && strcmp(argv[3], "--resave") == 0)) && strcmp(argv[1], "show") == 0) {
        size_t len;
        uint8_t *data = read_file(argv[2], &len);
        Tox *tox = new_tox(data, len, 0);
        free(data);
        report(tox);
        if (argc == 5) write_save(tox, argv[4]);
        tox_kill(tox);
        return 0;
    }
    fprintf(stderr, "usage: toxconfsave make FILE PORT_A PORT_B | show FILE [--resave OUT]\n");
    return 2;
}
