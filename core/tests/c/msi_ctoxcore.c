/* c-toxcore 0.2.18's msi.c (from Debian's libtoxcore.a) run through a fixed script of
 * calls and incoming packets, with Messenger replaced by the few functions msi.c calls:
 * every packet 69 it sends and every callback it invokes is printed, one per line, for
 * core/tests/av_wire_ctoxcore.rs to compare with rustox's Msi on the same script.
 *
 * Only msi.c, util.c and logger.c are linked from the archive: these stubs are all msi.c
 * needs from Messenger.c, so Messenger.c is not pulled in. The Messenger handed to
 * msi_new is zeroed memory but for its first field, the logger (`struct Messenger`'s `log`),
 * which msi.c reads: a logger without a callback, so nothing is logged. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>

typedef struct Messenger Messenger;
typedef struct MSISession MSISession;
typedef struct Logger Logger;

Logger *logger_new(void);

/* The head of msi.h's MSICall, which the callbacks read. */
typedef struct MSICallHead {
    void *session;
    int state;
    uint8_t peer_capabilities;
    uint8_t self_capabilities;
    uint16_t peer_vfpsz;
    uint32_t friend_number;
    int error;
} MSICallHead;

typedef void msi_packet_cb(Messenger *m, uint32_t friend_number, const uint8_t *data,
                           uint16_t length, void *object);
typedef void status_cb(Messenger *m, uint32_t friend_number, uint8_t status, void *data);
typedef int msi_action_cb(void *av, MSICallHead *call);

MSISession *msi_new(Messenger *m);
int msi_invite(MSISession *session, MSICallHead **call, uint32_t friend_number, uint8_t caps);
int msi_hangup(MSICallHead *call);
int msi_answer(MSICallHead *call, uint8_t caps);
int msi_change_capabilities(MSICallHead *call, uint8_t caps);
void msi_callback_invite(MSISession *session, msi_action_cb *callback);
void msi_callback_start(MSISession *session, msi_action_cb *callback);
void msi_callback_end(MSISession *session, msi_action_cb *callback);
void msi_callback_error(MSISession *session, msi_action_cb *callback);
void msi_callback_peertimeout(MSISession *session, msi_action_cb *callback);
void msi_callback_capabilities(MSISession *session, msi_action_cb *callback);

static msi_packet_cb *on_packet;
static void *on_packet_object;
static status_cb *on_status;
static void *on_status_object;
static MSICallHead *calls[8];

void m_callback_msi_packet(Messenger *m, msi_packet_cb *function, void *userdata)
{
    (void)m;
    on_packet = function;
    on_packet_object = userdata;
}

void m_callback_connectionstatus_internal_av(Messenger *m, status_cb *function, void *userdata)
{
    (void)m;
    on_status = function;
    on_status_object = userdata;
}

bool m_msi_packet(const Messenger *m, int32_t friend_number, const uint8_t *data, uint16_t length)
{
    (void)m;
    printf("send %d 45", friend_number);
    for (uint16_t i = 0; i < length; ++i) {
        printf("%02x", data[i]);
    }
    printf("\n");
    return true;
}

static int ev_invite(void *av, MSICallHead *c)
{
    (void)av;
    calls[c->friend_number & 7] = c;
    printf("invite %u %u\n", c->friend_number, c->peer_capabilities);
    return 0;
}
static int ev_start(void *av, MSICallHead *c)
{
    (void)av;
    printf("start %u %u\n", c->friend_number, c->peer_capabilities);
    return 0;
}
static int ev_end(void *av, MSICallHead *c)
{
    (void)av;
    printf("end %u\n", c->friend_number);
    return 0;
}
static int ev_error(void *av, MSICallHead *c)
{
    (void)av;
    printf("error %u %d\n", c->friend_number, c->error);
    return 0;
}
static int ev_timeout(void *av, MSICallHead *c)
{
    (void)av;
    printf("timeout %u\n", c->friend_number);
    return 0;
}
static int ev_caps(void *av, MSICallHead *c)
{
    (void)av;
    printf("caps %u %u\n", c->friend_number, c->peer_capabilities);
    return 0;
}

