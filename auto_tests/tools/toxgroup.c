/* One c-toxcore 0.2.20 NGC peer for rustox's group discovery test and benchmark: a founder
 * that creates a public group and talks in it, or a joiner that joins it by chat id and reports
 * when it hears the founder.
 *
 * Built at run time against Debian trixie's libtoxcore 0.2.20 (fetched and unpacked by
 * auto_tests/tools/fetch_toxcore_0_2_20.sh, run with LD_LIBRARY_PATH); a separate process, so
 * nothing of ours is ever linked with c-toxcore. Uses tox.h only.
 *
 * usage: toxgroup PORT SECONDS founder|joiner [options]
 *   --bootstrap HOST PORT KEYHEX   a DHT node (repeatable)
 *   --chat-id HEX                  the group to join (joiner)
 *   --say TEXT                     founder: sent to the group once a second while a peer is in it
 * PORT 0 lets c-toxcore pick from 33445-33545. IPv6 off, LAN discovery off, no TCP server.
 * stdout, one line each, flushed, T = seconds since start:
 *   READY DHTKEY PORT
 *   CHAT HEX                 founder: the public group's chat id
 *   SELF STATUS T            DHT connection status changed (0 none, 1 tcp, 2 udp)
 *   JOINED T                 we are connected to the group (self join)
 *   PEER T                   a peer joined the group
 *   MESSAGE T TEXT           a group message arrived
 *   DONE                     time is up or stdin closed (TOXGROUP_IGNORE_STDIN: never watched)
 */
#define _POSIX_C_SOURCE 200809L

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <tox/tox.h>

#define MAX_BOOT 16

static double start_s;
static int peers;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double since_start(void) { return now_s() - start_s; }

static int hex_to_bytes(const char *hex, uint8_t *out, size_t len)
{
    if (strlen(hex) != len * 2) {
        return -1;
    }
    for (size_t i = 0; i < len; ++i) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1) {
            return -1;
        }
        out[i] = (uint8_t)v;
    }
    return 0;
}

static void print_hex(const uint8_t *b, size_t len)
{
    for (size_t i = 0; i < len; ++i) {
        printf("%02X", b[i]);
    }
}

static void on_self(Tox *tox, Tox_Connection status, void *ud)
{
    (void)tox; (void)ud;
    printf("SELF %d %.3f\n", (int)status, since_start());
    fflush(stdout);
}

static void on_self_join(Tox *tox, Tox_Group_Number g, void *ud)
{
    (void)tox; (void)g; (void)ud;
    printf("JOINED %.3f\n", since_start());
    fflush(stdout);
}

static void on_peer_join(Tox *tox, Tox_Group_Number g, Tox_Group_Peer_Number p, void *ud)
{
    (void)tox; (void)g; (void)p; (void)ud;
    ++peers;
    printf("PEER %.3f\n", since_start());
    fflush(stdout);
}

