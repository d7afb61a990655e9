/*
 * pair.c: two Tox instances (and a relay instance) in one process, written against c-toxcore 0.2.18's tox.h, for
 * the small-network cases a client meets when there is no bootstrap node:
 *
 *   pair lan [--timeout S] [--base-port P]
 *       Two instances with UDP and local discovery on (the defaults), no bootstrap node.
 *       Each must report itself connected (tox_self_get_connection_status != NONE).
 *   pair relay [--timeout S] [--tcp-port P] [--base-port P]
 *       Instance r with tcp_port P (a TCP relay under its DHT key), local discovery off;
 *       instances a and b with UDP off, whose only way in is
 *       tox_add_tcp_relay(127.0.0.1, P, r's DHT key) and tox_bootstrap to r's UDP port
 *       (as c-toxcore's tox_many_tcp_test: r is their onion path node). a sends b a friend
 *       request; b accepts it; a and b must report themselves connected and see each other
 *       online over TCP.
 *
 * Both instances run in one thread: tox_iterate on each, then a sleep of the smaller
 * tox_iteration_interval, as a client with two profiles would.
 *
 * Output, one line per milestone on stdout (flushed), seconds since the start:
 *   LIB <path of the libtoxcore the loader chose>
 *   TCP_PORT <port>                       (relay: what tox_self_get_tcp_port answers on R)
 *   SELF <a|b> <Tox_Connection> <secs>    (every change of an instance's own status)
 *   FRIEND <a|b> <Tox_Connection> <secs>  (every change of its friend's status)
 *   DONE <secs>                           (every check passed), then exit 0
 * Failures: `FAIL <reason>` on stderr and exit 1 (exit 2 for bad usage).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <tox/tox.h>

static double start_time;

static double now_secs(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double elapsed(void)
{
    return now_secs() - start_time;
}

static void fail(const char *why)
{
    fprintf(stderr, "FAIL %s\n", why);
    exit(1);
}

struct inst {
    const char *name;
    Tox *tox;
    Tox_Connection self;
    Tox_Connection friend_conn;
    bool accept_requests;
};

static void on_self(Tox *tox, Tox_Connection status, void *user)
{
    struct inst *i = user;
    (void)tox;
    i->self = status;
    printf("SELF %s %d %.2f\n", i->name, (int)status, elapsed());
    fflush(stdout);
}

static void on_friend(Tox *tox, uint32_t friend_number, Tox_Connection status, void *user)
{
    struct inst *i = user;
    (void)tox;
    (void)friend_number;
    i->friend_conn = status;
    printf("FRIEND %s %d %.2f\n", i->name, (int)status, elapsed());
    fflush(stdout);
}

static void on_request(Tox *tox, const uint8_t *public_key, const uint8_t *message, size_t length,
                       void *user)
{
    struct inst *i = user;
    (void)message;
    (void)length;
    if (!i->accept_requests) {
        return;
    }
    Tox_Err_Friend_Add err;
    tox_friend_add_norequest(tox, public_key, &err);
    if (err != TOX_ERR_FRIEND_ADD_OK) {
        fail("tox_friend_add_norequest");
    }
}

static Tox *make(struct inst *i, struct Tox_Options *o)
{
    Tox_Err_New err;
    i->tox = tox_new(o, &err);
    if (i->tox == NULL) {
        fprintf(stderr, "FAIL tox_new(%s): error %d\n", i->name, (int)err);
        exit(1);
    }
    tox_callback_self_connection_status(i->tox, on_self);
    tox_callback_friend_connection_status(i->tox, on_friend);
    tox_callback_friend_request(i->tox, on_request);
    return i->tox;
}

static void print_lib(void)
{
    Dl_info info;
    if (dladdr((void *)tox_new, &info) != 0 && info.dli_fname != NULL) {
        printf("LIB %s\n", info.dli_fname);
    }
}

static void hex_of(const uint8_t *bytes, size_t len, char *out)
{
    for (size_t k = 0; k < len; ++k) {
        sprintf(out + 2 * k, "%02X", bytes[k]);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: pair lan|relay [--timeout S] [--tcp-port P] [--base-port P]\n");
        return 2;
    }
    const char *mode = argv[1];
    double timeout = 60;
    long tcp_port = 33600;
    long base_port = 0;
    for (int k = 2; k + 1 < argc; k += 2) {
        if (strcmp(argv[k], "--timeout") == 0) {
            timeout = atof(argv[k + 1]);
        } else if (strcmp(argv[k], "--tcp-port") == 0) {
            tcp_port = atol(argv[k + 1]);
        } else if (strcmp(argv[k], "--base-port") == 0) {
            base_port = atol(argv[k + 1]);
        } else {
            fprintf(stderr, "unknown option %s\n", argv[k]);
            return 2;
        }
    }
    bool relay = strcmp(mode, "relay") == 0;
    if (!relay && strcmp(mode, "lan") != 0) {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    print_lib();
    start_time = now_secs();

    struct inst r = {"r", NULL, TOX_CONNECTION_NONE, TOX_CONNECTION_NONE, false};
    struct inst a = {"a", NULL, TOX_CONNECTION_NONE, TOX_CONNECTION_NONE, false};
    struct inst b = {"b", NULL, TOX_CONNECTION_NONE, TOX_CONNECTION_NONE, true};
    struct inst *all[3] = {&a, &b, NULL};
    size_t count = 2;
    struct Tox_Options *o = tox_options_new(NULL);
    if (o == NULL) {
        fail("tox_options_new");
    }
    if (base_port != 0) {
        tox_options_set_start_port(o, (uint16_t)base_port);
        tox_options_set_end_port(o, (uint16_t)(base_port + 10));
    }
    Tox_Err_Get_Port perr;
    if (relay) {
        /* r is the relay instance (UDP on, local discovery off, so that nothing but r joins
         * the others). */
        tox_options_set_local_discovery_enabled(o, false);
        tox_options_set_tcp_port(o, (uint16_t)tcp_port);
        make(&r, o);
        all[2] = &r;
        count = 3;
        uint16_t got = tox_self_get_tcp_port(r.tox, &perr);
        if (perr != TOX_ERR_GET_PORT_OK || got != tcp_port) {
            fail("tox_self_get_tcp_port does not answer the tcp_port asked for");
        }
        printf("TCP_PORT %u\n", (unsigned)got);
        tox_options_set_tcp_port(o, 0);
        tox_options_set_udp_enabled(o, false);
    }
    make(&a, o);
    make(&b, o);
    tox_options_free(o);
    if (relay) {
        if (tox_self_get_tcp_port(a.tox, &perr) != 0 || perr != TOX_ERR_GET_PORT_NOT_BOUND) {
            fail("tox_self_get_tcp_port answers on an instance without tcp_port");
        }
        if (tox_self_get_udp_port(a.tox, &perr) != 0 || perr != TOX_ERR_GET_PORT_NOT_BOUND) {
            fail("tox_self_get_udp_port answers on an instance with UDP off");
        }
        uint8_t dht[TOX_PUBLIC_KEY_SIZE];
        tox_self_get_dht_id(r.tox, dht);
        uint16_t udp_port = tox_self_get_udp_port(r.tox, &perr);
        for (size_t k = 0; k < 2; ++k) {
            Tox_Err_Bootstrap berr;
            if (!tox_add_tcp_relay(all[k]->tox, "127.0.0.1", (uint16_t)tcp_port, dht, &berr)) {
                fail("tox_add_tcp_relay");
            }
            /* As c-toxcore's tox_many_tcp_test: the relay instance is also the UDP-off
             * instances' bootstrap node, which makes it an onion path node. */
            if (!tox_bootstrap(all[k]->tox, "127.0.0.1", udp_port, dht, &berr)) {
                fail("tox_bootstrap");
            }
        }
        uint8_t addr[TOX_ADDRESS_SIZE];
        tox_self_get_address(b.tox, addr);
        Tox_Err_Friend_Add ferr;
        const char *msg = "pair: relay";
        tox_friend_add(a.tox, addr, (const uint8_t *)msg, strlen(msg), &ferr);
        if (ferr != TOX_ERR_FRIEND_ADD_OK) {
            fail("tox_friend_add");
        }
    }
    for (size_t k = 0; k < count; ++k) {
        uint8_t dht[TOX_PUBLIC_KEY_SIZE];
        char hex[2 * TOX_PUBLIC_KEY_SIZE + 1];
        tox_self_get_dht_id(all[k]->tox, dht);
        hex_of(dht, sizeof dht, hex);
        printf("DHT %s %s %u\n", all[k]->name, hex, (unsigned)tox_self_get_udp_port(all[k]->tox, &perr));
    }

    for (;;) {
        uint32_t ms = 1000;
        for (size_t k = 0; k < count; ++k) {
            tox_iterate(all[k]->tox, all[k]);
            uint32_t m = tox_iteration_interval(all[k]->tox);
            ms = m < ms ? m : ms;
        }
        bool done = a.self != TOX_CONNECTION_NONE && b.self != TOX_CONNECTION_NONE;
        if (relay) {
            done = done && a.friend_conn == TOX_CONNECTION_TCP && b.friend_conn == TOX_CONNECTION_TCP;
        }
        if (done) {
            /* the getters must agree with the callbacks */
            if (tox_self_get_connection_status(a.tox) != a.self
                    || tox_self_get_connection_status(b.tox) != b.self) {
                fail("tox_self_get_connection_status disagrees with its callback");
            }
            printf("DONE %.2f\n", elapsed());
            break;
        }
        if (elapsed() > timeout) {
            fprintf(stderr, "FAIL timed out after %.0f s: a self %d friend %d, b self %d friend %d\n",
                    timeout, (int)a.self, (int)a.friend_conn, (int)b.self, (int)b.friend_conn);
            return 1;
        }
        usleep(ms * 1000);
    }
    for (size_t k = 0; k < count; ++k) {
        tox_kill(all[k]->tox);
    }
    printf("OK\n");
    return 0;
}
