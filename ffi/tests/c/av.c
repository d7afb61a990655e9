/*
 * av.c: toxav.h as a C client sees it, written against c-toxcore 0.2.18's toxav.h.
 *
 * Two Tox instances in one process on loopback, alice and bob, friends, each with a ToxAV
 * session. Every toxav_* function is called: the session's life (NULL, MULTIPLE,
 * get_tox, intervals), the error codes of every call function before any call (unknown,
 * offline and idle friends, invalid bit rates, NULL frames, in toxav.c's order), then
 * calls: alice calls bob with audio, bob answers; each sends a tone (alice 440 Hz, bob
 * 660 Hz, generated here) which the other measures by counting zero crossings; bit rates
 * change mid-call (0 turns audio off, the peer sees it); mute, pause, hide and their
 * undos with their invalid transitions; bob hangs up. Then bob calls alice with audio and
 * video; alice answers; bob sends a test pattern (four grey bars) which alice checks,
 * while alice iterates only audio for a while (no video frame may arrive) and then video;
 * alice hangs up. Then a rejected call, and a session killed during a call. Finally group
 * audio on an A/V conference alice creates and bob joins from her invite, with tones both
 * ways and every group function's failures.
 *
 * Output: `LIB <path>`, then phases (`PHASE <name>`), each followed by the callbacks each
 * instance saw in it (`CB <who> ...`, sorted, each distinct line once) and the answers of
 * the calls made (`Q ...`, in call order). No timing, key or address is printed: frame
 * counts are reported as "some" or "none", tones as their frequency to 10 Hz. The same
 * source is built against Debian's libtoxcore.so.2 and rustox's; ffi/tests/av.rs
 * compares the two outputs line by line.
 *
 * Usage: av <port a> <port b>. Ends with `OK`; failures print `FAIL <reason>` on stderr
 * and exit 1.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tox/tox.h>
#include <tox/toxav.h>

#include "testkit.h"

#define MAX_LINES 128
#define LINE 200
#define RATE 48000
#define FRAME 960 /* 20 ms at 48 kHz */
#define MAX_SAMPLES (RATE * 8)
#define W 160
#define H 120

/* What one instance received of a kind of media in a phase. */
struct received {
    int16_t samples[MAX_SAMPLES];
    size_t n;
    int frames;
    int bad_format; /* frames with other channels or rate than sent */
    int video_frames;
    int pattern_ok;
    int pattern_bad;
    int strides_bad;
    bool wrong_context; /* a callback got another Tox/ToxAV or userdata */
};

struct who {
    const char *label;
    Tox *tox;
    ToxAV *av;
    uint16_t port;
    uint8_t pk[TOX_PUBLIC_KEY_SIZE];
    char lines[MAX_LINES][LINE];
    int n_lines;
    bool called;     /* a call came in this phase */
    uint32_t state;  /* last call state */
    bool got_state;
    bool finished;   /* FINISHED or ERROR came */
    struct received rx;
    /* group */
    uint8_t cookie[64];
    size_t cookie_len;
    int invite_type;
    bool invited;
    struct received grx;
    int group_peer_bad;
};

