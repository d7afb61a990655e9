/* c-toxcore 0.2.18 as the judge of rustox's save files (core/src/savedata): it writes a save
 * file the way a c-toxcore client does, and loads one the way a client does, reporting what
 * it found.
 *
 * Built at run time against Debian's libtoxcore by auto_tests/src/ctoxcore/build.rs; a separate
 * process, so nothing of ours is ever linked with c-toxcore. Uses tox.h and toxencryptsave.h
 * only (plus libsodium's randombytes_buf for the made-up friends' keys).
 *
 * usage:
 *   toxsave make FILE [--pass P]   a fresh tox: nospam 0x12345678, a name, a status message,
 *                                  user status AWAY, two friends added by key (names unknown)
 *                                  and one by friend request (pending); no network, nothing
 *                                  bootstrapped. Writes tox_get_savedata to FILE, encrypted
 *                                  with tox_pass_encrypt when --pass is given.
 *   toxsave show FILE [--pass P] [--resave OUT]
 *                                  loads FILE with tox_new (after tox_pass_decrypt when --pass);
 *                                  with --resave writes c-toxcore's own tox_get_savedata of what
 *                                  it loaded to OUT (plaintext).
 * Both print one JSON line on stdout; byte strings are upper-case hex:
 *   {"tox_id":HEX,"nospam":N,"name_hex":HEX,"status_message_hex":HEX,"user_status":N,
 *    "savedata_size":N,"friends":[PK,...],
 *    "friend_details":[{"pk":PK,"name_hex":HEX,"status_message_hex":HEX,"user_status":N,
 *                       "last_online":N},...]}
 * Errors go to stderr with exit status 2 (tox_new refused the file, decryption failed, I/O).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include <tox/tox.h>
#include <tox/toxencryptsave.h>

static void print_hex(const uint8_t *b, size_t n) {
    putchar('"');
    for (size_t i = 0; i < n; ++i) printf("%02X", b[i]);
    putchar('"');
}

static void die(const char *what, const char *file, int code) {
    fprintf(stderr, "toxsave: %s %s (error %d)\n", what, file, code);
    exit(2);
}

static const char *new_error_name(Tox_Err_New e) {
    switch (e) {
        case TOX_ERR_NEW_OK: return "OK";
        case TOX_ERR_NEW_NULL: return "NULL";
        case TOX_ERR_NEW_MALLOC: return "MALLOC";
        case TOX_ERR_NEW_PORT_ALLOC: return "PORT_ALLOC";
        case TOX_ERR_NEW_PROXY_BAD_TYPE: return "PROXY_BAD_TYPE";
        case TOX_ERR_NEW_PROXY_BAD_HOST: return "PROXY_BAD_HOST";
        case TOX_ERR_NEW_PROXY_BAD_PORT: return "PROXY_BAD_PORT";
        case TOX_ERR_NEW_PROXY_NOT_FOUND: return "PROXY_NOT_FOUND";
        case TOX_ERR_NEW_LOAD_ENCRYPTED: return "LOAD_ENCRYPTED";
        case TOX_ERR_NEW_LOAD_BAD_FORMAT: return "LOAD_BAD_FORMAT";
    }
    return "?";
}

/* No sockets: UDP off, no TCP server, no LAN discovery. */
static Tox *new_tox(const uint8_t *save, size_t len, const char *file) {
    struct Tox_Options *o = tox_options_new(NULL);
    tox_options_set_ipv6_enabled(o, false);
    tox_options_set_udp_enabled(o, false);
    tox_options_set_local_discovery_enabled(o, false);
    tox_options_set_tcp_port(o, 0);
    if (save) {
        tox_options_set_savedata_type(o, TOX_SAVEDATA_TYPE_TOX_SAVE);
        tox_options_set_savedata_data(o, save, len);
    }
    Tox_Err_New err;
    Tox *tox = tox_new(o, &err);
    tox_options_free(o);
    if (!tox) {
        fprintf(stderr, "toxsave: tox_new refused %s: TOX_ERR_NEW_%s\n", file, new_error_name(err));
        exit(2);
    }
    return tox;
}

static void print_state(const Tox *tox) {
    uint8_t addr[TOX_ADDRESS_SIZE];
    tox_self_get_address(tox, addr);
    printf("{\"tox_id\":");
    print_hex(addr, sizeof addr);
    printf(",\"nospam\":%u", (unsigned)tox_self_get_nospam(tox));
    size_t n = tox_self_get_name_size(tox);
    uint8_t *buf = malloc(n + TOX_MAX_STATUS_MESSAGE_LENGTH + 1);
    tox_self_get_name(tox, buf);
    printf(",\"name_hex\":");
    print_hex(buf, n);
    n = tox_self_get_status_message_size(tox);
    tox_self_get_status_message(tox, buf);
    printf(",\"status_message_hex\":");
    print_hex(buf, n);
    printf(",\"user_status\":%d", (int)tox_self_get_status(tox));
    printf(",\"savedata_size\":%zu", tox_get_savedata_size(tox));

    size_t count = tox_self_get_friend_list_size(tox);
    uint32_t *list = calloc(count + 1, sizeof *list);
    tox_self_get_friend_list(tox, list);
    printf(",\"friends\":[");
    for (size_t i = 0; i < count; ++i) {
        uint8_t pk[TOX_PUBLIC_KEY_SIZE];
        tox_friend_get_public_key(tox, list[i], pk, NULL);
        printf(i ? "," : "");
        print_hex(pk, sizeof pk);
    }
    printf("],\"friend_details\":[");
    for (size_t i = 0; i < count; ++i) {
        uint8_t pk[TOX_PUBLIC_KEY_SIZE];
        tox_friend_get_public_key(tox, list[i], pk, NULL);
        printf(i ? ",{\"pk\":" : "{\"pk\":");
        print_hex(pk, sizeof pk);
        n = tox_friend_get_name_size(tox, list[i], NULL);
        tox_friend_get_name(tox, list[i], buf, NULL);
        printf(",\"name_hex\":");
        print_hex(buf, n);
        n = tox_friend_get_status_message_size(tox, list[i], NULL);
        tox_friend_get_status_message(tox, list[i], buf, NULL);
        printf(",\"status_message_hex\":");
        print_hex(buf, n);
        printf(",\"user_status\":%d", (int)tox_friend_get_status(tox, list[i], NULL));
        printf(",\"last_online\":%llu}",
               (unsigned long long)tox_friend_get_last_online(tox, list[i], NULL));
    }
    printf("]}\n");
    free(list);
    free(buf);
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open", path, 0);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (size <= 0) die("empty file", path, 0);
    uint8_t *data = malloc((size_t)size);
    if (fread(data, 1, (size_t)size, f) != (size_t)size) die("cannot read", path, 0);
    fclose(f);
    *len = (size_t)size;
    return data;
}

