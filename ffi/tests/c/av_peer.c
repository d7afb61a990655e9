/*
 * av_peer.c: a c-toxcore peer for the clients' call tests, written against c-toxcore
 * 0.2.18's tox.h and toxav.h and linked against Debian's libtoxcore.so.2.
 *
 * It accepts every friend request, greets each friend that comes online with a message,
 * answers every call (audio at 48 kbit/s, no video),
 * sends a 440 Hz tone while the call is active, and reports what it gets. With `--call`
 * it calls its first friend once that friend is online instead of waiting to be called.
 *
 * Output, one line each, flushed: `LIB <path>`, `ID <address hex>`, `DHT <key hex>
 * <port>`, `FRIEND_REQUEST <pk hex>`, `FRIEND_ONLINE <n>`, `CALLING <n> <ok> <err>`,
 * `CALL <n> audio=<0|1> video=<0|1>`, `ANSWER <ok> <err>`, `STATE <n> <state>`,
 * `AUDIO_FRAMES <count> channels=<c> rate=<hz>` (after 1, 10 and 50 frames),
 * `VIDEO_FRAMES <count> <w>x<h>` (after 1 and 10 frames).
 *
 * Usage: av_peer --port <p> [--name <name>] [--call] [--timeout <s>]. Stdin `QUIT` (or its
 * end) stops it; it prints `BYE` and exits 0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tox/tox.h>
#include <tox/toxav.h>

#include "testkit.h"

#define RATE 48000
#define FRAME 960

static bool in_call;
static uint32_t call_friend;
static int audio_frames, video_frames;
static bool place_call, called;

static void on_request(Tox *tox, const uint8_t *pk, const uint8_t *msg, size_t len, void *ud)
{
    (void)msg;
    (void)len;
    (void)ud;
    char h[2 * TOX_PUBLIC_KEY_SIZE + 1];
    hex(pk, TOX_PUBLIC_KEY_SIZE, h);
    say("FRIEND_REQUEST %s", h);
    tox_friend_add_norequest(tox, pk, NULL);
}

static void on_connection(Tox *tox, uint32_t friend_number, Tox_Connection status, void *ud)
{
    (void)ud;
    if (status != TOX_CONNECTION_NONE) {
        say("FRIEND_ONLINE %u", friend_number);
        /* A message opens the friend's chat window in toxic, where /call is typed. */
        static const char hello[] = "hello from the av peer";
        tox_friend_send_message(tox, friend_number, TOX_MESSAGE_TYPE_NORMAL, (const uint8_t *)hello,
                                sizeof hello - 1, NULL);
    } else {
        say("FRIEND_OFFLINE %u", friend_number);
    }
}

static void on_call(ToxAV *av, uint32_t friend_number, bool audio, bool video, void *ud)
{
    (void)ud;
    say("CALL %u audio=%d video=%d", friend_number, audio, video);
    Toxav_Err_Answer e;
    bool ok = toxav_answer(av, friend_number, 48, 0, &e);
    say("ANSWER %d %d", ok, (int)e);
    if (ok) {
        call_friend = friend_number;
    }
}

static void on_state(ToxAV *av, uint32_t friend_number, uint32_t state, void *ud)
{
    (void)av;
    (void)ud;
    say("STATE %u %u", friend_number, state);
    if (state == TOXAV_FRIEND_CALL_STATE_FINISHED || state == TOXAV_FRIEND_CALL_STATE_ERROR) {
        in_call = false;
    } else {
        in_call = true;
        call_friend = friend_number;
    }
}

static void on_audio(ToxAV *av, uint32_t friend_number, const int16_t *pcm, size_t count, uint8_t channels,
                     uint32_t rate, void *ud)
{
    (void)av;
    (void)friend_number;
    (void)pcm;
    (void)count;
    (void)ud;
    ++audio_frames;
    if (audio_frames == 1 || audio_frames == 10 || audio_frames == 50) {
        say("AUDIO_FRAMES %d channels=%u rate=%u", audio_frames, channels, rate);
    }
}

static void on_video(ToxAV *av, uint32_t friend_number, uint16_t w, uint16_t h, const uint8_t *y,
                     const uint8_t *u, const uint8_t *v, int32_t ys, int32_t us, int32_t vs, void *ud)
{
    (void)av;
    (void)friend_number;
    (void)y;
    (void)u;
    (void)v;
    (void)ys;
    (void)us;
    (void)vs;
    (void)ud;
    ++video_frames;
    if (video_frames == 1 || video_frames == 10) {
        say("VIDEO_FRAMES %d %ux%u", video_frames, w, h);
    }
}

