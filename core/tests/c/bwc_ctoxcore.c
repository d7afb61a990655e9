/* c-toxcore 0.2.18's bwcontroller.c (from Debian's libtoxcore.a) driven by a script on
 * stdin, with Messenger, tox.c and the clock replaced by the few functions it calls, for
 * core/tests/av_wire_ctoxcore.rs. Script lines:
 *
 *   t MS        the clock reads MS milliseconds
 *   recv N      bwc_add_recv(N)
 *   lost N      bwc_add_lost(N)
 *   report HEX  a packet 196 (id byte first) from the friend
 *
 * Prints every packet the controller sends as `send HEX` and every loss ratio it hands on
 * as `ratio R` (4 decimals). The Messenger handed to bwc_new is zeroed memory but for its
 * first field, the logger, which bwcontroller.c reads. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Messenger Messenger;
typedef struct Logger Logger;
typedef struct Mono_Time Mono_Time;
typedef struct BWController BWController;

typedef void m_cb(BWController *bwc, uint32_t friend_number, float loss, void *user_data);
typedef int lossy_cb(Messenger *m, uint32_t friend_number, const uint8_t *data, uint16_t len,
                     void *object);

Logger *logger_new(void);
BWController *bwc_new(Messenger *m, void *tox, uint32_t friend_number, m_cb *mcb,
                      void *mcb_user_data, Mono_Time *bwc_mono_time);
void bwc_add_lost(BWController *bwc, uint32_t bytes_lost);
void bwc_add_recv(BWController *bwc, uint32_t recv_bytes);

static uint64_t now_ms;
static lossy_cb *handler;
static void *handler_object;

uint64_t current_time_monotonic(Mono_Time *mono_time)
{
    (void)mono_time;
    return now_ms;
}

int m_callback_rtp_packet(Messenger *m, int32_t friend_number, uint8_t byte, lossy_cb *function,
                          void *object)
{
    (void)m;
    (void)friend_number;
    (void)byte;
    handler = function;
    handler_object = object;
    return 0;
}

bool tox_friend_send_lossy_packet(void *tox, uint32_t friend_number, const uint8_t *data,
                                  size_t length, int *error)
{
    (void)tox;
    (void)friend_number;
    printf("send ");
    for (size_t i = 0; i < length; ++i) {
        printf("%02x", data[i]);
    }
    printf("\n");
    *error = 0;
    return true;
}

static void on_loss(BWController *bwc, uint32_t friend_number, float loss, void *user_data)
{
    (void)bwc;
    (void)friend_number;
    (void)user_data;
    printf("ratio %.4f\n", loss);
}

int main(void)
{
    void **m = calloc(1, 1 << 16);
    if (m == NULL) {
        return 1;
    }
    m[0] = logger_new();
    now_ms = 10000;
    BWController *bwc = bwc_new((Messenger *)m, NULL, 0, on_loss, NULL, NULL);
    if (bwc == NULL || handler == NULL) {
        return 1;
    }
    char line[256];
    while (fgets(line, sizeof(line), stdin) != NULL) {
        char word[16];
        char arg[128];
        if (sscanf(line, "%15s %127s", word, arg) != 2) {
            return 3;
        }
        if (strcmp(word, "t") == 0) {
            now_ms = strtoull(arg, NULL, 10);
        } else if (strcmp(word, "recv") == 0) {
            bwc_add_recv(bwc, strtoul(arg, NULL, 10));
        } else if (strcmp(word, "lost") == 0) {
            bwc_add_lost(bwc, strtoul(arg, NULL, 10));
        } else {
            uint8_t packet[64];
            size_t n = 0;
            for (char *p = arg; p[0] != '\0' && p[1] != '\0' && n < sizeof(packet); p += 2) {
                unsigned byte;
                if (sscanf(p, "%2x", &byte) != 1) {
                    return 3;
                }
                packet[n++] = (uint8_t)byte;
            }
            handler((Messenger *)m, 0, packet, (uint16_t)n, handler_object);
        }
    }
    fflush(stdout);
    return 0;
}
