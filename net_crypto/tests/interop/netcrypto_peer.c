/* A c-toxcore 0.2.18 net_crypto peer for rustox's net_crypto interop tests.
 *
 * It drives c-toxcore's own net_crypto (from Debian's libtoxcore.a: the shared library
 * exports only tox.h) over UDP, so the peer on the other side of our Endpoint is code we did
 * not write. Built at test time with `cc netcrypto_peer.c libtoxcore.a -lsodium -lpthread`;
 * it is a separate process, nothing of ours is linked with c-toxcore.
 *
 * The few internal declarations below restate the v0.2.18 ABI (toxcore/network.h,
 * net_crypto.h, DHT.h, mono_time.h, logger.h, crypto_core.h, TCP_client.h); the structs are
 * layout descriptions, the rest are prototypes.
 *
 * usage: netcrypto_peer PORT listen
 *        netcrypto_peer PORT connect PEER_REAL_PK_HEX PEER_DHT_PK_HEX PEER_PORT
 * Prints "KEYS REAL_PK DHT_PK", then "ONLINE", "OFFLINE", "DATA hex", "LOSSY hex" as they
 * happen. Every lossless and lossy packet received is sent back unchanged. stdin commands:
 * "KILL" (crypto_kill), "QUIT" (or end of input).
 */
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testkit.h"

/* ---- v0.2.18 ABI ---------------------------------------------------------------------- */
typedef struct Logger Logger;
typedef struct Mono_Time Mono_Time;
typedef struct Random Random;
typedef struct Network Network;
typedef struct Networking_Core Networking_Core;
typedef struct DHT DHT;
typedef struct Net_Crypto Net_Crypto;

typedef struct Family { uint8_t value; } Family;
typedef union IP4 { uint32_t uint32; uint16_t uint16[2]; uint8_t uint8[4]; } IP4;
typedef union IP6 { uint8_t uint8[16]; uint16_t uint16[8]; uint32_t uint32[4]; uint64_t uint64[2]; } IP6;
typedef union IP_Union { IP4 v4; IP6 v6; } IP_Union;
typedef struct IP { Family family; IP_Union ip; } IP;
typedef struct IP_Port { IP ip; uint16_t port; } IP_Port;
typedef struct TCP_Proxy_Info { IP_Port ip_port; uint8_t proxy_type; } TCP_Proxy_Info;
typedef struct New_Connection New_Connection; /* only passed through */

typedef uint64_t mono_time_current_time_cb(Mono_Time *mono_time, void *user_data);
typedef int connection_status_cb(void *object, int id, bool status, void *userdata);
typedef int connection_data_cb(void *object, int id, const uint8_t *data, uint16_t length, void *userdata);
typedef int new_connection_cb(void *object, const New_Connection *n_c);

Logger *logger_new(void);
Mono_Time *mono_time_new(mono_time_current_time_cb *cb, void *user_data);
void mono_time_update(Mono_Time *mono_time);
const Random *system_random(void);
const Network *system_network(void);
void ip_init(IP *ip, bool ipv6enabled);
bool addr_parse_ip(const char *address, IP *to);
uint16_t net_htons(uint16_t hostshort);
Networking_Core *new_networking_ex(const Logger *log, const Network *ns, const IP *ip,
                                   uint16_t port_from, uint16_t port_to, unsigned int *error);
void networking_poll(const Networking_Core *net, void *userdata);
DHT *new_dht(const Logger *log, const Random *rng, const Network *ns, Mono_Time *mono_time,
             Networking_Core *net, bool hole_punching_enabled, bool lan_discovery_enabled);
const uint8_t *dht_get_self_public_key(const DHT *dht);
void do_dht(DHT *dht);
Net_Crypto *new_net_crypto(const Logger *log, const Random *rng, const Network *ns,
                           Mono_Time *mono_time, DHT *dht, const TCP_Proxy_Info *proxy_info);
const uint8_t *nc_get_self_public_key(const Net_Crypto *c);
void new_connection_handler(Net_Crypto *c, new_connection_cb *cb, void *object);
int accept_crypto_connection(Net_Crypto *c, const New_Connection *n_c);
int new_crypto_connection(Net_Crypto *c, const uint8_t *real_public_key, const uint8_t *dht_public_key);
int set_direct_ip_port(Net_Crypto *c, int crypt_connection_id, const IP_Port *ip_port, bool connected);
int connection_status_handler(const Net_Crypto *c, int crypt_connection_id,
                              connection_status_cb *cb, void *object, int id);
int connection_data_handler(const Net_Crypto *c, int crypt_connection_id,
                            connection_data_cb *cb, void *object, int id);
int connection_lossy_data_handler(const Net_Crypto *c, int crypt_connection_id,
                                  connection_data_cb *cb, void *object, int id);
int64_t write_cryptpacket(Net_Crypto *c, int crypt_connection_id, const uint8_t *data,
                          uint16_t length, bool congestion_control);
int send_lossy_cryptpacket(Net_Crypto *c, int crypt_connection_id, const uint8_t *data, uint16_t length);
int crypto_kill(Net_Crypto *c, int crypt_connection_id);
void do_net_crypto(Net_Crypto *c, void *userdata);

/* ---- the peer ------------------------------------------------------------------------- */
/* Packets to echo, kept until the main loop sends them: a burst after a repaired hole can
 * deliver thousands of packets in one networking_poll. */
#define MAX_ECHO 32768

