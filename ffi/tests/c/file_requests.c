/*
 * file_requests.c: the exact sequence of chunk requests a callback-driven client sees,
 * written against c-toxcore 0.2.18's tox.h.
 *
 * Two Tox instances in one process, on one library, befriend each other over loopback
 * and move files. The sender answers every `tox_file_chunk_request_cb` from the callback,
 * as qTox, toxic and uTox do; the receiver checks every byte. Scenarios:
 *   stream_seek   a file of unknown size (UINT64_MAX); the receiver seeks to 1337 before
 *                 accepting; the sender ends the stream with a short chunk at 102400;
 *   stream_empty  a file of unknown size ended by a zero-length chunk at 5 * 1371;
 *   known_size    a file of 10 * 1371 + 100 bytes;
 *   paused        a file of 4000 * 1371 bytes the receiver pauses for a second once 10
 *                 chunks have arrived, then resumes (the sender must still have been
 *                 asking for chunks when the PAUSE reached it).
 * For each, the requests must start at the seek position, follow each other without a
 * hole or overlap, be 1371 bytes long except a known size's last, stop at the end, and
 * end with exactly one zero-length request at the end position; nothing comes after it,
 * and nothing comes between the sender hearing PAUSE and hearing RESUME.
 * These are c-toxcore's rules (Messenger.c, `do_all_filetransfers`, `send_file_data`).
 *
 * The same source is built against Debian's libtoxcore.so.2 and against rustox's
 * (ffi/tests/file_requests.rs), which also compares the two sequences line by line.
 *
 * Usage: file_requests <base udp port>. Output: `LIB <path>`, one `REQ <scenario> <pos>
 * <len>` line per request, `RECV_END <scenario> <pos>`, `PASS <scenario>`, then `OK`.
 * Failures: `FAIL <reason>` on stderr and exit 1.
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
#include <sys/time.h>
#include <unistd.h>

#include <tox/tox.h>

#define CHUNK 1371
#define MAX_REQUESTS 8192

struct scenario {
    const char *name;
    uint64_t size;      /* announced: UINT64_MAX for a stream */
    uint64_t seek;      /* where the receiver asks the sender to start */
    uint64_t end;       /* where the sender's data ends */
    uint64_t pause_at;  /* the receiver pauses once a chunk at or past this arrives; 0: never */
};

struct request {
    uint64_t position;
    size_t length;
};

static const struct scenario *cur;
static struct request requests[MAX_REQUESTS];
static int n_requests;
static bool sent_done, recv_done;
static uint64_t recv_next, recv_end;
static uint32_t sending_file;
static uint32_t receiving_file;
static bool sender_paused, receiver_paused, paused_once;
static double resume_at;
static int requests_at_pause;

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL %s: ", cur != NULL ? cur->name : "setup");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static uint8_t byte_at(uint64_t offset)
{
    return (uint8_t)(offset * 31 + 7);
}

