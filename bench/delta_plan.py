#!/usr/bin/env python3
"""What a device holding OLD fetches to build NEW, from their segment indexes
(docs/segment-index.md), read here independently of the Swift code.

    delta_plan.py OLD.mcsx NEW.mcsx          prints bytes fetched, requests, share of the file
    delta_plan.py OLD.mcsx NEW.mcsx --json   the same as JSON, with each changed run's segments
                                             (bench/delta's ground truth)
    delta_plan.py OLD.mcsx OLDER.mcsx… NEW.mcsx [--json]
                                             a device keeping several versions: a segment any
                                             of them holds is not fetched (bench/delta-kept)
"""
import json, struct, sys


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
    as_json = sys.argv[-1] == "--json"
    paths = sys.argv[1:-1] if as_json else sys.argv[1:]
    if len(paths) < 2:
        sys.exit(__doc__)
    have = {digest for path in paths[:-1] for _, digest in read_index(path)[1]}
    size, new, index_bytes = read_index(paths[-1])
    fetched, requests, previous_fetched = 0, 0, False
    runs, offset = [], 0  # [first segment, segments, offset, bytes] of each run of changed segments
    for number, (length, digest) in enumerate(new):
        missing = digest not in have
        if missing:
            fetched += length
            if not previous_fetched:
                requests += 1
                runs.append([number, 0, offset, 0])
            runs[-1][1] += 1
            runs[-1][3] += length
        previous_fetched = missing
        offset += length
    if as_json:
        print(json.dumps({"size": size, "segments": len(new), "changed_bytes": fetched, "runs": requests,
                          "index_bytes": index_bytes, "changed_runs": runs,
                          "largest_segment": max((length for length, _ in new), default=0)}))
        return
    print(f"{fetched} of {size} bytes fetched ({100 * fetched / size:.2f} %) in {requests} range requests, "
          f"plus the {index_bytes}-byte index; {len(new)} segments")


if __name__ == "__main__":
    main()
