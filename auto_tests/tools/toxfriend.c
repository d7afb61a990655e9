/* One c-toxcore 0.2.18 client for rustox's friend interop tests and the friend-online
 * benchmark: it bootstraps, sends or accepts friend requests, and reports what happens.
 *
 * Built at run time against Debian's libtoxcore by auto_tests/src/ctoxcore/build.rs; a separate
 * process, so nothing of ours is ever linked with c-toxcore. Uses tox.h only.
 *
 * usage: toxfriend PORT SECONDS [options]
 *   --bootstrap HOST PORT KEYHEX   a DHT node (repeatable)
 *   --secret-key HEX               long-term secret key (to restart as the same identity)
 *   --request TOXID MESSAGE        send a friend request
 *   --add PK                       add a friend by public key, no request
 *   --accept                       accept every friend request
 *   --lan                          LAN discovery on (off by default)
 *   --say TEXT                     send TEXT to each friend once it is online
 *   --act TEXT                     send TEXT as an action to each friend once it is online
 *   --name TEXT, --status-message TEXT, --status N (0 none, 1 away, 2 busy)
 *   --typing                       tell each friend we are typing once it is online
 *   --load FILE                    start from this save file (tox_get_savedata's format)
 *   --save FILE                    write tox_get_savedata to FILE once set up (after --add)
 *   --no-udp                       UDP off: everything goes through TCP relays
 *   --tcp-relay HOST PORT KEYHEX   a TCP relay (tox_add_tcp_relay; repeatable)
 * PORT 0 lets c-toxcore pick from 33445-33545. IPv6 off, no TCP server of its own.
 * stdout, one line each, flushed, T = seconds since start:
 *   READY TOXID DHTKEY PORT SECRETKEY
 *   SELF STATUS T          connection status changed (0 none, 1 tcp, 2 udp)
 *   REQUEST PK T           a friend request arrived
 *   FRIEND N STATUS T      friend N's connection status changed
 *   MESSAGE N TEXT         a message from friend N
 *   ACTION N TEXT          an action from friend N
 *   SENT N ID              our message to friend N got message id ID
 *   RECEIPT N ID           friend N acknowledged our message ID
 *   NAME N TEXT / STATUSMSG N TEXT / STATUS N K / TYPING N B   friend N's presence
 *   DONE                   time is up or stdin closed
 */
#define _POSIX_C_SOURCE 200809L

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <tox/tox.h>
#include "testkit.h"

#define MAX_BOOT 8

static double start_s;
static int accept_all;
static const char *say_text;
static const char *act_text;
static int set_typing;

static void on_self(Tox *tox, Tox_Connection status, void *ud) {
    (void)tox; (void)ud;
    printf("SELF %d %.3f\n", (int)status, now_s() - start_s);
    fflush(stdout);
}

static void on_request(Tox *tox, const uint8_t *pk, const uint8_t *msg, size_t len, void *ud) {
    (void)msg; (void)len; (void)ud;
    char h[2 * TOX_PUBLIC_KEY_SIZE + 1];
    hex(pk, TOX_PUBLIC_KEY_SIZE, h);
    printf("REQUEST %s %.3f\n", h, now_s() - start_s);
    fflush(stdout);
    if (accept_all) {
        Tox_Err_Friend_Add err;
        tox_friend_add_norequest(tox, pk, &err);
    }
}

static void on_friend(Tox *tox, uint32_t n, Tox_Connection status, void *ud) {
    (void)ud;
    printf("FRIEND %u %d %.3f\n", n, (int)status, now_s() - start_s);
    fflush(stdout);
    if (status == TOX_CONNECTION_NONE) {
        return;
    }
    if (say_text) {
        uint32_t id = tox_friend_send_message(tox, n, TOX_MESSAGE_TYPE_NORMAL,
                                              (const uint8_t *)say_text, strlen(say_text), NULL);
        printf("SENT %u %u\n", n, id);
    }
    if (act_text) {
        uint32_t id = tox_friend_send_message(tox, n, TOX_MESSAGE_TYPE_ACTION,
                                              (const uint8_t *)act_text, strlen(act_text), NULL);
        printf("SENT %u %u\n", n, id);
    }
    if (set_typing) {
        tox_self_set_typing(tox, n, true, NULL);
    }
    fflush(stdout);
}

static void on_receipt(Tox *tox, uint32_t n, uint32_t id, void *ud) {
    (void)tox; (void)ud;
    printf("RECEIPT %u %u\n", n, id);
    fflush(stdout);
}

static void on_name(Tox *tox, uint32_t n, const uint8_t *name, size_t len, void *ud) {
    (void)tox; (void)ud;
    printf("NAME %u %.*s\n", n, (int)len, (const char *)name);
    fflush(stdout);
}

static void on_status_message(Tox *tox, uint32_t n, const uint8_t *msg, size_t len, void *ud) {
    (void)tox; (void)ud;
    printf("STATUSMSG %u %.*s\n", n, (int)len, (const char *)msg);
    fflush(stdout);
}

