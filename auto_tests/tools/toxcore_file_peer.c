/* toxcore_file_peer: one end of a file transfer between two c-toxcore clients.
 *
 * rustox's claims against c-toxcore are measured against c-toxcore itself: this is a small
 * client on Debian's libtoxcore 0.2.18 that uses only the public tox.h API, run beside
 * `rustox send` over the same link. It is built at run time by
 * auto_tests/src/ctoxcore (cc ... $(pkg-config --cflags --libs toxcore libsodium));
 * libsodium only hashes content for the optional SHA-256 checks.
 *
 * usage:
 *   toxcore_file_peer recv [COMMON] [--friend PK] [--expect-size N]
 *                          [--check pattern|none|file-id|sha256:HEX] [--output PATH] [--linger S]
 *   toxcore_file_peer send [COMMON] --friend PK|ADDRESS --size N [--file-id random|sha256]
 *                          [--allow-tcp]
 * COMMON:
 *   --port P                UDP port to bind (0: c-toxcore's default range 33445-33545)
 *   --bootstrap H:P:KEY     a DHT node to bootstrap from (repeatable; KEY is its DHT key)
 *   --tcp-relay H:P:KEY     a TCP relay (tox_add_tcp_relay; repeatable)
 *   --no-udp                UDP off: the friend is reached through TCP relays only (the
 *                           sender then needs --allow-tcp)
 *   --secret-key HEX        use this long-term secret key (savedata type SECRET_KEY)
 *   --ipv4-only             IPv6 off (c-toxcore then binds 0.0.0.0)
 *   --no-lan                LAN discovery off
 *   --no-hole-punching      UDP hole punching off
 *   --seed S                content pattern seed (default 1)
 *   --timeout S             give up after S seconds in all (default 120)
 *   --sleep-ms N            diagnostic: sleep N ms per iteration, not tox_iteration_interval
 *   --progress              a progress line on stderr every second
 *   --avatar                send the file as an avatar (TOX_FILE_KIND_AVATAR), or accept
 *                           only avatars
 *   --log                   c-toxcore's own log (DEBUG and up) on stderr
 *
 * stdout carries JSON lines only, each flushed at once:
 *   {"event":"ready","role":..,"public_key":..,"address":..,"dht_id":..,"udp_port":..}
 *     as soon as the instance exists; a peer can bootstrap off udp_port + dht_id.
 *   {"event":"done","role":"send","bytes":..,"seconds":..,"goodput_mbit":..,
 *    "time_to_friend_online":..,"time_to_self_online":..,"friend_connection":"udp",...}
 *     sender: seconds run from the receiver's accept (RESUME) to c-toxcore's final
 *     zero-length chunk request, which it makes once the last data packet is acknowledged.
 *   {"event":"done","role":"recv","bytes":..,"verified":true,...}
 *     receiver: seconds run from sending RESUME to the last byte; verified means every byte
 *     arrived in order and passed the chosen check. The receiver then keeps iterating (so
 *     the last acknowledgement leaves) until the sender goes offline or --linger passes.
 * Errors: one line "toxcore_file_peer: error: ..." on stderr; exit 1 for usage or setup,
 * 2 for a timeout or a peer that went away, 3 when the content check fails.
 *
 * Content: byte p of the file is byte (p mod 8) of splitmix64(seed + floor(p/8)), so any
 * chunk can be generated or checked on its own, at any position, with no file on disk.
 *
 * The loop: tox_iterate, then sleep until tox_iteration_interval() ms after that
 * iteration began (an absolute CLOCK_MONOTONIC deadline, so the time tox_iterate took is
 * not added to the sleep). During a transfer c-toxcore 0.2.18 asks for 1-2 ms
 * (net_crypto's current_sleep_time follows the send rate), otherwise at most 50 ms.
 * Chunk requests are answered inside the callback from a stack buffer; a chunk refused
 * with SENDQ goes to a backlog that is retried, in order, before any newer chunk, since
 * c-toxcore counts a chunk as requested whether or not the client sent it.
 *
 * How the two peers come online (measured on loopback, 2 cores, Debian 12, libtoxcore 0.2.18):
 * - Each needs a DHT node to bootstrap from. Any of these works: tox-bootstrapd (a config
 *   with its port, UDP only), DHT_bootstrap (fixed ports: one per network namespace), or
 *   the receiver itself: it prints udp_port and dht_id on its ready line, the sender passes
 *   them as --bootstrap, and the receiver learns the sender from the sender's DHT packets.
 *   Two peers and no other node are enough: c-toxcore draws its onion path nodes with
 *   replacement (random_nodes_path_onion), so a path may repeat a node.
 * - The friend is found through the onion (announce, then the friend's DHT key in a
 *   DHT-PK packet), whose timers run once a second (docs/protocol.md §6.7). Self connected
 *   (announced) came 7.1-8.0 s after start, the friend 9.0-10.8 s after start, and it made
 *   no difference whether a bootstrap node or the receiver was the node, nor whether the
 *   sender sent a friend request to the Tox ID or both sides added each other's public key
 *   (--secret-key and --friend PK, tox_friend_add_norequest).
 * - LAN discovery alone connects them only where an interface has a broadcast address:
 *   0.2.18 sends it to the interfaces' broadcast addresses (SIOCGIFBRDADDR) and to
 *   255.255.255.255, on port 33445 and a few more of 33446-33545 each 10 s, never to
 *   loopback. On loopback, and between two namespaces on a veth pair whose addresses were
 *   added without "brd +", nothing arrived in 40 s; with "brd +" both came online in 9.3 s,
 *   as with a bootstrap node. So a bootstrap node is always given, and --no-lan is usual.
 * - The self connection reads "tcp" on loopback and on private addresses although no TCP
 *   relay is used: c-toxcore says UDP only once its DHT knows a non-LAN node
 *   (onion_connection_status, dht_non_lan_connected). The friend connection reads "udp";
 *   the sender offers the file only then, unless --allow-tcp.
 *
 * Nothing here assumes loopback: c-toxcore 0.2.18 binds the wildcard address (tox.h has no
 * bind-address option), on --port; peers are reached at the addresses given with
 * --bootstrap, and LAN discovery is optional. Checked between two network namespaces
 * joined by a veth pair (10.99.0.1 and .2, both on port 33445): 4 MiB arrived verified,
 * friend online after 9.2 s.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>
#include <tox/tox.h>

#define PROG "toxcore_file_peer"
#define MAX_BOOTSTRAP_NODES 8
/* A chunk request answers at most MAX_FILE_DATA_SIZE = 1371 bytes (docs/protocol.md §3.5). */
#define MAX_CHUNK 1371
/* Chunks refused with SENDQ wait here. c-toxcore requests at most 128 chunks per file per
 * tox_iterate (max_ft_loops, docs/protocol.md §3.6) and stops asking while its queue is full,
 * so the backlog stays small; overflowing it is reported as an error, not grown. */
