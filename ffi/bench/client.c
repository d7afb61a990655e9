/* ffi-bench's client: one C program on tox.h alone, run against either libtoxcore.so.2
 * (rustox's, from target/release, or Debian's c-toxcore 0.2.18) by LD_LIBRARY_PATH, so the
 * same client code measures both libraries (auto_tests/src/bin/ffi_bench.rs drives it).
 *
 *   cc -O2 $(pkg-config --cflags toxcore) -I../../testkit/c client.c -o client -ltoxcore
 *
 * usage: client [options]
 *   --port P                    UDP port (start = end = P); 0: the library's default range
 *   --bootstrap HOST PORT KEY   a DHT node (repeatable); KEY is its DHT key in hex
 *   --add TOXID                 send a friend request to TOXID
 *   --accept                    accept every friend request
 *   --send-file SIZE_MIB        once the friend is online, send it a SIZE_MIB MiB file whose
 *                               bytes are computed from their position (no file, no buffer)
 *   --recv-file                 accept offered files and check every chunk against the same
 *                               bytes; mismatching bytes are counted (must be 0)
 *   --idle SECS                 after the friend is online and the file (if any) is done,
 *                               wait --settle seconds, then measure SECS seconds of idling
 *   --settle SECS               default 5
 *   --linger SECS               keep iterating this long after the last phase (default 10),
 *                               so the peer's phases end with a live friend; then exit 0
 *   --timeout SECS              give up (exit 2) after this long in total (default 3600)
 *   --lan                       LAN discovery on (off by default: the benchmark finds its
 *                               friend through the DHT node it is given)
 *   --ipv4                      IPv6 off (on by default, as in tox_options_default)
 *
 * The main loop is what real clients do: tox_iterate, then sleep tox_iteration_interval()
 * milliseconds (not at all when it says 0).
 *
 * stdout, one line each, flushed; `NAME key=value ...`; t= is CLOCK_MONOTONIC in seconds
 * (one clock for every process on the machine, so the driver can subtract the peer's
 * times); cpu= is this process's user + system CPU seconds (getrusage, all threads); vcsw=
 * and ivcsw= its voluntary and involuntary context switches (ru_nvcsw, ru_nivcsw):
 *   PATTERN gen_s_per_gib=X check_s_per_gib=Y   what computing / checking the file's bytes
 *                                                costs this client alone (measured at start)
 *   START t=T
 *   LIB path=PATH version=MAJOR.MINOR.PATCH      the libtoxcore actually loaded (dladdr)
 *   TOXID hex / DHTKEY hex / PORT n
 *   SELF status=S t=T                            self connection status changed
 *   REQUEST t=T                                  a friend request arrived
 *   FRIEND_ONLINE friend=N status=S t=T          the friend's first connection
 *   FRIEND_STATUS friend=N status=S t=T          every later change
 *   FILE_START role=send|recv size=B t=T cpu=C vcsw=V ivcsw=I
 *   PROGRESS role=... bytes=B t=T                every 10 s during the file
 *   FILE_DONE role=... bytes=B t=T cpu=C vcsw=V ivcsw=I mismatches=M gaps=G ok=1|0
 *   FILE_STATS role=... iterations=N zero_intervals=Z interval_ms_sum=S events=E
 *              max_events_per_iteration=M iterations_with_events=W interval_hist=a,b,c,d,e
 *              (intervals 0 / 1 / 2-4 / 5-49 / 50+ ms during the file)
 *   IDLE secs=S cpu=C vcsw=V ivcsw=I iterations=N rss_kib=K
 *   END t=T
 * Errors go to stderr; exit 1 on a bad argument or failed call, 2 on --timeout.
 */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include <time.h>
#include <tox/tox.h>
#include "testkit.h"

#define MAX_BOOT 8
#define CHUNK_MAX 65536

/* ---- the file's bytes ---------------------------------------------------------------- */

/* byte(p) = table[p % TABLE] ^ key(p / TABLE): a table of pseudo-random bytes whose length
 * is prime (no chunk size divides it) and a key per table-length block, so a chunk put at
 * the wrong position differs from what belongs there. Computing a chunk is a copy and an
 * XOR, a fraction of a second per GiB. */
#define TABLE 1048573u
static uint8_t table[TABLE];

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void table_init(void) {
    uint64_t s = 0x70786f74ull; /* fixed: both processes compute the same file */
    for (uint32_t i = 0; i < TABLE; i += 8) {
        uint64_t v = splitmix(&s);
        for (uint32_t j = 0; j < 8 && i + j < TABLE; ++j) table[i + j] = (uint8_t)(v >> (8 * j));
    }
}

