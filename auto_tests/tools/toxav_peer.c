/* A call peer for rustox's ToxAV interop tests and call benchmark: one Tox instance with one
 * ToxAV session, driven by line commands on stdin, printing one line per event.
 *
 * The same source is compiled against Debian's tox.h and toxav.h and pinned by RPATH either to
 * Debian's libtoxcore.so.2 (c-toxcore 0.2.18) or to a copy of rustox's (the ffi crate's cdylib)
 * (auto_tests/src/ctoxcore/av_peer.rs), so an interop test compares libraries, not clients.
 * One thread runs tox_iterate, toxav_iterate, the frame clocks and the commands.
 *
 * The options, READY line and the friend and conference commands are those of
 * toxconference.c, so the same harness (conference_peer.rs) drives both.
 *
 * usage: toxav_peer [options]
 *   --port N                      UDP port (0: c-toxcore's range 33445-33545)
 *   --bootstrap HOST PORT KEYHEX  a DHT node (repeatable)
 *   --load FILE                   start from this save file
 *   --name TEXT                   our name
 *   --accept                      accept every friend request
 *   --auto-join                   join every conference invite at once (AV ones as AV)
 *   --answer ABR VBR              answer every incoming call at once with these bit rates
 *                                 (kbit/s, 0 disables sending that kind)
 *   --lan                         LAN discovery on (off by default)
 *   --seconds N                   exit after N seconds (default 600)
 *
 * stdout: every line starts with T, CLOCK_MONOTONIC seconds (one clock for every process of the
 * machine, so a harness compares one peer's send with another's receipt):
 *   T READY TOXID DHTKEY PORT LIBPATH
 *   T SELF STATUS / T REQUEST PK / T FRIEND N STATUS      as toxconference.c
 *   T CALL F AUDIO VIDEO          friend F calls us (toxav_call_cb; 0/1 flags)
 *   T STATE F STATE               toxav_call_state_cb: the Toxav_Friend_Call_State bits
 *                                 (1 error, 2 finished, 4|8 peer sends a|v, 16|32 accepts a|v;
 *                                 0 = the peer paused)
 *   T ABITRATE F KBPS / T VBITRATE F KBPS                 the bit-rate callbacks
 *   T ASEND F INDEX HZ            audio frame INDEX handed to toxav_audio_send_frame at T
 *                                 (the stamp is taken just before the call), tone HZ
 *   T VSEND F NUMBER W H          video frame NUMBER handed to toxav_video_send_frame at T
 *   T SENDSTATE F KIND CODE       the result of sending KIND (audio/video) to F changed to
 *                                 Toxav_Err_Send_Frame CODE (0 ok, 3 not in call, 6 payload
 *                                 type disabled, ...); printed on change only
 *   T AFRAME F SAMPLES CH RATE HZ MARK RMS                a received audio frame: its tone's
 *                                 frequency HZ (channel 0, one decimal; 0: silent or no
 *                                 single tone), the MARK it carries (-1 none), its RMS level
 *   T VFRAME F W H NUMBER LUMA    a received video frame: the NUMBER its pattern encodes (-1:
 *                                 not a readable pattern) and its mean luma
 *   T GFRAME CONF PEER PK SAMPLES CH RATE HZ MARK RMS     received conference audio
 *   T INVITE FRIEND TYPE / T JOINED CONF FRIEND / T JOIN_ERR FRIEND CODE
 *   T CONNECTED CONF / T PEERS CONF ONLINE OFFLINE        as toxconference.c
 *   T FILE_SENT F FILE BYTES      a file we sent was all acknowledged
 *   T FILE_RECV F FILE BYTES      a file offer (accepted at once)
 *   T FILE_PROGRESS F FILE BYTES  every MiB received
 *   T FILE_DONE F FILE BYTES      a received file is complete
 *   T OK COMMAND [RESULT...]  /  T ERR COMMAND CODE      one reply to every command
 *   T BYE
 *
 * stdin, one command a line (numbers as tox.h and toxav.h's; bit rates in kbit/s):
 *   friend PK / add TOXID / bootstrap HOST PORT KEY / name TEXT / quit   as toxconference.c
 *   call F ABR VBR             toxav_call
 *   answer F ABR VBR           toxav_answer
 *   control F WHAT             toxav_call_control; WHAT: resume pause cancel mute unmute hide
 *                              show (mute/hide: stop receiving our friend's audio/video)
 *   hangup F                   control F cancel
 *   abitrate F KBPS / vbitrate F KBPS      toxav_audio_set_bit_rate / video_set_bit_rate
 *   tone F HZ                  send a HZ tone to F, one 20 ms frame (48 kHz mono) every 20 ms;
 *                              HZ 0 stops
 *   marks F                    send the mark signal (below) to F instead
 *   video F FPS [W H [NOISE]]  send the video pattern (below) at FPS (0 stops), W x H (default
 *                              320 x 240), NOISE (0-60, default 0) the amplitude of a texture
 *                              that changes every frame, so the encoder has work to do
 *   sendfile F MIB             offer F a file of MIB MiB (TOX_FILE_KIND_DATA)
 *   av-new                     toxav_add_av_groupchat      -> OK av-new CONF
 *   new                        tox_conference_new (text)   -> OK new CONF
 *   invite F CONF / join-next-invite / peers CONF   as toxconference.c; an AV invite is
 *                              joined with toxav_join_av_groupchat
 *   gtone CONF HZ              send a HZ tone to the conference (toxav_group_send_audio),
 *                              one 20 ms frame every 20 ms; 0 stops
 *   gmarks CONF                the mark signal to the conference instead
 *   gav CONF on|off|get        toxav_groupchat_enable_av / disable_av / av_enabled
 *
 * The signals are those of rustox's core/src/av/signal.rs (tone, frequency estimate, marks,
 * test picture), so a harness reads a rustox node's and this peer's the same way:
 *
 * The mark signal (for mouth-to-ear latency): sent audio frame i (20 ms, 48 kHz mono,
 * amplitude 10000) is one tone of 400 + 100 * (i mod 16) Hz, its phase continuous across
 * frames. A receiver runs Goertzel filters at the 16 frequencies over the last 60 % of a
 * decoded frame (a codec's look-ahead, 6.5 ms for Opus, keeps the previous frame in the first
 * part); the frame carries MARK k when k's power is at least 4 times every other's and the
 * window's RMS is at least 300. A receipt with MARK k matches the last frame sent before it
 * whose index is k mod 16: unambiguous for delays under 320 ms.
 *
 * The frequency estimate: power by Goertzel on channel 0 on a 10 Hz grid from 50 Hz to
 * min(4 kHz, rate / 2 - 100 Hz), then on a 0.5 Hz grid 10 Hz either side of the best; a frame
 * under RMS 300 is silent, and one whose tone's amplitude is under half its RMS times sqrt 2
 * has no single tone (HZ 0 for both).
 *
 * The video pattern: the luma plane as 4 columns x 5 rows of cells (cell edges at i * size /
 * cells), black 16 or white 235, chroma flat 128. Rows 0-3 carry the 16-bit NUMBER, cell
 * (row, col) being bit row * 4 + col; row 4 carries the check nibble NUMBER ^ NUMBER >> 4 ^
 * NUMBER >> 8 ^ NUMBER >> 12 ^ 0b1010 (low 4 bits), bit col in column col. A receiver
 * averages the central half of each cell (a quarter trimmed off each side): up to 85 is 0,
 * from 170 is 1, between is no pattern; so is a wrong check nibble. It survives scaling and
 * VP8 at low bit rates. The optional NOISE adds a texture changing every frame.
  */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <tox/tox.h>
