#ifndef MODELCAST_SEGMENT_CUT_H
#define MODELCAST_SEGMENT_CUT_H

#include <stddef.h>
#include <stdint.h>

/// The first content-defined cut candidate of `modelcast-segments-1` in `bytes[from..<to]`:
/// the smallest index i there whose gear hash of the 64 bytes ending at i,
/// h = sum over k < 64 of gear[bytes[i - k]] << k (64-bit, wrapping), has
/// (h & mask) == 0; `to` when there is none. A segment's rolling hash at a byte at
/// least 64 bytes into the segment is exactly this value (older bytes are shifted out),
/// so the candidates depend on the bytes alone, not on where the segment began.
///
/// `from` must be at least 64 and `bytes[from - 64 ..< to]` readable. `gear` is the
/// scheme's 256-value table. With `vector` non-zero, CPUs with AVX-512 VBMI test the
/// low 16 bits of 64 positions at a time and confirm each hit with the full hash;
/// otherwise (or with `vector` 0, for tests) one byte at a time. Both give the same index.
size_t modelcast_gear_first_cut(const uint8_t *bytes, size_t from, size_t to, uint64_t mask,
                                const uint64_t *gear, int vector);

/// 1 when `modelcast_gear_first_cut` can use its vector path on this CPU, else 0.
int modelcast_gear_vector_available(void);

#endif