#define BACKLOG_CAPACITY 8192

enum exit_code { EXIT_OK = 0, EXIT_SETUP = 1, EXIT_TIMEOUT = 2, EXIT_CONTENT = 3 };

enum role { ROLE_RECV, ROLE_SEND };
enum check { CHECK_PATTERN, CHECK_NONE, CHECK_FILE_ID, CHECK_SHA256 };

struct bootstrap_node {
    char host[256];
    uint16_t port;
    uint8_t key[TOX_PUBLIC_KEY_SIZE];
};

struct config {
    enum role role;
    uint16_t port;
    struct bootstrap_node nodes[MAX_BOOTSTRAP_NODES];
    size_t node_count;
    struct bootstrap_node relays[MAX_BOOTSTRAP_NODES];
    size_t relay_count;
    bool no_udp;
    bool have_secret_key;
    uint8_t secret_key[TOX_SECRET_KEY_SIZE];
    bool ipv4_only;
    bool no_lan;
    bool no_hole_punching;
    uint64_t seed;
    double timeout_s;
    /* Diagnostic: sleep this many ms per iteration instead of tox_iteration_interval(). */
    int sleep_override_ms;
    bool progress;
    bool log;
    /* The friend: 64 hex digits (public key, added without a request) or 76 (Tox ID,
     * sent a friend request). The receiver accepts any request when it has none. */
    const char *friend_hex;
    /* send */
    bool have_size;
    uint64_t size;
    bool file_id_sha256;
    bool avatar;
    bool allow_tcp;
    /* recv */
    bool have_expect_size;
    uint64_t expect_size;
    enum check check;
    uint8_t expect_sha256[crypto_hash_sha256_BYTES];
    const char *output;
    double linger_s;
};

struct pending_chunk {
    uint32_t friend_number;
    uint32_t file_number;
    uint64_t position;
    size_t length;
};

struct peer {
    const struct config *cfg;
    Tox *tox;
    double t0;
    double t_self_online;
    double t_friend_online;
    Tox_Connection friend_connection;
    bool friend_went_offline;
    uint32_t friend_number;
    bool have_friend;

    /* send */
    bool offered;
    uint32_t file_number;
    double t_accepted;
    double t_done;
    bool completed;
    uint64_t bytes_sent;
    uint64_t chunk_requests;
    uint64_t sendq_refusals;
    struct pending_chunk *backlog;
    size_t backlog_head;
    size_t backlog_len;
    size_t backlog_peak;

    /* recv */
    bool accepted;
    uint32_t recv_file_number;
    uint64_t offered_size;
    uint8_t offered_file_id[TOX_FILE_ID_LENGTH];
    uint64_t bytes_received;
    uint64_t mismatched_bytes;
    bool out_of_order;
    bool reported;
    bool verified;
    crypto_hash_sha256_state hash;
    FILE *out;

    /* an error raised inside a callback, reported by the main loop */
    int fail_code;
    char fail_message[256];
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, PROG ": error: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(code);
}

/* Records the first error raised inside a callback; the main loop exits with it. */
static void fail_later(struct peer *p, int code, const char *fmt, ...)
{
    if (p->fail_code != 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->fail_message, sizeof p->fail_message, fmt, ap);
    va_end(ap);
    p->fail_code = code;
}

/* ---- content ---------------------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Writes bytes [position, position + length) of the pattern for `seed` into buf. */
static void fill_pattern(uint64_t seed, uint64_t position, uint8_t *buf, size_t length)
{
    size_t i = 0;
    while (i < length) {
        const uint64_t at = position + i;
        const uint64_t word = splitmix64(seed + (at >> 3));
        unsigned byte = (unsigned)(at & 7);
        if (byte == 0 && length - i >= 8) {
            for (unsigned k = 0; k < 8; ++k) {
                buf[i + k] = (uint8_t)(word >> (8 * k));
            }
            i += 8;
            continue;
        }
        for (; byte < 8 && i < length; ++byte, ++i) {
            buf[i] = (uint8_t)(word >> (8 * byte));
        }
    }
}

static void pattern_sha256(uint64_t seed, uint64_t size, uint8_t out[crypto_hash_sha256_BYTES])
{
    static uint8_t block[1 << 16];
    crypto_hash_sha256_state st;
    crypto_hash_sha256_init(&st);
    for (uint64_t pos = 0; pos < size; pos += sizeof block) {
        const size_t n = size - pos < sizeof block ? (size_t)(size - pos) : sizeof block;
        fill_pattern(seed, pos, block, n);
        crypto_hash_sha256_update(&st, block, n);
    }
    crypto_hash_sha256_final(&st, out);
}