static double now_secs(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void on_chunk_request(Tox *tox, uint32_t friend_number, uint32_t file_number, uint64_t position,
                             size_t length, void *user_data)
{
    (void)user_data;
    if (cur == NULL || file_number != sending_file) {
        fail("chunk request for file %u outside a scenario", file_number);
    }
    printf("REQ %s %" PRIu64 " %zu\n", cur->name, position, length);
    fflush(stdout);
    if (n_requests == MAX_REQUESTS) {
        fail("more than %d requests", MAX_REQUESTS);
    }
    requests[n_requests].position = position;
    requests[n_requests].length = length;
    ++n_requests;
    if (sender_paused && length > 0) {
        fail("request (%" PRIu64 ", %zu) while the receiver has the file paused", position, length);
    }
    if (sent_done) {
        fail("request (%" PRIu64 ", %zu) after the zero-length one", position, length);
    }
    if (length == 0) {
        sent_done = true;
        return;
    }
    /* A stream whose data ends on a chunk boundary is ended by a zero-length answer to the
     * request at its end; nothing is asked for past it. */
    bool at_end_of_stream = cur->size == UINT64_MAX && position == cur->end;
    if (position >= cur->end && !at_end_of_stream) {
        fail("request (%" PRIu64 ", %zu) at or past the end %" PRIu64, position, length, cur->end);
    }
    size_t n = length;
    if (cur->end - position < n) {
        n = (size_t)(cur->end - position);
    }
    uint8_t data[CHUNK];
    if (n > sizeof data) {
        fail("request of %zu bytes", length);
    }
    for (size_t i = 0; i < n; ++i) {
        data[i] = byte_at(position + i);
    }
    Tox_Err_File_Send_Chunk err;
    if (!tox_file_send_chunk(tox, friend_number, file_number, position, data, n, &err)) {
        fail("tox_file_send_chunk(%" PRIu64 ", %zu): error %d", position, n, (int)err);
    }
}

static void on_file_recv(Tox *tox, uint32_t friend_number, uint32_t file_number, uint32_t kind,
                         uint64_t file_size, const uint8_t *filename, size_t filename_length, void *user_data)
{
    (void)kind;
    (void)filename;
    (void)filename_length;
    (void)user_data;
    if (cur == NULL || file_size != cur->size) {
        fail("offer of size %" PRIu64 " outside a scenario", file_size);
    }
    Tox_Err_File_Seek serr;
    if (cur->seek > 0 && !tox_file_seek(tox, friend_number, file_number, cur->seek, &serr)) {
        fail("tox_file_seek: error %d", (int)serr);
    }
    recv_next = cur->seek;
    receiving_file = file_number;
    Tox_Err_File_Control cerr;
    if (!tox_file_control(tox, friend_number, file_number, TOX_FILE_CONTROL_RESUME, &cerr)) {
        fail("tox_file_control(RESUME): error %d", (int)cerr);
    }
}

static void on_recv_chunk(Tox *tox, uint32_t friend_number, uint32_t file_number, uint64_t position,
                          const uint8_t *data, size_t length, void *user_data)
{
    (void)tox;
    (void)friend_number;
    (void)file_number;
    (void)user_data;
    if (recv_done) {
        fail("chunk (%" PRIu64 ", %zu) after the zero-length one", position, length);
    }
    if (position != recv_next) {
        fail("received chunk at %" PRIu64 ", expected %" PRIu64, position, recv_next);
    }
    if (length == 0) {
        recv_done = true;
        recv_end = position;
        printf("RECV_END %s %" PRIu64 "\n", cur->name, position);
        fflush(stdout);
        return;
    }
    for (size_t i = 0; i < length; ++i) {
        if (data[i] != byte_at(position + i)) {
            fail("received byte %" PRIu64 " differs", position + i);
        }
    }
    recv_next += length;
    if (cur->pause_at > 0 && !paused_once && position >= cur->pause_at) {
        Tox_Err_File_Control err;
        if (!tox_file_control(tox, friend_number, file_number, TOX_FILE_CONTROL_PAUSE, &err)) {
            fail("tox_file_control(PAUSE): error %d", (int)err);
        }
        paused_once = receiver_paused = true;
        resume_at = now_secs() + 1.0;
    }
}

/* The sender hears the receiver's PAUSE and RESUME. */
static void on_recv_control(Tox *tox, uint32_t friend_number, uint32_t file_number, Tox_File_Control control,
                            void *user_data)
{
    (void)tox;
    (void)friend_number;
    (void)user_data;
    if (cur == NULL || file_number != sending_file) {
        return;
    }
    if (control == TOX_FILE_CONTROL_PAUSE) {
        sender_paused = true;
        requests_at_pause = n_requests;
        printf("PAUSED %s %d\n", cur->name, n_requests);
    } else if (control == TOX_FILE_CONTROL_RESUME && paused_once) {
        sender_paused = false;
        printf("RESUMED %s %d\n", cur->name, n_requests);
    }
    fflush(stdout);
}

static Tox *make_tox(uint16_t port)
{
    struct Tox_Options *o = tox_options_new(NULL);
    tox_options_set_ipv6_enabled(o, false);
    tox_options_set_udp_enabled(o, true);
    tox_options_set_local_discovery_enabled(o, false);
    tox_options_set_start_port(o, port);
    tox_options_set_end_port(o, port);
    Tox_Err_New err;
    Tox *tox = tox_new(o, &err);
    tox_options_free(o);
    if (tox == NULL) {
        fail("tox_new on port %u: error %d", port, (int)err);
    }
    return tox;
}

static void iterate(Tox *a, Tox *b)
{
    tox_iterate(a, NULL);
    tox_iterate(b, NULL);
    uint32_t wait = tox_iteration_interval(a);
    uint32_t wb = tox_iteration_interval(b);
    if (wb < wait) {
        wait = wb;
    }
    if (wait > 5) {
        wait = 5;
    }
    usleep(wait * 1000);
}

/* Each request follows the one before it; every length is a whole chunk except a known
 * size's last; one zero-length request at the end closes the list. */
static void check_requests(void)
{
    const struct scenario *s = cur;
    if (n_requests == 0) {
        fail("no request");
    }
    uint64_t next = s->seek;
    for (int i = 0; i < n_requests - 1; ++i) {
        const struct request *r = &requests[i];
        if (r->position != next) {
            fail("request %d at %" PRIu64 ", expected %" PRIu64, i, r->position, next);
        }
        uint64_t left = s->size - r->position;
        size_t want = left < CHUNK ? (size_t)left : CHUNK;
        if (r->length != want) {
            fail("request %d of %zu bytes, expected %zu", i, r->length, want);
        }
        uint64_t answered = s->end - r->position < r->length ? s->end - r->position : r->length;
        next = r->position + answered;
    }
    const struct request *last = &requests[n_requests - 1];
    if (last->length != 0 || last->position != s->end) {
        fail("last request (%" PRIu64 ", %zu), expected (%" PRIu64 ", 0)", last->position, last->length, s->end);
    }
    if (next != s->end) {
        fail("requests ended at %" PRIu64 ", expected %" PRIu64, next, s->end);
    }
    uint64_t expected = (s->end - s->seek + CHUNK - 1) / CHUNK;
    if (s->size == UINT64_MAX && (s->end - s->seek) % CHUNK == 0) {
        /* The stream's end is answered by a zero-length chunk to one more request. */
        ++expected;
    }
    if ((uint64_t)(n_requests - 1) != expected) {
        fail("%d data requests, expected %" PRIu64, n_requests - 1, expected);
    }
    if (recv_end != s->end) {
        fail("the receiver's file ended at %" PRIu64 ", expected %" PRIu64, recv_end, s->end);
    }
}

static void run(Tox *sender, Tox *receiver, const struct scenario *s)
{
    cur = s;
    n_requests = 0;
    sent_done = recv_done = false;
    sender_paused = receiver_paused = paused_once = false;
    requests_at_pause = 0;
    recv_next = recv_end = 0;
    Tox_Err_File_Send err;
    /* A NULL file id: c-toxcore makes a random one, as every client's file sends. */
    sending_file = tox_file_send(sender, 0, TOX_FILE_KIND_DATA, s->size, NULL, (const uint8_t *)s->name,
                                 strlen(s->name), &err);
    if (sending_file == UINT32_MAX) {
        fail("tox_file_send: error %d", (int)err);
    }
    double deadline = now_secs() + 30;
    while (!(sent_done && recv_done)) {
        if (now_secs() > deadline) {
            fail("not done in 30 s (%d requests, sent %d, received %d)", n_requests, sent_done, recv_done);
        }
        if (receiver_paused && now_secs() >= resume_at) {
            Tox_Err_File_Control cerr;
            if (!tox_file_control(receiver, 0, receiving_file, TOX_FILE_CONTROL_RESUME, &cerr)) {
                fail("tox_file_control(RESUME) after the pause: error %d", (int)cerr);
            }
            receiver_paused = false;
        }
        iterate(sender, receiver);
    }
    if (cur->pause_at > 0 && (!paused_once || requests_at_pause == 0 || requests_at_pause >= n_requests - 1)) {
        fail("the pause did not reach the sender while it was asking for chunks (%d of %d requests)",
             requests_at_pause, n_requests);
    }
    /* Anything raised after the end would come now. */
    double quiet = now_secs() + 0.5;
    while (now_secs() < quiet) {
        iterate(sender, receiver);
    }
    check_requests();
    printf("PASS %s\n", s->name);
    fflush(stdout);
    cur = NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: file_requests <base udp port>\n");
        return 2;
    }
    uint16_t port = (uint16_t)atoi(argv[1]);
    Dl_info info;
    if (dladdr((void *)tox_new, &info) && info.dli_fname != NULL) {
        printf("LIB %s\n", info.dli_fname);
    }
    Tox *a = make_tox(port);
    Tox *b = make_tox(port + 1);
    tox_callback_file_chunk_request(a, on_chunk_request);
    tox_callback_file_recv_control(a, on_recv_control);
    tox_callback_file_recv(b, on_file_recv);
    tox_callback_file_recv_chunk(b, on_recv_chunk);

    uint8_t pk_a[TOX_PUBLIC_KEY_SIZE], pk_b[TOX_PUBLIC_KEY_SIZE], dht_a[TOX_PUBLIC_KEY_SIZE],
            dht_b[TOX_PUBLIC_KEY_SIZE];
    tox_self_get_public_key(a, pk_a);
    tox_self_get_public_key(b, pk_b);
    tox_self_get_dht_id(a, dht_a);
    tox_self_get_dht_id(b, dht_b);
    Tox_Err_Friend_Add ferr;
    if (tox_friend_add_norequest(a, pk_b, &ferr) != 0 || tox_friend_add_norequest(b, pk_a, &ferr) != 0) {
        fail("tox_friend_add_norequest: error %d", (int)ferr);
    }
    Tox_Err_Bootstrap berr;
    if (!tox_bootstrap(a, "127.0.0.1", port + 1, dht_b, &berr) ||
            !tox_bootstrap(b, "127.0.0.1", port, dht_a, &berr)) {
        fail("tox_bootstrap: error %d", (int)berr);
    }
    double deadline = now_secs() + 30;
    while (tox_friend_get_connection_status(a, 0, NULL) == TOX_CONNECTION_NONE ||
            tox_friend_get_connection_status(b, 0, NULL) == TOX_CONNECTION_NONE) {
        if (now_secs() > deadline) {
            fail("the two instances did not connect in 30 s");
        }
        iterate(a, b);
    }

    static const struct scenario scenarios[] = {
        {"stream_seek", UINT64_MAX, 1337, 102400, 0},
        {"stream_empty", UINT64_MAX, 0, 5 * CHUNK, 0},
        {"known_size", 10 * CHUNK + 100, 0, 10 * CHUNK + 100, 0},
        {"paused", 4000 * CHUNK, 0, 4000 * CHUNK, 10 * CHUNK},
    };
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; ++i) {
        run(a, b, &scenarios[i]);
    }
    tox_kill(a);
    tox_kill(b);
    printf("OK\n");
    return 0;
}
