// The content-defined cut of modelcast-segments-1 (docs/segment-index.md), its hot loop.
//
// The definition rolls h = (h << 1) + gear[byte] over a segment and cuts where
// (h & mask) == 0. One byte at a time that is a chain of dependent additions, about a
// cycle a byte. Only the low bits are tested, and the low b bits of h depend on the last
// b bytes only, so the vector path computes the low 16 bits of the hash at 64 positions
// at once: the gear table's two low byte planes are looked up with byte permutes, and
// the window sum (sum over k < 16 of g[i - k] << k) is built in four doubling steps
// (1, 2, 4, 8 positions back). Where those 16 bits pass the mask (every hit when the
// mask has at most 16 bits; one position in 65,536 otherwise) the full 64-byte hash
// decides, so both paths return the same index.
#include "segment_cut.h"

/// The definition's hash at index i from the 64 bytes ending there.
static uint64_t window_hash(const uint8_t *bytes, size_t i, const uint64_t *gear) {
    uint64_t h = 0;
    for (size_t k = i - 63; k <= i; k++) h = (h << 1) + gear[bytes[k]];
    return h;
}

static size_t scalar_first_cut(const uint8_t *bytes, size_t from, size_t to, uint64_t mask, const uint64_t *gear) {
    uint64_t h = 0;
    for (size_t i = from - 63; i < from; i++) h = (h << 1) + gear[bytes[i]];
    for (size_t i = from; i < to; i++) {
        h = (h << 1) + gear[bytes[i]];
        if ((h & mask) == 0) return i;
    }
    return to;
}

#if defined(__x86_64__)
#include <immintrin.h>

static int vector_available(void) {
    static int answer = -1;
    int known = __atomic_load_n(&answer, __ATOMIC_RELAXED);
    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi");
        __atomic_store_n(&answer, known, __ATOMIC_RELAXED);
    }
    return known;
}

#define VECTOR_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi")))

/// `a` shifted `d` 16-bit lanes up, the lanes shifted in taken from the top of `previous`.
VECTOR_TARGET static inline __m512i lanes_back(__m512i previous, __m512i a, __m512i index) {
    return _mm512_permutex2var_epi16(previous, index, a);
}

/// One doubling step: s[i] + (s[i - d] << d), for the two vectors of a block (positions
/// 0..<32 and 32..<64); `carry` holds the previous block's upper vector at this step.
#define DOUBLING_STEP(s0, s1, carry, index, d) do { \
        __m512i next0 = _mm512_add_epi16(s0, _mm512_slli_epi16(lanes_back(carry, s0, index), d)); \
        __m512i next1 = _mm512_add_epi16(s1, _mm512_slli_epi16(lanes_back(s0, s1, index), d)); \
        carry = s1; s0 = next0; s1 = next1; \
    } while (0)

VECTOR_TARGET static size_t vector_first_cut(const uint8_t *bytes, size_t from, size_t to, uint64_t mask, const uint64_t *gear) {
    uint8_t low[256], high[256];
    for (int i = 0; i < 256; i++) {
        low[i] = (uint8_t)gear[i];
        high[i] = (uint8_t)(gear[i] >> 8);
    }
    const __m512i low0 = _mm512_loadu_si512(low), low1 = _mm512_loadu_si512(low + 64);
    const __m512i low2 = _mm512_loadu_si512(low + 128), low3 = _mm512_loadu_si512(low + 192);
    const __m512i high0 = _mm512_loadu_si512(high), high1 = _mm512_loadu_si512(high + 64);
    const __m512i high2 = _mm512_loadu_si512(high + 128), high3 = _mm512_loadu_si512(high + 192);
    // Unpacking bytes into 16-bit lanes works within 128-bit lanes: the block's bytes are
    // first permuted so that the low unpack gives positions 0..<32 and the high one 32..<64.
    uint8_t order[64];
    for (int lane = 0; lane < 4; lane++) {
        for (int e = 0; e < 8; e++) {
            order[lane * 16 + e] = (uint8_t)(lane * 8 + e);
            order[lane * 16 + 8 + e] = (uint8_t)(32 + lane * 8 + e);
        }
    }
    const __m512i unpackOrder = _mm512_loadu_si512(order);
    uint16_t back1[32], back2[32], back4[32], back8[32];
    for (int i = 0; i < 32; i++) {
        back1[i] = (uint16_t)(i + 31);
        back2[i] = (uint16_t)(i + 30);
        back4[i] = (uint16_t)(i + 28);
        back8[i] = (uint16_t)(i + 24);
    }
    const __m512i index1 = _mm512_loadu_si512(back1), index2 = _mm512_loadu_si512(back2);
    const __m512i index4 = _mm512_loadu_si512(back4), index8 = _mm512_loadu_si512(back8);
    const __m512i low16 = _mm512_set1_epi16((short)(uint16_t)(mask & 0xffff));
    const int confirm = mask > 0xffff;

    __m512i carry1 = _mm512_setzero_si512(), carry2 = carry1, carry4 = carry1, carry8 = carry1;
    // The block before `from` (from >= 64) only fills the carries: every lane the first
    // tested block takes from them then holds a complete 16-byte window.
    size_t position = from - 64;
    int warming = 1;
    while (position < to) {
        size_t left = to - position;
        __m512i block = left >= 64 ? _mm512_loadu_si512(bytes + position)
                                   : _mm512_maskz_loadu_epi8((__mmask64)((1ULL << left) - 1), bytes + position);
        block = _mm512_permutexvar_epi8(unpackOrder, block);
        __mmask64 upper = _mm512_movepi8_mask(block);
        __m512i g0 = _mm512_mask_blend_epi8(upper, _mm512_permutex2var_epi8(low0, block, low1), _mm512_permutex2var_epi8(low2, block, low3));
        __m512i g1 = _mm512_mask_blend_epi8(upper, _mm512_permutex2var_epi8(high0, block, high1), _mm512_permutex2var_epi8(high2, block, high3));
        __m512i s0 = _mm512_unpacklo_epi8(g0, g1), s1 = _mm512_unpackhi_epi8(g0, g1);
        DOUBLING_STEP(s0, s1, carry1, index1, 1);
        DOUBLING_STEP(s0, s1, carry2, index2, 2);
        DOUBLING_STEP(s0, s1, carry4, index4, 4);
        DOUBLING_STEP(s0, s1, carry8, index8, 8);
        if (!warming) {
            uint64_t hits = (uint64_t)_mm512_testn_epi16_mask(s0, low16) | ((uint64_t)_mm512_testn_epi16_mask(s1, low16) << 32);
            if (left < 64) hits &= (1ULL << left) - 1;
            while (hits) {
                size_t i = position + (size_t)__builtin_ctzll(hits);
                if (!confirm || (window_hash(bytes, i, gear) & mask) == 0) return i;
                hits &= hits - 1;
            }
        }
        warming = 0;
        position += 64;
    }
    return to;
}
#else
static int vector_available(void) { return 0; }
#endif

int modelcast_gear_vector_available(void) { return vector_available(); }

size_t modelcast_gear_first_cut(const uint8_t *bytes, size_t from, size_t to, uint64_t mask, const uint64_t *gear, int vector) {
    if (from >= to) return to;
#if defined(__x86_64__)
    if (vector && to - from >= 64 && vector_available()) return vector_first_cut(bytes, from, to, mask, gear);
#endif
    return scalar_first_cut(bytes, from, to, mask, gear);
}