/* ---- hex and argument parsing ---------------------------------------------------------- */

static bool hex_decode(const char *hex, uint8_t *out, size_t out_len)
{
    if (strlen(hex) != out_len * 2) {
        return false;
    }
    for (size_t i = 0; i < out_len; ++i) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1) {
            return false;
        }
        out[i] = (uint8_t)v;
    }
    return true;
}

static void hex_encode(const uint8_t *in, size_t len, char *out)
{
    static const char digits[] = "0123456789ABCDEF";
    for (size_t i = 0; i < len; ++i) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * len] = '\0';
}

static uint64_t parse_u64(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || s[0] == '-') {
        die(EXIT_SETUP, "%s wants a non-negative integer, got \"%s\"", opt, s);
    }
    return v;
}

static double parse_seconds(const char *opt, const char *s)
{
    char *end;
    const double v = strtod(s, &end);
    if (end == s || *end != '\0' || !(v >= 0)) {
        die(EXIT_SETUP, "%s wants a number of seconds, got \"%s\"", opt, s);
    }
    return v;
}

/* HOST:PORT:KEY; HOST may be an IPv6 literal in brackets. */
static void parse_bootstrap(const char *arg, struct bootstrap_node *node)
{
    const char *key = strrchr(arg, ':');
    if (key == NULL || key == arg) {
        die(EXIT_SETUP, "--bootstrap wants HOST:PORT:KEY, got \"%s\"", arg);
    }
    const char *port = key - 1;
    while (port > arg && *port != ':') {
        --port;
    }
    if (*port != ':') {
        die(EXIT_SETUP, "--bootstrap wants HOST:PORT:KEY, got \"%s\"", arg);
    }
    const char *host = arg;
    size_t host_len = (size_t)(port - arg);
    if (host_len >= 2 && host[0] == '[' && host[host_len - 1] == ']') {
        ++host;
        host_len -= 2;
    }
    if (host_len == 0 || host_len >= sizeof node->host) {
        die(EXIT_SETUP, "--bootstrap host in \"%s\" is empty or too long", arg);
    }
    memcpy(node->host, host, host_len);
    node->host[host_len] = '\0';
    char port_text[8];
    const size_t port_len = (size_t)(key - port - 1);
    if (port_len == 0 || port_len >= sizeof port_text) {
        die(EXIT_SETUP, "--bootstrap port in \"%s\" is not a port", arg);
    }
    memcpy(port_text, port + 1, port_len);
    port_text[port_len] = '\0';
    const uint64_t port_value = parse_u64("--bootstrap port", port_text);
    if (port_value == 0 || port_value > 65535) {
        die(EXIT_SETUP, "--bootstrap port in \"%s\" is out of range", arg);
    }
    node->port = (uint16_t)port_value;
    if (!hex_decode(key + 1, node->key, sizeof node->key)) {
        die(EXIT_SETUP, "--bootstrap key in \"%s\" is not 64 hex digits", arg);
    }
}

static void usage(void)
{
    fprintf(stderr,
            "usage: " PROG " recv [COMMON] [--friend PK] [--expect-size N]\n"
            "           [--check pattern|none|file-id|sha256:HEX] [--output PATH] [--linger S]\n"
            "       " PROG " send [COMMON] --friend PK|ADDRESS --size N [--file-id random|sha256]\n"
            "           [--allow-tcp]\n"
            "COMMON: --port P --bootstrap HOST:PORT:KEY (repeatable) --secret-key HEX --ipv4-only\n"
            "        --no-lan --no-hole-punching --seed S --timeout S --progress --log\n"
            "        --tcp-relay HOST:PORT:KEY (repeatable) --no-udp\n"
            "        --sleep-ms N (diagnostic: fixed sleep instead of tox_iteration_interval)\n");
}