typedef struct Echo { bool lossy; uint16_t length; uint8_t data[1400]; } Echo;

static Net_Crypto *nc;
static int conn_id = -1;
static Echo *echoes;
static int echo_capacity;
static int echo_count;

static void print_hex(const char *tag, const uint8_t *data, size_t length) {
    printf("%s ", tag);
    for (size_t i = 0; i < length; ++i) printf("%02X", data[i]);
    printf("\n");
    fflush(stdout);
}

static void queue_echo(bool lossy, const uint8_t *data, uint16_t length) {
    if (length > sizeof(echoes[0].data)) return;
    if (echo_count == echo_capacity) {
        if (echo_capacity >= MAX_ECHO) {
            fprintf(stderr, "echo queue full\n");
            exit(3);
        }
        int grown = echo_capacity == 0 ? 64 : 2 * echo_capacity;
        Echo *bigger = realloc(echoes, (size_t)grown * sizeof(Echo));
        if (bigger == NULL) exit(3);
        echoes = bigger;
        echo_capacity = grown;
    }
    echoes[echo_count].lossy = lossy;
    echoes[echo_count].length = length;
    memcpy(echoes[echo_count].data, data, length);
    ++echo_count;
}

static int on_status(void *object, int id, bool status, void *userdata) {
    (void)object; (void)id; (void)userdata;
    printf(status ? "ONLINE\n" : "OFFLINE\n");
    fflush(stdout);
    return 0;
}

static int on_data(void *object, int id, const uint8_t *data, uint16_t length, void *userdata) {
    (void)object; (void)id; (void)userdata;
    print_hex("DATA", data, length);
    queue_echo(false, data, length);
    return 0;
}

static int on_lossy(void *object, int id, const uint8_t *data, uint16_t length, void *userdata) {
    (void)object; (void)id; (void)userdata;
    print_hex("LOSSY", data, length);
    queue_echo(true, data, length);
    return 0;
}

static void watch(int id) {
    conn_id = id;
    connection_status_handler(nc, id, on_status, NULL, 0);
    connection_data_handler(nc, id, on_data, NULL, 0);
    connection_lossy_data_handler(nc, id, on_lossy, NULL, 0);
}

static int on_new_connection(void *object, const New_Connection *n_c) {
    (void)object;
    int id = accept_crypto_connection(nc, n_c);
    if (id < 0) return -1;
    watch(id);
    printf("ACCEPTED\n");
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    uint16_t port = (uint16_t)atoi(argv[1]);
    Logger *log = logger_new();
    Mono_Time *mono_time = mono_time_new(NULL, NULL);
    const Random *rng = system_random();
    const Network *ns = system_network();
    IP ip;
    ip_init(&ip, false);
    unsigned int error = 0;
    Networking_Core *net = new_networking_ex(log, ns, &ip, port, port, &error);
    if (net == NULL) { fprintf(stderr, "networking error %u\n", error); return 1; }
    DHT *dht = new_dht(log, rng, ns, mono_time, net, false, false);
    TCP_Proxy_Info proxy;
    memset(&proxy, 0, sizeof(proxy));
    nc = new_net_crypto(log, rng, ns, mono_time, dht, &proxy);
    if (dht == NULL || nc == NULL) return 1;
    new_connection_handler(nc, on_new_connection, NULL);

    char real_hex[65], dht_hex[65];
    for (int i = 0; i < 32; ++i) {
        sprintf(real_hex + 2 * i, "%02X", nc_get_self_public_key(nc)[i]);
        sprintf(dht_hex + 2 * i, "%02X", dht_get_self_public_key(dht)[i]);
    }
    printf("KEYS %s %s\n", real_hex, dht_hex);
    fflush(stdout);

    if (strcmp(argv[2], "connect") == 0) {
        if (argc < 6) return 2;
        uint8_t real[32], dht_pk[32];
        if (unhex(argv[3], real, 32) != 0 || unhex(argv[4], dht_pk, 32) != 0) return 2;
        int id = new_crypto_connection(nc, real, dht_pk);
        if (id < 0) return 1;
        IP_Port peer;
        memset(&peer, 0, sizeof(peer));
        ip_init(&peer.ip, false);
        addr_parse_ip("127.0.0.1", &peer.ip);
        peer.port = net_htons((uint16_t)atoi(argv[5]));
        set_direct_ip_port(nc, id, &peer, true);
        watch(id);
    }

    char line[256];
    for (;;) {
        mono_time_update(mono_time);
        networking_poll(net, NULL);
        do_dht(dht);
        do_net_crypto(nc, NULL);
        for (int i = 0; i < echo_count && conn_id >= 0; ++i) {
            if (echoes[i].lossy) {
                send_lossy_cryptpacket(nc, conn_id, echoes[i].data, echoes[i].length);
            } else {
                write_cryptpacket(nc, conn_id, echoes[i].data, echoes[i].length, false);
            }
        }
        echo_count = 0;
        struct pollfd pfd = { .fd = 0, .events = POLLIN };
        if (poll(&pfd, 1, 5) > 0) {
            if (fgets(line, sizeof(line), stdin) == NULL) break;
            if (strncmp(line, "KILL", 4) == 0 && conn_id >= 0) {
                crypto_kill(nc, conn_id);
                printf("KILLED\n");
                fflush(stdout);
                conn_id = -1;
            }
            if (strncmp(line, "QUIT", 4) == 0) break;
        }
    }
    return 0;
}
