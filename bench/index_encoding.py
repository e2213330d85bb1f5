#!/usr/bin/env python3
"""The segment index as published (binary MCSX, docs/segment-index.md) against the same
content as gzip-compressed JSON, the other encoding issue 27 asked to measure.

    index_encoding.py INDEX.mcsx...     prints, per index, segments and both sizes
"""
import gzip, json, os, struct, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from delta_plan import read_index  # noqa: E402  (an independent reader of the format)


def as_json(path):
    data = open(path, "rb").read()
    scheme_length, = struct.unpack_from("<H", data, 6)
    scheme = data[8:8 + scheme_length].decode()
    digest = data[8 + scheme_length + 8:8 + scheme_length + 40].hex()
    size, segments, _ = read_index(path)
    document = {"scheme": scheme, "size": size, "sha256": digest,
                "segments": [[length, sha.hex()] for length, sha in segments]}
    return json.dumps(document, separators=(",", ":")).encode()


def main():
    print("| index | segments | binary (MCSX) | JSON | gzip -9 JSON | binary / gzip JSON |")
    print("|---|---|---|---|---|---|")
    for path in sys.argv[1:]:
        _, segments, binary = read_index(path)
        text = as_json(path)
        packed = len(gzip.compress(text, 9, mtime=0))
        print(f"| {os.path.basename(path)} | {len(segments)} | {binary:,} B | {len(text):,} B | {packed:,} B | {binary / packed:.2f} |")


if __name__ == "__main__":
    main()