static void parse_args(int argc, char **argv, struct config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->seed = 1;
    cfg->sleep_override_ms = -1;
    cfg->timeout_s = 120;
    cfg->linger_s = 5;
    cfg->check = CHECK_PATTERN;
    if (argc < 2) {
        usage();
        exit(EXIT_SETUP);
    }
    if (strcmp(argv[1], "recv") == 0) {
        cfg->role = ROLE_RECV;
    } else if (strcmp(argv[1], "send") == 0) {
        cfg->role = ROLE_SEND;
    } else {
        usage();
        die(EXIT_SETUP, "the first argument is the role, recv or send, not \"%s\"", argv[1]);
    }
    for (int i = 2; i < argc; ++i) {
        const char *opt = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE()                                           \
    do {                                                       \
        if (val == NULL) {                                     \
            die(EXIT_SETUP, "%s needs a value", opt);          \
        }                                                      \
        ++i;                                                   \
    } while (0)
        if (strcmp(opt, "--port") == 0) {
            NEED_VALUE();
            const uint64_t v = parse_u64(opt, val);
            if (v > 65535) {
                die(EXIT_SETUP, "--port %s is out of range", val);
            }
            cfg->port = (uint16_t)v;
        } else if (strcmp(opt, "--bootstrap") == 0) {
            NEED_VALUE();
            if (cfg->node_count == MAX_BOOTSTRAP_NODES) {
                die(EXIT_SETUP, "at most %d --bootstrap nodes", MAX_BOOTSTRAP_NODES);
            }
            parse_bootstrap(val, &cfg->nodes[cfg->node_count++]);
        } else if (strcmp(opt, "--tcp-relay") == 0) {
            NEED_VALUE();
            if (cfg->relay_count == MAX_BOOTSTRAP_NODES) {
                die(EXIT_SETUP, "at most %d --tcp-relay relays", MAX_BOOTSTRAP_NODES);
            }
            parse_bootstrap(val, &cfg->relays[cfg->relay_count++]);
        } else if (strcmp(opt, "--no-udp") == 0) {
            cfg->no_udp = true;
        } else if (strcmp(opt, "--secret-key") == 0) {
            NEED_VALUE();
            if (!hex_decode(val, cfg->secret_key, sizeof cfg->secret_key)) {
                die(EXIT_SETUP, "--secret-key wants 64 hex digits");
            }
            cfg->have_secret_key = true;
        } else if (strcmp(opt, "--ipv4-only") == 0) {
            cfg->ipv4_only = true;
        } else if (strcmp(opt, "--no-lan") == 0) {
            cfg->no_lan = true;
        } else if (strcmp(opt, "--no-hole-punching") == 0) {
            cfg->no_hole_punching = true;
        } else if (strcmp(opt, "--seed") == 0) {
            NEED_VALUE();
            cfg->seed = parse_u64(opt, val);
        } else if (strcmp(opt, "--timeout") == 0) {
            NEED_VALUE();
            cfg->timeout_s = parse_seconds(opt, val);
        } else if (strcmp(opt, "--sleep-ms") == 0) {
            NEED_VALUE();
            const uint64_t v = parse_u64(opt, val);
            if (v > 1000) {
                die(EXIT_SETUP, "--sleep-ms is at most 1000");
            }
            cfg->sleep_override_ms = (int)v;
        } else if (strcmp(opt, "--progress") == 0) {
            cfg->progress = true;
        } else if (strcmp(opt, "--log") == 0) {
            cfg->log = true;
        } else if (strcmp(opt, "--friend") == 0) {
            NEED_VALUE();
            const size_t n = strlen(val);
            if (n != 2 * TOX_PUBLIC_KEY_SIZE && n != 2 * TOX_ADDRESS_SIZE) {
                die(EXIT_SETUP, "--friend wants a public key (64 hex digits) or a Tox ID (76)");
            }
            cfg->friend_hex = val;
        } else if (strcmp(opt, "--size") == 0 && cfg->role == ROLE_SEND) {
            NEED_VALUE();
            cfg->size = parse_u64(opt, val);
            cfg->have_size = true;
        } else if (strcmp(opt, "--file-id") == 0 && cfg->role == ROLE_SEND) {
            NEED_VALUE();
            if (strcmp(val, "sha256") == 0) {
                cfg->file_id_sha256 = true;
            } else if (strcmp(val, "random") != 0) {
                die(EXIT_SETUP, "--file-id is random or sha256, not \"%s\"", val);
            }
        } else if (strcmp(opt, "--allow-tcp") == 0 && cfg->role == ROLE_SEND) {
            cfg->allow_tcp = true;
        } else if (strcmp(opt, "--avatar") == 0) {
            cfg->avatar = true;
        } else if (strcmp(opt, "--expect-size") == 0 && cfg->role == ROLE_RECV) {
            NEED_VALUE();
            cfg->expect_size = parse_u64(opt, val);
            cfg->have_expect_size = true;
        } else if (strcmp(opt, "--check") == 0 && cfg->role == ROLE_RECV) {
            NEED_VALUE();
            if (strcmp(val, "pattern") == 0) {
                cfg->check = CHECK_PATTERN;
            } else if (strcmp(val, "none") == 0) {
                cfg->check = CHECK_NONE;
            } else if (strcmp(val, "file-id") == 0) {
                cfg->check = CHECK_FILE_ID;
            } else if (strncmp(val, "sha256:", 7) == 0
                       && hex_decode(val + 7, cfg->expect_sha256, sizeof cfg->expect_sha256)) {
                cfg->check = CHECK_SHA256;
            } else {
                die(EXIT_SETUP, "--check is pattern, none, file-id or sha256:HEX, not \"%s\"", val);
            }
        } else if (strcmp(opt, "--output") == 0 && cfg->role == ROLE_RECV) {
            NEED_VALUE();
            cfg->output = val;
        } else if (strcmp(opt, "--linger") == 0 && cfg->role == ROLE_RECV) {
            NEED_VALUE();
            cfg->linger_s = parse_seconds(opt, val);
        } else {
            usage();
            die(EXIT_SETUP, "unknown option for %s: %s", argv[1], opt);
        }
#undef NEED_VALUE
    }
    if (cfg->role == ROLE_SEND && (cfg->friend_hex == NULL || !cfg->have_size)) {
        die(EXIT_SETUP, "send needs --friend and --size");
    }
}

/* ---- callbacks -------------------------------------------------------------------------- */

static const char *connection_name(Tox_Connection c)
{
    switch (c) {
    case TOX_CONNECTION_UDP:
        return "udp";
    case TOX_CONNECTION_TCP:
        return "tcp";
    default:
        return "none";
    }
}

static void on_log(Tox *tox, Tox_Log_Level level, const char *file, uint32_t line, const char *func,
                   const char *message, void *user_data)
{
    (void)tox;
    (void)user_data;
    if (level == TOX_LOG_LEVEL_TRACE) {
        return;
    }
    fprintf(stderr, "[toxcore %d] %s:%" PRIu32 " %s: %s\n", (int)level, file, line, func, message);
}