static void write_file(const char *path, const uint8_t *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) die("cannot write", path, 0);
}

/* A made-up friend key; c-toxcore only requires the top bit of the last byte clear. */
static void random_pk(uint8_t pk[TOX_PUBLIC_KEY_SIZE]) {
    randombytes_buf(pk, TOX_PUBLIC_KEY_SIZE);
    pk[TOX_PUBLIC_KEY_SIZE - 1] &= 0x7f;
}

static void write_save(const Tox *tox, const char *file, const char *pass) {
    size_t len = tox_get_savedata_size(tox);
    uint8_t *save = malloc(len);
    tox_get_savedata(tox, save);
    if (pass) {
        uint8_t *enc = malloc(len + TOX_PASS_ENCRYPTION_EXTRA_LENGTH);
        Tox_Err_Encryption err;
        if (!tox_pass_encrypt(save, len, (const uint8_t *)pass, strlen(pass), enc, &err)) {
            die("tox_pass_encrypt failed for", file, (int)err);
        }
        write_file(file, enc, len + TOX_PASS_ENCRYPTION_EXTRA_LENGTH);
        free(enc);
    } else {
        write_file(file, save, len);
    }
    free(save);
}

static int make(const char *file, const char *pass) {
    Tox *tox = new_tox(NULL, 0, file);
    tox_self_set_nospam(tox, 0x12345678);
    const char *name = "c-toxcore writer";
    const char *status = "saved by toxsave.c \xe2\x9c\x93";
    tox_self_set_name(tox, (const uint8_t *)name, strlen(name), NULL);
    tox_self_set_status_message(tox, (const uint8_t *)status, strlen(status), NULL);
    tox_self_set_status(tox, TOX_USER_STATUS_AWAY);
    for (int i = 0; i < 2; ++i) {
        uint8_t pk[TOX_PUBLIC_KEY_SIZE];
        random_pk(pk);
        Tox_Err_Friend_Add err;
        if (tox_friend_add_norequest(tox, pk, &err) == UINT32_MAX) die("tox_friend_add_norequest failed for", file, (int)err);
    }
    uint8_t address[TOX_ADDRESS_SIZE];
    random_pk(address);
    randombytes_buf(address + TOX_PUBLIC_KEY_SIZE, 4);
    address[36] = address[37] = 0;
    for (int i = 0; i < 36; ++i) address[36 + (i % 2)] ^= address[i];
    const char *msg = "please add me, rustox";
    Tox_Err_Friend_Add err;
    if (tox_friend_add(tox, address, (const uint8_t *)msg, strlen(msg), &err) == UINT32_MAX) {
        die("tox_friend_add failed for", file, (int)err);
    }
    write_save(tox, file, pass);
    print_state(tox);
    tox_kill(tox);
    return 0;
}

static int show(const char *file, const char *pass, const char *resave) {
    size_t len;
    uint8_t *data = read_file(file, &len);
    if (pass) {
        if (len <= TOX_PASS_ENCRYPTION_EXTRA_LENGTH) die("too short to be encrypted:", file, 0);
        uint8_t *plain = malloc(len - TOX_PASS_ENCRYPTION_EXTRA_LENGTH);
        Tox_Err_Decryption err;
        if (!tox_pass_decrypt(data, len, (const uint8_t *)pass, strlen(pass), plain, &err)) {
            die("tox_pass_decrypt refused", file, (int)err);
        }
        free(data);
        data = plain;
        len -= TOX_PASS_ENCRYPTION_EXTRA_LENGTH;
    }
    Tox *tox = new_tox(data, len, file);
    if (resave) write_save(tox, resave, NULL);
    print_state(tox);
    tox_kill(tox);
    free(data);
    return 0;
}

int main(int argc, char **argv) {
    if (sodium_init() < 0) die("sodium_init failed", "", 0);
    if (argc < 3) {
        fprintf(stderr, "usage: toxsave make FILE [--pass P] | show FILE [--pass P] [--resave OUT]\n");
        return 2;
    }
    const char *pass = NULL, *resave = NULL;
    for (int i = 3; i < argc; ++i) {
        if (!strcmp(argv[i], "--pass") && i + 1 < argc) {
            pass = argv[++i];
        } else if (!strcmp(argv[i], "--resave") && i + 1 < argc) {
            resave = argv[++i];
        } else {
            fprintf(stderr, "toxsave: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (!strcmp(argv[1], "make")) return make(argv[2], pass);
    if (!strcmp(argv[1], "show")) return show(argv[2], pass, resave);
    fprintf(stderr, "toxsave: unknown mode %s\n", argv[1]);
    return 2;
}