static struct who people[2];
static struct who *alice = &people[0], *bob = &people[1];
static bool video_iterate_off; /* alice iterates audio only */

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static void note(struct who *w, const char *fmt, ...)
{
    char line[LINE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    for (int i = 0; i < w->n_lines; ++i) {
        if (strcmp(w->lines[i], line) == 0) {
            return;
        }
    }
    if (w->n_lines == MAX_LINES) {
        fail("%s: too many callback lines", w->label);
    }
    strcpy(w->lines[w->n_lines++], line);
}

static struct who *of_av(ToxAV *av)
{
    for (int i = 0; i < 2; ++i) {
        if (people[i].av == av) {
            return &people[i];
        }
    }
    fail("a callback with an unknown ToxAV");
    return NULL;
}

static void on_call(ToxAV *av, uint32_t friend_number, bool audio, bool video, void *user_data)
{
    struct who *w = user_data;
    if (of_av(av) != w) {
        w->rx.wrong_context = true;
    }
    w->called = true;
    note(w, "call friend=%u audio=%d video=%d", friend_number, audio, video);
}

static void on_state(ToxAV *av, uint32_t friend_number, uint32_t state, void *user_data)
{
    struct who *w = user_data;
    if (of_av(av) != w) {
        w->rx.wrong_context = true;
    }
    w->state = state;
    w->got_state = true;
    if (state == TOXAV_FRIEND_CALL_STATE_FINISHED || state == TOXAV_FRIEND_CALL_STATE_ERROR) {
        w->finished = true;
    }
    note(w, "state friend=%u state=%u", friend_number, state);
}

static void on_audio_bit_rate(ToxAV *av, uint32_t friend_number, uint32_t bit_rate, void *user_data)
{
    /* Suggestions depend on measured loss: only that one came is not timing-free either. */
    (void)av;
    (void)friend_number;
    (void)bit_rate;
    (void)user_data;
}

static void on_video_bit_rate(ToxAV *av, uint32_t friend_number, uint32_t bit_rate, void *user_data)
{
    (void)av;
    (void)friend_number;
    (void)bit_rate;
    (void)user_data;
}

static void keep_samples(struct received *r, const int16_t *pcm, size_t count, uint8_t channels)
{
    for (size_t i = 0; i < count && r->n < MAX_SAMPLES; ++i) {
        r->samples[r->n++] = pcm[i * channels];
    }
}

static void on_audio(ToxAV *av, uint32_t friend_number, const int16_t *pcm, size_t sample_count, uint8_t channels,
                     uint32_t sampling_rate, void *user_data)
{
    struct who *w = user_data;
    if (of_av(av) != w) {
        w->rx.wrong_context = true;
    }
    (void)friend_number;
    ++w->rx.frames;
    if (channels != 1 || sampling_rate != RATE) {
        ++w->rx.bad_format;
        return;
    }
    keep_samples(&w->rx, pcm, sample_count, channels);
}

/* The test pattern: four vertical grey bars (Y 20, 80, 140, 200), neutral chroma. */
static uint8_t bar_y(int x, int width)
{
    return (uint8_t)(20 + 60 * (x * 4 / width));
}

static void on_video(ToxAV *av, uint32_t friend_number, uint16_t width, uint16_t height, const uint8_t *y,
                     const uint8_t *u, const uint8_t *v, int32_t ystride, int32_t ustride, int32_t vstride,
                     void *user_data)
{
    struct who *w = user_data;
    if (of_av(av) != w) {
        w->rx.wrong_context = true;
    }
    (void)friend_number;
    if (video_iterate_off && w == alice) {
        fail("a video frame while alice iterated audio only");
    }
    ++w->rx.video_frames;
    note(w, "video size=%ux%u", width, height);
    if (abs(ystride) < width || abs(ustride) < width / 2 || abs(vstride) < width / 2) {
        ++w->rx.strides_bad;
        return;
    }
    /* Each bar's mean luma (its middle half, away from the edges the codec blurs), and
     * the chroma's mean, within 12 of what was sent. */
    bool ok = true;
    for (int bar = 0; bar < 4; ++bar) {
        long sum = 0, n = 0;
        int x0 = bar * width / 4 + width / 16, x1 = (bar + 1) * width / 4 - width / 16;
        for (int row = height / 4; row < 3 * height / 4; ++row) {
            for (int x = x0; x < x1; ++x) {
                sum += y[row * ystride + x];
                ++n;
            }
        }
        long mean = n ? sum / n : 0;
        if (labs(mean - bar_y(x0, width)) > 12) {
            ok = false;
        }
    }
    long cu = 0, cv = 0, n = 0;
    for (int row = 0; row < height / 2; ++row) {
        for (int x = 0; x < width / 2; ++x) {
            cu += u[row * ustride + x];
            cv += v[row * vstride + x];
            ++n;
        }
    }
    if (n == 0 || labs(cu / n - 128) > 12 || labs(cv / n - 128) > 12) {
        ok = false;
    }
    if (ok) {
        ++w->rx.pattern_ok;
    } else {
        ++w->rx.pattern_bad;
    }
}

static void on_group_audio(void *tox, uint32_t groupnumber, uint32_t peernumber, const int16_t *pcm,
                           unsigned int samples, uint8_t channels, unsigned int sample_rate, void *userdata)
{
    struct who *w = userdata;
    if (tox != w->tox) {
        w->grx.wrong_context = true;
    }
    uint8_t pk[TOX_PUBLIC_KEY_SIZE];
    const char *from = "?";
    if (tox_conference_peer_get_public_key(w->tox, groupnumber, peernumber, pk, NULL)) {
        from = memcmp(pk, alice->pk, sizeof pk) == 0 ? "alice" : memcmp(pk, bob->pk, sizeof pk) == 0 ? "bob" : "stranger";
    }
    note(w, "group_audio conference=%u from=%s channels=%u rate=%u", groupnumber, from, channels, sample_rate);
    ++w->grx.frames;
    if (channels != 1 || sample_rate != RATE) {
        ++w->grx.bad_format;
        return;
    }
    keep_samples(&w->grx, pcm, samples, channels);
}

static void on_conference_invite(Tox *tox, uint32_t friend_number, Tox_Conference_Type type, const uint8_t *cookie,
                                 size_t length, void *user_data)
{
    struct who *w = user_data;
    (void)tox;
    if (length <= sizeof w->cookie) {
        memcpy(w->cookie, cookie, length);
        w->cookie_len = length;
    }
    w->invite_type = (int)type;
    w->invited = true;
    note(w, "conference_invite friend=%u type=%d", friend_number, (int)type);
}

static void on_friend_connection(Tox *tox, uint32_t friend_number, Tox_Connection status, void *user_data)
{
    (void)tox;
    (void)friend_number;
    (void)status;
    (void)user_data;
}

static Tox *make_tox(uint16_t port)
{
    struct Tox_Options *o = tox_options_new(NULL);
    tox_options_set_ipv6_enabled(o, false);
    tox_options_set_local_discovery_enabled(o, false);
    tox_options_set_start_port(o, port);
    tox_options_set_end_port(o, port);
    Tox_Err_New err;
    Tox *tox = tox_new(o, &err);
    tox_options_free(o);
    if (tox == NULL) {
        fail("tox_new on port %u: error %d", port, (int)err);
    }
    tox_callback_conference_invite(tox, on_conference_invite);
    tox_callback_friend_connection_status(tox, on_friend_connection);
    return tox;
}

static void register_av(struct who *w)
{
    toxav_callback_call(w->av, on_call, w);
    toxav_callback_call_state(w->av, on_state, w);
    toxav_callback_audio_bit_rate(w->av, on_audio_bit_rate, w);
    toxav_callback_video_bit_rate(w->av, on_video_bit_rate, w);
    toxav_callback_audio_receive_frame(w->av, on_audio, w);
    toxav_callback_video_receive_frame(w->av, on_video, w);
}

static void iterate_all(void)
{
    for (int i = 0; i < 2; ++i) {
        tox_iterate(people[i].tox, &people[i]);
        if (people[i].av == NULL) {
            continue;
        }
        if (&people[i] == alice && video_iterate_off) {
            toxav_audio_iterate(people[i].av);
        } else if (&people[i] == alice) {
            toxav_iterate(people[i].av);
        } else {
            /* bob uses the separate pair */
            toxav_audio_iterate(people[i].av);
            toxav_video_iterate(people[i].av);
        }
    }
    usleep(5000);
}

/* Iterates until `done` holds (failing after 30 s), then 0.5 s more for late callbacks. */
static void wait_for(const char *what, bool (*done)(void))
{
    double deadline = now_s() + 30;
    while (!done()) {
        if (now_s() > deadline) {
            fail("timed out waiting for %s", what);
        }
        iterate_all();
    }
    double settle = now_s() + 0.5;
    while (now_s() < settle) {
        iterate_all();
    }
}

static int cmp_lines(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* The frequency of the kept samples (after the first 200 ms), to 10 Hz, from their zero
 * crossings (with a little hysteresis against noise). */
static int frequency(const struct received *r)
{
    size_t from = RATE / 5;
    if (r->n < from + RATE / 2) {
        return 0;
    }
    int crossings = 0, sign = 0;
    for (size_t i = from; i < r->n; ++i) {
        int s = r->samples[i] > 300 ? 1 : r->samples[i] < -300 ? -1 : 0;
        if (s != 0 && s != sign) {
            if (sign != 0) {
                ++crossings;
            }
            sign = s;
        }
    }
    double seconds = (double)(r->n - from) / RATE;
    return (int)lround(crossings / 2.0 / seconds / 10.0) * 10;
}

static void report(struct who *w, const char *kind, struct received *r)
{
    if (r->frames > 0) {
        say("RX %s %s audio=some format_ok=%d freq=%d", w->label, kind, r->bad_format == 0, frequency(r));
    } else if (strcmp(kind, "call") == 0 || r->n > 0) {
        say("RX %s %s audio=none", w->label, kind);
    }
    if (r->video_frames > 0) {
        say("RX %s %s video=some pattern=%s strides_ok=%d", w->label, kind,
            r->pattern_ok > 0 && r->pattern_bad <= r->pattern_ok / 4 ? "recognised" : "lost", r->strides_bad == 0);
    }
    if (r->wrong_context) {
        say("RX %s %s wrong_context", w->label, kind);
    }
    memset(r, 0, sizeof *r);
}

static void phase(const char *name)
{
    static const char *current = "";
    for (int i = 0; i < 2; ++i) {
        struct who *w = &people[i];
        qsort(w->lines, w->n_lines, LINE, cmp_lines);
        for (int j = 0; j < w->n_lines; ++j) {
            say("CB %s %s", w->label, w->lines[j]);
        }
        w->n_lines = 0;
        report(w, "call", &w->rx);
        if (w->grx.frames > 0 || w->grx.wrong_context) {
            report(w, "group", &w->grx);
        }
        w->called = false;
        w->got_state = false;
        w->finished = false;
    }
    current = name;
    say("PHASE %s", current);
    fprintf(stderr, "PHASE %s\n", current);
}

/* Tone generators: a phase per sender so the tone is continuous across frames. */
static double tone_phase[2];

static void tone(int16_t *out, size_t n, double hz, double *ph)
{
    for (size_t i = 0; i < n; ++i) {
        out[i] = (int16_t)(8000 * sin(*ph));
        *ph += 2 * M_PI * hz / RATE;
        if (*ph > 2 * M_PI) {
            *ph -= 2 * M_PI;
        }
    }
}

static uint8_t py[W * H], pu[W * H / 4], pv[W * H / 4];

static void make_pattern(void)
{
    for (int row = 0; row < H; ++row) {
        for (int x = 0; x < W; ++x) {
            py[row * W + x] = bar_y(x, W);
        }
    }
    memset(pu, 128, sizeof pu);
    memset(pv, 128, sizeof pv);
}

/* Runs for `seconds`, sending (in real time, one 20 ms frame per 20 ms) alice's tone to
 * bob when `a2b`, bob's to alice when `b2a`, bob's pattern to alice at 10 fps when
 * `video`. Send errors are counted and printed once per kind. */
static void stream(double seconds, bool a2b, bool b2a, bool video)
{
    double start = now_s(), next_audio = start, next_video = start;
    int audio_errors[2] = {0, 0}, video_errors = 0;
    Toxav_Err_Send_Frame last_audio[2] = {TOXAV_ERR_SEND_FRAME_OK, TOXAV_ERR_SEND_FRAME_OK}, last_video = 0;
    int16_t pcm[FRAME];
    while (now_s() < start + seconds) {
        double now = now_s();
        while (next_audio <= now) {
            if (a2b) {
                tone(pcm, FRAME, 440, &tone_phase[0]);
                Toxav_Err_Send_Frame e;
                if (!toxav_audio_send_frame(alice->av, 0, pcm, FRAME, 1, RATE, &e)) {
                    ++audio_errors[0];
                    last_audio[0] = e;
                }
            }
            if (b2a) {
                tone(pcm, FRAME, 660, &tone_phase[1]);
                Toxav_Err_Send_Frame e;
                if (!toxav_audio_send_frame(bob->av, 0, pcm, FRAME, 1, RATE, &e)) {
                    ++audio_errors[1];
                    last_audio[1] = e;
                }
            }
            next_audio += 0.02;
        }
        if (video && next_video <= now) {
            Toxav_Err_Send_Frame e;
            if (!toxav_video_send_frame(bob->av, 0, W, H, py, pu, pv, &e)) {
                ++video_errors;
                last_video = e;
            }
            next_video += 0.1;
        }
        iterate_all();
    }
    for (int i = 0; i < 2; ++i) {
        if (audio_errors[i] > 0) {
            say("Q %s audio_send_frame errors=some last=%d", people[i].label, (int)last_audio[i]);
        }
    }
    if (video_errors > 0) {
        say("Q bob video_send_frame errors=some last=%d", (int)last_video);
    }
    double settle = now_s() + 0.5;
    while (now_s() < settle) {
        iterate_all();
    }
}

static bool friends_online(void)
{
    return tox_friend_get_connection_status(alice->tox, 0, NULL) != TOX_CONNECTION_NONE
           && tox_friend_get_connection_status(bob->tox, 0, NULL) != TOX_CONNECTION_NONE;
}
static bool bob_called(void)
{
    return bob->called;
}
static bool alice_called(void)
{
    return alice->called;
}
static bool alice_state(void)
{
    return alice->got_state;
}
static bool bob_state(void)
{
    return bob->got_state;
}
static bool alice_finished(void)
{
    return alice->finished;
}
static bool bob_finished(void)
{
    return bob->finished;
}
static bool bob_invited(void)
{
    return bob->invited;
}
static uint32_t conf_a, conf_b;
static bool group_connected(void)
{
    return tox_conference_peer_count(alice->tox, conf_a, NULL) == 2
           && tox_conference_peer_count(bob->tox, conf_b, NULL) == 2;
}

/* Each function's answer printed as `Q <who> <call> -> <result> err=<code>`. */
#define Q(who, call, ret, err) say("Q %s %s -> %d err=%d", (who)->label, call, (int)(ret), (int)(err))

static void control(struct who *w, const char *what, Toxav_Call_Control c)
{
    Toxav_Err_Call_Control e;
    bool ok = toxav_call_control(w->av, 0, c, &e);
    char text[64];
    snprintf(text, sizeof text, "call_control(%s)", what);
    Q(w, text, ok, e);
}

static void errors_without_call(void)
{
    int16_t pcm[FRAME] = {0};
    Toxav_Err_Call ec;
    Toxav_Err_Answer ea;
    Toxav_Err_Call_Control ecc;
    Toxav_Err_Bit_Rate_Set eb;
    Toxav_Err_Send_Frame es;
    bool r;

    r = toxav_call(alice->av, 7, 48, 0, &ec);
    Q(alice, "call(unknown friend)", r, ec);
    r = toxav_call(alice->av, 0, 5, 0, &ec);
    Q(alice, "call(audio 5 kbit/s)", r, ec);
    r = toxav_call(alice->av, 0, 511, 0, &ec);
    Q(alice, "call(audio 511 kbit/s)", r, ec);
    r = toxav_call(alice->av, 7, 5, 0, &ec);
    Q(alice, "call(unknown friend, audio 5 kbit/s)", r, ec);
    r = toxav_call(alice->av, 1, 48, 0, &ec);
    Q(alice, "call(offline friend)", r, ec);
    r = toxav_answer(alice->av, 7, 48, 0, &ea);
    Q(alice, "answer(unknown friend)", r, ea);
    r = toxav_answer(alice->av, 0, 5, 0, &ea);
    Q(alice, "answer(audio 5 kbit/s)", r, ea);
    r = toxav_answer(alice->av, 0, 48, 0, &ea);
    Q(alice, "answer(nobody calling)", r, ea);
    r = toxav_call_control(alice->av, 7, TOXAV_CALL_CONTROL_CANCEL, &ecc);
    Q(alice, "call_control(unknown friend)", r, ecc);
    r = toxav_call_control(alice->av, 0, TOXAV_CALL_CONTROL_PAUSE, &ecc);
    Q(alice, "call_control(pause, no call)", r, ecc);
    r = toxav_call_control(alice->av, 0, TOXAV_CALL_CONTROL_CANCEL, &ecc);
    Q(alice, "call_control(cancel, no call)", r, ecc);
    r = toxav_audio_set_bit_rate(alice->av, 7, 48, &eb);
    Q(alice, "audio_set_bit_rate(unknown friend)", r, eb);
    r = toxav_audio_set_bit_rate(alice->av, 0, 5, &eb);
    Q(alice, "audio_set_bit_rate(5)", r, eb);
    r = toxav_audio_set_bit_rate(alice->av, 0, 48, &eb);
    Q(alice, "audio_set_bit_rate(no call)", r, eb);
    r = toxav_video_set_bit_rate(alice->av, 7, 500, &eb);
    Q(alice, "video_set_bit_rate(unknown friend)", r, eb);
    r = toxav_video_set_bit_rate(alice->av, 0, 500, &eb);
    Q(alice, "video_set_bit_rate(no call)", r, eb);
    r = toxav_audio_send_frame(alice->av, 7, pcm, FRAME, 1, RATE, &es);
    Q(alice, "audio_send_frame(unknown friend)", r, es);
    r = toxav_audio_send_frame(alice->av, 0, pcm, FRAME, 1, RATE, &es);
    Q(alice, "audio_send_frame(no call)", r, es);
    r = toxav_audio_send_frame(alice->av, 0, NULL, FRAME, 1, RATE, &es);
    Q(alice, "audio_send_frame(no call, NULL)", r, es);
    r = toxav_video_send_frame(alice->av, 7, W, H, py, pu, pv, &es);
    Q(alice, "video_send_frame(unknown friend)", r, es);
    r = toxav_video_send_frame(alice->av, 0, W, H, NULL, pu, pv, &es);
    Q(alice, "video_send_frame(no call, NULL)", r, es);
}

static void frame_errors_in_call(struct who *w)
{
    int16_t pcm[FRAME * 3] = {0};
    Toxav_Err_Send_Frame es;
    bool r;
    r = toxav_audio_send_frame(w->av, 0, NULL, FRAME, 1, RATE, &es);
    Q(w, "audio_send_frame(NULL)", r, es);
    r = toxav_audio_send_frame(w->av, 0, pcm, FRAME, 3, RATE, &es);
    Q(w, "audio_send_frame(3 channels)", r, es);
    r = toxav_audio_send_frame(w->av, 0, pcm, 882, 1, 44100, &es);
    Q(w, "audio_send_frame(44100 Hz)", r, es);
    r = toxav_audio_send_frame(w->av, 0, pcm, 1000, 1, RATE, &es);
    Q(w, "audio_send_frame(1000 samples)", r, es);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: av <port a> <port b>\n");
        return 2;
    }
    Dl_info info;
    if (dladdr((void *)toxav_new, &info) && info.dli_fname != NULL) {
        printf("LIB %s\n", info.dli_fname);
    }
    make_pattern();
    const char *labels[2] = {"alice", "bob"};
    for (int i = 0; i < 2; ++i) {
        people[i].label = labels[i];
        people[i].port = (uint16_t)atoi(argv[1 + i]);
        people[i].tox = make_tox(people[i].port);
        tox_self_get_public_key(people[i].tox, people[i].pk);
        tox_self_set_name(people[i].tox, (const uint8_t *)labels[i], strlen(labels[i]), NULL);
    }
    uint8_t dht[2][TOX_PUBLIC_KEY_SIZE];
    for (int i = 0; i < 2; ++i) {
        tox_self_get_dht_id(people[i].tox, dht[i]);
    }
    uint8_t stranger[TOX_PUBLIC_KEY_SIZE];
    memset(stranger, 0x5a, sizeof stranger);
    if (tox_friend_add_norequest(alice->tox, bob->pk, NULL) != 0 || tox_friend_add_norequest(bob->tox, alice->pk, NULL) != 0
            || tox_friend_add_norequest(alice->tox, stranger, NULL) != 1) {
        fail("tox_friend_add_norequest");
    }
    for (int i = 0; i < 2; ++i) {
        if (!tox_bootstrap(people[i].tox, "127.0.0.1", people[1 - i].port, dht[1 - i], NULL)) {
            fail("tox_bootstrap");
        }
    }

    phase("session");
    {
        Toxav_Err_New e;
        ToxAV *none = toxav_new(NULL, &e);
        say("Q toxav_new(NULL) -> %s err=%d", none ? "session" : "NULL", (int)e);
        for (int i = 0; i < 2; ++i) {
            people[i].av = toxav_new(people[i].tox, &e);
            say("Q %s toxav_new -> %s err=%d", people[i].label, people[i].av ? "session" : "NULL", (int)e);
            if (people[i].av == NULL) {
                fail("toxav_new");
            }
            register_av(&people[i]);
        }
        ToxAV *second = toxav_new(alice->tox, &e);
        say("Q alice toxav_new(again) -> %s err=%d", second ? "session" : "NULL", (int)e);
        say("Q alice toxav_get_tox is_own=%d", toxav_get_tox(alice->av) == alice->tox);
        say("Q alice intervals idle: %u %u %u", toxav_iteration_interval(alice->av),
            toxav_audio_iteration_interval(alice->av), toxav_video_iteration_interval(alice->av));
    }
    wait_for("the friends to connect", friends_online);

    phase("errors without a call");
    errors_without_call();

    phase("alice calls bob");
    {
        Toxav_Err_Call ec;
        bool r = toxav_call(alice->av, 0, 48, 0, &ec);
        Q(alice, "call(bob, audio 48)", r, ec);
        r = toxav_call(alice->av, 0, 48, 0, &ec);
        Q(alice, "call(bob again)", r, ec);
        wait_for("bob's call callback", bob_called);
        int16_t pcm[FRAME] = {0};
        Toxav_Err_Send_Frame es;
        r = toxav_audio_send_frame(alice->av, 0, pcm, FRAME, 1, RATE, &es);
        Q(alice, "audio_send_frame(ringing)", r, es);
        Toxav_Err_Bit_Rate_Set eb;
        r = toxav_audio_set_bit_rate(bob->av, 0, 32, &eb);
        Q(bob, "audio_set_bit_rate(ringing)", r, eb);
        control(alice, "pause, ringing", TOXAV_CALL_CONTROL_PAUSE);
    }

    phase("bob answers");
    {
        Toxav_Err_Answer ea;
        bool r = toxav_answer(bob->av, 0, 5, 0, &ea);
        Q(bob, "answer(audio 5 kbit/s)", r, ea);
        r = toxav_answer(bob->av, 0, 48, 0, &ea);
        Q(bob, "answer(audio 48)", r, ea);
        wait_for("alice's state callback", alice_state);
        frame_errors_in_call(alice);
        Toxav_Err_Send_Frame es;
        r = toxav_video_send_frame(alice->av, 0, W, H, py, pu, pv, &es);
        Q(alice, "video_send_frame(audio-only call)", r, es);
    }

    phase("tones both ways");
    stream(3, true, true, false);

    phase("bit rates mid-call");
    {
        Toxav_Err_Bit_Rate_Set eb;
        bool r = toxav_audio_set_bit_rate(alice->av, 0, 24, &eb);
        Q(alice, "audio_set_bit_rate(24)", r, eb);
        r = toxav_audio_set_bit_rate(alice->av, 0, 600, &eb);
        Q(alice, "audio_set_bit_rate(600)", r, eb);
        stream(2, true, false, false);
        r = toxav_audio_set_bit_rate(alice->av, 0, 0, &eb);
        Q(alice, "audio_set_bit_rate(0)", r, eb);
        wait_for("bob's state callback", bob_state);
        stream(0.5, true, false, false);
        bob->got_state = false;
        r = toxav_audio_set_bit_rate(alice->av, 0, 48, &eb);
        Q(alice, "audio_set_bit_rate(48)", r, eb);
        wait_for("bob's state callback", bob_state);
    }

    phase("mute and pause");
    control(alice, "mute", TOXAV_CALL_CONTROL_MUTE_AUDIO);
    control(alice, "mute again", TOXAV_CALL_CONTROL_MUTE_AUDIO);
    wait_for("bob's state callback", bob_state);
    stream(0.5, false, true, false);
    control(alice, "unmute", TOXAV_CALL_CONTROL_UNMUTE_AUDIO);
    control(alice, "unmute again", TOXAV_CALL_CONTROL_UNMUTE_AUDIO);
    control(alice, "hide video", TOXAV_CALL_CONTROL_HIDE_VIDEO);
    control(alice, "hide video again", TOXAV_CALL_CONTROL_HIDE_VIDEO);
    control(alice, "show video", TOXAV_CALL_CONTROL_SHOW_VIDEO);
    control(alice, "show video again", TOXAV_CALL_CONTROL_SHOW_VIDEO);
    control(alice, "resume, not paused", TOXAV_CALL_CONTROL_RESUME);
    control(alice, "pause", TOXAV_CALL_CONTROL_PAUSE);
    control(alice, "pause again", TOXAV_CALL_CONTROL_PAUSE);
    bob->got_state = false;
    wait_for("bob's state callback", bob_state);
    stream(0.5, false, true, false);
    control(alice, "resume", TOXAV_CALL_CONTROL_RESUME);
    control(alice, "value 99", (Toxav_Call_Control)99);
    bob->got_state = false;
    wait_for("bob's state callback", bob_state);

    phase("tone after resume");
    stream(2, true, false, false);

    phase("bob hangs up");
    control(bob, "cancel", TOXAV_CALL_CONTROL_CANCEL);
    wait_for("alice's end of call", alice_finished);
    control(alice, "cancel, ended", TOXAV_CALL_CONTROL_CANCEL);
    control(bob, "cancel, ended", TOXAV_CALL_CONTROL_CANCEL);

    phase("bob calls alice with video");
    {
        Toxav_Err_Call ec;
        bool r = toxav_call(bob->av, 0, 32, 400, &ec);
        Q(bob, "call(alice, audio 32, video 400)", r, ec);
        wait_for("alice's call callback", alice_called);
        Toxav_Err_Answer ea;
        r = toxav_answer(alice->av, 0, 48, 0, &ea);
        Q(alice, "answer(audio 48)", r, ea);
        wait_for("bob's state callback", bob_state);
        Toxav_Err_Send_Frame es;
        r = toxav_video_send_frame(bob->av, 0, W, H, NULL, pu, pv, &es);
        Q(bob, "video_send_frame(NULL y)", r, es);
        r = toxav_video_send_frame(bob->av, 0, 0, 0, py, pu, pv, &es);
        Q(bob, "video_send_frame(0x0)", r, es);
        r = toxav_video_send_frame(alice->av, 0, W, H, py, pu, pv, &es);
        Q(alice, "video_send_frame(video bit rate 0)", r, es);
    }

    phase("video, alice iterating audio only");
    video_iterate_off = true;
    stream(1.5, true, false, true);
    video_iterate_off = false;

    phase("video and audio");
    {
        /* what waited for alice's video iteration, then more */
        stream(2, true, false, true);
        Toxav_Err_Bit_Rate_Set eb;
        bool r = toxav_video_set_bit_rate(bob->av, 0, 200, &eb);
        Q(bob, "video_set_bit_rate(200)", r, eb);
        stream(2, false, false, true);
    }

    phase("alice hangs up");
    control(alice, "cancel", TOXAV_CALL_CONTROL_CANCEL);
    wait_for("bob's end of call", bob_finished);

    phase("alice rejects a call");
    {
        Toxav_Err_Call ec;
        bool r = toxav_call(bob->av, 0, 48, 0, &ec);
        Q(bob, "call(alice)", r, ec);
        wait_for("alice's call callback", alice_called);
        control(alice, "cancel, ringing", TOXAV_CALL_CONTROL_CANCEL);
        wait_for("bob's end of call", bob_finished);
    }

    phase("a session killed during a call");
    {
        Toxav_Err_Call ec;
        bool r = toxav_call(alice->av, 0, 48, 0, &ec);
        Q(alice, "call(bob)", r, ec);
        wait_for("bob's call callback", bob_called);
        Toxav_Err_Answer ea;
        r = toxav_answer(bob->av, 0, 48, 0, &ea);
        Q(bob, "answer", r, ea);
        wait_for("alice's state callback", alice_state);
        toxav_kill(alice->av);
        alice->av = NULL;
        wait_for("bob's end of call", bob_finished);
        Toxav_Err_New e;
        alice->av = toxav_new(alice->tox, &e);
        say("Q alice toxav_new(after kill) -> %s err=%d", alice->av ? "session" : "NULL", (int)e);
        if (alice->av == NULL) {
            fail("toxav_new after kill");
        }
        register_av(alice);
        toxav_kill(NULL);
    }

    phase("group audio");
    {
        Tox_Err_Conference_Invite ei;
        conf_a = (uint32_t)toxav_add_av_groupchat(alice->tox, on_group_audio, alice);
        say("Q alice add_av_groupchat -> %u", conf_a);
        say("Q alice groupchat_av_enabled -> %d", toxav_groupchat_av_enabled(alice->tox, conf_a));
        say("Q alice groupchat_enable_av(enabled) -> %d",
            toxav_groupchat_enable_av(alice->tox, conf_a, on_group_audio, alice));
        bool r = tox_conference_invite(alice->tox, 0, conf_a, &ei);
        Q(alice, "conference_invite", r, ei);
        wait_for("bob's invite", bob_invited);
        Tox_Err_Conference_Join ej;
        uint32_t text = tox_conference_join(bob->tox, 0, bob->cookie, bob->cookie_len, &ej);
        say("Q bob conference_join(av cookie) -> %d err=%d", text == UINT32_MAX ? -1 : (int)text, (int)ej);
        say("Q bob join_av_groupchat(short cookie) -> %d",
            toxav_join_av_groupchat(bob->tox, 0, bob->cookie, (uint16_t)(bob->cookie_len - 1), on_group_audio, bob));
        conf_b = (uint32_t)toxav_join_av_groupchat(bob->tox, 0, bob->cookie, (uint16_t)bob->cookie_len, on_group_audio,
                                                   bob);
        say("Q bob join_av_groupchat -> %d", (int)conf_b);
        wait_for("both in the conference", group_connected);
        say("Q bob groupchat_av_enabled -> %d", toxav_groupchat_av_enabled(bob->tox, conf_b));
    }

    phase("group tones");
    {
        int16_t pcm[FRAME];
        double ph[2] = {0, 0};
        int errors[2] = {0, 0};
        double start = now_s(), next = start;
        while (now_s() < start + 3) {
            while (next <= now_s()) {
                tone(pcm, FRAME, 440, &ph[0]);
                errors[0] += toxav_group_send_audio(alice->tox, conf_a, pcm, FRAME, 1, RATE) != 0;
                tone(pcm, FRAME, 660, &ph[1]);
                errors[1] += toxav_group_send_audio(bob->tox, conf_b, pcm, FRAME, 1, RATE) != 0;
                next += 0.02;
            }
            iterate_all();
        }
        say("Q group_send_audio errors alice=%s bob=%s", errors[0] ? "some" : "none", errors[1] ? "some" : "none");
        double settle = now_s() + 0.5;
        while (now_s() < settle) {
            iterate_all();
        }
    }

    phase("group errors");
    {
        int16_t pcm[FRAME * 3] = {0};
        say("Q group_send_audio(3 channels) -> %d", toxav_group_send_audio(alice->tox, conf_a, pcm, FRAME, 3, RATE));
        say("Q group_send_audio(44100 Hz) -> %d", toxav_group_send_audio(alice->tox, conf_a, pcm, 882, 1, 44100));
        say("Q group_send_audio(no conference) -> %d", toxav_group_send_audio(alice->tox, 9, pcm, FRAME, 1, RATE));
        say("Q groupchat_disable_av -> %d", toxav_groupchat_disable_av(alice->tox, conf_a));
        say("Q groupchat_av_enabled(disabled) -> %d", toxav_groupchat_av_enabled(alice->tox, conf_a));
        say("Q groupchat_disable_av(disabled) -> %d", toxav_groupchat_disable_av(alice->tox, conf_a));
        say("Q group_send_audio(disabled) -> %d", toxav_group_send_audio(alice->tox, conf_a, pcm, FRAME, 1, RATE));
        say("Q groupchat_enable_av -> %d", toxav_groupchat_enable_av(alice->tox, conf_a, on_group_audio, alice));
        say("Q group_send_audio(enabled again) -> %d", toxav_group_send_audio(alice->tox, conf_a, pcm, FRAME, 1, RATE));
        Tox_Err_Conference_New en;
        uint32_t text = tox_conference_new(alice->tox, &en);
        say("Q alice conference_new(text) -> %u err=%d", text, (int)en);
        say("Q groupchat_enable_av(text) -> %d", toxav_groupchat_enable_av(alice->tox, text, on_group_audio, alice));
        say("Q groupchat_av_enabled(text) -> %d", toxav_groupchat_av_enabled(alice->tox, text));
        say("Q groupchat_disable_av(text) -> %d", toxav_groupchat_disable_av(alice->tox, text));
        say("Q groupchat_av_enabled(no conference) -> %d", toxav_groupchat_av_enabled(alice->tox, 9));
        say("Q groupchat_enable_av(no conference) -> %d",
            toxav_groupchat_enable_av(alice->tox, 9, on_group_audio, alice));
        bob->invited = false;
        Tox_Err_Conference_Invite ei;
        bool r = tox_conference_invite(alice->tox, 0, text, &ei);
        Q(alice, "conference_invite(text)", r, ei);
        wait_for("bob's invite", bob_invited);
        say("Q bob join_av_groupchat(text cookie) -> %d",
            toxav_join_av_groupchat(bob->tox, 0, bob->cookie, (uint16_t)bob->cookie_len, on_group_audio, bob));
    }

    phase("end");
    for (int i = 0; i < 2; ++i) {
        toxav_kill(people[i].av);
        tox_kill(people[i].tox);
    }
    say("OK");
    return 0;
}