static void on_self_connection(Tox *tox, Tox_Connection status, void *user_data)
{
    (void)tox;
    struct peer *p = user_data;
    if (status != TOX_CONNECTION_NONE && p->t_self_online < 0) {
        p->t_self_online = now_s() - p->t0;
    }
    if (p->cfg->progress) {
        fprintf(stderr, "[%.3f] self connection: %s\n", now_s() - p->t0, connection_name(status));
    }
}

static void on_friend_request(Tox *tox, const uint8_t *public_key, const uint8_t *message,
                              size_t length, void *user_data)
{
    (void)message;
    (void)length;
    struct peer *p = user_data;
    if (p->have_friend) {
        return;
    }
    Tox_Err_Friend_Add err;
    const uint32_t n = tox_friend_add_norequest(tox, public_key, &err);
    if (err != TOX_ERR_FRIEND_ADD_OK) {
        fail_later(p, EXIT_SETUP, "accepting the friend request failed (Tox_Err_Friend_Add %d)",
                   (int)err);
        return;
    }
    p->friend_number = n;
    p->have_friend = true;
}

static void on_friend_connection(Tox *tox, uint32_t friend_number, Tox_Connection status,
                                 void *user_data)
{
    (void)tox;
    struct peer *p = user_data;
    if (!p->have_friend || friend_number != p->friend_number) {
        return;
    }
    p->friend_connection = status;
    if (status != TOX_CONNECTION_NONE && p->t_friend_online < 0) {
        p->t_friend_online = now_s() - p->t0;
    }
    if (status == TOX_CONNECTION_NONE && p->t_friend_online >= 0) {
        p->friend_went_offline = true;
    }
    if (p->cfg->progress) {
        fprintf(stderr, "[%.3f] friend connection: %s\n", now_s() - p->t0,
                connection_name(status));
    }
}

/* sender ---------------------------------------------------------------------------------- */

/* Sends one chunk of the pattern; false when c-toxcore's queue refused it (SENDQ). */
static bool send_chunk(struct peer *p, const struct pending_chunk *c)
{
    uint8_t buf[MAX_CHUNK];
    if (c->length > sizeof buf) {
        fail_later(p, EXIT_SETUP, "c-toxcore asked for a %zu-byte chunk (max %d)", c->length,
                   MAX_CHUNK);
        return true;
    }
    fill_pattern(p->cfg->seed, c->position, buf, c->length);
    Tox_Err_File_Send_Chunk err;
    tox_file_send_chunk(p->tox, c->friend_number, c->file_number, c->position, buf, c->length,
                        &err);
    if (err == TOX_ERR_FILE_SEND_CHUNK_OK) {
        p->bytes_sent += c->length;
        return true;
    }
    if (err == TOX_ERR_FILE_SEND_CHUNK_SENDQ) {
        ++p->sendq_refusals;
        return false;
    }
    fail_later(p, EXIT_TIMEOUT, "tox_file_send_chunk at %" PRIu64 " failed (Tox_Err_File_Send_Chunk %d)",
               c->position, (int)err);
    return true;
}

/* Retries refused chunks in request order; stops at the first one still refused. */
static void flush_backlog(struct peer *p)
{
    while (p->backlog_len > 0) {
        if (!send_chunk(p, &p->backlog[p->backlog_head])) {
            return;
        }
        p->backlog_head = (p->backlog_head + 1) % BACKLOG_CAPACITY;
        --p->backlog_len;
    }
}

static void on_chunk_request(Tox *tox, uint32_t friend_number, uint32_t file_number,
                             uint64_t position, size_t length, void *user_data)
{
    (void)tox;
    struct peer *p = user_data;
    if (!p->offered || friend_number != p->friend_number || file_number != p->file_number) {
        return;
    }
    if (length == 0) {
        /* c-toxcore's last request: the final data packet has been acknowledged. */
        p->completed = true;
        p->t_done = now_s();
        return;
    }
    ++p->chunk_requests;
    const struct pending_chunk c = {friend_number, file_number, position, length};
    flush_backlog(p);
    if (p->backlog_len == 0 && send_chunk(p, &c)) {
        return;
    }
    if (p->backlog_len == BACKLOG_CAPACITY) {
        fail_later(p, EXIT_SETUP, "more than %d chunks refused with SENDQ in a row",
                   BACKLOG_CAPACITY);
        return;
    }
    p->backlog[(p->backlog_head + p->backlog_len) % BACKLOG_CAPACITY] = c;
    ++p->backlog_len;
    if (p->backlog_len > p->backlog_peak) {
        p->backlog_peak = p->backlog_len;
    }
}

static void on_file_control(Tox *tox, uint32_t friend_number, uint32_t file_number,
                            Tox_File_Control control, void *user_data)
{
    (void)tox;
    struct peer *p = user_data;
    const bool ours = p->cfg->role == ROLE_SEND
                          ? p->offered && file_number == p->file_number
                          : p->accepted && file_number == p->recv_file_number;
    if (!ours || friend_number != p->friend_number) {
        return;
    }
    if (control == TOX_FILE_CONTROL_RESUME && p->cfg->role == ROLE_SEND && p->t_accepted < 0) {
        p->t_accepted = now_s();
    } else if (control == TOX_FILE_CONTROL_CANCEL) {
        fail_later(p, EXIT_TIMEOUT, "the peer cancelled the transfer");
    }
}

/* receiver -------------------------------------------------------------------------------- */