int main(int argc, char **argv)
{
    uint16_t port = 0;
    const char *name = "av peer";
    double timeout = 300;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
            port = (uint16_t)atoi(argv[++i]);
        } else if (strcmp(argv[i], "--name") == 0 && i + 1 < argc) {
            name = argv[++i];
        } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
            timeout = atof(argv[++i]);
        } else if (strcmp(argv[i], "--call") == 0) {
            place_call = true;
        } else {
            fprintf(stderr, "usage: av_peer --port <p> [--name <n>] [--call] [--timeout <s>]\n");
            return 2;
        }
    }
    Dl_info info;
    if (dladdr((void *)toxav_new, &info) && info.dli_fname != NULL) {
        say("LIB %s", info.dli_fname);
    }
    struct Tox_Options *o = tox_options_new(NULL);
    tox_options_set_ipv6_enabled(o, false);
    tox_options_set_local_discovery_enabled(o, false);
    tox_options_set_start_port(o, port);
    tox_options_set_end_port(o, port);
    Tox *tox = tox_new(o, NULL);
    tox_options_free(o);
    if (tox == NULL) {
        fprintf(stderr, "FAIL tox_new\n");
        return 1;
    }
    tox_self_set_name(tox, (const uint8_t *)name, strlen(name), NULL);
    tox_callback_friend_request(tox, on_request);
    tox_callback_friend_connection_status(tox, on_connection);
    ToxAV *av = toxav_new(tox, NULL);
    if (av == NULL) {
        fprintf(stderr, "FAIL toxav_new\n");
        return 1;
    }
    toxav_callback_call(av, on_call, NULL);
    toxav_callback_call_state(av, on_state, NULL);
    toxav_callback_audio_receive_frame(av, on_audio, NULL);
    toxav_callback_video_receive_frame(av, on_video, NULL);

    uint8_t addr[TOX_ADDRESS_SIZE], dht[TOX_PUBLIC_KEY_SIZE];
    char h[2 * TOX_ADDRESS_SIZE + 1];
    tox_self_get_address(tox, addr);
    hex(addr, sizeof addr, h);
    say("ID %s", h);
    tox_self_get_dht_id(tox, dht);
    hex(dht, sizeof dht, h);
    say("DHT %s %u", h, tox_self_get_udp_port(tox, NULL));

    fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
    char input[256];
    size_t input_len = 0;
    double start = now_s(), next_frame = start, phase = 0;
    int16_t pcm[FRAME];
    while (now_s() < start + timeout) {
        tox_iterate(tox, NULL);
        toxav_iterate(av);
        if (place_call && !called && tox_self_get_friend_list_size(tox) > 0
                && tox_friend_get_connection_status(tox, 0, NULL) != TOX_CONNECTION_NONE) {
            Toxav_Err_Call e;
            bool ok = toxav_call(av, 0, 48, 0, &e);
            say("CALLING 0 %d %d", ok, (int)e);
            called = true;
        }
        double now = now_s();
        while (next_frame <= now) {
            if (in_call) {
                for (int i = 0; i < FRAME; ++i) {
                    pcm[i] = (int16_t)(8000 * sin(phase));
                    phase += 2 * M_PI * 440 / RATE;
                }
                phase = fmod(phase, 2 * M_PI);
                toxav_audio_send_frame(av, call_friend, pcm, FRAME, 1, RATE, NULL);
            }
            next_frame += 0.02;
        }
        ssize_t n = read(0, input + input_len, sizeof input - 1 - input_len);
        if (n == 0) {
            break;
        }
        if (n > 0) {
            input_len += (size_t)n;
            input[input_len] = 0;
            if (strstr(input, "QUIT") != NULL) {
                break;
            }
            if (input_len > 200) {
                input_len = 0;
            }
        }
        uint32_t wait = toxav_iteration_interval(av);
        uint32_t t = tox_iteration_interval(tox);
        if (t < wait) {
            wait = t;
        }
        if (wait > 10) {
            wait = 10;
        }
        usleep(wait * 1000);
    }
    toxav_kill(av);
    tox_kill(tox);
    say("BYE");
    return 0;
}