static uint8_t block_key(uint64_t block) {
    uint64_t s = block;
    return (uint8_t)(splitmix(&s) >> 56) | 1; /* never 0: block 1 is not block 0 */
}

static void fill(uint64_t position, uint8_t *out, size_t length) {
    while (length > 0) {
        uint64_t block = position / TABLE;
        uint32_t off = (uint32_t)(position % TABLE);
        size_t n = TABLE - off;
        if (n > length) n = length;
        uint8_t key = block_key(block);
        uint64_t key8 = key * 0x0101010101010101ull;
        const uint8_t *src = table + off;
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            uint64_t w;
            memcpy(&w, src + i, 8);
            w ^= key8;
            memcpy(out + i, &w, 8);
        }
        for (; i < n; ++i) out[i] = src[i] ^ key;
        out += n;
        position += n;
        length -= n;
    }
}

/* Bytes of `data` that differ from the file's at `position`. */
static uint64_t mismatches_at(uint64_t position, const uint8_t *data, size_t length) {
    static uint8_t expected[CHUNK_MAX];
    uint64_t bad = 0;
    while (length > 0) {
        size_t n = length < CHUNK_MAX ? length : CHUNK_MAX;
        fill(position, expected, n);
        if (memcmp(expected, data, n) != 0)
            for (size_t i = 0; i < n; ++i) bad += expected[i] != data[i];
        position += n;
        data += n;
        length -= n;
    }
    return bad;
}

/* ---- clocks and usage ---------------------------------------------------------------- */

static double mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct usage {
    double cpu;
    long vcsw, ivcsw;
};

static struct usage usage_now(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    struct usage u = {
        ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
        ru.ru_nvcsw, ru.ru_nivcsw};
    return u;
}

static double process_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static long rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
    fclose(f);
    return kib;
}

