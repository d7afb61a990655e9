/* A small network of c-toxcore instances for rustox's DHT interop tests.
 *
 * Built at test time against Debian's libtoxcore (c-toxcore 0.2.18) with `cc ... -ltoxcore`;
 * it is a separate process, so nothing of ours is ever linked with c-toxcore.
 *
 * usage: toxnet N PORT_BASE SECONDS [--chain] [--friends] [--bootstrap HOST PORT KEYHEX]...
 *   N instances on UDP ports PORT_BASE.., IPv4 only, LAN discovery off, no TCP.
 *   --chain      instances 1.. also bootstrap from instance 0
 *   --friends    instances 0 and 1 add each other as friends (no request)
 * Prints "NODE i DHTKEY PORT", then every 500 ms "STAT i SELF FRIEND" (connection status of
 * the instance and of its friend 0, -1 if none), and "DONE" when the time is up or stdin closes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>
#include <tox/tox.h>
#include "testkit.h"

#define MAX_NODES 16

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage\n"); return 2; }
    int n = atoi(argv[1]);
    int port_base = atoi(argv[2]);
    double seconds = atof(argv[3]);
    int chain = 0, friends = 0;
    if (n < 1 || n > MAX_NODES) return 2;
    Tox *tox[MAX_NODES] = {0};
    for (int i = 0; i < n; ++i) {
        struct Tox_Options *o = tox_options_new(NULL);
        tox_options_set_ipv6_enabled(o, false);
        tox_options_set_udp_enabled(o, true);
        tox_options_set_local_discovery_enabled(o, false);
        tox_options_set_start_port(o, port_base + i);
        tox_options_set_end_port(o, port_base + i);
        tox_options_set_tcp_port(o, 0);
        Tox_Err_New err;
        tox[i] = tox_new(o, &err);
        tox_options_free(o);
        if (!tox[i]) { fprintf(stderr, "tox_new %d failed: %d\n", i, err); return 1; }
    }
    for (int a = 4; a < argc; ++a) {
        if (!strcmp(argv[a], "--chain")) chain = 1;
        else if (!strcmp(argv[a], "--friends")) friends = 1;
        else if (!strcmp(argv[a], "--bootstrap") && a + 3 < argc) {
            uint8_t key[TOX_PUBLIC_KEY_SIZE];
            if (unhex(argv[a + 3], key, sizeof key)) { fprintf(stderr, "bad key\n"); return 2; }
            for (int i = 0; i < n; ++i) {
                Tox_Err_Bootstrap e;
                if (!tox_bootstrap(tox[i], argv[a + 1], (uint16_t)atoi(argv[a + 2]), key, &e))
                    fprintf(stderr, "bootstrap failed: %d\n", e);
            }
            a += 3;
        }
    }
    uint8_t dht0[TOX_PUBLIC_KEY_SIZE];
    tox_self_get_dht_id(tox[0], dht0);
    for (int i = 0; i < n; ++i) {
        uint8_t dht[TOX_PUBLIC_KEY_SIZE];
        char h[2 * TOX_PUBLIC_KEY_SIZE + 1];
        tox_self_get_dht_id(tox[i], dht);
        hex(dht, sizeof dht, h);
        printf("NODE %d %s %u\n", i, h, tox_self_get_udp_port(tox[i], NULL));
        if (chain && i > 0) tox_bootstrap(tox[i], "127.0.0.1", (uint16_t)port_base, dht0, NULL);
    }
    if (friends && n >= 2) {
        uint8_t pk[TOX_PUBLIC_KEY_SIZE];
        tox_self_get_public_key(tox[1], pk);
        tox_friend_add_norequest(tox[0], pk, NULL);
        tox_self_get_public_key(tox[0], pk);
        tox_friend_add_norequest(tox[1], pk, NULL);
    }
    fflush(stdout);
    double start = now_s(), last = 0;
    while (now_s() - start < seconds) {
        uint32_t wait = 50;
        for (int i = 0; i < n; ++i) {
            tox_iterate(tox[i], NULL);
            uint32_t w = tox_iteration_interval(tox[i]);
            if (w < wait) wait = w;
        }
        struct pollfd p = { .fd = 0, .events = POLLIN };
        if (poll(&p, 1, (int)wait) > 0) {
            char buf[64];
            if (read(0, buf, sizeof buf) <= 0) break;
        }
        if (now_s() - last >= 0.5) {
            last = now_s();
            for (int i = 0; i < n; ++i) {
                int f = tox_self_get_friend_list_size(tox[i]) > 0
                    ? (int)tox_friend_get_connection_status(tox[i], 0, NULL) : -1;
                printf("STAT %d %d %d\n", i, (int)tox_self_get_connection_status(tox[i]), f);
            }
            fflush(stdout);
        }
    }
    printf("DONE\n");
    fflush(stdout);
    for (int i = 0; i < n; ++i) tox_kill(tox[i]);
    return 0;
}
