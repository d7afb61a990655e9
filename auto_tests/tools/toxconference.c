/* A conference peer for rustox's conference interop tests and benchmark: one Tox instance,
 * driven by line commands on stdin, printing one line per callback and per command.
 *
 * The same source is compiled twice against Debian's tox.h (auto_tests/src/ctoxcore/
 * conference.rs): pinned by RPATH to Debian's libtoxcore.so.2 (c-toxcore 0.2.18) and to a copy
 * of rustox's (the ffi crate's cdylib). It uses tox.h only.
 *
 * usage: toxconference [options]
 *   --port N                      UDP port (0: c-toxcore's range 33445-33545)
 *   --bootstrap HOST PORT KEYHEX  a DHT node (repeatable)
 *   --load FILE                   start from this save file (tox_get_savedata's format)
 *   --name TEXT                   our name
 *   --accept                      accept every friend request
 *   --auto-join                   join every conference invite at once
 *   --lan                         LAN discovery on (off by default)
 *   --seconds N                   exit after N seconds (default 600)
 *
 * stdout: every line starts with T, CLOCK_MONOTONIC seconds (the same clock in every process
 * of the machine, so the harness compares one peer's send with another's receipt):
 *   T READY TOXID DHTKEY PORT LIBPATH
 *   T SELF STATUS                            our connection (0 none, 1 tcp, 2 udp)
 *   T REQUEST PK                             a friend request (accepted with --accept)
 *   T FRIEND N STATUS                        friend N's connection
 *   T INVITE FRIEND TYPE                     a conference invite (0 text, 1 av), queued
 *   T JOINED CONF FRIEND                     we joined an invite (command or --auto-join)
 *   T JOIN_ERR FRIEND CODE                   joining failed (Tox_Err_Conference_Join)
 *   T CONNECTED CONF                         the conference_connected callback
 *   T MESSAGE CONF PEER OURS TYPE PK TEXT    a message (TYPE 0) or action (TYPE 1)
 *   T TITLE CONF PEER TEXT                   the title changed
 *   T PEER_NAME CONF PEER PK NAME            a peer's name
 *   T PEERS CONF ONLINE OFFLINE              the peer list changed; the counts after it
 *   T OK COMMAND [RESULT...]  /  T ERR COMMAND CODE   one reply to every command
 *   T BYE                                    exiting
 *
 * stdin, one command a line (friend, conference and peer numbers as tox.h's):
 *   friend PK                add a friend by public key, no request
 *   add TOXID                send a friend request             -> OK add N
 *   say FRIEND TEXT          a friend message (opens a client's chat window)
 *   bootstrap HOST PORT KEY  one more DHT node
 *   new                      a text conference                 -> OK new CONF
 *   invite FRIEND CONF
 *   join-next-invite         join the oldest queued invite, or the next to come -> JOINED
 *   msg CONF TEXT / action CONF TEXT
 *   title CONF TEXT / get-title CONF -> OK get-title TEXT
 *   name TEXT                our name
 *   delete CONF
 *   peers CONF               PEER lines (T PEER CONF N OURS PK NAME, T OFFLINE CONF N PK NAME)
 *                            then OK peers ONLINE OFFLINE
 *   chatlist                 OK chatlist CONF...
 *   id CONF                  OK id IDHEX
 *   save FILE                tox_get_savedata into FILE
 *   quit
 */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <tox/tox.h>
#include "testkit.h"

#define MAX_BOOT 8
#define MAX_INVITES 32
#define LINE_MAX_LEN 4096

struct invite {
    uint32_t friend_number;
    size_t len;
    uint8_t cookie[512];
};

static struct invite invites[MAX_INVITES];
static size_t invite_count;
static int joins_wanted;
static int auto_join;
static int accept_all;

