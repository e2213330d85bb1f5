// CRC-64/NVME for S3's CRC64NVME part and object checksums.
//
// Large inputs are folded 64 bytes at a time with carry-less multiplication
// (four 128-bit lanes, so the multiplier's latency overlaps), or 256 bytes at a time
// where the CPU multiplies four lanes in one instruction (VPCLMULQDQ on 512 bits), then
// the one lane left and the tail are finished with a byte table. The fold constants are
// x^e mod P for the distances used, bit-reflected; they were computed with a
// bit-by-bit reference (see Tests: CRC64NVMETests checks every path against it
// and against the standard check value).
#include "crc64nvme.h"

#define POLY_REFLECTED 0x9a6c9329ac4bc9b5ULL

static uint64_t table[256];
static int table_ready;

static void build_table(void) {
    for (int i = 0; i < 256; i++) {
        uint64_t c = (uint64_t)i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ POLY_REFLECTED : c >> 1;
        table[i] = c;
    }
}

static void ensure_table(void) {
    // Idempotent: racing threads write the same values.
    if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE)) {
        build_table();
        __atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
    }
}

/// The register (not inverted) over `length` bytes, one byte at a time.
static uint64_t bytewise(uint64_t reg, const unsigned char *p, size_t length) {
    while (length--) reg = (reg >> 8) ^ table[(reg ^ *p++) & 0xff];
    return reg;
}

#if defined(__x86_64__)
#include <immintrin.h>

static const uint64_t fold_by_4[2] = {0x0c32cdb31e18a84aULL, 0x62242240ace5045aULL}; // x^575, x^511
static const uint64_t fold_by_3[2] = {0xbdd7ac0ee1a4a0f0ULL, 0xa3ffdc1fe8e82a8bULL}; // x^447, x^383
static const uint64_t fold_by_2[2] = {0xb0bc2e589204f500ULL, 0xe1e0bb9d45d7a44cULL}; // x^319, x^255
static const uint64_t fold_by_1[2] = {0xeadc41fd2ba3d420ULL, 0x21e9761e252621acULL}; // x^191, x^127

__attribute__((target("pclmul,sse4.1")))
static inline __m128i fold(__m128i lane, __m128i k) {
    return _mm_xor_si128(_mm_clmulepi64_si128(lane, k, 0x00), _mm_clmulepi64_si128(lane, k, 0x11));
}

/// Folds `blocks` 64-byte blocks (at least one) into one 16-byte lane whose CRC,
/// from a zero register, is the register after `reg` and those bytes.
__attribute__((target("pclmul,sse4.1")))
static uint64_t folded(uint64_t reg, const unsigned char *p, size_t blocks) {
    __m128i x0 = _mm_loadu_si128((const __m128i *)p);
    __m128i x1 = _mm_loadu_si128((const __m128i *)(p + 16));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 32));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(p + 48));
    x0 = _mm_xor_si128(x0, _mm_cvtsi64_si128((long long)reg));
    const __m128i k4 = _mm_loadu_si128((const __m128i *)fold_by_4);
    for (size_t i = 1; i < blocks; i++) {
        p += 64;
        x0 = _mm_xor_si128(fold(x0, k4), _mm_loadu_si128((const __m128i *)p));
        x1 = _mm_xor_si128(fold(x1, k4), _mm_loadu_si128((const __m128i *)(p + 16)));
        x2 = _mm_xor_si128(fold(x2, k4), _mm_loadu_si128((const __m128i *)(p + 32)));
        x3 = _mm_xor_si128(fold(x3, k4), _mm_loadu_si128((const __m128i *)(p + 48)));
    }
    __m128i last = x3;
    last = _mm_xor_si128(last, fold(x0, _mm_loadu_si128((const __m128i *)fold_by_3)));
    last = _mm_xor_si128(last, fold(x1, _mm_loadu_si128((const __m128i *)fold_by_2)));
    last = _mm_xor_si128(last, fold(x2, _mm_loadu_si128((const __m128i *)fold_by_1)));
    unsigned char lane[16];
    _mm_storeu_si128((__m128i *)lane, last);
    return bytewise(0, lane, 16);
}

static const uint64_t fold_by_16[2] = {0x37ccd3e14069cabcULL, 0xa043808c0f782663ULL}; // x^2111, x^2047
static const uint64_t fold_by_12[2] = {0x758ee09da263e275ULL, 0x6d2d13de8038b4caULL}; // x^1599, x^1535
static const uint64_t fold_by_8[2] = {0xa1ca681e733f9c40ULL, 0x5f852fb61e8d92dcULL};  // x^1087, x^1023

#define WIDE_TARGET __attribute__((target("avx512f,avx512bw,vpclmulqdq,pclmul,sse4.1")))

/// `fold` on four 128-bit lanes at once, each with the same two constants.
WIDE_TARGET static inline __m512i fold4(__m512i lanes, __m512i k) {
    return _mm512_xor_si512(_mm512_clmulepi64_epi128(lanes, k, 0x00), _mm512_clmulepi64_epi128(lanes, k, 0x11));
}

