#ifndef MODELCAST_CLIBZ_SHIM_H
#define MODELCAST_CLIBZ_SHIM_H

#include <zlib.h>

// deflateInit2 and inflateInit2 are macros (they pass the header's version and
// sizeof(z_stream) to the real functions), which Swift cannot call: these wrappers can.

/// Raw deflate (RFC 1951: no zlib or gzip framing), a 32 KiB window, zlib's default
/// memory level and strategy: the settings of every deflated entry modelcast has written.
static inline int modelcast_deflate_init_raw(z_streamp stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
}

/// `window_bits` as inflateInit2 takes it: -15 raw deflate, 15 zlib (RFC 1950),
/// 31 gzip (RFC 1952).
static inline int modelcast_inflate_init(z_streamp stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}

#endif
