/*
 * peer.c: one Tox peer driven by command-line arguments, written against c-toxcore
 * 0.2.18's headers (tox.h, tox_events.h, tox_dispatch.h, toxencryptsave.h, toxav.h).
 *
 * The same source is linked once against Debian's libtoxcore.so.2 and once against
 * rustox's (ffi/), and the harness (ffi/tests/interop_c.rs, clients.rs, install.rs) pairs
 * the two builds. It behaves as a real client does: tox_iterate (or tox_events_iterate +
 * tox_dispatch_invoke with --events) in a loop, sleeping tox_iteration_interval() ms.
 *
 * Output: one machine-readable line per milestone on stdout (flushed at once), e.g.
 *   LIB <path of the libtoxcore the loader chose>
 *   ID <address hex>          DHT <dht key hex> <udp port>
 *   FRIEND_REQUEST <pk hex>   FRIEND_ADDED <n>   FRIEND_ONLINE <n> <udp|tcp> <secs>
 *   FRIEND_OFFLINE <n> <secs> SELF_CONNECTION <Tox_Connection> <secs>
 *   MISMATCH <what>           (a getter disagrees with the callback calling it)
 *   MESSAGE <n> <index> <len> RECEIPT <n> <message id>
 *   FILE_ID <send|recv> <hex>  FILE_SENT <bytes> <SENDQ retries>  FILE_DONE <bytes> <ms>
 *   DONE  (every check asked for has passed; the peer keeps iterating until stdin says
 *          QUIT or closes, so that its friend can finish too)
 *   OK    (exit 0 follows)
 * Failures: `FAIL <reason>` on stderr and exit 1 (exit 2 for bad usage).
 *
 * Stdin commands (one per line): `BOOTSTRAP <host> <port> <key hex>`, `ADD <address hex>`,
 * `MESSAGE <text>` (sent to friend 0), `QUIT`.
 *
 * --selftest runs single-instance API checks (sizes, options and the struct layout,
 * addresses, errors, savedata, hashing, encryptsave, conferences, toxav) and prints
 * `CHECK <name> ok` or `FAIL <name>: ...` for each.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <tox/tox.h>
#include <tox/tox_dispatch.h>
#include <tox/tox_events.h>
#include <tox/toxav.h>
#include <tox/toxencryptsave.h>

#include "testkit.h"

#define MAX_SENT 4096
#define PACKETS 32
#define DEFAULT_REQUEST_MESSAGE "rustox interop: please accept"

/* ------------------------------------------------------------------ state */

struct state {
    /* configuration */
    const char *savedata_path;
    const char *bootstrap_host;
    uint16_t bootstrap_port;
    const char *bootstrap_key;
    const char *add_address;
    const char *request_message;
    const char *expect_message;
    bool expect_message_seen;
    bool accept_requests;
    int messages;
    bool custom_packets;
    bool typing;
    const char *name, *expect_name;
    const char *status_message, *expect_status_message;
    int user_status, expect_user_status;
    const char *send_file_path;
    const char *expect_file_path;
    bool events;
    uint16_t port;
    int timeout_secs;
    bool expect_reconnect;
    int expect_friends;
    const char *expect_self_name;
    bool exit_when_done;
    bool verbose;

    /* progress */
    Tox *tox;
    int64_t start_ms;
    int64_t deadline_ms;
    bool friend_online;
    int online_count;
    int offline_count;
    bool stdin_open;
    char stdin_buf[4096];
    size_t stdin_len;
    bool quit;
    bool done_printed;
    bool failed;

    int msg_sent;
    uint32_t msg_ids[MAX_SENT];
    bool msg_acked[MAX_SENT];
    int receipts;
    uint32_t extra_ids[MAX_SENT]; /* messages sent on stdin's MESSAGE command */
    int extra_sent;
    int msg_received;

    bool typing_started, typing_seen_on, typing_stopped, typing_seen_off;
    int64_t typing_started_ms;

    bool change_info;
    bool name_changed, name_seen_first, name_seen_second;
    bool sm_seen_first, sm_seen_second;
    bool us_seen_first, us_seen_second;
    bool name_getter_checked, sm_getter_checked, us_getter_checked;

    int lossless_sent, lossy_sent, lossless_received, lossy_received;
    bool lossy_seen[PACKETS];
    int64_t next_lossy_ms;

    /* file sending */
    int send_fd;
    uint64_t send_size;
    bool file_send_started;
    uint32_t send_file_number;
    bool file_sent;
    struct { uint64_t pos; size_t len; } pending[1024];
    int pending_count;
    uint64_t sendq_retries;

    /* file receiving */
    uint8_t *expect_data;
    uint64_t expect_size;
    bool file_recv_started;
    uint32_t recv_file_number;
    uint64_t recv_bytes;
    bool file_received;
    int64_t recv_start_ms;
};

static struct state g;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* "FAIL <message>" on stderr, flushed. */
static void report_failure(const char *fmt, va_list ap)
{
    fprintf(stderr, "FAIL ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    fflush(stderr);
}

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report_failure(fmt, ap);
    va_end(ap);
    g.failed = true;
}

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report_failure(fmt, ap);
    va_end(ap);
    exit(1);
}

