/* c-toxcore 0.2.18's rtp_header_pack (Debian's libtoxcore.a) on a few headers given as
 * arguments, each printed as 80 bytes of hex, for core/tests/av_wire_ctoxcore.rs to compare
 * with rustox's RtpHeader::encode. The struct is rtp.h's `struct RTPHeader`, declared here
 * with the same members in the same order (the bit fields included). */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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

size_t rtp_header_pack(uint8_t *rdata, const struct RTPHeader *header);
size_t rtp_header_unpack(const uint8_t *data, struct RTPHeader *header);

/* Arguments: groups of 15 numbers, the fields in rtp.h's order. */
int main(int argc, char **argv)
{
    for (int i = 1; i + 15 <= argc; i += 15) {
        uint64_t v[15];
        for (int j = 0; j < 15; ++j) {
            v[j] = strtoull(argv[i + j], NULL, 0);
        }
        struct RTPHeader h = {0};
        h.ve = v[0];
        h.pe = v[1];
        h.xe = v[2];
        h.cc = v[3];
        h.ma = v[4];
        h.pt = v[5];
        h.sequnum = v[6];
        h.timestamp = v[7];
        h.ssrc = v[8];
        h.flags = v[9];
        h.offset_full = v[10];
        h.data_length_full = v[11];
        h.received_length_full = v[12];
        h.offset_lower = v[13];
        h.data_length_lower = v[14];
        uint8_t out[80];
        if (rtp_header_pack(out, &h) != 80) {
            return 1;
        }
        for (int j = 0; j < 80; ++j) {
            printf("%02x", out[j]);
        }
        /* And back: the fields rtp_header_unpack reads from those bytes. */
        struct RTPHeader back;
        rtp_header_unpack(out, &back);
        printf(" %u %u %u %u %u %u %u %" PRIu32 " %" PRIu32 " %" PRIu64 " %" PRIu32 " %" PRIu32
               " %" PRIu32 " %u %u\n",
               back.ve, back.pe, back.xe, back.cc, back.ma, back.pt, back.sequnum, back.timestamp,
               back.ssrc, back.flags, back.offset_full, back.data_length_full,
               back.received_length_full, back.offset_lower, back.data_length_lower);
    }
    return 0;
}