static void on_status(Tox *tox, uint32_t n, Tox_User_Status status, void *ud) {
    (void)tox; (void)ud;
    printf("STATUS %u %d\n", n, (int)status);
    fflush(stdout);
}

static void on_typing(Tox *tox, uint32_t n, bool typing, void *ud) {
    (void)tox; (void)ud;
    printf("TYPING %u %d\n", n, typing ? 1 : 0);
    fflush(stdout);
}

static void on_message(Tox *tox, uint32_t n, Tox_Message_Type type, const uint8_t *msg,
                       size_t len, void *ud) {
    (void)tox; (void)ud;
    printf("%s %u %.*s\n", type == TOX_MESSAGE_TYPE_ACTION ? "ACTION" : "MESSAGE", n, (int)len,
           (const char *)msg);
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: toxfriend PORT SECONDS [options]\n"); return 2; }
    start_s = now_s();
    int port = atoi(argv[1]);
    double seconds = atof(argv[2]);
    const char *boot_host[MAX_BOOT];
    int boot_port[MAX_BOOT];
    uint8_t boot_key[MAX_BOOT][TOX_PUBLIC_KEY_SIZE];
    int nboot = 0, lan = 0, no_udp = 0;
    const char *relay_host[MAX_BOOT];
    int relay_port[MAX_BOOT];
    uint8_t relay_key[MAX_BOOT][TOX_PUBLIC_KEY_SIZE];
    int nrelay = 0;
    uint8_t secret[TOX_SECRET_KEY_SIZE];
    int have_secret = 0;
    const char *request_id = NULL, *request_msg = NULL, *add_pk = NULL;
    const char *name = NULL, *status_message = NULL;
    const char *load_path = NULL, *save_path = NULL;
    int user_status = -1;
    for (int a = 3; a < argc; ++a) {
        if (!strcmp(argv[a], "--bootstrap") && a + 3 < argc && nboot < MAX_BOOT) {
            boot_host[nboot] = argv[a + 1];
            boot_port[nboot] = atoi(argv[a + 2]);
            if (unhex(argv[a + 3], boot_key[nboot], TOX_PUBLIC_KEY_SIZE)) return 2;
            ++nboot;
            a += 3;
        } else if (!strcmp(argv[a], "--tcp-relay") && a + 3 < argc && nrelay < MAX_BOOT) {
            relay_host[nrelay] = argv[a + 1];
            relay_port[nrelay] = atoi(argv[a + 2]);
            if (unhex(argv[a + 3], relay_key[nrelay], TOX_PUBLIC_KEY_SIZE)) return 2;
            ++nrelay;
            a += 3;
        } else if (!strcmp(argv[a], "--no-udp")) {
            no_udp = 1;
        } else if (!strcmp(argv[a], "--secret-key") && a + 1 < argc) {
            if (unhex(argv[++a], secret, TOX_SECRET_KEY_SIZE)) return 2;
            have_secret = 1;
        } else if (!strcmp(argv[a], "--request") && a + 2 < argc) {
            request_id = argv[a + 1];
            request_msg = argv[a + 2];
            a += 2;
        } else if (!strcmp(argv[a], "--add") && a + 1 < argc) {
            add_pk = argv[++a];
        } else if (!strcmp(argv[a], "--accept")) {
            accept_all = 1;
        } else if (!strcmp(argv[a], "--lan")) {
            lan = 1;
        } else if (!strcmp(argv[a], "--say") && a + 1 < argc) {
            say_text = argv[++a];
        } else if (!strcmp(argv[a], "--act") && a + 1 < argc) {
            act_text = argv[++a];
        } else if (!strcmp(argv[a], "--name") && a + 1 < argc) {
            name = argv[++a];
        } else if (!strcmp(argv[a], "--status-message") && a + 1 < argc) {
            status_message = argv[++a];
        } else if (!strcmp(argv[a], "--status") && a + 1 < argc) {
            user_status = atoi(argv[++a]);
        } else if (!strcmp(argv[a], "--typing")) {
            set_typing = 1;
        } else if (!strcmp(argv[a], "--load") && a + 1 < argc) {
            load_path = argv[++a];
        } else if (!strcmp(argv[a], "--save") && a + 1 < argc) {
            save_path = argv[++a];
        } else {
            fprintf(stderr, "toxfriend: bad argument %s\n", argv[a]);
            return 2;
        }
    }
    struct Tox_Options *o = tox_options_new(NULL);
    tox_options_set_ipv6_enabled(o, false);
    tox_options_set_udp_enabled(o, !no_udp);
    tox_options_set_local_discovery_enabled(o, lan);
    tox_options_set_start_port(o, port ? port : 33445);
    tox_options_set_end_port(o, port ? port : 33545);
    tox_options_set_tcp_port(o, 0);
    static uint8_t loaded[1 << 20];
    if (have_secret) {
        tox_options_set_savedata_type(o, TOX_SAVEDATA_TYPE_SECRET_KEY);
        tox_options_set_savedata_data(o, secret, sizeof secret);
    } else if (load_path) {
        FILE *f = fopen(load_path, "rb");
        if (!f) { fprintf(stderr, "toxfriend: cannot open %s\n", load_path); return 1; }
        size_t n = fread(loaded, 1, sizeof loaded, f);
        fclose(f);
        tox_options_set_savedata_type(o, TOX_SAVEDATA_TYPE_TOX_SAVE);
        tox_options_set_savedata_data(o, loaded, n);
    }
    Tox_Err_New err_new;
    Tox *tox = tox_new(o, &err_new);
    tox_options_free(o);
    if (!tox) { fprintf(stderr, "toxfriend: tox_new failed: %d\n", (int)err_new); return 1; }
    tox_callback_self_connection_status(tox, on_self);
    tox_callback_friend_request(tox, on_request);
    tox_callback_friend_connection_status(tox, on_friend);
    tox_callback_friend_message(tox, on_message);
    tox_callback_friend_read_receipt(tox, on_receipt);
    tox_callback_friend_name(tox, on_name);
    tox_callback_friend_status_message(tox, on_status_message);
    tox_callback_friend_status(tox, on_status);
    tox_callback_friend_typing(tox, on_typing);
    if (name) tox_self_set_name(tox, (const uint8_t *)name, strlen(name), NULL);
    if (status_message) {
        tox_self_set_status_message(tox, (const uint8_t *)status_message, strlen(status_message),
                                    NULL);
    }
    if (user_status >= 0) tox_self_set_status(tox, (Tox_User_Status)user_status);
    for (int i = 0; i < nboot; ++i) {
        tox_bootstrap(tox, boot_host[i], (uint16_t)boot_port[i], boot_key[i], NULL);
    }
    for (int i = 0; i < nrelay; ++i) {
        Tox_Err_Bootstrap err;
        if (!tox_add_tcp_relay(tox, relay_host[i], (uint16_t)relay_port[i], relay_key[i], &err)) {
            fprintf(stderr, "toxfriend: tox_add_tcp_relay %d\n", (int)err);
            return 1;
        }
    }
    if (request_id) {
        uint8_t id[TOX_ADDRESS_SIZE];
        if (unhex(request_id, id, TOX_ADDRESS_SIZE)) return 2;
        Tox_Err_Friend_Add err;
        tox_friend_add(tox, id, (const uint8_t *)request_msg, strlen(request_msg), &err);
        if (err != TOX_ERR_FRIEND_ADD_OK) { fprintf(stderr, "toxfriend: add %d\n", (int)err); return 1; }
    }
    if (add_pk) {
        uint8_t pk[TOX_PUBLIC_KEY_SIZE];
        if (unhex(add_pk, pk, TOX_PUBLIC_KEY_SIZE)) return 2;
        Tox_Err_Friend_Add err;
        tox_friend_add_norequest(tox, pk, &err);
        if (err != TOX_ERR_FRIEND_ADD_OK) { fprintf(stderr, "toxfriend: add %d\n", (int)err); return 1; }
    }
    if (save_path) {
        size_t n = tox_get_savedata_size(tox);
        uint8_t *data = malloc(n);
        if (!data) return 1;
        tox_get_savedata(tox, data);
        FILE *f = fopen(save_path, "wb");
        if (!f || fwrite(data, 1, n, f) != n) { fprintf(stderr, "toxfriend: cannot write %s\n", save_path); return 1; }
        fclose(f);
        free(data);
    }
    uint8_t addr[TOX_ADDRESS_SIZE], dht[TOX_PUBLIC_KEY_SIZE], sk[TOX_SECRET_KEY_SIZE];
    char addr_h[2 * TOX_ADDRESS_SIZE + 1], dht_h[2 * TOX_PUBLIC_KEY_SIZE + 1];
    char sk_h[2 * TOX_SECRET_KEY_SIZE + 1];
    tox_self_get_address(tox, addr);
    tox_self_get_dht_id(tox, dht);
    tox_self_get_secret_key(tox, sk);
    hex(addr, sizeof addr, addr_h);
    hex(dht, sizeof dht, dht_h);
    hex(sk, sizeof sk, sk_h);
    printf("READY %s %s %u %s\n", addr_h, dht_h, tox_self_get_udp_port(tox, NULL), sk_h);
    fflush(stdout);
    while (now_s() - start_s < seconds) {
        tox_iterate(tox, NULL);
        struct pollfd p = {.fd = 0, .events = POLLIN};
        if (poll(&p, 1, (int)tox_iteration_interval(tox)) > 0) {
            char buf[64];
            if (read(0, buf, sizeof buf) <= 0) break;
        }
    }
    printf("DONE\n");
    fflush(stdout);
    tox_kill(tox);
    return 0;
}