static void on_file_offer(Tox *tox, uint32_t friend_number, uint32_t file_number, uint32_t kind,
                          uint64_t file_size, const uint8_t *filename, size_t filename_length,
                          void *user_data)
{
    (void)filename;
    (void)filename_length;
    struct peer *p = user_data;
    Tox_Err_File_Control err;
    const uint32_t wanted = p->cfg->avatar ? TOX_FILE_KIND_AVATAR : TOX_FILE_KIND_DATA;
    if (p->accepted || kind != wanted || !p->have_friend
            || friend_number != p->friend_number) {
        tox_file_control(tox, friend_number, file_number, TOX_FILE_CONTROL_CANCEL, &err);
        return;
    }
    if (p->cfg->have_expect_size && file_size != p->cfg->expect_size) {
        fail_later(p, EXIT_CONTENT, "offered %" PRIu64 " bytes, expected %" PRIu64, file_size,
                   p->cfg->expect_size);
        return;
    }
    Tox_Err_File_Get get_err;
    tox_file_get_file_id(tox, friend_number, file_number, p->offered_file_id, &get_err);
    tox_file_control(tox, friend_number, file_number, TOX_FILE_CONTROL_RESUME, &err);
    if (err != TOX_ERR_FILE_CONTROL_OK) {
        fail_later(p, EXIT_TIMEOUT, "accepting the file failed (Tox_Err_File_Control %d)",
                   (int)err);
        return;
    }
    p->accepted = true;
    p->recv_file_number = file_number;
    p->offered_size = file_size;
    p->t_accepted = now_s();
}

static void on_chunk(Tox *tox, uint32_t friend_number, uint32_t file_number, uint64_t position,
                     const uint8_t *data, size_t length, void *user_data)
{
    (void)tox;
    struct peer *p = user_data;
    if (!p->accepted || p->completed || friend_number != p->friend_number
            || file_number != p->recv_file_number) {
        return;
    }
    if (length == 0) {
        p->completed = true;
        p->t_done = now_s();
        return;
    }
    if (position != p->bytes_received) {
        p->out_of_order = true;
    }
    switch (p->cfg->check) {
    case CHECK_PATTERN: {
        uint8_t expected[MAX_CHUNK];
        size_t done = 0;
        while (done < length) {
            const size_t n = length - done < sizeof expected ? length - done : sizeof expected;
            fill_pattern(p->cfg->seed, position + done, expected, n);
            if (memcmp(expected, data + done, n) != 0) {
                for (size_t i = 0; i < n; ++i) {
                    p->mismatched_bytes += expected[i] != data[done + i];
                }
            }
            done += n;
        }
        break;
    }
    case CHECK_FILE_ID:
    case CHECK_SHA256:
        crypto_hash_sha256_update(&p->hash, data, length);
        break;
    case CHECK_NONE:
        break;
    }
    if (p->out != NULL && fwrite(data, 1, length, p->out) != length) {
        fail_later(p, EXIT_SETUP, "writing %s failed: %s", p->cfg->output, strerror(errno));
    }
    p->bytes_received += length;
}

/* ---- setup and the loop ----------------------------------------------------------------- */

static Tox *create_tox(const struct config *cfg)
{
    Tox_Err_Options_New opt_err;
    struct Tox_Options *opts = tox_options_new(&opt_err);
    if (opts == NULL) {
        die(EXIT_SETUP, "tox_options_new failed (%d)", (int)opt_err);
    }
    tox_options_set_ipv6_enabled(opts, !cfg->ipv4_only);
    tox_options_set_udp_enabled(opts, !cfg->no_udp);
    tox_options_set_local_discovery_enabled(opts, !cfg->no_lan);
    tox_options_set_hole_punching_enabled(opts, !cfg->no_hole_punching);
    tox_options_set_start_port(opts, cfg->port);
    tox_options_set_end_port(opts, cfg->port);
    if (cfg->have_secret_key) {
        tox_options_set_savedata_type(opts, TOX_SAVEDATA_TYPE_SECRET_KEY);
        tox_options_set_savedata_data(opts, cfg->secret_key, sizeof cfg->secret_key);
    }
    if (cfg->log) {
        tox_options_set_log_callback(opts, on_log);
    }
    Tox_Err_New err;
    Tox *tox = tox_new(opts, &err);
    tox_options_free(opts);
    if (tox == NULL) {
        if (err == TOX_ERR_NEW_PORT_ALLOC) {
            die(EXIT_SETUP, "tox_new could not bind UDP port %u (in use?)", (unsigned)cfg->port);
        }
        die(EXIT_SETUP, "tox_new failed (Tox_Err_New %d)", (int)err);
    }
    return tox;
}

static void print_ready(const struct peer *p)
{
    uint8_t pk[TOX_PUBLIC_KEY_SIZE], address[TOX_ADDRESS_SIZE], dht[TOX_PUBLIC_KEY_SIZE];
    char pk_hex[2 * TOX_PUBLIC_KEY_SIZE + 1], address_hex[2 * TOX_ADDRESS_SIZE + 1],
        dht_hex[2 * TOX_PUBLIC_KEY_SIZE + 1];
    tox_self_get_public_key(p->tox, pk);
    tox_self_get_address(p->tox, address);
    tox_self_get_dht_id(p->tox, dht);
    hex_encode(pk, sizeof pk, pk_hex);
    hex_encode(address, sizeof address, address_hex);
    hex_encode(dht, sizeof dht, dht_hex);
    Tox_Err_Get_Port err;
    const uint16_t port = tox_self_get_udp_port(p->tox, &err);
    printf("{\"event\":\"ready\",\"role\":\"%s\",\"public_key\":\"%s\",\"address\":\"%s\","
           "\"dht_id\":\"%s\",\"udp_port\":%u,\"toxcore_version\":\"%u.%u.%u\"}\n",
           p->cfg->role == ROLE_SEND ? "send" : "recv", pk_hex, address_hex, dht_hex,
           (unsigned)port, tox_version_major(), tox_version_minor(), tox_version_patch());
    fflush(stdout);
}

