#!/usr/bin/env python3
"""Writes a modelcast target with COUNT history records, as bench/history needs them.

    bench/gen-history.py DIR COUNT BASE_URL [SIZE]

Record k (1..COUNT) is a release of model `m`, version 1.0.k, one SIZE-byte file
(default 1024) stored at models/m/1.0.k/model.bin. The records are shaped as
`modelcast publish` writes them (the same keys in the same order, 2-space JSON, a
final newline): record k names 1.0.(k-1) as its rollback and `replaces` k-1, so every
record went live. published_at goes up one hour per record and ends an hour ago.
manifest.json is a copy of the last record, as a publish leaves it: the next real
`modelcast publish` continues from it (the live manifest is explained by record
COUNT). Nothing else is written: the hosting files (_headers, _modelcast/) are left
to that real publish.

Prints the number of bytes of artifacts written.
"""
import hashlib
import json
import os
import sys
import time


def content(k, size):
    """SIZE deterministic bytes, different for every k."""
    out = bytearray()
    i = 0
    while len(out) < size:
        out += hashlib.sha256(b"modelcast history bench %d %d" % (k, i)).digest()
        i += 1
    return bytes(out[:size])


def model_entry(base_url, version, data):
    key = "models/m/%s/model.bin" % version
    return {
        "version": version,
        "files": [{
            "name": "model.bin",
            "key": key,
            "url": "%s/%s" % (base_url, key),
            "sha256": hashlib.sha256(data).hexdigest(),
            "size": len(data),
            "content_type": "application/octet-stream",
        }],
    }


def render(record):
    """The bytes modelcast writes for a record (and for the live manifest)."""
    return (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode()


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    root, count, base_url = sys.argv[1], int(sys.argv[2]), sys.argv[3].rstrip("/")
    size = int(sys.argv[4]) if len(sys.argv) == 5 else 1024
    if count < 1:
        sys.exit("gen-history.py: COUNT must be at least 1")
    os.makedirs(os.path.join(root, "manifests"), exist_ok=True)
    first = int(time.time()) - 3600 * (count + 1)
    previous = None
    total = 0
    for k in range(1, count + 1):
        version = "1.0.%d" % k
        data = content(k, size)
        folder = os.path.join(root, "models", "m", version)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "model.bin"), "wb") as f:
            f.write(data)
        total += len(data)
        models = {"m": model_entry(base_url, version, data)}
        record = {
            "format": "modelcast-manifest",
            "format_version": 1,
            "sequence": k,
            "published_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(first + 3600 * k)),
            "channel": "stable",
            "profile": "modelcast",
            "models": models,
        }
        if previous is not None:
            record["rollback"] = {"sequence": k - 1, "models": previous}
            record["replaces"] = k - 1
        body = render(record)
        with open(os.path.join(root, "manifests", "%08d.json" % k), "wb") as f:
            f.write(body)
        previous = models
    with open(os.path.join(root, "manifest.json"), "wb") as f:
        f.write(body)
    print(total)


if __name__ == "__main__":
    main()
