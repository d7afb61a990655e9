/* What the C test programs share: hex in and out of key bytes, a monotonic clock, and
 * flushed output lines.
 *
 * Included as "testkit.h": from testkit/c through -I (rustox_testkit::c::HEADER_DIR), or
 * written beside a source compiled elsewhere (rustox_testkit::c::HEADER). */
#ifndef RUSTOX_TESTKIT_H
#define RUSTOX_TESTKIT_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* `n` bytes as 2n upper-case hex digits and a NUL: `out` holds 2n + 1 chars. */
static inline void hex(const uint8_t *b, size_t n, char *out) {
    for (size_t i = 0; i < n; ++i) sprintf(out + 2 * i, "%02X", b[i]);
    out[2 * n] = 0;
}

/* Exactly 2n hex digits into `n` bytes; -1 for any other length or a non-digit. */
static inline int unhex(const char *s, uint8_t *out, size_t n) {
    if (strlen(s) != 2 * n) return -1;
    for (size_t i = 0; i < n; ++i) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1) return -1;
        out[i] = (uint8_t)v;
    }
    return 0;
}

/* Seconds on the monotonic clock. */
static inline double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One line of output: printf's format, a newline, flushed (the test reads it at once). */
static inline void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void say(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

#endif