#include <tox/toxav.h>
#include "testkit.h"

#define MAX_BOOT 8
#define MAX_INVITES 32
#define MAX_FRIENDS 16
#define MAX_CONFS 16
#define LINE_MAX_LEN 4096
#define RATE 48000
#define FRAME_SAMPLES 960 /* 20 ms at 48 kHz */
#define FRAME_S 0.020
#define TONE_PEAK 10000.0
#define MARK_BASE 400.0
#define MARK_STEP 100.0
#define MARK_COUNT 16
#define MARK_SKIP_PERCENT 40
#define SILENT_RMS 300.0
#define MAX_ANALYSED 11520 /* 120 ms of 48 kHz stereo */
#define GRID_COLS 4
#define GRID_ROWS 5
#define LUMA_ONE 235
#define LUMA_ZERO 16
#define MAX_W 1920
#define MAX_H 1080
#define CHUNK_BACKLOG 64
#define MAX_CHUNK 1371 /* TOX_MAX_CUSTOM_PACKET_SIZE - file header: c-toxcore's chunk bound */
#define MIB (1024 * 1024)

struct invite {
    uint32_t friend_number;
    int type;
    size_t len;
    uint8_t cookie[512];
};

/* A tone or mark stream: frame index, phase, its clock. */
struct audio_out {
    int on;
    int marks;
    double hz;
    double phase;
    uint64_t index;
    double next;
};

struct chunk {
    uint32_t file;
    uint64_t pos;
    size_t len;
};

struct friend_av {
    struct audio_out audio;
    int video_on;
    double fps;
    int w, h, noise;
    uint32_t vnumber;
    double vnext;
    int last_err[2]; /* audio, video; -1: none yet */
    /* the file we send */
    int sending;
    uint32_t send_file;
    uint64_t send_size;
    struct chunk backlog[CHUNK_BACKLOG];
    size_t backlog_len;
    /* files we receive */
    uint64_t recv_bytes[8];
    uint64_t recv_size[8];
};

