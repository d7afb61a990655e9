/* c-toxcore 0.2.18's rtp.c (from Debian's libtoxcore.a) as a sender and as a receiver, with
 * Messenger, tox.c, the bandwidth controller and the clock replaced by the few functions
 * rtp.c calls, for core/tests/av_wire_ctoxcore.rs:
 *
 *   rtp_ctoxcore send KIND LEN:KEY...  rtp_send_data for frames of the given lengths (KEY
 *                                       1 for a key frame), frame i sent at 1000 + 33 i ms;
 *                                       prints every packet as `pkt HEX` (id byte first)
 *   rtp_ctoxcore recv KIND              reads `HEX` packets from stdin into rtp.c's receive
 *                                       handler; prints every frame handed on as
 *                                       `frame SEQ TS KEY LEN RECEIVED FNV`, then the
 *                                       bandwidth controller's counts as `bwc LOST RECV`
 *
 * KIND is 192 (audio) or 193 (video). The structs are rtp.h's, declared here with the same
 * members in the same order. The Messenger handed to rtp_new is zeroed memory but for its
 * first three fields (`log`, `mono_time`, `rng`), which rtp.c reads. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Messenger Messenger;
typedef struct Logger Logger;
typedef struct Random Random;
typedef struct Mono_Time Mono_Time;
typedef struct RTPSession RTPSession;

struct RTPHeader {
    unsigned ve: 2;
    unsigned pe: 1;
    unsigned xe: 1;
    unsigned cc: 4;
    unsigned ma: 1;
    unsigned pt: 7;
    uint16_t sequnum;
    uint32_t timestamp;
    uint32_t ssrc;
    uint64_t flags;
    uint32_t offset_full;
    uint32_t data_length_full;
    uint32_t received_length_full;
    uint16_t offset_lower;
    uint16_t data_length_lower;
};

struct RTPMessage {
    uint16_t len;
    struct RTPHeader header;
    uint8_t data[];
};

typedef int rtp_m_cb(Mono_Time *mono_time, void *cs, struct RTPMessage *msg);
typedef int lossy_cb(Messenger *m, uint32_t friend_number, const uint8_t *data, uint16_t len,
                     void *object);

Logger *logger_new(void);
const Random *system_random(void);
RTPSession *rtp_new(int payload_type, Messenger *m, void *tox, uint32_t friend_number,
                    void *bwc, void *cs, rtp_m_cb *mcb);
int rtp_send_data(RTPSession *session, const uint8_t *data, uint32_t length, bool is_keyframe,
                  const Logger *log);

static uint64_t now_ms = 1000;
static lossy_cb *handler;
static void *handler_object;
static uint64_t bwc_lost, bwc_recv;

uint64_t current_time_monotonic(Mono_Time *mono_time)
{
    (void)mono_time;
    return now_ms;
}

void bwc_add_lost(void *bwc, uint32_t bytes)
{
    (void)bwc;
    bwc_lost += bytes;
}

void bwc_add_recv(void *bwc, uint32_t bytes)
{
    (void)bwc;
    bwc_recv += bytes;
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
    printf("pkt ");
    for (size_t i = 0; i < length; ++i) {
        printf("%02x", data[i]);
    }
    printf("\n");
    *error = 0;
    return true;
}

static int on_frame(Mono_Time *mono_time, void *cs, struct RTPMessage *msg)
{
    (void)mono_time;
    (void)cs;
    if (msg == NULL) {
        return -1;
    }
    const bool large = (msg->header.flags & 1) != 0;
    const uint32_t len = large ? msg->header.data_length_full : msg->header.data_length_lower;
    const uint32_t received = large ? msg->header.received_length_full : msg->len;
    uint32_t fnv = 2166136261u;
    for (uint32_t i = 0; i < len; ++i) {
        fnv = (fnv ^ msg->data[i]) * 16777619u;
    }
    printf("frame %u %" PRIu32 " %d %" PRIu32 " %" PRIu32 " %08" PRIx32 "\n", msg->header.sequnum,
           msg->header.timestamp, (int)((msg->header.flags >> 1) & 1), len, received, fnv);
    free(msg);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        return 2;
    }
    void **m = calloc(1, 1 << 16);
    if (m == NULL) {
        return 1;
    }
    Logger *log = logger_new();
    m[0] = log;
    m[2] = (void *)system_random();
    const int kind = atoi(argv[2]);
    static int cs;
    RTPSession *session = rtp_new(kind, (Messenger *)m, NULL, 0, &cs, &cs, on_frame);
    if (session == NULL || handler == NULL) {
        return 1;
    }
    if (strcmp(argv[1], "send") == 0) {
        for (int i = 3; i < argc; ++i) {
            const uint32_t len = strtoul(argv[i], NULL, 10);
            const char *colon = strchr(argv[i], ':');
            const bool key = colon != NULL && colon[1] == '1';
            uint8_t *frame = malloc(len + 1);
            for (uint32_t j = 0; j < len; ++j) {
                frame[j] = (uint8_t)((i - 3) * 31 + j * 7);
            }
            now_ms = 1000 + 33 * (uint64_t)(i - 3);
            rtp_send_data(session, frame, len, key, log);
            free(frame);
        }
    } else {
        static char line[8192];
        static uint8_t packet[4096];
        while (fgets(line, sizeof(line), stdin) != NULL) {
            size_t n = 0;
            for (char *p = line; p[0] != '\0' && p[1] != '\0' && p[0] != '\n'; p += 2) {
                unsigned byte;
                if (sscanf(p, "%2x", &byte) != 1 || n == sizeof(packet)) {
                    return 3;
                }
                packet[n++] = (uint8_t)byte;
            }
            handler((Messenger *)m, 0, packet, (uint16_t)n, handler_object);
        }
        printf("bwc %" PRIu64 " %" PRIu64 "\n", bwc_lost, bwc_recv);
    }
    fflush(stdout);
    return 0;
}