WIDE_TARGET static inline __m512i constants4(const uint64_t *k) {
    return _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)k));
}

/// As `folded`, 256 bytes at a time: sixteen 128-bit lanes in four 512-bit registers, folded
/// 2048 bits ahead, then onto the last register, then its four lanes onto its last lane.
WIDE_TARGET static uint64_t folded_wide(uint64_t reg, const unsigned char *p, size_t blocks) {
    __m512i x0 = _mm512_loadu_si512((const void *)p);
    __m512i x1 = _mm512_loadu_si512((const void *)(p + 64));
    __m512i x2 = _mm512_loadu_si512((const void *)(p + 128));
    __m512i x3 = _mm512_loadu_si512((const void *)(p + 192));
    x0 = _mm512_xor_si512(x0, _mm512_zextsi128_si512(_mm_cvtsi64_si128((long long)reg)));
    const __m512i k16 = constants4(fold_by_16);
    for (size_t i = 1; i < blocks; i++) {
        p += 256;
        x0 = _mm512_xor_si512(fold4(x0, k16), _mm512_loadu_si512((const void *)p));
        x1 = _mm512_xor_si512(fold4(x1, k16), _mm512_loadu_si512((const void *)(p + 64)));
        x2 = _mm512_xor_si512(fold4(x2, k16), _mm512_loadu_si512((const void *)(p + 128)));
        x3 = _mm512_xor_si512(fold4(x3, k16), _mm512_loadu_si512((const void *)(p + 192)));
    }
    x3 = _mm512_xor_si512(x3, fold4(x0, constants4(fold_by_12)));
    x3 = _mm512_xor_si512(x3, fold4(x1, constants4(fold_by_8)));
    x3 = _mm512_xor_si512(x3, fold4(x2, constants4(fold_by_4)));
    __m128i last = _mm512_extracti32x4_epi32(x3, 3);
    last = _mm_xor_si128(last, fold(_mm512_extracti32x4_epi32(x3, 0), _mm_loadu_si128((const __m128i *)fold_by_3)));
    last = _mm_xor_si128(last, fold(_mm512_extracti32x4_epi32(x3, 1), _mm_loadu_si128((const __m128i *)fold_by_2)));
    last = _mm_xor_si128(last, fold(_mm512_extracti32x4_epi32(x3, 2), _mm_loadu_si128((const __m128i *)fold_by_1)));
    unsigned char lane[16];
    _mm_storeu_si128((__m128i *)lane, last);
    return bytewise(0, lane, 16);
}

static int accelerated_wide(void) {
    static int answer = -1;
    int known = __atomic_load_n(&answer, __ATOMIC_RELAXED);
    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("vpclmulqdq")
            && __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
        __atomic_store_n(&answer, known, __ATOMIC_RELAXED);
    }
    return known;
}

static int accelerated(void) {
    static int answer = -1;
    int known = __atomic_load_n(&answer, __ATOMIC_RELAXED);
    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
        __atomic_store_n(&answer, known, __ATOMIC_RELAXED);
    }
    return known;
}
#else
static int accelerated(void) { return 0; }
#endif

int modelcast_crc64nvme_accelerated(void) { return accelerated(); }

uint64_t modelcast_crc64nvme_update(uint64_t crc, const void *bytes, size_t length) {
    ensure_table();
    const unsigned char *p = (const unsigned char *)bytes;
    uint64_t reg = ~crc;
#if defined(__x86_64__)
    if (length >= 256 && accelerated_wide()) {
        size_t blocks = length / 256;
        reg = folded_wide(reg, p, blocks);
        p += blocks * 256;
        length -= blocks * 256;
    }
    if (length >= 128 && accelerated()) {
        size_t blocks = length / 64;
        reg = folded(reg, p, blocks);
        p += blocks * 64;
        length -= blocks * 64;
    }
#endif
    return ~bytewise(reg, p, length);
}

/// a * b mod P, both bit-reflected (bit 63 is x^0).
static uint64_t multiply(uint64_t a, uint64_t b) {
    uint64_t product = 0;
    for (uint64_t m = 1ULL << 63; m != 0 && a != 0; m >>= 1) {
        if (a & m) {
            product ^= b;
            a ^= m;
        }
        b = (b & 1) ? (b >> 1) ^ POLY_REFLECTED : b >> 1;
    }
    return product;
}

/// x^(8 * n) mod P, bit-reflected, by squaring.
static uint64_t x_to_bytes(uint64_t n) {
    uint64_t result = 1ULL << 63;   // x^0
    uint64_t power = 1ULL << 55;    // x^8
    while (n) {
        if (n & 1) result = multiply(result, power);
        power = multiply(power, power);
        n >>= 1;
    }
    return result;
}

uint64_t modelcast_crc64nvme_combine(uint64_t crcA, uint64_t crcB, uint64_t lengthB) {
    if (lengthB == 0) return crcA;
    return multiply(crcA, x_to_bytes(lengthB)) ^ crcB;
}