/* A timestamped output line. */
static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...) {
    va_list ap;
    printf("%.6f ", now_s());
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

/* `len` bytes of text as one line: newlines and NULs become spaces. */
static void text_copy(const uint8_t *t, size_t len, char *buf, size_t cap) {
    size_t n = len < cap - 1 ? len : cap - 1;
    for (size_t i = 0; i < n; ++i) {
        buf[i] = (t[i] == '\n' || t[i] == '\r' || t[i] == 0) ? ' ' : (char)t[i];
    }
    buf[n] = 0;
}

static void peer_pk(Tox *tox, uint32_t conf, uint32_t peer, char *h) {
    uint8_t pk[TOX_PUBLIC_KEY_SIZE] = {0};
    tox_conference_peer_get_public_key(tox, conf, peer, pk, NULL);
    hex(pk, TOX_PUBLIC_KEY_SIZE, h);
}

static void print_counts(Tox *tox, uint32_t conf) {
    Tox_Err_Conference_Peer_Query e1, e2;
    uint32_t on = tox_conference_peer_count(tox, conf, &e1);
    uint32_t off = tox_conference_offline_peer_count(tox, conf, &e2);
    out("PEERS %u %u %u", conf, e1 == TOX_ERR_CONFERENCE_PEER_QUERY_OK ? on : 0,
        e2 == TOX_ERR_CONFERENCE_PEER_QUERY_OK ? off : 0);
}

static void join_invite(Tox *tox, const struct invite *inv) {
    Tox_Err_Conference_Join err;
    uint32_t conf = tox_conference_join(tox, inv->friend_number, inv->cookie, inv->len, &err);
    if (err == TOX_ERR_CONFERENCE_JOIN_OK) {
        out("JOINED %u %u", conf, inv->friend_number);
    } else {
        out("JOIN_ERR %u %d", inv->friend_number, (int)err);
    }
}

static void on_self(Tox *tox, Tox_Connection status, void *ud) {
    (void)tox; (void)ud;
    out("SELF %d", (int)status);
}

static void on_request(Tox *tox, const uint8_t *pk, const uint8_t *msg, size_t len, void *ud) {
    (void)msg; (void)len; (void)ud;
    char h[2 * TOX_PUBLIC_KEY_SIZE + 1];
    hex(pk, TOX_PUBLIC_KEY_SIZE, h);
    out("REQUEST %s", h);
    if (accept_all) {
        tox_friend_add_norequest(tox, pk, NULL);
    }
}

static void on_friend(Tox *tox, uint32_t n, Tox_Connection status, void *ud) {
    (void)tox; (void)ud;
    out("FRIEND %u %d", n, (int)status);
}

static void on_invite(Tox *tox, uint32_t friend_number, Tox_Conference_Type type,
                      const uint8_t *cookie, size_t length, void *ud) {
    (void)ud;
    out("INVITE %u %d", friend_number, (int)type);
    struct invite inv = {.friend_number = friend_number, .len = length};
    if (length > sizeof inv.cookie) {
        out("JOIN_ERR %u %d", friend_number, -1);
        return;
    }
    memcpy(inv.cookie, cookie, length);
    if (auto_join || joins_wanted > 0) {
        if (joins_wanted > 0) {
            --joins_wanted;
        }
        join_invite(tox, &inv);
    } else if (invite_count < MAX_INVITES) {
        invites[invite_count++] = inv;
    }
}

static void on_connected(Tox *tox, uint32_t conf, void *ud) {
    (void)tox; (void)ud;
    out("CONNECTED %u", conf);
}

static void on_message(Tox *tox, uint32_t conf, uint32_t peer, Tox_Message_Type type,
                       const uint8_t *msg, size_t len, void *ud) {
    (void)ud;
    char h[2 * TOX_PUBLIC_KEY_SIZE + 1];
    char text[LINE_MAX_LEN];
    peer_pk(tox, conf, peer, h);
    text_copy(msg, len, text, sizeof text);
    int ours = tox_conference_peer_number_is_ours(tox, conf, peer, NULL);
    out("MESSAGE %u %u %d %d %s %s", conf, peer, ours, (int)type, h, text);
}

static void on_title(Tox *tox, uint32_t conf, uint32_t peer, const uint8_t *title, size_t len,
                     void *ud) {
    (void)tox; (void)ud;
    char text[LINE_MAX_LEN];
    text_copy(title, len, text, sizeof text);
    out("TITLE %u %u %s", conf, peer, text);
}

static void on_peer_name(Tox *tox, uint32_t conf, uint32_t peer, const uint8_t *name,
                         size_t len, void *ud) {
    (void)ud;
    char h[2 * TOX_PUBLIC_KEY_SIZE + 1];
    char text[LINE_MAX_LEN];
    peer_pk(tox, conf, peer, h);
    text_copy(name, len, text, sizeof text);
    out("PEER_NAME %u %u %s %s", conf, peer, h, text);
}

static void on_peer_list(Tox *tox, uint32_t conf, void *ud) {
    (void)ud;
    print_counts(tox, conf);
}

static void list_peers(Tox *tox, uint32_t conf) {
    Tox_Err_Conference_Peer_Query err;
    uint32_t on = tox_conference_peer_count(tox, conf, &err);
    if (err != TOX_ERR_CONFERENCE_PEER_QUERY_OK) {
        out("ERR peers %d", (int)err);
        return;
    }
    uint32_t off = tox_conference_offline_peer_count(tox, conf, NULL);
    for (uint32_t i = 0; i < on; ++i) {
        uint8_t name[TOX_MAX_NAME_LENGTH];
        char text[2 * TOX_MAX_NAME_LENGTH + 1];
        char h[2 * TOX_PUBLIC_KEY_SIZE + 1];
        size_t n = tox_conference_peer_get_name_size(tox, conf, i, NULL);
        if (n > sizeof name || !tox_conference_peer_get_name(tox, conf, i, name, NULL)) {
            n = 0;
        }
        text_copy(name, n, text, sizeof text);
        peer_pk(tox, conf, i, h);
        out("PEER %u %u %d %s %s", conf, i, tox_conference_peer_number_is_ours(tox, conf, i, NULL),
            h, text);
    }
    for (uint32_t i = 0; i < off; ++i) {
        uint8_t name[TOX_MAX_NAME_LENGTH];
        uint8_t pk[TOX_PUBLIC_KEY_SIZE] = {0};
        char text[2 * TOX_MAX_NAME_LENGTH + 1];
        char h[2 * TOX_PUBLIC_KEY_SIZE + 1];
        size_t n = tox_conference_offline_peer_get_name_size(tox, conf, i, NULL);
        if (n > sizeof name || !tox_conference_offline_peer_get_name(tox, conf, i, name, NULL)) {
            n = 0;
        }
        text_copy(name, n, text, sizeof text);
        tox_conference_offline_peer_get_public_key(tox, conf, i, pk, NULL);
        hex(pk, TOX_PUBLIC_KEY_SIZE, h);
        out("OFFLINE %u %u %s %s", conf, i, h, text);
    }
    out("OK peers %u %u", on, off);
}

static int save_to(Tox *tox, const char *path) {
    size_t size = tox_get_savedata_size(tox);
    uint8_t *data = malloc(size ? size : 1);
    if (data == NULL) {
        return -1;
    }
    tox_get_savedata(tox, data);
    char tmp[LINE_MAX_LEN + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    int ok = f != NULL && fwrite(data, 1, size, f) == size;
    if (f != NULL && fclose(f) != 0) {
        ok = 0;
    }
    free(data);
    return ok && rename(tmp, path) == 0 ? 0 : -1;
}

static uint8_t *load_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = n > 0 ? malloc((size_t)n) : NULL;
    if (data == NULL || fread(data, 1, (size_t)n, f) != (size_t)n) {
        free(data);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return data;
}

/* Splits off the first word of *rest (NUL-terminating it); NULL when there is none. */
static char *word(char **rest) {
    char *s = *rest;
    while (*s == ' ') {
        ++s;
    }
    if (*s == 0) {
        return NULL;
    }
    char *w = s;
    while (*s != 0 && *s != ' ') {
        ++s;
    }
    if (*s == ' ') {
        *s++ = 0;
    }
    *rest = s;
    return w;
}

static int number(char **rest, uint32_t *v) {
    char *w = word(rest);
    char *end;
    if (w == NULL) {
        return -1;
    }
    unsigned long n = strtoul(w, &end, 10);
    if (*end != 0) {
        return -1;
    }
    *v = (uint32_t)n;
    return 0;
}

/* Runs one command line; returns 1 on quit. */
static int command(Tox *tox, char *line) {
    char *rest = line;
    char *cmd = word(&rest);
    uint32_t a, b;
    if (cmd == NULL) {
        return 0;
    }
    if (strcmp(cmd, "quit") == 0) {
        return 1;
    } else if (strcmp(cmd, "friend") == 0) {
        uint8_t pk[TOX_PUBLIC_KEY_SIZE];
        char *w = word(&rest);
        Tox_Err_Friend_Add err;
        if (w == NULL || unhex(w, pk, sizeof pk) != 0) {
            out("ERR friend -1");
            return 0;
        }
        uint32_t n = tox_friend_add_norequest(tox, pk, &err);
        if (err == TOX_ERR_FRIEND_ADD_OK) out("OK friend %u", n); else out("ERR friend %d", (int)err);
    } else if (strcmp(cmd, "add") == 0) {
        uint8_t id[TOX_ADDRESS_SIZE];
        char *w = word(&rest);
        Tox_Err_Friend_Add err;
        static const uint8_t hello[] = "conference peer";
        if (w == NULL || unhex(w, id, sizeof id) != 0) {
            out("ERR add -1");
            return 0;
        }
        uint32_t n = tox_friend_add(tox, id, hello, sizeof hello - 1, &err);
        if (err == TOX_ERR_FRIEND_ADD_OK) out("OK add %u", n); else out("ERR add %d", (int)err);
    } else if (strcmp(cmd, "say") == 0) {
        Tox_Err_Friend_Send_Message err = TOX_ERR_FRIEND_SEND_MESSAGE_FRIEND_NOT_FOUND;
        if (number(&rest, &a) == 0) {
            tox_friend_send_message(tox, a, TOX_MESSAGE_TYPE_NORMAL, (const uint8_t *)rest,
                                    strlen(rest), &err);
        }
        if (err == TOX_ERR_FRIEND_SEND_MESSAGE_OK) out("OK say"); else out("ERR say %d", (int)err);
    } else if (strcmp(cmd, "bootstrap") == 0) {
        char *host = word(&rest);
        uint32_t port;
        uint8_t key[TOX_PUBLIC_KEY_SIZE];
        char *k;
        Tox_Err_Bootstrap err = TOX_ERR_BOOTSTRAP_BAD_HOST;
        if (host != NULL && number(&rest, &port) == 0 && (k = word(&rest)) != NULL &&
            unhex(k, key, sizeof key) == 0) {
            tox_bootstrap(tox, host, (uint16_t)port, key, &err);
        }
        if (err == TOX_ERR_BOOTSTRAP_OK) out("OK bootstrap"); else out("ERR bootstrap %d", (int)err);
    } else if (strcmp(cmd, "new") == 0) {
        Tox_Err_Conference_New err;
        uint32_t c = tox_conference_new(tox, &err);
        if (err == TOX_ERR_CONFERENCE_NEW_OK) out("OK new %u", c); else out("ERR new %d", (int)err);
    } else if (strcmp(cmd, "invite") == 0) {
        Tox_Err_Conference_Invite err = TOX_ERR_CONFERENCE_INVITE_CONFERENCE_NOT_FOUND;
        if (number(&rest, &a) == 0 && number(&rest, &b) == 0) {
            tox_conference_invite(tox, a, b, &err);
        }
        if (err == TOX_ERR_CONFERENCE_INVITE_OK) out("OK invite"); else out("ERR invite %d", (int)err);
    } else if (strcmp(cmd, "join-next-invite") == 0) {
        out("OK join-next-invite %zu", invite_count);
        if (invite_count > 0) {
            struct invite inv = invites[0];
            memmove(invites, invites + 1, (invite_count - 1) * sizeof invites[0]);
            --invite_count;
            join_invite(tox, &inv);
        } else {
            ++joins_wanted;
        }
    } else if (strcmp(cmd, "msg") == 0 || strcmp(cmd, "action") == 0) {
        Tox_Message_Type type = cmd[0] == 'm' ? TOX_MESSAGE_TYPE_NORMAL : TOX_MESSAGE_TYPE_ACTION;
        Tox_Err_Conference_Send_Message err = TOX_ERR_CONFERENCE_SEND_MESSAGE_CONFERENCE_NOT_FOUND;
        if (number(&rest, &a) == 0) {
            tox_conference_send_message(tox, a, type, (const uint8_t *)rest, strlen(rest), &err);
        }
        if (err == TOX_ERR_CONFERENCE_SEND_MESSAGE_OK) out("OK %s", cmd); else out("ERR %s %d", cmd, (int)err);
    } else if (strcmp(cmd, "title") == 0) {
        Tox_Err_Conference_Title err = TOX_ERR_CONFERENCE_TITLE_CONFERENCE_NOT_FOUND;
        if (number(&rest, &a) == 0) {
            tox_conference_set_title(tox, a, (const uint8_t *)rest, strlen(rest), &err);
        }
        if (err == TOX_ERR_CONFERENCE_TITLE_OK) out("OK title"); else out("ERR title %d", (int)err);
    } else if (strcmp(cmd, "get-title") == 0) {
        Tox_Err_Conference_Title err = TOX_ERR_CONFERENCE_TITLE_CONFERENCE_NOT_FOUND;
        uint8_t title[TOX_MAX_NAME_LENGTH + 1];
        char text[2 * TOX_MAX_NAME_LENGTH + 1];
        size_t n = 0;
        if (number(&rest, &a) == 0) {
            n = tox_conference_get_title_size(tox, a, &err);
            if (err == TOX_ERR_CONFERENCE_TITLE_OK && (n > sizeof title || !tox_conference_get_title(tox, a, title, &err))) {
                n = 0;
            }
        }
        text_copy(title, n, text, sizeof text);
        if (err == TOX_ERR_CONFERENCE_TITLE_OK) out("OK get-title %s", text); else out("ERR get-title %d", (int)err);
    } else if (strcmp(cmd, "name") == 0) {
        Tox_Err_Set_Info err;
        tox_self_set_name(tox, (const uint8_t *)rest, strlen(rest), &err);
        if (err == TOX_ERR_SET_INFO_OK) out("OK name"); else out("ERR name %d", (int)err);
    } else if (strcmp(cmd, "delete") == 0) {
        Tox_Err_Conference_Delete err = TOX_ERR_CONFERENCE_DELETE_CONFERENCE_NOT_FOUND;
        if (number(&rest, &a) == 0) {
            tox_conference_delete(tox, a, &err);
        }
        if (err == TOX_ERR_CONFERENCE_DELETE_OK) out("OK delete"); else out("ERR delete %d", (int)err);
    } else if (strcmp(cmd, "peers") == 0) {
        if (number(&rest, &a) == 0) list_peers(tox, a); else out("ERR peers -1");
    } else if (strcmp(cmd, "chatlist") == 0) {
        size_t n = tox_conference_get_chatlist_size(tox);
        uint32_t *list = calloc(n ? n : 1, sizeof *list);
        char buf[LINE_MAX_LEN] = "";
        size_t used = 0;
        tox_conference_get_chatlist(tox, list);
        for (size_t i = 0; i < n && used + 12 < sizeof buf; ++i) {
            used += (size_t)snprintf(buf + used, sizeof buf - used, " %u", list[i]);
        }
        free(list);
        out("OK chatlist%s", buf);
    } else if (strcmp(cmd, "id") == 0) {
        uint8_t id[TOX_CONFERENCE_ID_SIZE];
        char h[2 * TOX_CONFERENCE_ID_SIZE + 1];
        if (number(&rest, &a) == 0 && tox_conference_get_id(tox, a, id)) {
            hex(id, sizeof id, h);
            out("OK id %s", h);
        } else {
            out("ERR id -1");
        }
    } else if (strcmp(cmd, "save") == 0) {
        if (save_to(tox, rest) == 0) out("OK save"); else out("ERR save %d", errno);
    } else {
        out("ERR %s -1", cmd);
    }
    return 0;
}

int main(int argc, char **argv) {
    struct { const char *host; uint16_t port; uint8_t key[TOX_PUBLIC_KEY_SIZE]; } boot[MAX_BOOT];
    int nboot = 0;
    const char *load = NULL;
    const char *name = NULL;
    int lan = 0;
    uint16_t port = 0;
    double seconds = 600;

    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
            port = (uint16_t)atoi(argv[++i]);
        } else if (strcmp(argv[i], "--bootstrap") == 0 && i + 3 < argc && nboot < MAX_BOOT) {
            boot[nboot].host = argv[i + 1];
            boot[nboot].port = (uint16_t)atoi(argv[i + 2]);
            if (unhex(argv[i + 3], boot[nboot].key, TOX_PUBLIC_KEY_SIZE) != 0) {
                fprintf(stderr, "bad bootstrap key\n");
                return 2;
            }
            ++nboot;
            i += 3;
        } else if (strcmp(argv[i], "--load") == 0 && i + 1 < argc) {
            load = argv[++i];
        } else if (strcmp(argv[i], "--name") == 0 && i + 1 < argc) {
            name = argv[++i];
        } else if (strcmp(argv[i], "--accept") == 0) {
            accept_all = 1;
        } else if (strcmp(argv[i], "--auto-join") == 0) {
            auto_join = 1;
        } else if (strcmp(argv[i], "--lan") == 0) {
            lan = 1;
        } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            seconds = atof(argv[++i]);
        } else {
            fprintf(stderr, "unknown or incomplete option %s\n", argv[i]);
            return 2;
        }
    }

    Tox_Err_Options_New oerr;
    struct Tox_Options *opts = tox_options_new(&oerr);
    if (opts == NULL) {
        return 1;
    }
    tox_options_set_ipv6_enabled(opts, false);
    tox_options_set_local_discovery_enabled(opts, lan);
    tox_options_set_start_port(opts, port);
    tox_options_set_end_port(opts, port);
    if (port == 0) {
        tox_options_set_start_port(opts, 33445);
        tox_options_set_end_port(opts, 33545);
    }
    uint8_t *saved = NULL;
    size_t saved_len = 0;
    if (load != NULL) {
        saved = load_file(load, &saved_len);
        if (saved == NULL) {
            fprintf(stderr, "cannot read %s\n", load);
            return 2;
        }
        tox_options_set_savedata_type(opts, TOX_SAVEDATA_TYPE_TOX_SAVE);
        tox_options_set_savedata_data(opts, saved, saved_len);
    }
    Tox_Err_New nerr;
    Tox *tox = tox_new(opts, &nerr);
    tox_options_free(opts);
    free(saved);
    if (tox == NULL) {
        fprintf(stderr, "tox_new failed: %d\n", (int)nerr);
        return 1;
    }
    if (name != NULL) {
        tox_self_set_name(tox, (const uint8_t *)name, strlen(name), NULL);
    }
    for (int i = 0; i < nboot; ++i) {
        Tox_Err_Bootstrap berr;
        tox_bootstrap(tox, boot[i].host, boot[i].port, boot[i].key, &berr);
        if (berr != TOX_ERR_BOOTSTRAP_OK) {
            fprintf(stderr, "bootstrap %s:%u failed: %d\n", boot[i].host, boot[i].port, (int)berr);
        }
    }
    tox_callback_self_connection_status(tox, on_self);
    tox_callback_friend_request(tox, on_request);
    tox_callback_friend_connection_status(tox, on_friend);
    tox_callback_conference_invite(tox, on_invite);
    tox_callback_conference_connected(tox, on_connected);
    tox_callback_conference_message(tox, on_message);
    tox_callback_conference_title(tox, on_title);
    tox_callback_conference_peer_name(tox, on_peer_name);
    tox_callback_conference_peer_list_changed(tox, on_peer_list);

    uint8_t addr[TOX_ADDRESS_SIZE];
    uint8_t dht[TOX_PUBLIC_KEY_SIZE];
    char addr_hex[2 * TOX_ADDRESS_SIZE + 1];
    char dht_hex[2 * TOX_PUBLIC_KEY_SIZE + 1];
    tox_self_get_address(tox, addr);
    tox_self_get_dht_id(tox, dht);
    hex(addr, sizeof addr, addr_hex);
    hex(dht, sizeof dht, dht_hex);
    Dl_info info;
    const char *lib = dladdr((void *)tox_new, &info) != 0 && info.dli_fname ? info.dli_fname : "?";
    out("READY %s %s %u %s", addr_hex, dht_hex, tox_self_get_udp_port(tox, NULL), lib);

    int flags = fcntl(STDIN_FILENO, F_GETFL);
    fcntl(STDIN_FILENO, F_SETFL, flags | O_NONBLOCK);
    char buf[LINE_MAX_LEN];
    size_t have = 0;
    int stdin_open = 1;
    double end = now_s() + seconds;
    int quit = 0;
    while (!quit && now_s() < end) {
        tox_iterate(tox, NULL);
        struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
        int wait = (int)tox_iteration_interval(tox);
        if (poll(&pfd, stdin_open ? 1 : 0, wait) > 0 && (pfd.revents & (POLLIN | POLLHUP))) {
            ssize_t n = read(STDIN_FILENO, buf + have, sizeof buf - 1 - have);
            if (n <= 0 && !(n < 0 && (errno == EAGAIN || errno == EINTR))) {
                stdin_open = 0;
                quit = 1;
            } else if (n > 0) {
                have += (size_t)n;
            }
            char *nl;
            while (!quit && (nl = memchr(buf, '\n', have)) != NULL) {
                *nl = 0;
                quit = command(tox, buf);
                size_t used = (size_t)(nl - buf) + 1;
                memmove(buf, nl + 1, have - used);
                have -= used;
            }
            if (have == sizeof buf - 1) {
                have = 0; /* an over-long line is dropped */
            }
        }
    }
    out("BYE");
    tox_kill(tox);
    return 0;
}