/* A packet 69 from `friend`, given without its id byte, as Messenger hands it over. */
static void feed(Messenger *m, uint32_t friend_number, const uint8_t *data, uint16_t length)
{
    printf("recv %u\n", friend_number);
    on_packet(m, friend_number, data, length, on_packet_object);
}

#define FEED(m, f, ...) do { \
        const uint8_t bytes_[] = {__VA_ARGS__}; \
        feed(m, f, bytes_, sizeof(bytes_)); \
    } while (0)

int main(void)
{
    Messenger *m = calloc(1, 1 << 16);
    if (m == NULL) {
        return 1;
    }
    *(Logger **)m = logger_new();
    MSISession *s = msi_new(m);
    if (s == NULL) {
        return 1;
    }
    msi_callback_invite(s, ev_invite);
    msi_callback_start(s, ev_start);
    msi_callback_end(s, ev_end);
    msi_callback_error(s, ev_error);
    msi_callback_peertimeout(s, ev_timeout);
    msi_callback_capabilities(s, ev_caps);

    /* We call friend 0; it answers with audio and video; we change, then hang up. */
    MSICallHead *c0 = NULL;
    printf("cmd invite 0 %d\n", msi_invite(s, &c0, 0, 20));
    FEED(m, 0, 1, 1, 1, 3, 1, 60, 0);
    FEED(m, 0, 1, 1, 1, 3, 1, 60, 0);
    FEED(m, 0, 1, 1, 1, 3, 1, 12, 0);
    printf("cmd caps 0 %d\n", msi_change_capabilities(c0, 4));
    printf("cmd hangup 0 %d\n", msi_hangup(c0));
    /* Stray push, garbage, bad enum, no request, no end marker, empty. */
    FEED(m, 0, 1, 1, 1, 3, 1, 60, 0);
    FEED(m, 0, 9, 9, 9, 0);
    FEED(m, 0, 1, 1, 3, 0);
    FEED(m, 0, 3, 1, 4, 0);
    FEED(m, 0, 1, 1, 2);
    FEED(m, 0, 1, 2, 0, 0, 0);
    /* Friend 1 calls; calls again while we have not answered. */
    FEED(m, 1, 1, 1, 0, 3, 1, 60, 0);
    FEED(m, 1, 1, 1, 0, 3, 1, 60, 0);
    /* Friend 2 calls without capabilities. */
    FEED(m, 2, 1, 1, 0, 0);
    /* Friend 3 calls, we answer, it calls again, pushes early, hangs up. */
    FEED(m, 3, 3, 1, 52, 1, 1, 0, 0);
    printf("cmd answer 3 %d\n", msi_answer(calls[3], 36));
    FEED(m, 3, 1, 1, 0, 3, 1, 52, 0);
    FEED(m, 3, 1, 1, 2, 0);
    /* Friend 4 calls, we answer; it reports an error. */
    FEED(m, 4, 1, 1, 0, 3, 1, 20, 0);
    printf("cmd answer 4 %d\n", msi_answer(calls[4], 20));
    FEED(m, 4, 1, 1, 2, 2, 1, 6, 0);
    /* Friend 5 calls and goes offline; we call friend 6 and it goes offline. */
    FEED(m, 5, 1, 1, 0, 3, 1, 20, 0);
    printf("offline 5\n");
    on_status(m, 5, 0, on_status_object);
    MSICallHead *c6 = NULL;
    printf("cmd invite 6 %d\n", msi_invite(s, &c6, 6, 60));
    printf("offline 6\n");
    on_status(m, 6, 0, on_status_object);
    /* Friend 7 calls; a repeated field keeps its last value; trailing bytes after an
     * inner end marker are ignored. */
    FEED(m, 7, 1, 1, 0, 3, 1, 4, 3, 1, 8, 0, 5, 5, 0);
    printf("cmd hangup 7 %d\n", msi_hangup(calls[7]));
    fflush(stdout);
    return 0;
}