static void on_message(Tox *tox, Tox_Group_Number g, Tox_Group_Peer_Number p, Tox_Message_Type t,
                       const uint8_t *msg, size_t len, Tox_Group_Message_Id id, void *ud)
{
    (void)tox; (void)g; (void)p; (void)t; (void)id; (void)ud;
    printf("MESSAGE %.3f %.*s\n", since_start(), (int)len, (const char *)msg);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s PORT SECONDS founder|joiner [options]\n", argv[0]);
        return 2;
    }
    start_s = now_s();
    const int port = atoi(argv[1]);
    const double seconds = atof(argv[2]);
    const int founder = strcmp(argv[3], "founder") == 0;
    if (!founder && strcmp(argv[3], "joiner") != 0) {
        fprintf(stderr, "role must be founder or joiner\n");
        return 2;
    }
    const char *boot_host[MAX_BOOT];
    int boot_port[MAX_BOOT];
    uint8_t boot_key[MAX_BOOT][TOX_PUBLIC_KEY_SIZE];
    int nboot = 0;
    uint8_t chat_id[TOX_GROUP_CHAT_ID_SIZE];
    int have_chat = 0;
    const char *say = "hello from the founder";
    for (int i = 4; i < argc; ++i) {
        if (strcmp(argv[i], "--bootstrap") == 0 && i + 3 < argc && nboot < MAX_BOOT) {
            boot_host[nboot] = argv[i + 1];
            boot_port[nboot] = atoi(argv[i + 2]);
            if (hex_to_bytes(argv[i + 3], boot_key[nboot], TOX_PUBLIC_KEY_SIZE) != 0) {
                fprintf(stderr, "bad bootstrap key\n");
                return 2;
            }
            ++nboot;
            i += 3;
        } else if (strcmp(argv[i], "--chat-id") == 0 && i + 1 < argc) {
            if (hex_to_bytes(argv[i + 1], chat_id, sizeof(chat_id)) != 0) {
                fprintf(stderr, "bad chat id\n");
                return 2;
            }
            have_chat = 1;
            ++i;
        } else if (strcmp(argv[i], "--say") == 0 && i + 1 < argc) {
            say = argv[++i];
        } else {
            fprintf(stderr, "bad argument %s\n", argv[i]);
            return 2;
        }
    }
    if (!founder && !have_chat) {
        fprintf(stderr, "a joiner needs --chat-id\n");
        return 2;
    }

    struct Tox_Options *opts = tox_options_new(NULL);
    tox_options_set_ipv6_enabled(opts, false);
    tox_options_set_local_discovery_enabled(opts, false);
    tox_options_set_udp_enabled(opts, true);
    tox_options_set_start_port(opts, port == 0 ? 33445 : port);
    tox_options_set_end_port(opts, port == 0 ? 33545 : port);
    tox_options_set_tcp_port(opts, 0);
    Tox_Err_New err_new;
    Tox *tox = tox_new(opts, &err_new);
    tox_options_free(opts);
    if (tox == NULL) {
        fprintf(stderr, "tox_new failed: %d\n", (int)err_new);
        return 1;
    }
    tox_callback_self_connection_status(tox, on_self);
    tox_callback_group_self_join(tox, on_self_join);
    tox_callback_group_peer_join(tox, on_peer_join);
    tox_callback_group_message(tox, on_message);
    for (int i = 0; i < nboot; ++i) {
        tox_bootstrap(tox, boot_host[i], (uint16_t)boot_port[i], boot_key[i], NULL);
    }
    uint8_t dht_key[TOX_PUBLIC_KEY_SIZE];
    tox_self_get_dht_id(tox, dht_key);
    Tox_Err_Get_Port err_port;
    printf("READY ");
    print_hex(dht_key, sizeof(dht_key));
    printf(" %u\n", (unsigned)tox_self_get_udp_port(tox, &err_port));

    const char *name = founder ? "founder" : "joiner";
    Tox_Group_Number group;
    if (founder) {
        Tox_Err_Group_New err;
        group = tox_group_new(tox, TOX_GROUP_PRIVACY_STATE_PUBLIC, (const uint8_t *)"rustox", 6,
                              (const uint8_t *)name, strlen(name), &err);
        if (err != TOX_ERR_GROUP_NEW_OK) {
            fprintf(stderr, "tox_group_new failed: %d\n", (int)err);
            return 1;
        }
        Tox_Err_Group_State_Query qerr;
        tox_group_get_chat_id(tox, group, chat_id, &qerr);
        printf("CHAT ");
        print_hex(chat_id, sizeof(chat_id));
        printf("\n");
    } else {
        Tox_Err_Group_Join err;
        group = tox_group_join(tox, chat_id, (const uint8_t *)name, strlen(name), NULL, 0, &err);
        if (err != TOX_ERR_GROUP_JOIN_OK) {
            fprintf(stderr, "tox_group_join failed: %d\n", (int)err);
            return 1;
        }
    }
    fflush(stdout);

    double next_say = 0;
    const int stdin_open = !isatty(0) && getenv("TOXGROUP_IGNORE_STDIN") == NULL;
    while (since_start() < seconds) {
        tox_iterate(tox, NULL);
        if (founder && peers > 0 && since_start() >= next_say) {
            Tox_Err_Group_Send_Message serr;
            tox_group_send_message(tox, group, TOX_MESSAGE_TYPE_NORMAL, (const uint8_t *)say,
                                   strlen(say), &serr);
            next_say = since_start() + 1.0;
        }
        /* stdin closing ends the run early; a closed or absent stdin is then not watched. */
        struct pollfd pfd = {.fd = stdin_open ? 0 : -1, .events = POLLIN};
        const int wait_ms = (int)tox_iteration_interval(tox);
        if (poll(&pfd, 1, wait_ms) > 0 && (pfd.revents & (POLLIN | POLLHUP)) != 0) {
            char buf[64];
            if (read(0, buf, sizeof(buf)) <= 0) {
                break;
            }
        }
    }
    printf("DONE\n");
    fflush(stdout);
    tox_kill(tox);
    return 0;
}