static void note(const char *fmt, ...)
{
    if (!g.verbose) {
        return;
    }
    va_list ap;
    fprintf(stderr, "[%6.3f] ", (now_ms() - g.start_ms) / 1000.0);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void to_hex(const uint8_t *bin, size_t len, char *hex)
{
    static const char digits[] = "0123456789ABCDEF";
    for (size_t i = 0; i < len; ++i) {
        hex[2 * i] = digits[bin[i] >> 4];
        hex[2 * i + 1] = digits[bin[i] & 15];
    }
    hex[2 * len] = '\0';
}

static bool from_hex(const char *hex, uint8_t *bin, size_t len)
{
    if (strlen(hex) != 2 * len) {
        return false;
    }
    for (size_t i = 0; i < len; ++i) {
        unsigned int byte;
        if (sscanf(hex + 2 * i, "%2x", &byte) != 1) {
            return false;
        }
        bin[i] = (uint8_t)byte;
    }
    return true;
}

/* ------------------------------------------------------- deterministic data */

/* Message i of n: "hello <i>" and, for the last of several, a message of the maximum
 * length (TOX_MAX_MESSAGE_LENGTH) with UTF-8 text in it. */
static size_t make_message(int i, int n, uint8_t *buf)
{
    int len = snprintf((char *)buf, TOX_MAX_MESSAGE_LENGTH, "hello %d", i);
    if (n > 1 && i == n - 1) {
        static const char tail[] = " \xc3\xa9t\xc3\xa9 \xe2\x9c\x93 abcdefghijklmnopqrstuvwxyz0123456789";
        size_t pos = (size_t)len;
        while (pos + sizeof(tail) - 1 <= TOX_MAX_MESSAGE_LENGTH) {
            memcpy(buf + pos, tail, sizeof(tail) - 1);
            pos += sizeof(tail) - 1;
        }
        while (pos < TOX_MAX_MESSAGE_LENGTH) {
            buf[pos++] = '.';
        }
        return pos;
    }
    return (size_t)len;
}

static Tox_Message_Type message_type(int i)
{
    return i % 3 == 2 ? TOX_MESSAGE_TYPE_ACTION : TOX_MESSAGE_TYPE_NORMAL;
}

/* Custom packet i: lossless first bytes 160..191, lossy 200..231; lengths vary up to
 * TOX_MAX_CUSTOM_PACKET_SIZE (the last lossless one has exactly that length). */
static size_t make_packet(bool lossless, int i, uint8_t *buf)
{
    size_t len;
    if (lossless) {
        len = i == PACKETS - 1 ? TOX_MAX_CUSTOM_PACKET_SIZE : 2 + (size_t)(i * 97) % (TOX_MAX_CUSTOM_PACKET_SIZE - 2);
        buf[0] = (uint8_t)(160 + i % 32);
    } else {
        len = 2 + (size_t)(i * 61) % 1000;
        buf[0] = (uint8_t)(200 + i % 32);
    }
    buf[1] = (uint8_t)i;
    for (size_t j = 2; j < len; ++j) {
        buf[j] = (uint8_t)(i * 7 + j * 13 + (lossless ? 1 : 3));
    }
    return len;
}

static void second_value(const char *first, char *buf, size_t size)
{
    snprintf(buf, size, "%s (changed)", first);
}

/* ---------------------------------------------------------------- handlers */

static void check_user_data(void *user_data, const char *where)
{
    if (user_data != &g) {
        fail("%s: user_data %p is not the pointer given to tox_iterate (%p)", where, user_data, (void *)&g);
    }
}

static void check_friend(uint32_t friend_number, const char *where)
{
    if (!tox_friend_exists(g.tox, friend_number)) {
        fail("%s: friend %" PRIu32 " does not exist", where, friend_number);
    }
}

static void on_self_connection_status(Tox *tox, Tox_Connection status)
{
    say("SELF_CONNECTION %d %.3f", (int)status, (now_ms() - g.start_ms) / 1000.0);
}

static void on_friend_request(Tox *tox, const uint8_t *public_key, const uint8_t *message, size_t length)
{
    char hex[2 * TOX_PUBLIC_KEY_SIZE + 1];
    to_hex(public_key, TOX_PUBLIC_KEY_SIZE, hex);
    say("FRIEND_REQUEST %s", hex);
    if (length != strlen(g.request_message) || memcmp(message, g.request_message, length) != 0) {
        fail("friend request message is %.*s (%zu bytes)", (int)length, (const char *)message, length);
    }
    if (!g.accept_requests) {
        return;
    }
    Tox_Err_Friend_Add err;
    uint32_t n = tox_friend_add_norequest(tox, public_key, &err);
    if (err != TOX_ERR_FRIEND_ADD_OK) {
        fail("tox_friend_add_norequest: error %d", (int)err);
        return;
    }
    say("FRIEND_ADDED %" PRIu32, n);
}

static void on_friend_connection_status(Tox *tox, uint32_t friend_number, Tox_Connection status)
{
    check_friend(friend_number, "friend_connection_status");
    Tox_Err_Friend_Query qerr;
    Tox_Connection now = tox_friend_get_connection_status(tox, friend_number, &qerr);
    if (qerr != TOX_ERR_FRIEND_QUERY_OK) {
        fail("tox_friend_get_connection_status: error %d", (int)qerr);
    }
    /* Inside a callback c-toxcore's getters agree with it (it calls back while it
     * processes the packet). A difference is reported, not fatal, so that the rest of the
     * run still says what works; the harness fails on MISMATCH lines at the end. With the
     * events API the event may be older than the current state. */
    if (!g.events && now != status) {
        say("MISMATCH friend_connection_status callback %d, tox_friend_get_connection_status %d", (int)status,
            (int)now);
    }
    if (status != TOX_CONNECTION_NONE) {
        g.friend_online = true;
        g.online_count++;
        say("FRIEND_ONLINE %" PRIu32 " %s %.3f", friend_number, status == TOX_CONNECTION_UDP ? "udp" : "tcp",
            (now_ms() - g.start_ms) / 1000.0);
    } else {
        g.friend_online = false;
        g.offline_count++;
        say("FRIEND_OFFLINE %" PRIu32 " %.3f", friend_number, (now_ms() - g.start_ms) / 1000.0);
    }
}

static void on_friend_message(Tox *tox, uint32_t friend_number, Tox_Message_Type type, const uint8_t *message,
                              size_t length)
{
    check_friend(friend_number, "friend_message");
    int i = g.msg_received;
    if (g.messages == 0) {
        say("MESSAGE %" PRIu32 " - %zu %.*s", friend_number, length, (int)length, (const char *)message);
        if (g.expect_message && length == strlen(g.expect_message) && memcmp(message, g.expect_message, length) == 0) {
            g.expect_message_seen = true;
        }
        return;
    }
    uint8_t expected[TOX_MAX_MESSAGE_LENGTH];
    size_t expected_len = make_message(i, g.messages, expected);
    if (i >= g.messages) {
        fail("message %d received, only %d expected", i, g.messages);
    } else if (length != expected_len || memcmp(message, expected, length) != 0) {
        fail("message %d: got %zu bytes \"%.*s\", expected %zu bytes \"%.*s\"", i, length, (int)length,
             (const char *)message, expected_len, (int)expected_len, (const char *)expected);
    } else if (type != message_type(i)) {
        fail("message %d: type %d, expected %d", i, (int)type, (int)message_type(i));
    }
    g.msg_received++;
    say("MESSAGE %" PRIu32 " %d %zu", friend_number, i, length);
}

static void on_friend_read_receipt(Tox *tox, uint32_t friend_number, uint32_t message_id)
{
    check_friend(friend_number, "friend_read_receipt");
    for (int i = 0; i < g.msg_sent; ++i) {
        if (g.msg_ids[i] == message_id) {
            if (g.msg_acked[i]) {
                fail("duplicate read receipt for message id %" PRIu32, message_id);
            }
            g.msg_acked[i] = true;
            g.receipts++;
            say("RECEIPT %" PRIu32 " %" PRIu32, friend_number, message_id);
            return;
        }
    }
    for (int i = 0; i < g.extra_sent; ++i) {
        if (g.extra_ids[i] == message_id) {
            say("RECEIPT %" PRIu32 " %" PRIu32, friend_number, message_id);
            return;
        }
    }
    fail("read receipt for unknown message id %" PRIu32, message_id);
}

static void on_friend_typing(Tox *tox, uint32_t friend_number, bool typing)
{
    check_friend(friend_number, "friend_typing");
    say("TYPING %" PRIu32 " %d", friend_number, typing ? 1 : 0);
    Tox_Err_Friend_Query qerr;
    bool now = tox_friend_get_typing(tox, friend_number, &qerr);
    if (qerr != TOX_ERR_FRIEND_QUERY_OK) {
        fail("tox_friend_get_typing: error %d", (int)qerr);
    } else if (!g.events && now != typing) {
        say("MISMATCH friend_typing callback %d, tox_friend_get_typing %d", typing, now);
    }
    if (typing) {
        g.typing_seen_on = true;
    } else if (g.typing_seen_on) {
        g.typing_seen_off = true;
    }
}

static void on_friend_name(Tox *tox, uint32_t friend_number, const uint8_t *name, size_t length)
{
    check_friend(friend_number, "friend_name");
    say("NAME %" PRIu32 " %.*s", friend_number, (int)length, (const char *)name);
    if (g.expect_name == NULL) {
        return;
    }
    char second[TOX_MAX_NAME_LENGTH + 1];
    second_value(g.expect_name, second, sizeof(second));
    if (length == strlen(g.expect_name) && memcmp(name, g.expect_name, length) == 0) {
        g.name_seen_first = true;
    } else if (g.name_seen_first && length == strlen(second) && memcmp(name, second, length) == 0) {
        g.name_seen_second = true;
    } else if (length > 0) {
        fail("unexpected friend name \"%.*s\"", (int)length, (const char *)name);
    }
}

static void on_friend_status_message(Tox *tox, uint32_t friend_number, const uint8_t *message, size_t length)
{
    check_friend(friend_number, "friend_status_message");
    say("STATUS_MESSAGE %" PRIu32 " %.*s", friend_number, (int)length, (const char *)message);
    if (g.expect_status_message == NULL) {
        return;
    }
    char second[TOX_MAX_STATUS_MESSAGE_LENGTH + 1];
    second_value(g.expect_status_message, second, sizeof(second));
    if (length == strlen(g.expect_status_message) && memcmp(message, g.expect_status_message, length) == 0) {
        g.sm_seen_first = true;
    } else if (g.sm_seen_first && length == strlen(second) && memcmp(message, second, length) == 0) {
        g.sm_seen_second = true;
    } else if (length > 0) {
        fail("unexpected friend status message \"%.*s\"", (int)length, (const char *)message);
    }
}

static void on_friend_status(Tox *tox, uint32_t friend_number, Tox_User_Status status)
{
    check_friend(friend_number, "friend_status");
    say("USER_STATUS %" PRIu32 " %d", friend_number, (int)status);
    if (g.expect_user_status < 0) {
        return;
    }
    if ((int)status == g.expect_user_status) {
        g.us_seen_first = true;
    } else if (g.us_seen_first && (int)status == (g.expect_user_status + 1) % 3) {
        g.us_seen_second = true;
    } else if (status != TOX_USER_STATUS_NONE) {
        fail("unexpected user status %d", (int)status);
    }
}

static void print_file_id(Tox *tox, uint32_t friend_number, uint32_t file_number, const char *direction)
{
    uint8_t id[TOX_FILE_ID_LENGTH];
    Tox_Err_File_Get err;
    if (!tox_file_get_file_id(tox, friend_number, file_number, id, &err)) {
        fail("tox_file_get_file_id: error %d", (int)err);
        return;
    }
    char hex[2 * TOX_FILE_ID_LENGTH + 1];
    to_hex(id, sizeof(id), hex);
    say("FILE_ID %s %s", direction, hex);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void on_file_recv(Tox *tox, uint32_t friend_number, uint32_t file_number, uint32_t kind, uint64_t file_size,
                         const uint8_t *filename, size_t filename_length)
{
    check_friend(friend_number, "file_recv");
    say("FILE_RECV %" PRIu32 " %" PRIu32 " %" PRIu32 " %" PRIu64 " %.*s", friend_number, file_number, kind,
        file_size, (int)filename_length, (const char *)filename);
    Tox_Err_File_Control cerr;
    if (kind != TOX_FILE_KIND_DATA || g.expect_file_path == NULL || g.file_recv_started) {
        /* Avatars and files nobody asked for are refused, as a client would. */
        tox_file_control(tox, friend_number, file_number, TOX_FILE_CONTROL_CANCEL, &cerr);
        if (kind == TOX_FILE_KIND_DATA) {
            fail("unexpected file offer");
        }
        return;
    }
    const char *expected_name = base_name(g.expect_file_path);
    if (filename_length != strlen(expected_name) || memcmp(filename, expected_name, filename_length) != 0) {
        fail("file name \"%.*s\", expected \"%s\"", (int)filename_length, (const char *)filename, expected_name);
    }
    if (file_size != g.expect_size) {
        fail("file size %" PRIu64 ", expected %" PRIu64, file_size, g.expect_size);
    }
    g.file_recv_started = true;
    g.recv_file_number = file_number;
    g.recv_start_ms = now_ms();
    print_file_id(tox, friend_number, file_number, "recv");
    if (!tox_file_control(tox, friend_number, file_number, TOX_FILE_CONTROL_RESUME, &cerr)) {
        fail("tox_file_control(RESUME): error %d", (int)cerr);
    }
}

static void on_file_recv_chunk(Tox *tox, uint32_t friend_number, uint32_t file_number, uint64_t position,
                               const uint8_t *data, size_t length)
{
    if (!g.file_recv_started || file_number != g.recv_file_number) {
        fail("chunk for file %" PRIu32 " that was not accepted", file_number);
        return;
    }
    if (g.file_received) {
        fail("chunk after the end of the file");
        return;
    }
    if (length == 0) {
        int64_t ms = now_ms() - g.recv_start_ms;
        if (g.recv_bytes != g.expect_size) {
            fail("file ended after %" PRIu64 " bytes, expected %" PRIu64, g.recv_bytes, g.expect_size);
        }
        g.file_received = true;
        say("FILE_DONE %" PRIu64 " %" PRId64, g.recv_bytes, ms);
        return;
    }
    if (position != g.recv_bytes) {
        fail("chunk at position %" PRIu64 ", expected %" PRIu64, position, g.recv_bytes);
        return;
    }
    if (position + length > g.expect_size) {
        fail("chunk [%" PRIu64 ", +%zu) beyond the file size %" PRIu64, position, length, g.expect_size);
        return;
    }
    if (memcmp(data, g.expect_data + position, length) != 0) {
        fail("chunk [%" PRIu64 ", +%zu) differs from the file", position, length);
        return;
    }
    g.recv_bytes += length;
}

/* Queues a chunk for a later try; false (and a failure) when the queue is full. */
static bool queue_pending(uint64_t position, size_t length)
{
    if (g.pending_count == (int)(sizeof(g.pending) / sizeof(g.pending[0]))) {
        fail("more than %d chunks waiting for the send queue", g.pending_count);
        return false;
    }
    g.pending[g.pending_count].pos = position;
    g.pending[g.pending_count].len = length;
    g.pending_count++;
    return true;
}

static void send_chunk(Tox *tox, uint32_t friend_number, uint32_t file_number, uint64_t position, size_t length,
                       bool queue_on_sendq)
{
    uint8_t buf[65536];
    if (length > sizeof(buf)) {
        fail("chunk request of %zu bytes", length);
        return;
    }
    if (position + length > g.send_size) {
        fail("chunk request [%" PRIu64 ", +%zu) beyond the file size %" PRIu64, position, length, g.send_size);
        return;
    }
    ssize_t got = pread(g.send_fd, buf, length, (off_t)position);
    if (got != (ssize_t)length) {
        fail("pread: %s", strerror(errno));
        return;
    }
    Tox_Err_File_Send_Chunk err;
    tox_file_send_chunk(tox, friend_number, file_number, position, buf, length, &err);
    if (err == TOX_ERR_FILE_SEND_CHUNK_SENDQ && queue_on_sendq) {
        if (queue_pending(position, length)) {
            g.sendq_retries++;
        }
    } else if (err != TOX_ERR_FILE_SEND_CHUNK_OK && err != TOX_ERR_FILE_SEND_CHUNK_SENDQ) {
        fail("tox_file_send_chunk(pos %" PRIu64 ", len %zu): error %d", position, length, (int)err);
    }
}

static void on_file_chunk_request(Tox *tox, uint32_t friend_number, uint32_t file_number, uint64_t position,
                                  size_t length)
{
    if (!g.file_send_started || file_number != g.send_file_number) {
        fail("chunk request for unknown file %" PRIu32, file_number);
        return;
    }
    if (length == 0) {
        g.file_sent = true;
        say("FILE_SENT %" PRIu64 " %" PRIu64, g.send_size, g.sendq_retries);
        return;
    }
    if (g.pending_count > 0) {
        /* Keep the order: this one waits behind the ones the send queue refused. */
        queue_pending(position, length);
        return;
    }
    send_chunk(tox, friend_number, file_number, position, length, true);
}

static void retry_pending_chunks(Tox *tox)
{
    int done = 0;
    while (done < g.pending_count) {
        uint8_t buf[65536];
        uint64_t pos = g.pending[done].pos;
        size_t len = g.pending[done].len;
        if (pread(g.send_fd, buf, len, (off_t)pos) != (ssize_t)len) {
            fail("pread: %s", strerror(errno));
            return;
        }
        Tox_Err_File_Send_Chunk err;
        tox_file_send_chunk(tox, 0, g.send_file_number, pos, buf, len, &err);
        if (err == TOX_ERR_FILE_SEND_CHUNK_SENDQ) {
            g.sendq_retries++;
            break;
        }
        if (err != TOX_ERR_FILE_SEND_CHUNK_OK) {
            fail("tox_file_send_chunk(pos %" PRIu64 ", len %zu) retried: error %d", pos, len, (int)err);
        }
        done++;
    }
    memmove(g.pending, g.pending + done, (size_t)(g.pending_count - done) * sizeof(g.pending[0]));
    g.pending_count -= done;
}

static void on_file_recv_control(Tox *tox, uint32_t friend_number, uint32_t file_number, Tox_File_Control control)
{
    say("FILE_CONTROL %" PRIu32 " %" PRIu32 " %d", friend_number, file_number, (int)control);
    if (control == TOX_FILE_CONTROL_CANCEL &&
            ((g.file_send_started && file_number == g.send_file_number && !g.file_sent) ||
             (g.file_recv_started && file_number == g.recv_file_number && !g.file_received))) {
        fail("file %" PRIu32 " cancelled by the friend", file_number);
    }
}

static void on_lossless_packet(Tox *tox, uint32_t friend_number, const uint8_t *data, size_t length)
{
    check_friend(friend_number, "friend_lossless_packet");
    int i = g.lossless_received;
    uint8_t expected[TOX_MAX_CUSTOM_PACKET_SIZE];
    size_t expected_len = make_packet(true, i, expected);
    if (!g.custom_packets || i >= PACKETS) {
        fail("unexpected lossless packet %d", i);
    } else if (length != expected_len || memcmp(data, expected, length) != 0) {
        fail("lossless packet %d: %zu bytes, first byte %d, expected %zu bytes, first byte %d", i, length,
             length ? data[0] : -1, expected_len, expected[0]);
    }
    g.lossless_received++;
    say("LOSSLESS %" PRIu32 " %d %zu", friend_number, i, length);
}

static void on_lossy_packet(Tox *tox, uint32_t friend_number, const uint8_t *data, size_t length)
{
    check_friend(friend_number, "friend_lossy_packet");
    if (length < 2 || data[1] >= PACKETS) {
        fail("lossy packet of %zu bytes with index %d", length, length > 1 ? data[1] : -1);
        return;
    }
    int i = data[1];
    uint8_t expected[TOX_MAX_CUSTOM_PACKET_SIZE];
    size_t expected_len = make_packet(false, i, expected);
    if (!g.custom_packets) {
        fail("unexpected lossy packet");
    } else if (length != expected_len || memcmp(data, expected, length) != 0) {
        fail("lossy packet %d: %zu bytes, expected %zu", i, length, expected_len);
    } else if (!g.lossy_seen[i]) {
        g.lossy_seen[i] = true;
        g.lossy_received++;
    }
    say("LOSSY %" PRIu32 " %d %zu", friend_number, i, length);
}

/* ----------------------------------------------------- callback adapters */

static void cb_self_connection_status(Tox *tox, Tox_Connection status, void *ud)
{
    check_user_data(ud, "self_connection_status");
    on_self_connection_status(tox, status);
}
static void cb_friend_request(Tox *tox, const uint8_t *pk, const uint8_t *m, size_t len, void *ud)
{
    check_user_data(ud, "friend_request");
    on_friend_request(tox, pk, m, len);
}
static void cb_friend_connection_status(Tox *tox, uint32_t f, Tox_Connection s, void *ud)
{
    check_user_data(ud, "friend_connection_status");
    on_friend_connection_status(tox, f, s);
}
static void cb_friend_message(Tox *tox, uint32_t f, Tox_Message_Type t, const uint8_t *m, size_t len, void *ud)
{
    check_user_data(ud, "friend_message");
    on_friend_message(tox, f, t, m, len);
}
static void cb_friend_read_receipt(Tox *tox, uint32_t f, uint32_t id, void *ud)
{
    check_user_data(ud, "friend_read_receipt");
    on_friend_read_receipt(tox, f, id);
}
static void cb_friend_typing(Tox *tox, uint32_t f, bool typing, void *ud)
{
    check_user_data(ud, "friend_typing");
    on_friend_typing(tox, f, typing);
}
static void cb_friend_name(Tox *tox, uint32_t f, const uint8_t *name, size_t len, void *ud)
{
    check_user_data(ud, "friend_name");
    on_friend_name(tox, f, name, len);
}
static void cb_friend_status_message(Tox *tox, uint32_t f, const uint8_t *m, size_t len, void *ud)
{
    check_user_data(ud, "friend_status_message");
    on_friend_status_message(tox, f, m, len);
}
static void cb_friend_status(Tox *tox, uint32_t f, Tox_User_Status s, void *ud)
{
    check_user_data(ud, "friend_status");
    on_friend_status(tox, f, s);
}
static void cb_file_recv(Tox *tox, uint32_t f, uint32_t file, uint32_t kind, uint64_t size, const uint8_t *name,
                         size_t name_len, void *ud)
{
    check_user_data(ud, "file_recv");
    on_file_recv(tox, f, file, kind, size, name, name_len);
}
static void cb_file_recv_chunk(Tox *tox, uint32_t f, uint32_t file, uint64_t pos, const uint8_t *data, size_t len,
                               void *ud)
{
    check_user_data(ud, "file_recv_chunk");
    on_file_recv_chunk(tox, f, file, pos, data, len);
}
static void cb_file_chunk_request(Tox *tox, uint32_t f, uint32_t file, uint64_t pos, size_t len, void *ud)
{
    check_user_data(ud, "file_chunk_request");
    on_file_chunk_request(tox, f, file, pos, len);
}
static void cb_file_recv_control(Tox *tox, uint32_t f, uint32_t file, Tox_File_Control c, void *ud)
{
    check_user_data(ud, "file_recv_control");
    on_file_recv_control(tox, f, file, c);
}
static void cb_lossless(Tox *tox, uint32_t f, const uint8_t *data, size_t len, void *ud)
{
    check_user_data(ud, "friend_lossless_packet");
    on_lossless_packet(tox, f, data, len);
}
static void cb_lossy(Tox *tox, uint32_t f, const uint8_t *data, size_t len, void *ud)
{
    check_user_data(ud, "friend_lossy_packet");
    on_lossy_packet(tox, f, data, len);
}

static void register_callbacks(Tox *tox)
{
    tox_callback_self_connection_status(tox, cb_self_connection_status);
    tox_callback_friend_request(tox, cb_friend_request);
    tox_callback_friend_connection_status(tox, cb_friend_connection_status);
    tox_callback_friend_message(tox, cb_friend_message);
    tox_callback_friend_read_receipt(tox, cb_friend_read_receipt);
    tox_callback_friend_typing(tox, cb_friend_typing);
    tox_callback_friend_name(tox, cb_friend_name);
    tox_callback_friend_status_message(tox, cb_friend_status_message);
    tox_callback_friend_status(tox, cb_friend_status);
    tox_callback_file_recv(tox, cb_file_recv);
    tox_callback_file_recv_chunk(tox, cb_file_recv_chunk);
    tox_callback_file_chunk_request(tox, cb_file_chunk_request);
    tox_callback_file_recv_control(tox, cb_file_recv_control);
    tox_callback_friend_lossless_packet(tox, cb_lossless);
    tox_callback_friend_lossy_packet(tox, cb_lossy);
}

/* ------------------------------------------------------- event adapters */

static void ev_self_connection_status(Tox *tox, const Tox_Event_Self_Connection_Status *e, void *ud)
{
    check_user_data(ud, "events: self_connection_status");
    on_self_connection_status(tox, tox_event_self_connection_status_get_connection_status(e));
}
static void ev_friend_request(Tox *tox, const Tox_Event_Friend_Request *e, void *ud)
{
    check_user_data(ud, "events: friend_request");
    on_friend_request(tox, tox_event_friend_request_get_public_key(e), tox_event_friend_request_get_message(e),
                      tox_event_friend_request_get_message_length(e));
}
static void ev_friend_connection_status(Tox *tox, const Tox_Event_Friend_Connection_Status *e, void *ud)
{
    check_user_data(ud, "events: friend_connection_status");
    on_friend_connection_status(tox, tox_event_friend_connection_status_get_friend_number(e),
                                tox_event_friend_connection_status_get_connection_status(e));
}
static void ev_friend_message(Tox *tox, const Tox_Event_Friend_Message *e, void *ud)
{
    check_user_data(ud, "events: friend_message");
    on_friend_message(tox, tox_event_friend_message_get_friend_number(e), tox_event_friend_message_get_type(e),
                      tox_event_friend_message_get_message(e), tox_event_friend_message_get_message_length(e));
}
static void ev_friend_read_receipt(Tox *tox, const Tox_Event_Friend_Read_Receipt *e, void *ud)
{
    check_user_data(ud, "events: friend_read_receipt");
    on_friend_read_receipt(tox, tox_event_friend_read_receipt_get_friend_number(e),
                           tox_event_friend_read_receipt_get_message_id(e));
}
static void ev_friend_typing(Tox *tox, const Tox_Event_Friend_Typing *e, void *ud)
{
    check_user_data(ud, "events: friend_typing");
    on_friend_typing(tox, tox_event_friend_typing_get_friend_number(e), tox_event_friend_typing_get_typing(e));
}
static void ev_friend_name(Tox *tox, const Tox_Event_Friend_Name *e, void *ud)
{
    check_user_data(ud, "events: friend_name");
    on_friend_name(tox, tox_event_friend_name_get_friend_number(e), tox_event_friend_name_get_name(e),
                   tox_event_friend_name_get_name_length(e));
}
static void ev_friend_status_message(Tox *tox, const Tox_Event_Friend_Status_Message *e, void *ud)
{
    check_user_data(ud, "events: friend_status_message");
    on_friend_status_message(tox, tox_event_friend_status_message_get_friend_number(e),
                             tox_event_friend_status_message_get_message(e),
                             tox_event_friend_status_message_get_message_length(e));
}
static void ev_friend_status(Tox *tox, const Tox_Event_Friend_Status *e, void *ud)
{
    check_user_data(ud, "events: friend_status");
    on_friend_status(tox, tox_event_friend_status_get_friend_number(e), tox_event_friend_status_get_status(e));
}
static void ev_file_recv(Tox *tox, const Tox_Event_File_Recv *e, void *ud)
{
    check_user_data(ud, "events: file_recv");
    on_file_recv(tox, tox_event_file_recv_get_friend_number(e), tox_event_file_recv_get_file_number(e),
                 tox_event_file_recv_get_kind(e), tox_event_file_recv_get_file_size(e),
                 tox_event_file_recv_get_filename(e), tox_event_file_recv_get_filename_length(e));
}
static void ev_file_recv_chunk(Tox *tox, const Tox_Event_File_Recv_Chunk *e, void *ud)
{
    check_user_data(ud, "events: file_recv_chunk");
    on_file_recv_chunk(tox, tox_event_file_recv_chunk_get_friend_number(e), tox_event_file_recv_chunk_get_file_number(e),
                       tox_event_file_recv_chunk_get_position(e), tox_event_file_recv_chunk_get_data(e),
                       tox_event_file_recv_chunk_get_length(e));
}
static void ev_file_chunk_request(Tox *tox, const Tox_Event_File_Chunk_Request *e, void *ud)
{
    check_user_data(ud, "events: file_chunk_request");
    on_file_chunk_request(tox, tox_event_file_chunk_request_get_friend_number(e),
                          tox_event_file_chunk_request_get_file_number(e),
                          tox_event_file_chunk_request_get_position(e), tox_event_file_chunk_request_get_length(e));
}
static void ev_file_recv_control(Tox *tox, const Tox_Event_File_Recv_Control *e, void *ud)
{
    check_user_data(ud, "events: file_recv_control");
    on_file_recv_control(tox, tox_event_file_recv_control_get_friend_number(e),
                         tox_event_file_recv_control_get_file_number(e), tox_event_file_recv_control_get_control(e));
}
static void ev_lossless(Tox *tox, const Tox_Event_Friend_Lossless_Packet *e, void *ud)
{
    check_user_data(ud, "events: friend_lossless_packet");
    on_lossless_packet(tox, tox_event_friend_lossless_packet_get_friend_number(e),
                       tox_event_friend_lossless_packet_get_data(e), tox_event_friend_lossless_packet_get_data_length(e));
}
static void ev_lossy(Tox *tox, const Tox_Event_Friend_Lossy_Packet *e, void *ud)
{
    check_user_data(ud, "events: friend_lossy_packet");
    on_lossy_packet(tox, tox_event_friend_lossy_packet_get_friend_number(e), tox_event_friend_lossy_packet_get_data(e),
                    tox_event_friend_lossy_packet_get_data_length(e));
}

static Tox_Dispatch *make_dispatch(void)
{
    Tox_Err_Dispatch_New err;
    Tox_Dispatch *d = tox_dispatch_new(&err);
    if (d == NULL || err != TOX_ERR_DISPATCH_NEW_OK) {
        die("tox_dispatch_new: error %d", (int)err);
    }
    tox_events_callback_self_connection_status(d, ev_self_connection_status);
    tox_events_callback_friend_request(d, ev_friend_request);
    tox_events_callback_friend_connection_status(d, ev_friend_connection_status);
    tox_events_callback_friend_message(d, ev_friend_message);
    tox_events_callback_friend_read_receipt(d, ev_friend_read_receipt);
    tox_events_callback_friend_typing(d, ev_friend_typing);
    tox_events_callback_friend_name(d, ev_friend_name);
    tox_events_callback_friend_status_message(d, ev_friend_status_message);
    tox_events_callback_friend_status(d, ev_friend_status);
    tox_events_callback_file_recv(d, ev_file_recv);
    tox_events_callback_file_recv_chunk(d, ev_file_recv_chunk);
    tox_events_callback_file_chunk_request(d, ev_file_chunk_request);
    tox_events_callback_file_recv_control(d, ev_file_recv_control);
    tox_events_callback_friend_lossless_packet(d, ev_lossless);
    tox_events_callback_friend_lossy_packet(d, ev_lossy);
    return d;
}

/* A batch of events survives tox_events_get_bytes + tox_events_load unchanged. */
static void check_events_round_trip(const Tox_Events *events)
{
    uint32_t size = tox_events_bytes_size(events);
    uint8_t *bytes = malloc(size ? size : 1);
    if (bytes == NULL) {
        die("out of memory");
    }
    tox_events_get_bytes(events, bytes);
    Tox_Events *loaded = tox_events_load(bytes, size);
    if (loaded == NULL) {
        fail("tox_events_load failed on %" PRIu32 " bytes from tox_events_get_bytes", size);
    } else if (!tox_events_equal(events, loaded)) {
        fail("tox_events_load(tox_events_get_bytes(events)) differs from events");
    }
    tox_events_free(loaded);
    free(bytes);
}

/* ------------------------------------------------------------ main loop */

static bool wants_friend(void)
{
    return g.add_address != NULL || g.accept_requests || g.expect_friends > 0 ||
           (g.tox != NULL && tox_self_get_friend_list_size(g.tox) > 0);
}

/* Everything asked for has happened. */
static bool all_done(void)
{
    if (g.failed) {
        return false;
    }
    if (wants_friend() && !g.friend_online) {
        return false;
    }
    if (g.expect_reconnect && (g.offline_count < 1 || g.online_count < 2)) {
        return false;
    }
    if (g.messages > 0 && (g.msg_sent < g.messages || g.receipts < g.messages || g.msg_received < g.messages)) {
        return false;
    }
    if (g.expect_message && !g.expect_message_seen) {
        return false;
    }
    if (g.typing && !(g.typing_seen_on && g.typing_seen_off && g.typing_stopped)) {
        return false;
    }
    if (g.expect_name && !g.name_getter_checked) {
        return false;
    }
    if (g.expect_status_message && !g.sm_getter_checked) {
        return false;
    }
    if (g.expect_user_status >= 0 && !g.us_getter_checked) {
        return false;
    }
    if (g.custom_packets &&
            (g.lossless_sent < PACKETS || g.lossy_sent < PACKETS || g.lossless_received < PACKETS ||
             g.lossy_received < PACKETS / 2)) {
        return false;
    }
    if (g.send_file_path && !g.file_sent) {
        return false;
    }
    if (g.expect_file_path && !g.file_received) {
        return false;
    }
    return true;
}

static void do_bootstrap(Tox *tox, const char *host, uint16_t port, const char *key_hex)
{
    uint8_t key[TOX_PUBLIC_KEY_SIZE];
    if (!from_hex(key_hex, key, sizeof(key))) {
        die("bad bootstrap key %s", key_hex);
    }
    Tox_Err_Bootstrap err;
    if (!tox_bootstrap(tox, host, port, key, &err)) {
        die("tox_bootstrap(%s, %u): error %d", host, port, (int)err);
    }
    /* As clients do for a node that is also a TCP relay. */
    note("bootstrapped to %s:%u", host, port);
}

static void do_add(Tox *tox, const char *address_hex)
{
    uint8_t address[TOX_ADDRESS_SIZE];
    if (!from_hex(address_hex, address, sizeof(address))) {
        die("bad address %s", address_hex);
    }
    Tox_Err_Friend_Add err;
    uint32_t n = tox_friend_add(tox, address, (const uint8_t *)g.request_message, strlen(g.request_message), &err);
    if (err != TOX_ERR_FRIEND_ADD_OK) {
        die("tox_friend_add: error %d", (int)err);
    }
    say("FRIEND_ADDED %" PRIu32, n);
}

static void handle_line(Tox *tox, char *line)
{
    char host[256], key[128];
    unsigned int port;
    if (sscanf(line, "BOOTSTRAP %255s %u %127s", host, &port, key) == 3) {
        do_bootstrap(tox, host, (uint16_t)port, key);
    } else if (strncmp(line, "ADD ", 4) == 0) {
        do_add(tox, line + 4);
    } else if (strncmp(line, "MESSAGE ", 8) == 0) {
        Tox_Err_Friend_Send_Message err;
        uint32_t id = tox_friend_send_message(tox, 0, TOX_MESSAGE_TYPE_NORMAL, (const uint8_t *)line + 8,
                                              strlen(line + 8), &err);
        if (err != TOX_ERR_FRIEND_SEND_MESSAGE_OK) {
            fail("tox_friend_send_message: error %d", (int)err);
        } else if (g.extra_sent < MAX_SENT) {
            g.extra_ids[g.extra_sent++] = id;
        }
    } else if (strcmp(line, "QUIT") == 0) {
        g.quit = true;
    } else if (line[0] != '\0') {
        fail("unknown command on stdin: %s", line);
    }
}

static void poll_stdin(Tox *tox)
{
    if (!g.stdin_open) {
        return;
    }
    for (;;) {
        ssize_t n = read(0, g.stdin_buf + g.stdin_len, sizeof(g.stdin_buf) - 1 - g.stdin_len);
        if (n > 0) {
            g.stdin_len += (size_t)n;
            char *nl;
            while ((nl = memchr(g.stdin_buf, '\n', g.stdin_len)) != NULL) {
                *nl = '\0';
                handle_line(tox, g.stdin_buf);
                size_t used = (size_t)(nl - g.stdin_buf) + 1;
                memmove(g.stdin_buf, nl + 1, g.stdin_len - used);
                g.stdin_len -= used;
            }
            if (g.stdin_len == sizeof(g.stdin_buf) - 1) {
                die("stdin line too long");
            }
            continue;
        }
        if (n == 0) {
            g.stdin_open = false;
            if (g.done_printed) {
                g.quit = true;
            }
        }
        return;
    }
}

static void set_self_info(Tox *tox, bool second)
{
    Tox_Err_Set_Info err;
    char buf[TOX_MAX_STATUS_MESSAGE_LENGTH + 1];
    if (g.name) {
        if (second) {
            second_value(g.name, buf, sizeof(buf));
        } else {
            snprintf(buf, sizeof(buf), "%s", g.name);
        }
        if (!tox_self_set_name(tox, (const uint8_t *)buf, strlen(buf), &err)) {
            die("tox_self_set_name: error %d", (int)err);
        }
    }
    if (g.status_message) {
        if (second) {
            second_value(g.status_message, buf, sizeof(buf));
        } else {
            snprintf(buf, sizeof(buf), "%s", g.status_message);
        }
        if (!tox_self_set_status_message(tox, (const uint8_t *)buf, strlen(buf), &err)) {
            die("tox_self_set_status_message: error %d", (int)err);
        }
    }
    if (g.user_status >= 0) {
        tox_self_set_status(tox, (Tox_User_Status)(second ? (g.user_status + 1) % 3 : g.user_status));
    }
}

/* What the peer does on its own initiative once its friend is online. */
static void step(Tox *tox)
{
    if (!g.friend_online) {
        return;
    }
    while (g.messages > 0 && g.msg_sent < g.messages) {
        uint8_t buf[TOX_MAX_MESSAGE_LENGTH];
        size_t len = make_message(g.msg_sent, g.messages, buf);
        Tox_Err_Friend_Send_Message err;
        uint32_t id = tox_friend_send_message(tox, 0, message_type(g.msg_sent), buf, len, &err);
        if (err == TOX_ERR_FRIEND_SEND_MESSAGE_SENDQ) {
            break;
        }
        if (err != TOX_ERR_FRIEND_SEND_MESSAGE_OK) {
            fail("tox_friend_send_message(%d): error %d", g.msg_sent, (int)err);
            return;
        }
        for (int i = 0; i < g.msg_sent; ++i) {
            if (g.msg_ids[i] == id) {
                fail("message id %" PRIu32 " returned twice", id);
            }
        }
        g.msg_ids[g.msg_sent++] = id;
    }
    if (g.typing && !g.typing_started) {
        Tox_Err_Set_Typing err;
        if (!tox_self_set_typing(tox, 0, true, &err)) {
            fail("tox_self_set_typing(true): error %d", (int)err);
        }
        g.typing_started = true;
        g.typing_started_ms = now_ms();
    }
    /* Stop typing once the friend's "typing" has arrived, but not before ours has had
     * time to leave: c-toxcore sends the typing state from its next iteration, and a
     * true set and reset within one iteration is never sent. */
    if (g.typing && g.typing_seen_on && !g.typing_stopped && now_ms() >= g.typing_started_ms + 1000) {
        Tox_Err_Set_Typing err;
        if (!tox_self_set_typing(tox, 0, false, &err)) {
            fail("tox_self_set_typing(false): error %d", (int)err);
        }
        g.typing_stopped = true;
    }
    /* --change-info: once online, change name, status message and user status to their
     * second values (" (changed)", status + 1): the friend sees the first ones on
     * connection, the second ones live. */
    if (g.change_info && !g.name_changed) {
        g.name_changed = true;
        set_self_info(tox, true);
    }
    /* The getters agree with what the callbacks said, once they have returned (c-toxcore
     * calls the name and status callbacks before it stores the new value). */
    if (g.name_seen_second && !g.name_getter_checked) {
        char second[TOX_MAX_NAME_LENGTH + 1];
        uint8_t buf[TOX_MAX_NAME_LENGTH];
        Tox_Err_Friend_Query qerr;
        second_value(g.expect_name, second, sizeof(second));
        size_t size = tox_friend_get_name_size(tox, 0, &qerr);
        if (size != strlen(second) || !tox_friend_get_name(tox, 0, buf, &qerr) || memcmp(buf, second, size)) {
            fail("tox_friend_get_name does not return the name of the last callback");
        }
        g.name_getter_checked = true;
    }
    if (g.sm_seen_second && !g.sm_getter_checked) {
        char second[TOX_MAX_STATUS_MESSAGE_LENGTH + 1];
        uint8_t buf[TOX_MAX_STATUS_MESSAGE_LENGTH];
        Tox_Err_Friend_Query qerr;
        second_value(g.expect_status_message, second, sizeof(second));
        size_t size = tox_friend_get_status_message_size(tox, 0, &qerr);
        if (size != strlen(second) || !tox_friend_get_status_message(tox, 0, buf, &qerr) ||
                memcmp(buf, second, size)) {
            fail("tox_friend_get_status_message does not return the message of the last callback");
        }
        g.sm_getter_checked = true;
    }
    if (g.us_seen_second && !g.us_getter_checked) {
        Tox_Err_Friend_Query qerr;
        if ((int)tox_friend_get_status(tox, 0, &qerr) != (g.expect_user_status + 1) % 3) {
            fail("tox_friend_get_status does not return the status of the last callback");
        }
        g.us_getter_checked = true;
    }
    while (g.custom_packets && g.lossless_sent < PACKETS) {
        uint8_t buf[TOX_MAX_CUSTOM_PACKET_SIZE];
        size_t len = make_packet(true, g.lossless_sent, buf);
        Tox_Err_Friend_Custom_Packet err;
        tox_friend_send_lossless_packet(tox, 0, buf, len, &err);
        if (err == TOX_ERR_FRIEND_CUSTOM_PACKET_SENDQ) {
            break;
        }
        if (err != TOX_ERR_FRIEND_CUSTOM_PACKET_OK) {
            fail("tox_friend_send_lossless_packet(%d): error %d", g.lossless_sent, (int)err);
            return;
        }
        g.lossless_sent++;
    }
    if (g.custom_packets && g.lossy_sent < PACKETS && now_ms() >= g.next_lossy_ms) {
        uint8_t buf[TOX_MAX_CUSTOM_PACKET_SIZE];
        size_t len = make_packet(false, g.lossy_sent, buf);
        Tox_Err_Friend_Custom_Packet err;
        tox_friend_send_lossy_packet(tox, 0, buf, len, &err);
        if (err != TOX_ERR_FRIEND_CUSTOM_PACKET_OK && err != TOX_ERR_FRIEND_CUSTOM_PACKET_SENDQ) {
            fail("tox_friend_send_lossy_packet(%d): error %d", g.lossy_sent, (int)err);
            return;
        }
        g.lossy_sent++;
        g.next_lossy_ms = now_ms() + 20;
    }
    if (g.send_file_path && !g.file_send_started) {
        const char *name = base_name(g.send_file_path);
        Tox_Err_File_Send err;
        uint32_t n = tox_file_send(tox, 0, TOX_FILE_KIND_DATA, g.send_size, NULL, (const uint8_t *)name,
                                   strlen(name), &err);
        if (err != TOX_ERR_FILE_SEND_OK) {
            fail("tox_file_send: error %d", (int)err);
            return;
        }
        g.file_send_started = true;
        g.send_file_number = n;
        say("FILE_OFFERED %" PRIu32 " %" PRIu64, n, g.send_size);
        print_file_id(tox, 0, n, "send");
    }
    if (g.pending_count > 0) {
        retry_pending_chunks(tox);
    }
}

static uint8_t *read_file(const char *path, uint64_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        fclose(f);
        return NULL;
    }
    uint8_t *data = malloc(st.st_size ? (size_t)st.st_size : 1);
    if (data == NULL || fread(data, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
        free(data);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *size = (uint64_t)st.st_size;
    return data;
}

static void save(Tox *tox)
{
    size_t size = tox_get_savedata_size(tox);
    uint8_t *data = malloc(size);
    if (data == NULL) {
        die("out of memory");
    }
    tox_get_savedata(tox, data);
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", g.savedata_path);
    FILE *f = fopen(tmp, "wb");
    if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0 || rename(tmp, g.savedata_path) != 0) {
        die("writing %s: %s", g.savedata_path, strerror(errno));
    }
    free(data);
    say("SAVED %zu", size);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: peer [--port P] [--timeout SECS] [--savedata FILE] [--bootstrap HOST PORT KEYHEX]\n"
            "            [--add TOXID] [--accept-requests] [--request-message TEXT] [--messages N]\n"
            "            [--expect-message TEXT] [--typing]\n"
            "            [--name NAME] [--expect-name NAME] [--status-message TEXT] [--change-info]\n"
            "            [--expect-status-message TEXT] [--user-status S] [--expect-user-status S]\n"
            "            [--custom-packets] [--send-file PATH] [--expect-file PATH] [--events]\n"
            "            [--expect-reconnect] [--expect-friends N] [--expect-self-name NAME]\n"
            "            [--exit-when-done] [--verbose]\n"
            "       peer --selftest [--port P]\n");
    exit(2);
}

static int selftest(uint16_t port);

int main(int argc, char **argv)
{
    memset(&g, 0, sizeof(g));
    g.timeout_secs = 60;
    g.user_status = -1;
    g.expect_user_status = -1;
    g.send_fd = -1;
    g.expect_friends = -1;
    g.request_message = DEFAULT_REQUEST_MESSAGE;
    g.start_ms = now_ms();
    bool run_selftest = false;

    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
#define ARG(n) (i + (n) < argc ? argv[i + (n)] : (usage(), ""))
        if (!strcmp(a, "--port")) {
            g.port = (uint16_t)atoi(ARG(1));
            ++i;
        } else if (!strcmp(a, "--timeout")) {
            g.timeout_secs = atoi(ARG(1));
            ++i;
        } else if (!strcmp(a, "--savedata")) {
            g.savedata_path = ARG(1);
            ++i;
        } else if (!strcmp(a, "--bootstrap")) {
            g.bootstrap_host = ARG(1);
            g.bootstrap_port = (uint16_t)atoi(ARG(2));
            g.bootstrap_key = ARG(3);
            i += 3;
        } else if (!strcmp(a, "--add")) {
            g.add_address = ARG(1);
            ++i;
        } else if (!strcmp(a, "--request-message")) {
            g.request_message = ARG(1);
            ++i;
        } else if (!strcmp(a, "--expect-message")) {
            g.expect_message = ARG(1);
            ++i;
        } else if (!strcmp(a, "--accept-requests")) {
            g.accept_requests = true;
        } else if (!strcmp(a, "--messages")) {
            g.messages = atoi(ARG(1));
            ++i;
            if (g.messages < 0 || g.messages > MAX_SENT) {
                usage();
            }
        } else if (!strcmp(a, "--typing")) {
            g.typing = true;
        } else if (!strcmp(a, "--name")) {
            g.name = ARG(1);
            ++i;
        } else if (!strcmp(a, "--expect-name")) {
            g.expect_name = ARG(1);
            ++i;
        } else if (!strcmp(a, "--status-message")) {
            g.status_message = ARG(1);
            ++i;
        } else if (!strcmp(a, "--expect-status-message")) {
            g.expect_status_message = ARG(1);
            ++i;
        } else if (!strcmp(a, "--user-status")) {
            g.user_status = atoi(ARG(1));
            ++i;
        } else if (!strcmp(a, "--expect-user-status")) {
            g.expect_user_status = atoi(ARG(1));
            ++i;
        } else if (!strcmp(a, "--change-info")) {
            g.change_info = true;
        } else if (!strcmp(a, "--custom-packets")) {
            g.custom_packets = true;
        } else if (!strcmp(a, "--send-file")) {
            g.send_file_path = ARG(1);
            ++i;
        } else if (!strcmp(a, "--expect-file")) {
            g.expect_file_path = ARG(1);
            ++i;
        } else if (!strcmp(a, "--events")) {
            g.events = true;
        } else if (!strcmp(a, "--expect-reconnect")) {
            g.expect_reconnect = true;
        } else if (!strcmp(a, "--expect-friends")) {
            g.expect_friends = atoi(ARG(1));
            ++i;
        } else if (!strcmp(a, "--expect-self-name")) {
            g.expect_self_name = ARG(1);
            ++i;
        } else if (!strcmp(a, "--exit-when-done")) {
            g.exit_when_done = true;
        } else if (!strcmp(a, "--verbose")) {
            g.verbose = true;
        } else if (!strcmp(a, "--selftest")) {
            run_selftest = true;
        } else {
            usage();
        }
#undef ARG
    }
    /* Which libtoxcore the loader chose: the harness checks it is the one it meant. */
    Dl_info info;
    void *sym = dlsym(RTLD_DEFAULT, "tox_new");
    if (sym == NULL) {
        /* Linked statically: tox_new is in the executable, not in its dynamic symbols. */
        sym = (void *)tox_new;
    }
    if (dladdr(sym, &info) == 0 || info.dli_fname == NULL) {
        die("cannot find tox_new's shared object");
    }
    say("LIB %s", info.dli_fname);
    if (run_selftest) {
        return selftest(g.port);
    }
    g.deadline_ms = g.start_ms + (int64_t)g.timeout_secs * 1000;

    if (g.send_file_path) {
        g.send_fd = open(g.send_file_path, O_RDONLY);
        struct stat st;
        if (g.send_fd < 0 || fstat(g.send_fd, &st) != 0) {
            die("open %s: %s", g.send_file_path, strerror(errno));
        }
        g.send_size = (uint64_t)st.st_size;
    }
    if (g.expect_file_path) {
        g.expect_data = read_file(g.expect_file_path, &g.expect_size);
        if (g.expect_data == NULL) {
            die("read %s: %s", g.expect_file_path, strerror(errno));
        }
    }

    Tox_Err_Options_New oerr;
    struct Tox_Options *opts = tox_options_new(&oerr);
    if (opts == NULL) {
        die("tox_options_new: error %d", (int)oerr);
    }
    tox_options_set_ipv6_enabled(opts, false);
    tox_options_set_udp_enabled(opts, true);
    tox_options_set_local_discovery_enabled(opts, true);
    if (g.port) {
        tox_options_set_start_port(opts, g.port);
        tox_options_set_end_port(opts, g.port);
    }
    uint8_t *savedata = NULL;
    uint64_t savedata_size = 0;
    if (g.savedata_path) {
        savedata = read_file(g.savedata_path, &savedata_size);
        if (savedata != NULL && savedata_size > 0) {
            tox_options_set_savedata_type(opts, TOX_SAVEDATA_TYPE_TOX_SAVE);
            tox_options_set_savedata_data(opts, savedata, (size_t)savedata_size);
            say("LOADED %" PRIu64, savedata_size);
        }
    }
    Tox_Err_New nerr;
    Tox *tox = tox_new(opts, &nerr);
    tox_options_free(opts);
    free(savedata);
    if (tox == NULL) {
        die("tox_new: error %d", (int)nerr);
    }
    g.tox = tox;

    uint8_t address[TOX_ADDRESS_SIZE];
    char hex[2 * TOX_ADDRESS_SIZE + 1];
    tox_self_get_address(tox, address);
    to_hex(address, sizeof(address), hex);
    say("ID %s", hex);
    uint8_t dht[TOX_PUBLIC_KEY_SIZE];
    tox_self_get_dht_id(tox, dht);
    to_hex(dht, sizeof(dht), hex);
    Tox_Err_Get_Port perr;
    uint16_t udp_port = tox_self_get_udp_port(tox, &perr);
    if (perr != TOX_ERR_GET_PORT_OK) {
        die("tox_self_get_udp_port: error %d", (int)perr);
    }
    if (g.port && udp_port != g.port) {
        die("tox_self_get_udp_port says %u, asked for %u", udp_port, g.port);
    }
    say("DHT %s %u", hex, udp_port);

    if (g.expect_friends >= 0 && tox_self_get_friend_list_size(tox) != (size_t)g.expect_friends) {
        die("%zu friends after loading, expected %d", tox_self_get_friend_list_size(tox), g.expect_friends);
    }
    if (g.expect_self_name) {
        uint8_t name[TOX_MAX_NAME_LENGTH];
        size_t len = tox_self_get_name_size(tox);
        tox_self_get_name(tox, name);
        if (len != strlen(g.expect_self_name) || memcmp(name, g.expect_self_name, len) != 0) {
            die("own name after loading is \"%.*s\", expected \"%s\"", (int)len, (const char *)name,
                g.expect_self_name);
        }
    }
    for (size_t f = 0; f < tox_self_get_friend_list_size(tox); ++f) {
        uint8_t pk[TOX_PUBLIC_KEY_SIZE];
        Tox_Err_Friend_Get_Public_Key kerr;
        if (!tox_friend_get_public_key(tox, (uint32_t)f, pk, &kerr)) {
            die("tox_friend_get_public_key(%zu): error %d", f, (int)kerr);
        }
        to_hex(pk, sizeof(pk), hex);
        say("FRIEND %zu %s", f, hex);
    }

    set_self_info(tox, false);

    Tox_Dispatch *dispatch = NULL;
    if (g.events) {
        tox_events_init(tox);
        dispatch = make_dispatch();
    } else {
        register_callbacks(tox);
    }
    if (g.bootstrap_host) {
        do_bootstrap(tox, g.bootstrap_host, g.bootstrap_port, g.bootstrap_key);
    }
    if (g.add_address) {
        do_add(tox, g.add_address);
    }
    int flags = fcntl(0, F_GETFL);
    g.stdin_open = flags >= 0 && fcntl(0, F_SETFL, flags | O_NONBLOCK) == 0;

    while (!g.quit && !g.failed) {
        if (g.events) {
            Tox_Err_Events_Iterate err;
            Tox_Events *events = tox_events_iterate(tox, false, &err);
            if (err != TOX_ERR_EVENTS_ITERATE_OK) {
                fail("tox_events_iterate: error %d", (int)err);
            }
            if (events != NULL) {
                check_events_round_trip(events);
                tox_dispatch_invoke(dispatch, events, tox, &g);
                tox_events_free(events);
            }
        } else {
            tox_iterate(tox, &g);
        }
        step(tox);
        poll_stdin(tox);
        if (!g.done_printed && all_done()) {
            g.done_printed = true;
            say("DONE %.3f", (now_ms() - g.start_ms) / 1000.0);
            if (g.exit_when_done || !g.stdin_open) {
                g.quit = true;
            }
        }
        if (now_ms() > g.deadline_ms) {
            break;
        }
        usleep(tox_iteration_interval(tox) * 1000);
    }

    int status = 0;
    if (g.failed) {
        status = 1;
    } else if (!g.done_printed) {
        fail("timeout after %d s: friend_online=%d online=%d offline=%d messages sent=%d received=%d receipts=%d "
             "typing on=%d off=%d name=%d/%d status_message=%d/%d user_status=%d/%d lossless sent=%d received=%d "
             "lossy sent=%d received=%d file sent=%d received=%d (%" PRIu64 "/%" PRIu64 " bytes, %d chunks pending)",
             g.timeout_secs, g.friend_online, g.online_count, g.offline_count, g.msg_sent, g.msg_received,
             g.receipts, g.typing_seen_on, g.typing_seen_off, g.name_seen_first, g.name_seen_second,
             g.sm_seen_first, g.sm_seen_second, g.us_seen_first, g.us_seen_second, g.lossless_sent,
             g.lossless_received, g.lossy_sent, g.lossy_received, g.file_sent, g.file_received, g.recv_bytes,
             g.expect_size, g.pending_count);
        status = 1;
    } else if (!g.quit) {
        fail("timeout after DONE while waiting for QUIT on stdin");
        status = 1;
    }
    if (status == 0 && g.savedata_path) {
        save(tox);
    }
    if (dispatch) {
        tox_dispatch_free(dispatch);
    }
    tox_kill(tox);
    if (g.send_fd >= 0) {
        close(g.send_fd);
    }
    free(g.expect_data);
    if (status == 0) {
        say("OK");
    }
    return status;
}