static Tox *g_tox;
static ToxAV *g_av;
static struct invite invites[MAX_INVITES];
static size_t invite_count;
static int joins_wanted;
static int auto_join;
static int accept_all;
static int auto_answer;
static uint32_t answer_abr, answer_vbr;
static struct friend_av friends[MAX_FRIENDS];
static struct audio_out confs[MAX_CONFS];
static uint8_t *vbuf; /* one I420 frame */
static uint32_t rng = 0x9e3779b9u;

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...) {
    va_list ap;
    printf("%.6f ", now_s());
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

/* A line stamped `t` (taken before the event it reports). */
static void out_at(double t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_at(double t, const char *fmt, ...) {
    va_list ap;
    printf("%.6f ", t);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

static struct friend_av *fav(uint32_t f) {
    return f < MAX_FRIENDS ? &friends[f] : NULL;
}

/* ---- signal analysis ---------------------------------------------------------------------- */

static double goertzel(const float *x, size_t n, double hz, double rate) {
    double coeff = 2.0 * cos(2.0 * M_PI * hz / rate);
    double s1 = 0, s2 = 0;
    for (size_t i = 0; i < n; ++i) {
        double s = x[i] + coeff * s1 - s2;
        s2 = s1;
        s1 = s;
    }
    return s1 * s1 + s2 * s2 - coeff * s1 * s2;
}

static double rms_of(const float *x, size_t n) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) {
        sum += (double)x[i] * x[i];
    }
    return n ? sqrt(sum / (double)n) : 0;
}

/* Channel 0 of `pcm`: its tone's frequency (0 when silent or no single tone), mark and RMS. */
static void analyse(const int16_t *pcm, size_t samples, unsigned channels, uint32_t rate,
                    double *hz, int *mark, double *rms) {
    static float x[MAX_ANALYSED];
    size_t n = samples < MAX_ANALYSED ? samples : MAX_ANALYSED;
    *hz = 0;
    *mark = -1;
    *rms = 0;
    if (n < 64 || channels == 0 || rate < 1000) {
        return;
    }
    for (size_t i = 0; i < n; ++i) {
        x[i] = (float)pcm[i * channels];
    }
    *rms = rms_of(x, n);

    /* The mark: over the last 60 %, one of the 16 frequencies 6 dB clear of the others. */
    size_t skip = n * MARK_SKIP_PERCENT / 100;
    if (rms_of(x + skip, n - skip) >= SILENT_RMS) {
        double best = -1, second = -1;
        int best_k = -1;
        for (int k = 0; k < MARK_COUNT; ++k) {
            double p = goertzel(x + skip, n - skip, MARK_BASE + MARK_STEP * k, rate);
            if (p > best) {
                second = best;
                best = p;
                best_k = k;
            } else if (p > second) {
                second = p;
            }
        }
        if (best >= 4.0 * second) {
            *mark = best_k;
        }
    }

    if (*rms < SILENT_RMS) {
        return;
    }
    double top = rate / 2.0 - 100.0;
    if (top > 4000.0) {
        top = 4000.0;
    }
    double best = -1, best_hz = 0;
    for (int k = 5; k <= (int)(top / 10.0); ++k) {
        double p = goertzel(x, n, 10.0 * k, rate);
        if (p > best) {
            best = p;
            best_hz = 10.0 * k;
        }
    }
    double coarse = best_hz;
    for (int k = -20; k <= 20; ++k) {
        double f = coarse + 0.5 * k;
        double p = f > 0 ? goertzel(x, n, f, rate) : -1;
        if (p > best) {
            best = p;
            best_hz = f;
        }
    }
    /* A pure tone of amplitude A over N samples has power (A N / 2)^2 and RMS A / sqrt 2. */
    double amplitude = 2.0 * sqrt(best > 0 ? best : 0) / (double)n;
    if (amplitude >= 0.5 * M_SQRT2 * *rms) {
        *hz = best_hz;
    }
}

/* One 20 ms frame of `a` into pcm; returns its frequency. */
static double synth(struct audio_out *a, int16_t *pcm) {
    double hz = a->marks ? MARK_BASE + MARK_STEP * (double)(a->index % MARK_COUNT) : a->hz;
    double step = 2.0 * M_PI * hz / RATE;
    for (int i = 0; i < FRAME_SAMPLES; ++i) {
        pcm[i] = (int16_t)lrint(TONE_PEAK * sin(a->phase));
        a->phase += step;
        if (a->phase > 2.0 * M_PI) {
            a->phase -= 2.0 * M_PI;
        }
    }
    return hz;
}

/* ---- the video pattern -------------------------------------------------------------------- */

static uint32_t check_nibble(uint32_t n) {
    return (n ^ (n >> 4) ^ (n >> 8) ^ (n >> 12) ^ 0xa) & 0xf;
}

static int cell_bit(uint32_t number, int row, int col) {
    uint32_t n = number & 0xffff;
    return row < 4 ? (int)((n >> (row * GRID_COLS + col)) & 1)
                   : (int)((check_nibble(n) >> col) & 1);
}

static uint32_t xorshift(void) {
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

static void draw(uint32_t number, int w, int h, int noise, uint8_t *y, uint8_t *u, uint8_t *v) {
    for (int row = 0; row < h; ++row) {
        /* The cell whose range [i * h / rows, (i + 1) * h / rows) holds the row. */
        int cr = 0;
        while ((cr + 1) * h / GRID_ROWS <= row) {
            ++cr;
        }
        int cc = 0;
        for (int col = 0; col < w; ++col) {
            while ((cc + 1) * w / GRID_COLS <= col) {
                ++cc;
            }
            int level = cell_bit(number, cr, cc) ? LUMA_ONE : LUMA_ZERO;
            if (noise > 0) {
                level += (int)(xorshift() % (uint32_t)(2 * noise + 1)) - noise;
            }
            y[row * w + col] = (uint8_t)(level < 0 ? 0 : level > 255 ? 255 : level);
        }
    }
    size_t c = (size_t)((w + 1) / 2) * (size_t)((h + 1) / 2);
    memset(u, 128, c);
    memset(v, 128, c);
}

/* The number a received picture's pattern encodes, or -1; *mean is its mean luma. */
static long read_pattern(const uint8_t *y, int stride, int w, int h, double *mean) {
    uint32_t number = 0, check = 0;
    int readable = 1;
    double all = 0;
    long pixels = 0;
    for (int r = 0; r < h; r += 4) {
        for (int c = 0; c < w; c += 4) {
            all += y[(long)r * stride + c];
            ++pixels;
        }
    }
    *mean = pixels ? all / (double)pixels : 0;
    if (w < 2 * GRID_COLS || h < 2 * GRID_ROWS) {
        return -1;
    }
    for (int row = 0; row < GRID_ROWS; ++row) {
        for (int col = 0; col < GRID_COLS; ++col) {
            int y0 = row * h / GRID_ROWS, y1 = (row + 1) * h / GRID_ROWS;
            int x0 = col * w / GRID_COLS, x1 = (col + 1) * w / GRID_COLS;
            int qy = (y1 - y0) / 4, qx = (x1 - x0) / 4;
            unsigned long sum = 0, count = 0;
            for (int r = y0 + qy; r < y1 - qy; ++r) {
                for (int c = x0 + qx; c < x1 - qx; ++c) {
                    sum += y[(long)r * stride + c];
                    ++count;
                }
            }
            if (count == 0) {
                return -1;
            }
            unsigned long m = sum / count;
            int bit;
            if (m <= 85) {
                bit = 0;
            } else if (m >= 170) {
                bit = 1;
            } else {
                readable = 0;
                bit = 0;
            }
            if (row < 4) {
                number |= (uint32_t)bit << (row * GRID_COLS + col);
            } else {
                check |= (uint32_t)bit << col;
            }
        }
    }
    return readable && check == check_nibble(number) ? (long)number : -1;
}

/* ---- ToxAV callbacks ---------------------------------------------------------------------- */

static void stop_streams(uint32_t f) {
    struct friend_av *a = fav(f);
    if (a != NULL) {
        a->audio.on = 0;
        a->video_on = 0;
        a->last_err[0] = a->last_err[1] = -1;
    }
}

static void on_call(ToxAV *av, uint32_t f, bool audio, bool video, void *ud) {
    (void)ud;
    out("CALL %u %d %d", f, audio, video);
    if (auto_answer) {
        Toxav_Err_Answer err;
        toxav_answer(av, f, answer_abr, answer_vbr, &err);
        if (err == TOXAV_ERR_ANSWER_OK) out("OK answer"); else out("ERR answer %d", (int)err);
    }
}

static void on_call_state(ToxAV *av, uint32_t f, uint32_t state, void *ud) {
    (void)av; (void)ud;
    out("STATE %u %u", f, state);
    if (state & (TOXAV_FRIEND_CALL_STATE_ERROR | TOXAV_FRIEND_CALL_STATE_FINISHED)) {
        stop_streams(f);
    }
}

static void on_abitrate(ToxAV *av, uint32_t f, uint32_t br, void *ud) {
    (void)av; (void)ud;
    out("ABITRATE %u %u", f, br);
}

static void on_vbitrate(ToxAV *av, uint32_t f, uint32_t br, void *ud) {
    (void)av; (void)ud;
    out("VBITRATE %u %u", f, br);
}

static void on_audio(ToxAV *av, uint32_t f, const int16_t *pcm, size_t samples, uint8_t channels,
                     uint32_t rate, void *ud) {
    (void)av; (void)ud;
    double t = now_s();
    double hz, rms;
    int mark;
    analyse(pcm, samples, channels, rate, &hz, &mark, &rms);
    out_at(t, "AFRAME %u %zu %u %u %.1f %d %.0f", f, samples, channels, rate, hz, mark, rms);
}

static void on_video(ToxAV *av, uint32_t f, uint16_t w, uint16_t h, const uint8_t *y,
                     const uint8_t *u, const uint8_t *v, int32_t ys, int32_t us, int32_t vs,
                     void *ud) {
    (void)av; (void)u; (void)v; (void)us; (void)vs; (void)ud;
    double t = now_s();
    double mean = 0;
    long number = read_pattern(y, ys, w, h, &mean);
    out_at(t, "VFRAME %u %u %u %ld %.0f", f, w, h, number, mean);
}

static void on_group_audio(void *tox, uint32_t conf, uint32_t peer, const int16_t *pcm,
                           uint32_t samples, uint8_t channels, uint32_t rate, void *ud) {
    (void)tox; (void)ud;
    double t = now_s();
    double hz, rms;
    int mark;
    uint8_t pk[TOX_PUBLIC_KEY_SIZE] = {0};
    char h[2 * TOX_PUBLIC_KEY_SIZE + 1];
    analyse(pcm, samples, channels, rate, &hz, &mark, &rms);
    tox_conference_peer_get_public_key(g_tox, conf, peer, pk, NULL);
    hex(pk, TOX_PUBLIC_KEY_SIZE, h);
    out_at(t, "GFRAME %u %u %s %u %u %u %.1f %d %.0f", conf, peer, h, samples, channels, rate, hz,
           mark, rms);
}

/* ---- the frame clocks --------------------------------------------------------------------- */

static void note_send(uint32_t f, int kind, int code) {
    struct friend_av *a = fav(f);
    if (a != NULL && a->last_err[kind] != code) {
        a->last_err[kind] = code;
        out("SENDSTATE %u %s %d", f, kind == 0 ? "audio" : "video", code);
    }
}

/* Next due time after `due` with period `p`: on schedule, but never a burst after a stall. */
static double advance(double due, double p, double now) {
    due += p;
    return due < now - 5 * p ? now : due;
}

static void send_due(double now) {
    int16_t pcm[FRAME_SAMPLES];
    for (uint32_t f = 0; f < MAX_FRIENDS; ++f) {
        struct friend_av *a = &friends[f];
        while (a->audio.on && a->audio.next <= now) {
            double hz = synth(&a->audio, pcm);
            Toxav_Err_Send_Frame err;
            double t = now_s();
            toxav_audio_send_frame(g_av, f, pcm, FRAME_SAMPLES, 1, RATE, &err);
            if (err == TOXAV_ERR_SEND_FRAME_OK) {
                out_at(t, "ASEND %u %llu %.1f", f, (unsigned long long)a->audio.index, hz);
            }
            note_send(f, 0, (int)err);
            ++a->audio.index;
            a->audio.next = advance(a->audio.next, FRAME_S, now);
        }
        if (a->video_on && a->vnext <= now) {
            uint8_t *y = vbuf;
            uint8_t *u = y + (size_t)a->w * (size_t)a->h;
            uint8_t *v = u + (size_t)((a->w + 1) / 2) * (size_t)((a->h + 1) / 2);
            draw(a->vnumber, a->w, a->h, a->noise, y, u, v);
            Toxav_Err_Send_Frame err;
            double t = now_s();
            toxav_video_send_frame(g_av, f, (uint16_t)a->w, (uint16_t)a->h, y, u, v, &err);
            if (err == TOXAV_ERR_SEND_FRAME_OK) {
                out_at(t, "VSEND %u %u %d %d", f, a->vnumber & 0xffff, a->w, a->h);
            }
            note_send(f, 1, (int)err);
            ++a->vnumber;
            a->vnext = advance(a->vnext, 1.0 / a->fps, now);
        }
    }
    for (uint32_t c = 0; c < MAX_CONFS; ++c) {
        struct audio_out *a = &confs[c];
        while (a->on && a->next <= now) {
            double hz = synth(a, pcm);
            double t = now_s();
            int r = toxav_group_send_audio(g_tox, c, pcm, FRAME_SAMPLES, 1, RATE);
            if (r == 0) {
                out_at(t, "GSEND %u %llu %.1f", c, (unsigned long long)a->index, hz);
            } else {
                out("GSEND_ERR %u %d", c, r);
            }
            ++a->index;
            a->next = advance(a->next, FRAME_S, now);
        }
    }
}

/* The earliest frame due, or `limit` seconds from now. */
static double next_due(double now, double limit) {
    double t = now + limit;
    for (uint32_t f = 0; f < MAX_FRIENDS; ++f) {
        if (friends[f].audio.on && friends[f].audio.next < t) t = friends[f].audio.next;
        if (friends[f].video_on && friends[f].vnext < t) t = friends[f].vnext;
    }
    for (uint32_t c = 0; c < MAX_CONFS; ++c) {
        if (confs[c].on && confs[c].next < t) t = confs[c].next;
    }
    return t;
}

/* ---- files -------------------------------------------------------------------------------- */

static void fill(uint64_t pos, uint8_t *buf, size_t len) {
    for (size_t i = 0; i < len; ++i) {
        buf[i] = (uint8_t)((pos + i) * 131u >> 3);
    }
}

static int send_chunk(uint32_t f, const struct chunk *c) {
    uint8_t buf[MAX_CHUNK];
    size_t len = c->len < sizeof buf ? c->len : sizeof buf;
    fill(c->pos, buf, len);
    Tox_Err_File_Send_Chunk err;
    tox_file_send_chunk(g_tox, f, c->file, c->pos, buf, len, &err);
    return err != TOX_ERR_FILE_SEND_CHUNK_SENDQ;
}

static void flush_chunks(void) {
    for (uint32_t f = 0; f < MAX_FRIENDS; ++f) {
        struct friend_av *a = &friends[f];
        size_t done = 0;
        while (done < a->backlog_len && send_chunk(f, &a->backlog[done])) {
            ++done;
        }
        memmove(a->backlog, a->backlog + done, (a->backlog_len - done) * sizeof a->backlog[0]);
        a->backlog_len -= done;
    }
}

static void on_chunk_request(Tox *tox, uint32_t f, uint32_t file, uint64_t pos, size_t len,
                             void *ud) {
    (void)tox; (void)ud;
    struct friend_av *a = fav(f);
    if (a == NULL || !a->sending || file != a->send_file) {
        return;
    }
    if (len == 0) {
        out("FILE_SENT %u %u %llu", f, file, (unsigned long long)a->send_size);
        a->sending = 0;
        return;
    }
    struct chunk c = {file, pos, len};
    if (a->backlog_len == 0 && send_chunk(f, &c)) {
        return;
    }
    if (a->backlog_len < CHUNK_BACKLOG) {
        a->backlog[a->backlog_len++] = c;
    } else {
        out("FILE_ERR %u %u backlog", f, file);
    }
}

/* Incoming file numbers are (slot + 1) << 16 (tox.h's file numbering for received files). */
static uint32_t recv_slot(uint32_t file) {
    return file >= 65536 ? (file >> 16) - 1 : file;
}

static void on_file_recv(Tox *tox, uint32_t f, uint32_t file, uint32_t kind, uint64_t size,
                         const uint8_t *name, size_t name_len, void *ud) {
    (void)name; (void)name_len; (void)ud;
    if (kind != TOX_FILE_KIND_DATA) {
        tox_file_control(tox, f, file, TOX_FILE_CONTROL_CANCEL, NULL);
        return;
    }
    out("FILE_RECV %u %u %llu", f, file, (unsigned long long)size);
    struct friend_av *a = fav(f);
    uint32_t slot = recv_slot(file);
    if (a != NULL && slot < 8) {
        a->recv_bytes[slot] = 0;
        a->recv_size[slot] = size;
    }
    tox_file_control(tox, f, file, TOX_FILE_CONTROL_RESUME, NULL);
}

static void on_file_chunk(Tox *tox, uint32_t f, uint32_t file, uint64_t pos, const uint8_t *data,
                          size_t len, void *ud) {
    (void)tox; (void)pos; (void)data; (void)ud;
    struct friend_av *a = fav(f);
    uint32_t slot = recv_slot(file);
    if (a == NULL || slot >= 8) {
        return;
    }
    if (len == 0) {
        out("FILE_DONE %u %u %llu", f, file, (unsigned long long)a->recv_bytes[slot]);
        return;
    }
    uint64_t before = a->recv_bytes[slot];
    a->recv_bytes[slot] += len;
    if (before / MIB != a->recv_bytes[slot] / MIB) {
        out("FILE_PROGRESS %u %u %llu", f, file, (unsigned long long)a->recv_bytes[slot]);
    }
}

/* ---- tox callbacks ------------------------------------------------------------------------ */

static void print_counts(Tox *tox, uint32_t conf) {
    Tox_Err_Conference_Peer_Query e1, e2;
    uint32_t on = tox_conference_peer_count(tox, conf, &e1);
    uint32_t off = tox_conference_offline_peer_count(tox, conf, &e2);
    out("PEERS %u %u %u", conf, e1 == TOX_ERR_CONFERENCE_PEER_QUERY_OK ? on : 0,
        e2 == TOX_ERR_CONFERENCE_PEER_QUERY_OK ? off : 0);
}

static void join_invite(Tox *tox, const struct invite *inv) {
    if (inv->type == TOX_CONFERENCE_TYPE_AV) {
        int conf = toxav_join_av_groupchat(tox, inv->friend_number, inv->cookie,
                                           (uint16_t)inv->len, on_group_audio, NULL);
        if (conf >= 0) out("JOINED %d %u", conf, inv->friend_number);
        else out("JOIN_ERR %u %d", inv->friend_number, conf);
        return;
    }
    Tox_Err_Conference_Join err;
    uint32_t conf = tox_conference_join(tox, inv->friend_number, inv->cookie, inv->len, &err);
    if (err == TOX_ERR_CONFERENCE_JOIN_OK) out("JOINED %u %u", conf, inv->friend_number);
    else out("JOIN_ERR %u %d", inv->friend_number, (int)err);
}

static void on_self(Tox *tox, Tox_Connection status, void *ud) {
    (void)tox; (void)ud;
    out("SELF %d", (int)status);
}

static void on_request(Tox *tox, const uint8_t *pk, const uint8_t *msg, size_t len, void *ud) {
    (void)msg; (void)len; (void)ud;
    char h[2 * TOX_PUBLIC_KEY_SIZE + 1];
    hex(pk, TOX_PUBLIC_KEY_SIZE, h);
    out("REQUEST %s", h);
    if (accept_all) {
        tox_friend_add_norequest(tox, pk, NULL);
    }
}

static void on_friend(Tox *tox, uint32_t n, Tox_Connection status, void *ud) {
    (void)tox; (void)ud;
    out("FRIEND %u %d", n, (int)status);
}

static void on_invite(Tox *tox, uint32_t friend_number, Tox_Conference_Type type,
                      const uint8_t *cookie, size_t length, void *ud) {
    (void)ud;
    out("INVITE %u %d", friend_number, (int)type);
    struct invite inv = {.friend_number = friend_number, .type = (int)type, .len = length};
    if (length > sizeof inv.cookie) {
        out("JOIN_ERR %u %d", friend_number, -100);
        return;
    }
    memcpy(inv.cookie, cookie, length);
    if (auto_join || joins_wanted > 0) {
        if (joins_wanted > 0) {
            --joins_wanted;
        }
        join_invite(tox, &inv);
    } else if (invite_count < MAX_INVITES) {
        invites[invite_count++] = inv;
    }
}

static void on_connected(Tox *tox, uint32_t conf, void *ud) {
    (void)ud;
    out("CONNECTED %u", conf);
    print_counts(tox, conf);
}

static void on_peer_list(Tox *tox, uint32_t conf, void *ud) {
    (void)ud;
    print_counts(tox, conf);
}

/* ---- commands ----------------------------------------------------------------------------- */

static char *word(char **rest) {
    char *s = *rest;
    while (*s == ' ') {
        ++s;
    }
    if (*s == 0) {
        return NULL;
    }
    char *w = s;
    while (*s != 0 && *s != ' ') {
        ++s;
    }
    if (*s == ' ') {
        *s++ = 0;
    }
    *rest = s;
    return w;
}

static int number(char **rest, uint32_t *v) {
    char *w = word(rest);
    char *end;
    if (w == NULL) {
        return -1;
    }
    unsigned long n = strtoul(w, &end, 10);
    if (*end != 0) {
        return -1;
    }
    *v = (uint32_t)n;
    return 0;
}

static int parse_control(const char *w, Toxav_Call_Control *c) {
    static const struct { const char *name; Toxav_Call_Control c; } names[] = {
        {"resume", TOXAV_CALL_CONTROL_RESUME},       {"pause", TOXAV_CALL_CONTROL_PAUSE},
        {"cancel", TOXAV_CALL_CONTROL_CANCEL},       {"mute", TOXAV_CALL_CONTROL_MUTE_AUDIO},
        {"unmute", TOXAV_CALL_CONTROL_UNMUTE_AUDIO}, {"hide", TOXAV_CALL_CONTROL_HIDE_VIDEO},
        {"show", TOXAV_CALL_CONTROL_SHOW_VIDEO},
    };
    for (size_t i = 0; w != NULL && i < sizeof names / sizeof names[0]; ++i) {
        if (strcmp(w, names[i].name) == 0) {
            *c = names[i].c;
            return 0;
        }
    }
    return -1;
}

static void do_control(uint32_t f, Toxav_Call_Control c, const char *cmd) {
    Toxav_Err_Call_Control err;
    toxav_call_control(g_av, f, c, &err);
    if (err == TOXAV_ERR_CALL_CONTROL_OK) {
        if (c == TOXAV_CALL_CONTROL_CANCEL) {
            stop_streams(f);
        }
        out("OK %s", cmd);
    } else {
        out("ERR %s %d", cmd, (int)err);
    }
}

static void start_audio(struct audio_out *a, int marks, double hz) {
    int was_on = a->on;
    a->marks = marks;
    a->hz = hz;
    a->on = marks || hz > 0;
    if (a->on && !was_on) {
        a->next = now_s();
    }
}

static int command(Tox *tox, char *line) {
    char *rest = line;
    char *cmd = word(&rest);
    uint32_t a, b, c;
    if (cmd == NULL) {
        return 0;
    }
    if (strcmp(cmd, "quit") == 0) {
        return 1;
    } else if (strcmp(cmd, "friend") == 0) {
        uint8_t pk[TOX_PUBLIC_KEY_SIZE];
        char *w = word(&rest);
        Tox_Err_Friend_Add err;
        if (w == NULL || unhex(w, pk, sizeof pk) != 0) {
            out("ERR friend -1");
            return 0;
        }
        uint32_t n = tox_friend_add_norequest(tox, pk, &err);
        if (err == TOX_ERR_FRIEND_ADD_OK) out("OK friend %u", n); else out("ERR friend %d", (int)err);
    } else if (strcmp(cmd, "add") == 0) {
        uint8_t id[TOX_ADDRESS_SIZE];
        char *w = word(&rest);
        Tox_Err_Friend_Add err;
        static const uint8_t hello[] = "call peer";
        if (w == NULL || unhex(w, id, sizeof id) != 0) {
            out("ERR add -1");
            return 0;
        }
        uint32_t n = tox_friend_add(tox, id, hello, sizeof hello - 1, &err);
        if (err == TOX_ERR_FRIEND_ADD_OK) out("OK add %u", n); else out("ERR add %d", (int)err);
    } else if (strcmp(cmd, "bootstrap") == 0) {
        char *host = word(&rest);
        uint32_t port;
        uint8_t key[TOX_PUBLIC_KEY_SIZE];
        char *k;
        Tox_Err_Bootstrap err = TOX_ERR_BOOTSTRAP_BAD_HOST;
        if (host != NULL && number(&rest, &port) == 0 && (k = word(&rest)) != NULL &&
            unhex(k, key, sizeof key) == 0) {
            tox_bootstrap(tox, host, (uint16_t)port, key, &err);
        }
        if (err == TOX_ERR_BOOTSTRAP_OK) out("OK bootstrap"); else out("ERR bootstrap %d", (int)err);
    } else if (strcmp(cmd, "name") == 0) {
        Tox_Err_Set_Info err;
        tox_self_set_name(tox, (const uint8_t *)rest, strlen(rest), &err);
        if (err == TOX_ERR_SET_INFO_OK) out("OK name"); else out("ERR name %d", (int)err);
    } else if (strcmp(cmd, "call") == 0 || strcmp(cmd, "answer") == 0) {
        if (number(&rest, &a) != 0 || number(&rest, &b) != 0 || number(&rest, &c) != 0) {
            out("ERR %s -1", cmd);
        } else if (cmd[0] == 'c') {
            Toxav_Err_Call err;
            toxav_call(g_av, a, b, c, &err);
            if (err == TOXAV_ERR_CALL_OK) out("OK call"); else out("ERR call %d", (int)err);
        } else {
            Toxav_Err_Answer err;
            toxav_answer(g_av, a, b, c, &err);
            if (err == TOXAV_ERR_ANSWER_OK) out("OK answer"); else out("ERR answer %d", (int)err);
        }
    } else if (strcmp(cmd, "control") == 0) {
        Toxav_Call_Control ctl;
        if (number(&rest, &a) != 0 || parse_control(word(&rest), &ctl) != 0) {
            out("ERR control -1");
        } else {
            do_control(a, ctl, cmd);
        }
    } else if (strcmp(cmd, "hangup") == 0) {
        if (number(&rest, &a) != 0) out("ERR hangup -1");
        else do_control(a, TOXAV_CALL_CONTROL_CANCEL, cmd);
    } else if (strcmp(cmd, "abitrate") == 0 || strcmp(cmd, "vbitrate") == 0) {
        Toxav_Err_Bit_Rate_Set err = TOXAV_ERR_BIT_RATE_SET_FRIEND_NOT_FOUND;
        if (number(&rest, &a) == 0 && number(&rest, &b) == 0) {
            if (cmd[0] == 'a') toxav_audio_set_bit_rate(g_av, a, b, &err);
            else toxav_video_set_bit_rate(g_av, a, b, &err);
        }
        if (err == TOXAV_ERR_BIT_RATE_SET_OK) out("OK %s", cmd); else out("ERR %s %d", cmd, (int)err);
    } else if (strcmp(cmd, "tone") == 0 || strcmp(cmd, "marks") == 0) {
        struct friend_av *f;
        b = 0;
        if (number(&rest, &a) != 0 || (f = fav(a)) == NULL ||
            (cmd[0] == 't' && number(&rest, &b) != 0)) {
            out("ERR %s -1", cmd);
        } else {
            start_audio(&f->audio, cmd[0] == 'm', (double)b);
            out("OK %s", cmd);
        }
    } else if (strcmp(cmd, "video") == 0) {
        struct friend_av *f;
        uint32_t w = 320, h = 240, noise = 0;
        if (number(&rest, &a) != 0 || (f = fav(a)) == NULL || number(&rest, &b) != 0) {
            out("ERR video -1");
            return 0;
        }
        if (number(&rest, &w) == 0 && number(&rest, &h) == 0) {
            (void)number(&rest, &noise);
        }
        if (w < 16 || h < 16 || w > MAX_W || h > MAX_H || noise > 60 || b > 120) {
            out("ERR video -1");
            return 0;
        }
        int was_on = f->video_on;
        f->video_on = b > 0;
        f->fps = b;
        f->w = (int)w;
        f->h = (int)h;
        f->noise = (int)noise;
        if (f->video_on && !was_on) {
            f->vnext = now_s();
        }
        out("OK video");
    } else if (strcmp(cmd, "sendfile") == 0) {
        struct friend_av *f;
        Tox_Err_File_Send err = TOX_ERR_FILE_SEND_FRIEND_NOT_FOUND;
        if (number(&rest, &a) == 0 && (f = fav(a)) != NULL && number(&rest, &b) == 0) {
            static const uint8_t name[] = "call-bench.bin";
            uint64_t size = (uint64_t)b * MIB;
            uint32_t file = tox_file_send(tox, a, TOX_FILE_KIND_DATA, size, NULL, name,
                                          sizeof name - 1, &err);
            if (err == TOX_ERR_FILE_SEND_OK) {
                f->sending = 1;
                f->send_file = file;
                f->send_size = size;
                f->backlog_len = 0;
                out("OK sendfile %u", file);
                return 0;
            }
        }
        out("ERR sendfile %d", (int)err);
    } else if (strcmp(cmd, "av-new") == 0) {
        int conf = toxav_add_av_groupchat(tox, on_group_audio, NULL);
        if (conf >= 0) out("OK av-new %d", conf); else out("ERR av-new %d", conf);
    } else if (strcmp(cmd, "new") == 0) {
        Tox_Err_Conference_New err;
        uint32_t conf = tox_conference_new(tox, &err);
        if (err == TOX_ERR_CONFERENCE_NEW_OK) out("OK new %u", conf); else out("ERR new %d", (int)err);
    } else if (strcmp(cmd, "invite") == 0) {
        Tox_Err_Conference_Invite err = TOX_ERR_CONFERENCE_INVITE_CONFERENCE_NOT_FOUND;
        if (number(&rest, &a) == 0 && number(&rest, &b) == 0) {
            tox_conference_invite(tox, a, b, &err);
        }
        if (err == TOX_ERR_CONFERENCE_INVITE_OK) out("OK invite"); else out("ERR invite %d", (int)err);
    } else if (strcmp(cmd, "join-next-invite") == 0) {
        out("OK join-next-invite %zu", invite_count);
        if (invite_count > 0) {
            struct invite inv = invites[0];
            memmove(invites, invites + 1, (invite_count - 1) * sizeof invites[0]);
            --invite_count;
            join_invite(tox, &inv);
        } else {
            ++joins_wanted;
        }
    } else if (strcmp(cmd, "peers") == 0) {
        if (number(&rest, &a) != 0) {
            out("ERR peers -1");
            return 0;
        }
        Tox_Err_Conference_Peer_Query err;
        uint32_t on = tox_conference_peer_count(tox, a, &err);
        if (err != TOX_ERR_CONFERENCE_PEER_QUERY_OK) {
            out("ERR peers %d", (int)err);
            return 0;
        }
        for (uint32_t i = 0; i < on; ++i) {
            uint8_t pk[TOX_PUBLIC_KEY_SIZE] = {0};
            char h[2 * TOX_PUBLIC_KEY_SIZE + 1];
            tox_conference_peer_get_public_key(tox, a, i, pk, NULL);
            hex(pk, TOX_PUBLIC_KEY_SIZE, h);
            out("PEER %u %u %d %s", a, i, tox_conference_peer_number_is_ours(tox, a, i, NULL), h);
        }
        out("OK peers %u %u", on, tox_conference_offline_peer_count(tox, a, NULL));
    } else if (strcmp(cmd, "gtone") == 0 || strcmp(cmd, "gmarks") == 0) {
        b = 0;
        if (number(&rest, &a) != 0 || a >= MAX_CONFS || (cmd[1] == 't' && number(&rest, &b) != 0)) {
            out("ERR %s -1", cmd);
        } else {
            start_audio(&confs[a], cmd[1] == 'm', (double)b);
            out("OK %s", cmd);
        }
    } else if (strcmp(cmd, "gav") == 0) {
        char *w;
        if (number(&rest, &a) != 0 || (w = word(&rest)) == NULL) {
            out("ERR gav -1");
        } else if (strcmp(w, "on") == 0) {
            int r = toxav_groupchat_enable_av(tox, a, on_group_audio, NULL);
            if (r == 0) out("OK gav"); else out("ERR gav %d", r);
        } else if (strcmp(w, "off") == 0) {
            int r = toxav_groupchat_disable_av(tox, a);
            if (r == 0) out("OK gav"); else out("ERR gav %d", r);
        } else {
            out("OK gav %d", toxav_groupchat_av_enabled(tox, a));
        }
    } else {
        out("ERR %s -1", cmd);
    }
    return 0;
}

int main(int argc, char **argv) {
    struct { const char *host; uint16_t port; uint8_t key[TOX_PUBLIC_KEY_SIZE]; } boot[MAX_BOOT];
    int nboot = 0;
    const char *load = NULL;
    const char *name = NULL;
    int lan = 0;
    uint16_t port = 0;
    double seconds = 600;

    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
            port = (uint16_t)atoi(argv[++i]);
        } else if (strcmp(argv[i], "--bootstrap") == 0 && i + 3 < argc && nboot < MAX_BOOT) {
            boot[nboot].host = argv[i + 1];
            boot[nboot].port = (uint16_t)atoi(argv[i + 2]);
            if (unhex(argv[i + 3], boot[nboot].key, TOX_PUBLIC_KEY_SIZE) != 0) {
                fprintf(stderr, "bad bootstrap key\n");
                return 2;
            }
            ++nboot;
            i += 3;
        } else if (strcmp(argv[i], "--load") == 0 && i + 1 < argc) {
            load = argv[++i];
        } else if (strcmp(argv[i], "--name") == 0 && i + 1 < argc) {
            name = argv[++i];
        } else if (strcmp(argv[i], "--accept") == 0) {
            accept_all = 1;
        } else if (strcmp(argv[i], "--auto-join") == 0) {
            auto_join = 1;
        } else if (strcmp(argv[i], "--answer") == 0 && i + 2 < argc) {
            auto_answer = 1;
            answer_abr = (uint32_t)atoi(argv[i + 1]);
            answer_vbr = (uint32_t)atoi(argv[i + 2]);
            i += 2;
        } else if (strcmp(argv[i], "--lan") == 0) {
            lan = 1;
        } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            seconds = atof(argv[++i]);
        } else {
            fprintf(stderr, "unknown or incomplete option %s\n", argv[i]);
            return 2;
        }
    }
    for (int f = 0; f < MAX_FRIENDS; ++f) {
        friends[f].last_err[0] = friends[f].last_err[1] = -1;
    }
    vbuf = malloc((size_t)MAX_W * MAX_H * 3 / 2 + 4);
    if (vbuf == NULL) {
        return 1;
    }

    Tox_Err_Options_New oerr;
    struct Tox_Options *opts = tox_options_new(&oerr);
    if (opts == NULL) {
        return 1;
    }
    tox_options_set_ipv6_enabled(opts, false);
    tox_options_set_local_discovery_enabled(opts, lan);
    tox_options_set_start_port(opts, port);
    tox_options_set_end_port(opts, port);
    if (port == 0) {
        tox_options_set_start_port(opts, 33445);
        tox_options_set_end_port(opts, 33545);
    }
    uint8_t *saved = NULL;
    if (load != NULL) {
        FILE *fp = fopen(load, "rb");
        long n = -1;
        if (fp != NULL && fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) > 0 &&
            fseek(fp, 0, SEEK_SET) == 0 && (saved = malloc((size_t)n)) != NULL &&
            fread(saved, 1, (size_t)n, fp) == (size_t)n) {
            tox_options_set_savedata_type(opts, TOX_SAVEDATA_TYPE_TOX_SAVE);
            tox_options_set_savedata_data(opts, saved, (size_t)n);
        } else {
            fprintf(stderr, "cannot read %s\n", load);
            return 2;
        }
        fclose(fp);
    }
    Tox_Err_New nerr;
    Tox *tox = tox_new(opts, &nerr);
    tox_options_free(opts);
    free(saved);
    if (tox == NULL) {
        fprintf(stderr, "tox_new failed: %d\n", (int)nerr);
        return 1;
    }
    g_tox = tox;
    Toxav_Err_New averr;
    g_av = toxav_new(tox, &averr);
    if (g_av == NULL) {
        fprintf(stderr, "toxav_new failed: %d\n", (int)averr);
        return 1;
    }
    if (name != NULL) {
        tox_self_set_name(tox, (const uint8_t *)name, strlen(name), NULL);
    }
    for (int i = 0; i < nboot; ++i) {
        Tox_Err_Bootstrap berr;
        tox_bootstrap(tox, boot[i].host, boot[i].port, boot[i].key, &berr);
        if (berr != TOX_ERR_BOOTSTRAP_OK) {
            fprintf(stderr, "bootstrap %s:%u failed: %d\n", boot[i].host, boot[i].port, (int)berr);
        }
    }
    tox_callback_self_connection_status(tox, on_self);
    tox_callback_friend_request(tox, on_request);
    tox_callback_friend_connection_status(tox, on_friend);
    tox_callback_conference_invite(tox, on_invite);
    tox_callback_conference_connected(tox, on_connected);
    tox_callback_conference_peer_list_changed(tox, on_peer_list);
    tox_callback_file_chunk_request(tox, on_chunk_request);
    tox_callback_file_recv(tox, on_file_recv);
    tox_callback_file_recv_chunk(tox, on_file_chunk);
    toxav_callback_call(g_av, on_call, NULL);
    toxav_callback_call_state(g_av, on_call_state, NULL);
    toxav_callback_audio_bit_rate(g_av, on_abitrate, NULL);
    toxav_callback_video_bit_rate(g_av, on_vbitrate, NULL);
    toxav_callback_audio_receive_frame(g_av, on_audio, NULL);
    toxav_callback_video_receive_frame(g_av, on_video, NULL);

    uint8_t addr[TOX_ADDRESS_SIZE];
    uint8_t dht[TOX_PUBLIC_KEY_SIZE];
    char addr_hex[2 * TOX_ADDRESS_SIZE + 1];
    char dht_hex[2 * TOX_PUBLIC_KEY_SIZE + 1];
    tox_self_get_address(tox, addr);
    tox_self_get_dht_id(tox, dht);
    hex(addr, sizeof addr, addr_hex);
    hex(dht, sizeof dht, dht_hex);
    Dl_info info;
    const char *lib = dladdr((void *)tox_new, &info) != 0 && info.dli_fname ? info.dli_fname : "?";
    out("READY %s %s %u %s", addr_hex, dht_hex, tox_self_get_udp_port(tox, NULL), lib);

    int flags = fcntl(STDIN_FILENO, F_GETFL);
    fcntl(STDIN_FILENO, F_SETFL, flags | O_NONBLOCK);
    char buf[LINE_MAX_LEN];
    size_t have = 0;
    int stdin_open = 1;
    double end = now_s() + seconds;
    double next_tox = 0;
    int quit = 0;
    while (!quit && now_s() < end) {
        double now = now_s();
        if (now >= next_tox) {
            tox_iterate(tox, NULL);
            next_tox = now_s() + tox_iteration_interval(tox) / 1000.0;
        }
        toxav_iterate(g_av);
        flush_chunks();
        now = now_s();
        send_due(now);
        double wake = next_due(now, toxav_iteration_interval(g_av) / 1000.0);
        if (next_tox < wake) {
            wake = next_tox;
        }
        int wait_ms = (int)ceil((wake - now_s()) * 1000.0);
        if (wait_ms < 0) {
            wait_ms = 0;
        }
        if (wait_ms > 50) {
            wait_ms = 50;
        }
        struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
        if (poll(&pfd, stdin_open ? 1 : 0, wait_ms) > 0 && (pfd.revents & (POLLIN | POLLHUP))) {
            ssize_t n = read(STDIN_FILENO, buf + have, sizeof buf - 1 - have);
            if (n <= 0 && !(n < 0 && (errno == EAGAIN || errno == EINTR))) {
                stdin_open = 0;
                quit = 1;
            } else if (n > 0) {
                have += (size_t)n;
            }
            char *nl;
            while (!quit && (nl = memchr(buf, '\n', have)) != NULL) {
                *nl = 0;
                quit = command(tox, buf);
                size_t used = (size_t)(nl - buf) + 1;
                memmove(buf, nl + 1, have - used);
                have -= used;
            }
            if (have == sizeof buf - 1) {
                have = 0;
            }
        }
    }
    out("BYE");
    toxav_kill(g_av);
    tox_kill(tox);
    free(vbuf);
    return 0;
}
