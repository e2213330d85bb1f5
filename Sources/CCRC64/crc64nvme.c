// CRC-64/NVME for S3's CRC64NVME part and object checksums.
//
// Large inputs are folded 64 bytes at a time with carry-less multiplication
// (four 128-bit lanes, so the multiplier's latency overlaps), then the one lane
// left and the tail are finished with a byte table. The fold constants are
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