static void bootstrap(struct peer *p)
{
    for (size_t i = 0; i < p->cfg->node_count; ++i) {
        const struct bootstrap_node *n = &p->cfg->nodes[i];
        Tox_Err_Bootstrap err;
        if (!tox_bootstrap(p->tox, n->host, n->port, n->key, &err)) {
            die(EXIT_SETUP, "tox_bootstrap %s:%u failed (Tox_Err_Bootstrap %d)", n->host,
                (unsigned)n->port, (int)err);
        }
    }
    for (size_t i = 0; i < p->cfg->relay_count; ++i) {
        const struct bootstrap_node *n = &p->cfg->relays[i];
        Tox_Err_Bootstrap err;
        if (!tox_add_tcp_relay(p->tox, n->host, n->port, n->key, &err)) {
            die(EXIT_SETUP, "tox_add_tcp_relay %s:%u failed (Tox_Err_Bootstrap %d)", n->host,
                (unsigned)n->port, (int)err);
        }
    }
}

static void add_friend(struct peer *p)
{
    const char *hex = p->cfg->friend_hex;
    if (hex == NULL) {
        return;
    }
    Tox_Err_Friend_Add err;
    if (strlen(hex) == 2 * TOX_ADDRESS_SIZE) {
        uint8_t address[TOX_ADDRESS_SIZE];
        static const uint8_t message[] = "toxcore_file_peer";
        if (!hex_decode(hex, address, sizeof address)) {
            die(EXIT_SETUP, "--friend is not hex");
        }
        p->friend_number = tox_friend_add(p->tox, address, message, sizeof message - 1, &err);
    } else {
        uint8_t pk[TOX_PUBLIC_KEY_SIZE];
        if (!hex_decode(hex, pk, sizeof pk)) {
            die(EXIT_SETUP, "--friend is not hex");
        }
        p->friend_number = tox_friend_add_norequest(p->tox, pk, &err);
    }
    if (err != TOX_ERR_FRIEND_ADD_OK) {
        die(EXIT_SETUP, "adding the friend failed (Tox_Err_Friend_Add %d)", (int)err);
    }
    p->have_friend = true;
}

static void offer_file(struct peer *p)
{
    uint8_t file_id[TOX_FILE_ID_LENGTH];
    const uint8_t *id = NULL;
    if (p->cfg->file_id_sha256) {
        pattern_sha256(p->cfg->seed, p->cfg->size, file_id);
        id = file_id;
    }
    static const uint8_t name[] = "toxcore_file_peer.bin";
    Tox_Err_File_Send err;
    const uint32_t kind = p->cfg->avatar ? TOX_FILE_KIND_AVATAR : TOX_FILE_KIND_DATA;
    p->file_number = tox_file_send(p->tox, p->friend_number, kind, p->cfg->size, id,
                                   name, sizeof name - 1, &err);
    if (err != TOX_ERR_FILE_SEND_OK) {
        die(EXIT_SETUP, "tox_file_send failed (Tox_Err_File_Send %d)", (int)err);
    }
    p->offered = true;
}

static void print_json_number(const char *key, double v)
{
    if (v < 0) {
        printf(",\"%s\":null", key);
    } else {
        printf(",\"%s\":%.6f", key, v);
    }
}

static void print_done(const struct peer *p, bool verified)
{
    const bool send = p->cfg->role == ROLE_SEND;
    const uint64_t bytes = send ? p->bytes_sent : p->bytes_received;
    const double seconds = p->t_done - p->t_accepted;
    printf("{\"event\":\"done\",\"role\":\"%s\",\"bytes\":%" PRIu64, send ? "send" : "recv", bytes);
    print_json_number("seconds", seconds);
    print_json_number("goodput_mbit", seconds > 0 ? (double)bytes * 8 / seconds / 1e6 : -1);
    print_json_number("time_to_friend_online", p->t_friend_online);
    print_json_number("time_to_self_online", p->t_self_online);
    printf(",\"friend_connection\":\"%s\"", connection_name(p->friend_connection));
    if (send) {
        printf(",\"chunk_requests\":%" PRIu64 ",\"sendq_refusals\":%" PRIu64
               ",\"backlog_peak\":%zu",
               p->chunk_requests, p->sendq_refusals, p->backlog_peak);
    } else {
        static const char *const checks[] = {"pattern", "none", "file-id", "sha256"};
        printf(",\"expected_bytes\":%" PRIu64 ",\"verified\":%s,\"check\":\"%s\""
               ",\"mismatched_bytes\":%" PRIu64 ",\"in_order\":%s",
               p->offered_size, verified ? "true" : "false", checks[p->cfg->check],
               p->mismatched_bytes, p->out_of_order ? "false" : "true");
    }
    printf("}\n");
    fflush(stdout);
}

/* The receiver's verdict once the last chunk has arrived. */
static bool content_verified(struct peer *p)
{
    if (p->bytes_received != p->offered_size || p->out_of_order) {
        return false;
    }
    uint8_t digest[crypto_hash_sha256_BYTES];
    switch (p->cfg->check) {
    case CHECK_PATTERN:
        return p->mismatched_bytes == 0;
    case CHECK_FILE_ID:
        crypto_hash_sha256_final(&p->hash, digest);
        return memcmp(digest, p->offered_file_id, sizeof digest) == 0;
    case CHECK_SHA256:
        crypto_hash_sha256_final(&p->hash, digest);
        return memcmp(digest, p->cfg->expect_sha256, sizeof digest) == 0;
    case CHECK_NONE:
        return true;
    }
    return false;
}