/* ------------------------------------------------------------- selftest */

static int selftest_failures;

#define CHECK(name, cond, ...)                                     \
    do {                                                           \
        if (cond) {                                                \
            say("CHECK %s ok", name);                              \
        } else {                                                   \
            fprintf(stderr, "FAIL %s: ", name);                    \
            fprintf(stderr, __VA_ARGS__);                          \
            fputc('\n', stderr);                                   \
            say("CHECK %s FAILED", name);                          \
            selftest_failures++;                                   \
        }                                                          \
    } while (0)

static Tox *new_tox(uint16_t port, Tox_Savedata_Type type, const uint8_t *data, size_t len, Tox_Err_New *err)
{
    struct Tox_Options *o = tox_options_new(NULL);
    tox_options_set_ipv6_enabled(o, false);
    tox_options_set_local_discovery_enabled(o, false);
    tox_options_set_start_port(o, port);
    tox_options_set_end_port(o, port);
    tox_options_set_savedata_type(o, type);
    tox_options_set_savedata_data(o, data, len);
    Tox *tox = tox_new(o, err);
    tox_options_free(o);
    return tox;
}

static int selftest(uint16_t port)
{
    if (port == 0) {
        port = 33600;
    }
    /* Versions and sizes. */
    CHECK("version", tox_version_major() == TOX_VERSION_MAJOR && tox_version_minor() == TOX_VERSION_MINOR &&
          tox_version_patch() == TOX_VERSION_PATCH && tox_version_is_compatible(0, 2, 18) &&
          !tox_version_is_compatible(1, 0, 0), "%u.%u.%u", tox_version_major(), tox_version_minor(),
          tox_version_patch());
    CHECK("sizes",
          tox_public_key_size() == TOX_PUBLIC_KEY_SIZE && tox_secret_key_size() == TOX_SECRET_KEY_SIZE &&
          tox_conference_uid_size() == TOX_CONFERENCE_UID_SIZE && tox_conference_id_size() == TOX_CONFERENCE_ID_SIZE &&
          tox_nospam_size() == TOX_NOSPAM_SIZE && tox_address_size() == TOX_ADDRESS_SIZE &&
          tox_max_name_length() == TOX_MAX_NAME_LENGTH &&
          tox_max_status_message_length() == TOX_MAX_STATUS_MESSAGE_LENGTH &&
          tox_max_friend_request_length() == TOX_MAX_FRIEND_REQUEST_LENGTH &&
          tox_max_message_length() == TOX_MAX_MESSAGE_LENGTH &&
          tox_max_custom_packet_size() == TOX_MAX_CUSTOM_PACKET_SIZE && tox_hash_length() == TOX_HASH_LENGTH &&
          tox_file_id_length() == TOX_FILE_ID_LENGTH && tox_max_filename_length() == TOX_MAX_FILENAME_LENGTH &&
          tox_max_hostname_length() == TOX_MAX_HOSTNAME_LENGTH &&
          tox_pass_salt_length() == TOX_PASS_SALT_LENGTH && tox_pass_key_length() == TOX_PASS_KEY_LENGTH &&
          tox_pass_encryption_extra_length() == TOX_PASS_ENCRYPTION_EXTRA_LENGTH,
          "a size function disagrees with tox.h's macro");

    /* Options: defaults, setters seen through the struct fields (the layout clients
     * compile against) and fields seen through the getters. */
    Tox_Err_Options_New oerr = TOX_ERR_OPTIONS_NEW_MALLOC;
    struct Tox_Options *o = tox_options_new(&oerr);
    CHECK("options_new", o != NULL && oerr == TOX_ERR_OPTIONS_NEW_OK, "error %d", (int)oerr);
    if (o == NULL) {
        return 1;
    }
    CHECK("options_defaults",
          o->ipv6_enabled && o->udp_enabled && o->local_discovery_enabled && o->dht_announcements_enabled &&
          o->proxy_type == TOX_PROXY_TYPE_NONE && o->proxy_host == NULL && o->proxy_port == 0 &&
          o->start_port == 0 && o->end_port == 0 && o->tcp_port == 0 && o->hole_punching_enabled &&
          o->savedata_type == TOX_SAVEDATA_TYPE_NONE && o->savedata_data == NULL && o->savedata_length == 0 &&
          o->log_callback == NULL && o->log_user_data == NULL && !o->experimental_thread_safety,
          "ipv6 %d udp %d lan %d dht_ann %d proxy %d port %u start %u end %u tcp %u hole %d savedata %d len %zu "
          "threads %d", o->ipv6_enabled, o->udp_enabled, o->local_discovery_enabled, o->dht_announcements_enabled,
          (int)o->proxy_type, o->proxy_port, o->start_port, o->end_port, o->tcp_port, o->hole_punching_enabled,
          (int)o->savedata_type, o->savedata_length, o->experimental_thread_safety);
    static const uint8_t sd[3] = {1, 2, 3};
    tox_options_set_ipv6_enabled(o, false);
    tox_options_set_udp_enabled(o, false);
    tox_options_set_local_discovery_enabled(o, false);
    tox_options_set_dht_announcements_enabled(o, false);
    tox_options_set_proxy_type(o, TOX_PROXY_TYPE_SOCKS5);
    tox_options_set_proxy_host(o, "proxy.example");
    tox_options_set_proxy_port(o, 9050);
    tox_options_set_start_port(o, 1001);
    tox_options_set_end_port(o, 1002);
    tox_options_set_tcp_port(o, 1003);
    tox_options_set_hole_punching_enabled(o, false);
    tox_options_set_savedata_type(o, TOX_SAVEDATA_TYPE_SECRET_KEY);
    tox_options_set_savedata_data(o, sd, sizeof(sd));
    tox_options_set_log_user_data(o, &g);
    tox_options_set_experimental_thread_safety(o, true);
    CHECK("options_setters_to_fields",
          !o->ipv6_enabled && !o->udp_enabled && !o->local_discovery_enabled && !o->dht_announcements_enabled &&
          o->proxy_type == TOX_PROXY_TYPE_SOCKS5 && o->proxy_host != NULL &&
          strcmp(o->proxy_host, "proxy.example") == 0 && o->proxy_port == 9050 && o->start_port == 1001 &&
          o->end_port == 1002 && o->tcp_port == 1003 && !o->hole_punching_enabled &&
          o->savedata_type == TOX_SAVEDATA_TYPE_SECRET_KEY && o->savedata_length == 3 &&
          o->log_user_data == &g && o->experimental_thread_safety,
          "a setter did not write the struct field clients read");
    o->ipv6_enabled = true;
    o->proxy_port = 1080;
    o->start_port = 2001;
    o->end_port = 2002;
    o->tcp_port = 2003;
    o->savedata_length = 2;
    o->proxy_type = TOX_PROXY_TYPE_HTTP;
    CHECK("options_fields_to_getters",
          tox_options_get_ipv6_enabled(o) && !tox_options_get_udp_enabled(o) &&
          tox_options_get_proxy_type(o) == TOX_PROXY_TYPE_HTTP && tox_options_get_proxy_port(o) == 1080 &&
          tox_options_get_start_port(o) == 2001 && tox_options_get_end_port(o) == 2002 &&
          tox_options_get_tcp_port(o) == 2003 && tox_options_get_savedata_length(o) == 2 &&
          tox_options_get_savedata_type(o) == TOX_SAVEDATA_TYPE_SECRET_KEY &&
          tox_options_get_log_user_data(o) == &g && tox_options_get_experimental_thread_safety(o) &&
          !tox_options_get_hole_punching_enabled(o) && !tox_options_get_dht_announcements_enabled(o) &&
          !tox_options_get_local_discovery_enabled(o),
          "a getter does not read the struct field clients write");
    tox_options_default(o);
    CHECK("options_default", o->ipv6_enabled && o->udp_enabled && o->start_port == 0 &&
          o->proxy_type == TOX_PROXY_TYPE_NONE && o->savedata_type == TOX_SAVEDATA_TYPE_NONE,
          "tox_options_default did not reset the options");
    tox_options_free(o);

    /* tox_new's errors. */
    Tox_Err_New nerr;
    Tox *bad = new_tox(port, TOX_SAVEDATA_TYPE_SECRET_KEY, sd, sizeof(sd), &nerr);
    CHECK("new_bad_secret_key", bad == NULL && nerr == TOX_ERR_NEW_LOAD_BAD_FORMAT, "error %d", (int)nerr);
    if (bad) {
        tox_kill(bad);
    }
    static const uint8_t garbage[16] = "not a tox save!";
    bad = new_tox(port, TOX_SAVEDATA_TYPE_TOX_SAVE, garbage, sizeof(garbage), &nerr);
    /* c-toxcore 0.2.18 reports LOAD_BAD_FORMAT here but still returns a (fresh) Tox. */
    CHECK("new_bad_savedata", nerr == TOX_ERR_NEW_LOAD_BAD_FORMAT, "error %d", (int)nerr);
    if (bad) {
        tox_kill(bad);
    }

    Tox *tox = new_tox(port, TOX_SAVEDATA_TYPE_NONE, NULL, 0, &nerr);
    CHECK("new", tox != NULL && nerr == TOX_ERR_NEW_OK, "error %d", (int)nerr);
    if (tox == NULL) {
        return 1;
    }
    Tox *busy = new_tox(port, TOX_SAVEDATA_TYPE_NONE, NULL, 0, &nerr);
    CHECK("new_port_in_use", busy == NULL && nerr == TOX_ERR_NEW_PORT_ALLOC, "error %d", (int)nerr);
    if (busy) {
        tox_kill(busy);
    }
    Tox_Err_Get_Port perr;
    CHECK("udp_port", tox_self_get_udp_port(tox, &perr) == port && perr == TOX_ERR_GET_PORT_OK, "error %d",
          (int)perr);
    tox_self_get_tcp_port(tox, &perr);
    CHECK("tcp_port_not_bound", perr == TOX_ERR_GET_PORT_NOT_BOUND, "error %d", (int)perr);
    /* tox.h promises no lower bound (c-toxcore says 50 when idle; 0 is a valid answer). */
    CHECK("iteration_interval", tox_iteration_interval(tox) <= 1000, "%u", tox_iteration_interval(tox));
    tox_iterate(tox, NULL);
    CHECK("self_connection_status", tox_self_get_connection_status(tox) == TOX_CONNECTION_NONE, "%d",
          (int)tox_self_get_connection_status(tox));

    /* The address: public key, nospam (big-endian), checksum. */
    uint8_t address[TOX_ADDRESS_SIZE], pk[TOX_PUBLIC_KEY_SIZE], sk[TOX_SECRET_KEY_SIZE], dht[TOX_PUBLIC_KEY_SIZE];
    tox_self_set_nospam(tox, 0x12345678);
    tox_self_get_address(tox, address);
    tox_self_get_public_key(tox, pk);
    tox_self_get_secret_key(tox, sk);
    tox_self_get_dht_id(tox, dht);
    uint8_t checksum[2] = {0, 0};
    for (int i = 0; i < TOX_PUBLIC_KEY_SIZE + TOX_NOSPAM_SIZE; ++i) {
        checksum[i % 2] ^= address[i];
    }
    CHECK("address", memcmp(address, pk, TOX_PUBLIC_KEY_SIZE) == 0 && address[32] == 0x12 && address[33] == 0x34 &&
          address[34] == 0x56 && address[35] == 0x78 && address[36] == checksum[0] && address[37] == checksum[1] &&
          tox_self_get_nospam(tox) == 0x12345678,
          "address does not hold the public key, nospam 0x12345678 and the checksum");
    CHECK("dht_id_differs", memcmp(dht, pk, TOX_PUBLIC_KEY_SIZE) != 0, "the DHT key equals the long-term key");

    /* Own name, status message, user status. */
    Tox_Err_Set_Info ierr;
    uint8_t buf[2048];
    memset(buf, 'x', sizeof(buf));
    CHECK("set_name", tox_self_set_name(tox, (const uint8_t *)"rustox", 6, &ierr) && ierr == TOX_ERR_SET_INFO_OK &&
          tox_self_get_name_size(tox) == 6, "error %d", (int)ierr);
    tox_self_get_name(tox, buf);
    CHECK("get_name", memcmp(buf, "rustox", 6) == 0, "name %.6s", (const char *)buf);
    memset(buf, 'x', sizeof(buf));
    CHECK("set_name_too_long", !tox_self_set_name(tox, buf, TOX_MAX_NAME_LENGTH + 1, &ierr) &&
          ierr == TOX_ERR_SET_INFO_TOO_LONG && tox_self_get_name_size(tox) == 6, "error %d", (int)ierr);
    CHECK("set_status_message", tox_self_set_status_message(tox, buf, TOX_MAX_STATUS_MESSAGE_LENGTH, &ierr) &&
          tox_self_get_status_message_size(tox) == TOX_MAX_STATUS_MESSAGE_LENGTH, "error %d", (int)ierr);
    CHECK("set_status_message_too_long",
          !tox_self_set_status_message(tox, buf, TOX_MAX_STATUS_MESSAGE_LENGTH + 1, &ierr) &&
          ierr == TOX_ERR_SET_INFO_TOO_LONG, "error %d", (int)ierr);
    tox_self_set_status_message(tox, (const uint8_t *)"testing", 7, &ierr);
    tox_self_set_status(tox, TOX_USER_STATUS_BUSY);
    CHECK("user_status", tox_self_get_status(tox) == TOX_USER_STATUS_BUSY, "%d", (int)tox_self_get_status(tox));

    /* Friends. */
    Tox *other = new_tox(port + 1, TOX_SAVEDATA_TYPE_NONE, NULL, 0, &nerr);
    CHECK("new_second", other != NULL, "error %d", (int)nerr);
    if (other == NULL) {
        return 1;
    }
    uint8_t other_address[TOX_ADDRESS_SIZE], other_pk[TOX_PUBLIC_KEY_SIZE];
    tox_self_get_address(other, other_address);
    tox_self_get_public_key(other, other_pk);
    Tox_Err_Friend_Add ferr;
    const uint8_t *msg = (const uint8_t *)"hi";
    tox_friend_add(tox, NULL, msg, 2, &ferr);
    CHECK("friend_add_null", ferr == TOX_ERR_FRIEND_ADD_NULL, "error %d", (int)ferr);
    tox_friend_add(tox, other_address, msg, 0, &ferr);
    CHECK("friend_add_no_message", ferr == TOX_ERR_FRIEND_ADD_NO_MESSAGE, "error %d", (int)ferr);
    tox_friend_add(tox, other_address, buf, TOX_MAX_FRIEND_REQUEST_LENGTH + 1, &ferr);
    CHECK("friend_add_too_long", ferr == TOX_ERR_FRIEND_ADD_TOO_LONG, "error %d", (int)ferr);
    tox_friend_add(tox, address, msg, 2, &ferr);
    CHECK("friend_add_own_key", ferr == TOX_ERR_FRIEND_ADD_OWN_KEY, "error %d", (int)ferr);
    uint8_t corrupt[TOX_ADDRESS_SIZE];
    memcpy(corrupt, other_address, sizeof(corrupt));
    corrupt[37] ^= 1;
    tox_friend_add(tox, corrupt, msg, 2, &ferr);
    CHECK("friend_add_bad_checksum", ferr == TOX_ERR_FRIEND_ADD_BAD_CHECKSUM, "error %d", (int)ferr);
    uint32_t fnum = tox_friend_add(tox, other_address, msg, 2, &ferr);
    CHECK("friend_add", ferr == TOX_ERR_FRIEND_ADD_OK && fnum == 0, "error %d, friend %u", (int)ferr, fnum);
    tox_friend_add(tox, other_address, msg, 2, &ferr);
    CHECK("friend_add_already_sent", ferr == TOX_ERR_FRIEND_ADD_ALREADY_SENT, "error %d", (int)ferr);
    memcpy(corrupt, other_address, sizeof(corrupt));
    corrupt[32] ^= 0xff;
    corrupt[36] ^= 0xff;
    tox_friend_add(tox, corrupt, msg, 2, &ferr);
    CHECK("friend_add_set_new_nospam", ferr == TOX_ERR_FRIEND_ADD_SET_NEW_NOSPAM, "error %d", (int)ferr);
    uint8_t third_pk[TOX_PUBLIC_KEY_SIZE];
    memset(third_pk, 0x5a, sizeof(third_pk));
    uint32_t fnum2 = tox_friend_add_norequest(tox, third_pk, &ferr);
    CHECK("friend_add_norequest", ferr == TOX_ERR_FRIEND_ADD_OK && fnum2 == 1, "error %d, friend %u", (int)ferr,
          fnum2);
    Tox_Err_Friend_By_Public_Key berr;
    CHECK("friend_by_public_key", tox_friend_by_public_key(tox, other_pk, &berr) == 0 &&
          tox_friend_by_public_key(tox, third_pk, &berr) == 1 && berr == TOX_ERR_FRIEND_BY_PUBLIC_KEY_OK,
          "error %d", (int)berr);
    tox_friend_by_public_key(tox, dht, &berr);
    CHECK("friend_by_public_key_not_found", berr == TOX_ERR_FRIEND_BY_PUBLIC_KEY_NOT_FOUND, "error %d", (int)berr);
    uint32_t list[4] = {99, 99, 99, 99};
    tox_self_get_friend_list(tox, list);
    CHECK("friend_list", tox_self_get_friend_list_size(tox) == 2 && list[0] == 0 && list[1] == 1 && list[2] == 99,
          "size %zu: %u %u %u", tox_self_get_friend_list_size(tox), list[0], list[1], list[2]);
    uint8_t got_pk[TOX_PUBLIC_KEY_SIZE];
    Tox_Err_Friend_Get_Public_Key gerr;
    CHECK("friend_get_public_key", tox_friend_get_public_key(tox, 0, got_pk, &gerr) &&
          memcmp(got_pk, other_pk, sizeof(got_pk)) == 0, "error %d", (int)gerr);
    tox_friend_get_public_key(tox, 7, got_pk, &gerr);
    CHECK("friend_get_public_key_not_found", gerr == TOX_ERR_FRIEND_GET_PUBLIC_KEY_FRIEND_NOT_FOUND, "error %d",
          (int)gerr);
    Tox_Err_Friend_Query qerr;
    CHECK("friend_connection_none", tox_friend_get_connection_status(tox, 0, &qerr) == TOX_CONNECTION_NONE &&
          qerr == TOX_ERR_FRIEND_QUERY_OK, "error %d", (int)qerr);
    tox_friend_get_name_size(tox, 9, &qerr);
    CHECK("friend_query_not_found", qerr == TOX_ERR_FRIEND_QUERY_FRIEND_NOT_FOUND, "error %d", (int)qerr);
    Tox_Err_Friend_Send_Message merr;
    tox_friend_send_message(tox, 0, TOX_MESSAGE_TYPE_NORMAL, msg, 2, &merr);
    CHECK("send_message_not_connected", merr == TOX_ERR_FRIEND_SEND_MESSAGE_FRIEND_NOT_CONNECTED, "error %d",
          (int)merr);
    tox_friend_send_message(tox, 0, TOX_MESSAGE_TYPE_NORMAL, msg, 0, &merr);
    CHECK("send_message_empty", merr == TOX_ERR_FRIEND_SEND_MESSAGE_EMPTY, "error %d", (int)merr);
    tox_friend_send_message(tox, 5, TOX_MESSAGE_TYPE_NORMAL, msg, 2, &merr);
    CHECK("send_message_not_found", merr == TOX_ERR_FRIEND_SEND_MESSAGE_FRIEND_NOT_FOUND, "error %d", (int)merr);
    Tox_Err_File_Send fserr;
    tox_file_send(tox, 5, TOX_FILE_KIND_DATA, 10, NULL, msg, 2, &fserr);
    CHECK("file_send_not_found", fserr == TOX_ERR_FILE_SEND_FRIEND_NOT_FOUND, "error %d", (int)fserr);
    tox_file_send(tox, 0, TOX_FILE_KIND_DATA, 10, NULL, msg, 2, &fserr);
    CHECK("file_send_not_connected", fserr == TOX_ERR_FILE_SEND_FRIEND_NOT_CONNECTED, "error %d", (int)fserr);
    Tox_Err_Friend_Custom_Packet cperr;
    uint8_t bad_packet[2] = {100, 0};
    tox_friend_send_lossless_packet(tox, 0, bad_packet, 2, &cperr);
    CHECK("lossless_packet_invalid", cperr == TOX_ERR_FRIEND_CUSTOM_PACKET_INVALID, "error %d", (int)cperr);

    /* Savedata: a Tox made from tox_get_savedata is the same identity with the same state. */
    size_t save_size = tox_get_savedata_size(tox);
    uint8_t *save = malloc(save_size);
    tox_get_savedata(tox, save);
    tox_kill(tox);
    tox = new_tox(port, TOX_SAVEDATA_TYPE_TOX_SAVE, save, save_size, &nerr);
    CHECK("savedata_load", tox != NULL && nerr == TOX_ERR_NEW_OK, "error %d", (int)nerr);
    if (tox == NULL) {
        return 1;
    }
    uint8_t address2[TOX_ADDRESS_SIZE], sm[16];
    tox_self_get_address(tox, address2);
    tox_self_get_name(tox, buf);
    tox_self_get_status_message(tox, sm);
    CHECK("savedata_identity", memcmp(address, address2, sizeof(address)) == 0, "address changed");
    CHECK("savedata_info", tox_self_get_name_size(tox) == 6 && memcmp(buf, "rustox", 6) == 0 &&
          tox_self_get_status_message_size(tox) == 7 && memcmp(sm, "testing", 7) == 0 &&
          tox_self_get_status(tox) == TOX_USER_STATUS_BUSY, "name, status message or status lost");
    CHECK("savedata_friends", tox_self_get_friend_list_size(tox) == 2 &&
          tox_friend_by_public_key(tox, other_pk, &berr) == 0 && tox_friend_by_public_key(tox, third_pk, &berr) == 1,
          "friends lost: %zu", tox_self_get_friend_list_size(tox));
    size_t save2_size = tox_get_savedata_size(tox);
    CHECK("savedata_size_stable", save2_size == save_size, "%zu then %zu", save_size, save2_size);
    free(save);
    Tox_Err_Friend_Delete derr;
    CHECK("friend_delete", tox_friend_delete(tox, 0, &derr) && !tox_friend_exists(tox, 0) &&
          tox_friend_exists(tox, 1), "error %d", (int)derr);
    tox_friend_delete(tox, 0, &derr);
    CHECK("friend_delete_not_found", derr == TOX_ERR_FRIEND_DELETE_FRIEND_NOT_FOUND, "error %d", (int)derr);
    tox_kill(tox);
    tox = new_tox(port, TOX_SAVEDATA_TYPE_SECRET_KEY, sk, sizeof(sk), &nerr);
    CHECK("secret_key_load", tox != NULL, "error %d", (int)nerr);
    if (tox == NULL) {
        return 1;
    }
    tox_self_get_public_key(tox, got_pk);
    CHECK("secret_key_identity", memcmp(got_pk, pk, sizeof(pk)) == 0, "public key differs");

    /* Hashing (SHA-256 of "abc"). */
    static const uint8_t abc_sha256[32] = {
        0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
        0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad
    };
    uint8_t hash[TOX_HASH_LENGTH];
    CHECK("hash", tox_hash(hash, (const uint8_t *)"abc", 3) && memcmp(hash, abc_sha256, 32) == 0,
          "tox_hash(\"abc\") is not SHA-256");

    /* toxencryptsave. */
    const uint8_t *plain = (const uint8_t *)"the savedata";
    const uint8_t *pass = (const uint8_t *)"correct horse";
    uint8_t cipher[12 + TOX_PASS_ENCRYPTION_EXTRA_LENGTH], back[12];
    Tox_Err_Encryption eerr;
    Tox_Err_Decryption xerr;
    CHECK("pass_encrypt", tox_pass_encrypt(plain, 12, pass, 13, cipher, &eerr) && eerr == TOX_ERR_ENCRYPTION_OK &&
          tox_is_data_encrypted(cipher) && !tox_is_data_encrypted((const uint8_t *)"not encrypted data......"),
          "error %d", (int)eerr);
    CHECK("pass_decrypt", tox_pass_decrypt(cipher, sizeof(cipher), pass, 13, back, &xerr) &&
          memcmp(back, plain, 12) == 0, "error %d", (int)xerr);
    tox_pass_decrypt(cipher, sizeof(cipher), (const uint8_t *)"wrong", 5, back, &xerr);
    CHECK("pass_decrypt_wrong", xerr == TOX_ERR_DECRYPTION_FAILED, "error %d", (int)xerr);
    uint8_t salt[TOX_PASS_SALT_LENGTH];
    Tox_Err_Get_Salt serr;
    Tox_Err_Key_Derivation kderr;
    CHECK("get_salt", tox_get_salt(cipher, salt, &serr) && serr == TOX_ERR_GET_SALT_OK, "error %d", (int)serr);
    Tox_Pass_Key *key = tox_pass_key_derive_with_salt(pass, 13, salt, &kderr);
    CHECK("pass_key_decrypt", key != NULL && tox_pass_key_decrypt(key, cipher, sizeof(cipher), back, &xerr) &&
          memcmp(back, plain, 12) == 0, "error %d / %d", (int)kderr, (int)xerr);
    uint8_t cipher2[12 + TOX_PASS_ENCRYPTION_EXTRA_LENGTH];
    CHECK("pass_key_encrypt", key != NULL && tox_pass_key_encrypt(key, plain, 12, cipher2, &eerr) &&
          tox_pass_decrypt(cipher2, sizeof(cipher2), pass, 13, back, &xerr) && memcmp(back, plain, 12) == 0,
          "error %d / %d", (int)eerr, (int)xerr);
    tox_pass_key_free(key);

    /* Conferences. */
    Tox_Err_Conference_New cnerr;
    uint32_t conf = tox_conference_new(tox, &cnerr);
    CHECK("conference_new", cnerr == TOX_ERR_CONFERENCE_NEW_OK && tox_conference_get_chatlist_size(tox) == 1,
          "error %d", (int)cnerr);
    if (cnerr == TOX_ERR_CONFERENCE_NEW_OK) {
        Tox_Err_Conference_Title terr;
        Tox_Err_Conference_Get_Type yerr;
        tox_conference_set_title(tox, conf, (const uint8_t *)"room", 4, &terr);
        uint8_t title[8];
        CHECK("conference_title", terr == TOX_ERR_CONFERENCE_TITLE_OK &&
              tox_conference_get_title_size(tox, conf, &terr) == 4 && tox_conference_get_title(tox, conf, title, &terr) &&
              memcmp(title, "room", 4) == 0, "error %d", (int)terr);
        CHECK("conference_type", tox_conference_get_type(tox, conf, &yerr) == TOX_CONFERENCE_TYPE_TEXT,
              "error %d", (int)yerr);
        Tox_Err_Conference_Delete cderr;
        CHECK("conference_delete", tox_conference_delete(tox, conf, &cderr) &&
              tox_conference_get_chatlist_size(tox) == 0, "error %d", (int)cderr);
    }

    /* ToxAV on top of the Tox. */
    Toxav_Err_New averr;
    ToxAV *av = toxav_new(tox, &averr);
    CHECK("toxav_new", av != NULL && averr == TOXAV_ERR_NEW_OK && toxav_get_tox(av) == tox, "error %d",
          (int)averr);
    if (av != NULL) {
        CHECK("toxav_iteration_interval", toxav_iteration_interval(av) > 0, "%u", toxav_iteration_interval(av));
        toxav_iterate(av);
        toxav_kill(av);
    }

    /* The events API on an idle Tox. */
    tox_events_init(tox);
    Tox_Err_Events_Iterate everr;
    Tox_Events *events = tox_events_iterate(tox, true, &everr);
    CHECK("events_iterate", everr == TOX_ERR_EVENTS_ITERATE_OK, "error %d", (int)everr);
    tox_events_free(events);

    tox_kill(tox);
    tox_kill(other);
    if (selftest_failures > 0) {
        fprintf(stderr, "FAIL %d selftest checks failed\n", selftest_failures);
        return 1;
    }
    say("OK");
    return 0;
}
