#!/usr/bin/env python3
"""What a device holding OLD fetches to build NEW, from their segment indexes
(docs/segment-index.md), read here independently of the Swift code.

    delta_plan.py OLD.mcsx NEW.mcsx      prints bytes fetched, requests, share of the file
"""
import struct, sys


def read_index(path):
    data = open(path, "rb").read()
    assert data[:4] == b"MCSX", "not a segment index"
    version, scheme_length = struct.unpack_from("<HH", data, 4)
    assert version == 1
    offset = 8 + scheme_length
    size, = struct.unpack_from("<Q", data, offset)
    count, = struct.unpack_from("<I", data, offset + 40)
    offset += 44
    segments = []
    for _ in range(count):
        length, = struct.unpack_from("<I", data, offset)
        segments.append((length, data[offset + 4:offset + 36]))
        offset += 36
    assert offset == len(data) and sum(length for length, _ in segments) == size
    return size, segments, len(data)


def main():
    _, old, _ = read_index(sys.argv[1])
    size, new, index_bytes = read_index(sys.argv[2])
    have = {digest for _, digest in old}
    fetched, requests, previous_fetched = 0, 0, False
    for length, digest in new:
        missing = digest not in have
        if missing:
            fetched += length
            if not previous_fetched:
                requests += 1
        previous_fetched = missing
    print(f"{fetched} of {size} bytes fetched ({100 * fetched / size:.2f} %) in {requests} range requests, "
          f"plus the {index_bytes}-byte index; {len(new)} segments")


if __name__ == "__main__":
    main()