static void sleep_until(double deadline)
{
    struct timespec ts;
    ts.tv_sec = (time_t)deadline;
    ts.tv_nsec = (long)((deadline - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec += 1;
        ts.tv_nsec -= 1000000000L;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static void report_progress(const struct peer *p, double t)
{
    static double last_t = 0;
    static uint64_t last_bytes = 0;
    const uint64_t bytes = p->cfg->role == ROLE_SEND ? p->bytes_sent : p->bytes_received;
    const double rate = t > last_t ? (double)(bytes - last_bytes) * 8 / (t - last_t) / 1e6 : 0;
    fprintf(stderr, "[%.3f] %s friend=%s bytes=%" PRIu64 " rate=%.2f Mbit/s interval=%" PRIu32
            " ms%s\n",
            t - p->t0, p->cfg->role == ROLE_SEND ? "send" : "recv",
            connection_name(p->friend_connection), bytes, rate, tox_iteration_interval(p->tox),
            p->cfg->role == ROLE_SEND && p->backlog_len > 0 ? " (backlog)" : "");
    last_t = t;
    last_bytes = bytes;
}

int main(int argc, char **argv)
{
    struct config cfg;
    parse_args(argc, argv, &cfg);
    if (sodium_init() < 0) {
        die(EXIT_SETUP, "libsodium failed to initialise");
    }
    struct peer p;
    memset(&p, 0, sizeof p);
    p.cfg = &cfg;
    p.t0 = now_s();
    p.t_self_online = -1;
    p.t_friend_online = -1;
    p.t_accepted = -1;
    p.t_done = -1;
    if (cfg.role == ROLE_SEND) {
        p.backlog = calloc(BACKLOG_CAPACITY, sizeof *p.backlog);
        if (p.backlog == NULL) {
            die(EXIT_SETUP, "out of memory");
        }
    } else {
        crypto_hash_sha256_init(&p.hash);
        if (cfg.output != NULL) {
            p.out = fopen(cfg.output, "wb");
            if (p.out == NULL) {
                die(EXIT_SETUP, "cannot create %s: %s", cfg.output, strerror(errno));
            }
            setvbuf(p.out, NULL, _IOFBF, 1 << 20);
        }
    }

    p.tox = create_tox(&cfg);
    tox_callback_self_connection_status(p.tox, on_self_connection);
    tox_callback_friend_request(p.tox, on_friend_request);
    tox_callback_friend_connection_status(p.tox, on_friend_connection);
    tox_callback_file_chunk_request(p.tox, on_chunk_request);
    tox_callback_file_recv_control(p.tox, on_file_control);
    tox_callback_file_recv(p.tox, on_file_offer);
    tox_callback_file_recv_chunk(p.tox, on_chunk);
    print_ready(&p);
    bootstrap(&p);
    add_friend(&p);

    const double deadline = p.t0 + cfg.timeout_s;
    double next_progress = p.t0 + 1;
    for (;;) {
        const double started = now_s();
        tox_iterate(p.tox, &p);
        if (cfg.role == ROLE_SEND && p.backlog_len > 0) {
            flush_backlog(&p);
        }
        if (p.fail_code != 0) {
            die(p.fail_code, "%s", p.fail_message);
        }
        const double t = now_s();
        if (cfg.role == ROLE_SEND) {
            const bool usable = p.friend_connection == TOX_CONNECTION_UDP
                                || (cfg.allow_tcp && p.friend_connection == TOX_CONNECTION_TCP);
            if (!p.offered && usable) {
                offer_file(&p);
            }
            if (p.completed) {
                print_done(&p, true);
                break;
            }
            if (p.offered && p.friend_went_offline) {
                die(EXIT_TIMEOUT, "the receiver went offline after %" PRIu64 " bytes",
                    p.bytes_sent);
            }
        } else if (p.completed) {
            if (!p.reported) {
                if (p.out != NULL && fclose(p.out) != 0) {
                    die(EXIT_SETUP, "writing %s failed: %s", cfg.output, strerror(errno));
                }
                p.out = NULL;
                p.verified = content_verified(&p);
                print_done(&p, p.verified);
                p.reported = true;
            }
            if (p.friend_connection == TOX_CONNECTION_NONE || t - p.t_done >= cfg.linger_s) {
                break;
            }
        } else if (p.accepted && p.friend_went_offline) {
            die(EXIT_TIMEOUT, "the sender went offline after %" PRIu64 " bytes",
                p.bytes_received);
        }
        if (t >= deadline && !(cfg.role == ROLE_RECV && p.completed)) {
            if (p.t_friend_online < 0) {
                die(EXIT_TIMEOUT, "the friend did not come online within %.0f s (self: %s)",
                    cfg.timeout_s, p.t_self_online < 0 ? "offline" : "online");
            }
            die(EXIT_TIMEOUT, "no complete transfer within %.0f s (%" PRIu64 " bytes)",
                cfg.timeout_s, cfg.role == ROLE_SEND ? p.bytes_sent : p.bytes_received);
        }
        if (cfg.progress && t >= next_progress) {
            report_progress(&p, t);
            next_progress = t + 1;
        }
        const uint32_t interval_ms = cfg.sleep_override_ms >= 0 ? (uint32_t)cfg.sleep_override_ms
                                                                : tox_iteration_interval(p.tox);
        sleep_until(started + interval_ms / 1000.0);
    }
    tox_kill(p.tox);
    free(p.backlog);
    if (cfg.role == ROLE_RECV && !p.verified) {
        die(EXIT_CONTENT, "content check failed: %" PRIu64 " of %" PRIu64 " bytes, %" PRIu64
            " mismatched, %s", p.bytes_received, p.offered_size, p.mismatched_bytes,
            p.out_of_order ? "out of order" : "in order");
    }
    return EXIT_OK;
}
