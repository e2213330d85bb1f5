#!/usr/bin/env python3
"""The regions `modelcast-segments-1` divides a Core ML weight file or a zip into, written
from docs/segment-index.md alone (not from the Swift code), so the tests can check that
the specification is enough to reproduce the cuts byte for byte.

    segment_regions.py FILE...

Prints one JSON line per file: a list of [kind, start, end], kind "metadata", "bulk" or
"slices" (1 MiB slices counted from start). GGUF files are out of scope here (rule 1).
"""
import json, struct, sys

LARGE = 16_777_216
SLICE = 1_048_576


def u16(b, x): return struct.unpack_from("<H", b, x)[0]
def u32(b, x): return struct.unpack_from("<I", b, x)[0]
def u64(b, x): return struct.unpack_from("<Q", b, x)[0]


def stretch(a, b):
    if b <= a:
        return []
    return [["metadata" if b - a < LARGE else "bulk", a, b]]


def is_weight_file(data, d, length):
    return length >= 128 and d + 128 <= len(data) and u32(data, d + 4) == 2 and u32(data, d + 64) == 0xDEADBEEF


def blob_walk(data, d, length, budget):
    count = u32(data, d)
    p, headers = 64, []
    while len(headers) < count and budget[0] > 0 and p + 64 <= length:
        sentinel, size, offset = u32(data, d + p), u64(data, d + p + 8), u64(data, d + p + 16)
        if sentinel != 0xDEADBEEF or offset < p + 64 or offset > length or size > length - offset:
            break
        headers.append((p, offset))
        budget[0] -= 1
        p = min(length, (offset + size + 63) // 64 * 64)
    regions = []
    for k, (h, o) in enumerate(headers):
        end = headers[k + 1][0] if k + 1 < len(headers) else p
        regions += stretch(d + h, d + o)
        if end > o:
            regions.append(["slices", d + o, d + end])
    return regions + stretch(d + p, d + length)


def end_record(data):
    size = len(data)
    if size < 22:
        return None
    window = min(size, 65_557)
    start = size - window
    loose = None
    for position in range(window - 22, -1, -1):
        e = start + position
        if u32(data, e) == 0x06054B50:
            comment_end = e + 22 + u16(data, e + 20)
            if comment_end == size:
                return e
            if loose is None and comment_end < size:
                loose = e
    return loose


def directory(data):
    e = end_record(data)
    if e is None:
        return None
    c, z, m = u32(data, e + 16), u32(data, e + 12), e
    if e >= 20 and u32(data, e - 20) == 0x07064B50:
        r = u64(data, e - 12)
        if r + 56 <= e - 20 and u32(data, r) == 0x06064B50:
            c, z, m = u64(data, r + 48), u64(data, r + 40), r
    if z > 67_108_864 or c + z > m:
        return None
    return c, z


def zip64_values(extra, marked):
    at = 0
    while at + 4 <= len(extra):
        ident, length = u16(extra, at), u16(extra, at + 2)
        if at + 4 + length > len(extra):
            return {}
        if ident == 1:
            body, cursor, values = extra[at + 4:at + 4 + length], 0, {}
            for field in marked:
                if cursor + 8 <= len(body):
                    values[field] = u64(body, cursor)
                    cursor += 8
            return values
        at += 4 + length
    return {}


def entries(data, c, z):
    listing, at, found = data[c:c + z], 0, []
    while at < len(listing):
        if len(found) == 100_000:
            return None
        if len(listing) - at < 46 or u32(listing, at) != 0x02014B50:
            break
        n, e, k = u16(listing, at + 28), u16(listing, at + 30), u16(listing, at + 32)
        if 46 + n + e + k > len(listing) - at:
            break
        values = {"uncompressed": u32(listing, at + 24), "compressed": u32(listing, at + 20), "offset": u32(listing, at + 42)}
        marked = [f for f in ("uncompressed", "compressed", "offset") if values[f] == 0xFFFFFFFF]
        values.update(zip64_values(listing[at + 46 + n:at + 46 + n + e], marked))
        found.append((values["offset"], u16(listing, at + 10), values["compressed"]))
        at += 46 + n + e + k
    return found


def zip_regions(data):
    located = directory(data)
    if located is None:
        return None
    c, z = located
    listed = entries(data, c, z)
    if listed is None:
        return None
    first = {}
    for offset, method, compressed in listed:
        if offset < c and offset not in first:
            first[offset] = (method, compressed)
    offsets = sorted(first)
    regions = stretch(0, offsets[0] if offsets else c)
    budget = [65_536]
    for i, o in enumerate(offsets):
        nxt = offsets[i + 1] if i + 1 < len(offsets) else c
        method, compressed = first[o]
        regions += entry_regions(data, o, nxt, method, compressed, budget)
    return regions + stretch(c, len(data))


def entry_regions(data, o, nxt, method, compressed, budget):
    if method == 0 and o + 30 <= len(data) and u32(data, o) == 0x04034B50:
        s = o + 30 + u16(data, o + 26) + u16(data, o + 28)
        if s < nxt:
            length = min(compressed, nxt - s)
            if is_weight_file(data, s, length):
                return [["metadata", o, s + 64]] + blob_walk(data, s, length, budget) + stretch(s + length, nxt)
    return stretch(o, nxt)


def regions(data):
    if is_weight_file(data, 0, len(data)):
        return [["metadata", 0, 64]] + blob_walk(data, 0, len(data), [65_536])
    found = zip_regions(data)
    return found if found is not None else ([["bulk", 0, len(data)]] if data else [])


if __name__ == "__main__":
    for path in sys.argv[1:]:
        with open(path, "rb") as f:
            print(json.dumps(regions(f.read())))