static void sleep_ms(uint32_t ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* ---- state --------------------------------------------------------------------------- */

static bool accept_requests;
static uint64_t send_size; /* 0: no file to send */
static uint64_t recv_size; /* the offered file's */
static bool recv_file;
static bool online;
static uint32_t friend_number = UINT32_MAX;

/* The file phase. */
static bool file_started, file_done;
static uint64_t file_bytes, file_mismatches, file_gaps, next_position;
static uint32_t file_number = UINT32_MAX;
static uint64_t send_chunk_errors;
static uint8_t chunk_buf[CHUNK_MAX];

/* Per-iteration statistics during the file. */
static uint64_t it_count, it_zero, it_ms_sum, it_events, it_max_events, it_with_events;
static uint64_t it_hist[5];
static uint64_t events_this_iteration;

static void file_start(const char *role, uint64_t size) {
    struct usage u = usage_now();
    file_started = true;
    say("FILE_START role=%s size=%" PRIu64 " t=%.6f cpu=%.6f vcsw=%ld ivcsw=%ld", role, size, mono(), u.cpu,
        u.vcsw, u.ivcsw);
}

static void file_finish(const char *role, uint64_t expected) {
    struct usage u = usage_now();
    double t = mono();
    file_done = true;
    bool ok = file_bytes == expected && file_mismatches == 0 && file_gaps == 0 && send_chunk_errors == 0;
    say("FILE_DONE role=%s bytes=%" PRIu64 " t=%.6f cpu=%.6f vcsw=%ld ivcsw=%ld mismatches=%" PRIu64
        " gaps=%" PRIu64 " ok=%d",
        role, file_bytes, t, u.cpu, u.vcsw, u.ivcsw, file_mismatches, file_gaps + send_chunk_errors, ok ? 1 : 0);
    say("FILE_STATS role=%s iterations=%" PRIu64 " zero_intervals=%" PRIu64 " interval_ms_sum=%" PRIu64
        " events=%" PRIu64 " max_events_per_iteration=%" PRIu64 " iterations_with_events=%" PRIu64
        " interval_hist=%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64,
        role, it_count, it_zero, it_ms_sum, it_events, it_max_events, it_with_events, it_hist[0], it_hist[1],
        it_hist[2], it_hist[3], it_hist[4]);
}

/* ---- callbacks ----------------------------------------------------------------------- */

static void on_self(Tox *tox, Tox_Connection status, void *ud) {
    (void)tox;
    (void)ud;
    say("SELF status=%d t=%.6f", (int)status, mono());
}

static void on_request(Tox *tox, const uint8_t *pk, const uint8_t *msg, size_t len, void *ud) {
    (void)msg;
    (void)len;
    (void)ud;
    say("REQUEST t=%.6f", mono());
    if (!accept_requests) return;
    Tox_Err_Friend_Add err;
    uint32_t n = tox_friend_add_norequest(tox, pk, &err);
    if (n == UINT32_MAX) fprintf(stderr, "tox_friend_add_norequest: error %d\n", (int)err);
    else if (friend_number == UINT32_MAX) friend_number = n;
}

static void on_friend(Tox *tox, uint32_t n, Tox_Connection status, void *ud) {
    (void)tox;
    (void)ud;
    if (status != TOX_CONNECTION_NONE && !online) {
        online = true;
        friend_number = n;
        say("FRIEND_ONLINE friend=%" PRIu32 " status=%d t=%.6f", n, (int)status, mono());
    } else {
        say("FRIEND_STATUS friend=%" PRIu32 " status=%d t=%.6f", n, (int)status, mono());
    }
}

static void on_chunk_request(Tox *tox, uint32_t friend, uint32_t file, uint64_t position, size_t length,
                             void *ud) {
    (void)ud;
    ++events_this_iteration;
    if (file != file_number || friend != friend_number) return;
    if (length == 0) {
        if (!file_done) file_finish("send", send_size);
        return;
    }
    if (length > CHUNK_MAX) length = CHUNK_MAX;
    fill(position, chunk_buf, length);
    Tox_Err_File_Send_Chunk err;
    if (!tox_file_send_chunk(tox, friend, file, position, chunk_buf, length, &err)) {
        if (send_chunk_errors++ < 10)
            fprintf(stderr, "tox_file_send_chunk(%" PRIu64 ", %zu): error %d\n", position, length, (int)err);
        return;
    }
    file_bytes += length;
}

static void on_file_recv(Tox *tox, uint32_t friend, uint32_t file, uint32_t kind, uint64_t size,
                         const uint8_t *name, size_t name_len, void *ud) {
    (void)name;
    (void)name_len;
    (void)ud;
    Tox_Err_File_Control err;
    if (kind != TOX_FILE_KIND_DATA || !recv_file || file_started) {
        tox_file_control(tox, friend, file, TOX_FILE_CONTROL_CANCEL, &err);
        return;
    }
    file_number = file;
    recv_size = size;
    file_start("recv", size);
    if (!tox_file_control(tox, friend, file, TOX_FILE_CONTROL_RESUME, &err))
        fprintf(stderr, "tox_file_control(RESUME): error %d\n", (int)err);
}

static void on_recv_chunk(Tox *tox, uint32_t friend, uint32_t file, uint64_t position, const uint8_t *data,
                          size_t length, void *ud) {
    (void)tox;
    (void)friend;
    (void)ud;
    ++events_this_iteration;
    if (file != file_number || file_done) return;
    if (length == 0) {
        file_finish("recv", recv_size);
        return;
    }
    if (position != next_position) ++file_gaps;
    file_mismatches += mismatches_at(position, data, length);
    file_bytes += length;
    next_position = position + length;
}

static void on_file_control(Tox *tox, uint32_t friend, uint32_t file, Tox_File_Control control, void *ud) {
    (void)tox;
    (void)friend;
    (void)ud;
    say("FILE_CONTROL file=%" PRIu32 " control=%d t=%.6f", file, (int)control, mono());
}

/* ---- main ---------------------------------------------------------------------------- */

static void usage_exit(const char *why) {
    fprintf(stderr, "client: %s (see the comment at the top of client.c)\n", why);
    exit(1);
}

static double arg_num(int argc, char **argv, int i) {
    if (i >= argc) usage_exit("missing value");
    char *end;
    double v = strtod(argv[i], &end);
    if (*end || v < 0) usage_exit("bad number");
    return v;
}

int main(int argc, char **argv) {
    uint16_t port = 0;
    const char *boot_host[MAX_BOOT];
    uint16_t boot_port[MAX_BOOT];
    uint8_t boot_key[MAX_BOOT][TOX_PUBLIC_KEY_SIZE];
    int nboot = 0;
    const char *add = NULL;
    double idle = -1, settle = 5, linger = 10, timeout = 3600;
    bool lan = false, ipv6 = true;

    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "--port")) port = (uint16_t)arg_num(argc, argv, ++i);
        else if (!strcmp(a, "--bootstrap")) {
            if (i + 3 >= argc || nboot == MAX_BOOT) usage_exit("--bootstrap HOST PORT KEY");
            boot_host[nboot] = argv[++i];
            boot_port[nboot] = (uint16_t)arg_num(argc, argv, ++i);
            if (unhex(argv[++i], boot_key[nboot], TOX_PUBLIC_KEY_SIZE)) usage_exit("bad DHT key");
            ++nboot;
        } else if (!strcmp(a, "--add")) {
            if (++i >= argc) usage_exit("--add TOXID");
            add = argv[i];
        } else if (!strcmp(a, "--accept")) accept_requests = true;
        else if (!strcmp(a, "--send-file")) send_size = (uint64_t)(arg_num(argc, argv, ++i) * 1048576.0);
        else if (!strcmp(a, "--recv-file")) recv_file = true;
        else if (!strcmp(a, "--idle")) idle = arg_num(argc, argv, ++i);
        else if (!strcmp(a, "--settle")) settle = arg_num(argc, argv, ++i);
        else if (!strcmp(a, "--linger")) linger = arg_num(argc, argv, ++i);
        else if (!strcmp(a, "--timeout")) timeout = arg_num(argc, argv, ++i);
        else if (!strcmp(a, "--lan")) lan = true;
        else if (!strcmp(a, "--ipv4")) ipv6 = false;
        else usage_exit(a);
    }

    /* What computing and checking the file's bytes costs this client alone (64 MiB). */
    table_init();
    {
        const uint64_t n = 64u << 20;
        double c0 = process_cpu();
        for (uint64_t p = 0; p < n; p += 1371) fill(p, chunk_buf, 1371);
        double c1 = process_cpu();
        uint64_t bad = 0;
        for (uint64_t p = 0; p < n; p += 1371) {
            fill(p, chunk_buf, 1371);
            bad += mismatches_at(p, chunk_buf, 1371);
        }
        double c2 = process_cpu();
        if (bad) usage_exit("the pattern does not check against itself");
        /* The check pass fills once for the chunk and once inside mismatches_at: count one. */
        double gen = (c1 - c0) * 16, check = (c2 - c1 - (c1 - c0)) * 16;
        say("PATTERN gen_s_per_gib=%.3f check_s_per_gib=%.3f", gen, check);
    }
    /* Without a file the table's megabyte is given back, so that the idle RSS is the
     * library's and a real client's, not this benchmark's. */
    if (send_size == 0 && !recv_file) {
        uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        uintptr_t lo = ((uintptr_t)table + page - 1) / page * page;
        uintptr_t hi = ((uintptr_t)table + TABLE) / page * page;
        if (hi > lo) madvise((void *)lo, hi - lo, MADV_DONTNEED);
    }

    double start = mono();
    say("START t=%.6f", start);

    Dl_info info;
    const char *lib = dladdr((void *)tox_new, &info) && info.dli_fname ? info.dli_fname : "?";
    say("LIB path=%s version=%u.%u.%u", lib, tox_version_major(), tox_version_minor(), tox_version_patch());

    Tox_Err_Options_New oerr;
    struct Tox_Options *opts = tox_options_new(&oerr);
    if (!opts) usage_exit("tox_options_new failed");
    tox_options_set_local_discovery_enabled(opts, lan);
    tox_options_set_ipv6_enabled(opts, ipv6);
    tox_options_set_start_port(opts, port);
    tox_options_set_end_port(opts, port);
    Tox_Err_New nerr;
    Tox *tox = tox_new(opts, &nerr);
    tox_options_free(opts);
    if (!tox) {
        fprintf(stderr, "tox_new: error %d\n", (int)nerr);
        return 1;
    }

    uint8_t addr[TOX_ADDRESS_SIZE], dht[TOX_PUBLIC_KEY_SIZE];
    char h[2 * TOX_ADDRESS_SIZE + 1];
    tox_self_get_address(tox, addr);
    hex(addr, TOX_ADDRESS_SIZE, h);
    say("TOXID %s", h);
    tox_self_get_dht_id(tox, dht);
    hex(dht, TOX_PUBLIC_KEY_SIZE, h);
    say("DHTKEY %s", h);
    Tox_Err_Get_Port perr;
    say("PORT %u", (unsigned)tox_self_get_udp_port(tox, &perr));

    tox_callback_self_connection_status(tox, on_self);
    tox_callback_friend_request(tox, on_request);
    tox_callback_friend_connection_status(tox, on_friend);
    tox_callback_file_chunk_request(tox, on_chunk_request);
    tox_callback_file_recv(tox, on_file_recv);
    tox_callback_file_recv_chunk(tox, on_recv_chunk);
    tox_callback_file_recv_control(tox, on_file_control);

    for (int i = 0; i < nboot; ++i) {
        Tox_Err_Bootstrap berr;
        if (!tox_bootstrap(tox, boot_host[i], boot_port[i], boot_key[i], &berr)) {
            fprintf(stderr, "tox_bootstrap(%s:%u): error %d\n", boot_host[i], boot_port[i], (int)berr);
            return 1;
        }
    }
    if (add) {
        uint8_t id[TOX_ADDRESS_SIZE];
        if (unhex(add, id, TOX_ADDRESS_SIZE)) usage_exit("bad Tox ID");
        Tox_Err_Friend_Add ferr;
        static const uint8_t msg[] = "ffi-bench";
        friend_number = tox_friend_add(tox, id, msg, sizeof msg - 1, &ferr);
        if (friend_number == UINT32_MAX) {
            fprintf(stderr, "tox_friend_add: error %d\n", (int)ferr);
            return 1;
        }
    }

    bool wants_file = send_size > 0 || recv_file;
    double settle_end = -1, idle_end = -1, linger_end = -1;
    struct usage idle_u0 = {0, 0, 0};
    double next_progress = 0;
    uint64_t idle_iterations = 0;
    for (;;) {
        events_this_iteration = 0;
        tox_iterate(tox, NULL);
        uint32_t ms = tox_iteration_interval(tox);
        double now = mono();

        if (file_started && !file_done) {
            ++it_count;
            it_events += events_this_iteration;
            if (events_this_iteration) ++it_with_events;
            if (events_this_iteration > it_max_events) it_max_events = events_this_iteration;
            it_ms_sum += ms;
            if (ms == 0) ++it_zero;
            it_hist[ms == 0 ? 0 : ms == 1 ? 1 : ms < 5 ? 2 : ms < 50 ? 3 : 4]++;
        }
        if (settle_end >= 0 && idle_end >= 0 && linger_end < 0) ++idle_iterations;
        if (file_started && !file_done && now >= next_progress) {
            say("PROGRESS role=%s bytes=%" PRIu64 " t=%.6f", send_size > 0 ? "send" : "recv", file_bytes, now);
            next_progress = now + 10;
        }

        /* Phases: the file once the friend is online, then settle, idle, linger. */
        if (online && send_size > 0 && !file_started) {
            Tox_Err_File_Send serr;
            static const uint8_t name[] = "ffi-bench.bin";
            file_start("send", send_size);
            file_number = tox_file_send(tox, friend_number, TOX_FILE_KIND_DATA, send_size, NULL, name,
                                        sizeof name - 1, &serr);
            if (file_number == UINT32_MAX) {
                fprintf(stderr, "tox_file_send: error %d\n", (int)serr);
                return 1;
            }
        }
        bool phase_file_over = !wants_file || file_done;
        if (online && phase_file_over && settle_end < 0) {
            settle_end = now + (idle >= 0 ? settle : 0);
        }
        if (settle_end >= 0 && now >= settle_end && idle_end < 0) {
            if (idle >= 0) {
                idle_u0 = usage_now();
                idle_end = now + idle;
            } else {
                idle_end = now;
            }
        }
        if (idle_end >= 0 && now >= idle_end && linger_end < 0) {
            if (idle >= 0) {
                struct usage u = usage_now();
                say("IDLE secs=%.3f cpu=%.6f vcsw=%ld ivcsw=%ld iterations=%" PRIu64 " rss_kib=%ld",
                    now - (idle_end - idle), u.cpu - idle_u0.cpu, u.vcsw - idle_u0.vcsw, u.ivcsw - idle_u0.ivcsw,
                    idle_iterations, rss_kib());
            }
            linger_end = now + linger;
        }
        if (linger_end >= 0 && now >= linger_end) break;
        if (now - start > timeout) {
            fprintf(stderr, "client: timed out after %.0f s (online %d, file started %d done %d, %" PRIu64
                            " bytes)\n",
                    timeout, online, file_started, file_done, file_bytes);
            say("TIMEOUT t=%.6f", now);
            tox_kill(tox);
            return 2;
        }

        if (ms > 0) sleep_ms(ms);
    }
    say("END t=%.6f", mono());
    tox_kill(tox);
    return 0;
}
