#!/usr/bin/env python3
"""electron-builder's blockmap, the baseline bench/delta compares modelcast's delta
updates with. Written from the published parameters, not run from electron-builder:

* app-builder (`pkg/blockmap`, which electron-builder calls to write `FILE.blockmap`)
  cuts the file with a Rabin content-defined chunker (aclements/go-rabin, polynomial
  Poly64 = 0xbfe6b8a5bf378d83, window 64 bytes, minimum 8 KiB, average 16 KiB, maximum
  32 KiB: a chunk ends at the first byte, at least the minimum in, where the Rabin hash
  of the last 64 bytes has its low log2(average) bits all set, or at the maximum, or at
  the end); each chunk's checksum is BLAKE2b with an 18-byte digest, base64; the map is
  JSON `{"version":"2","files":[{"name":"file","offset":0,"checksums":[…],"sizes":[…]}]}`
  compressed with gzip at best compression.
* electron-updater (`differentialDownloader/downloadPlanBuilder.ts`) downloads both
  blockmaps (the old and the new), then walks the new map: a block whose checksum (and
  size) the old map has is copied, the others downloaded, consecutive downloads merged
  into one range. With multiple-range requests on (the generic provider's default), the
  ranges of each batch of 1,000 operations go in one `Range: bytes=a-b, c-d, …` request;
  a batch with a single range is a plain single-range request. A response that is not
  206 multipart/byteranges to a multi-range request (a server that answers 200 with the
  whole body, or ignores Range) fails the differential download, and electron-updater
  logs "Cannot download differentially, fallback to full download" and fetches the whole
  file (electron-builder issues 2376, 3742, 5758 and 7161 are reports of exactly that).

    blockmap.py build FILE OUT.blockmap        writes the gzipped blockmap; prints JSON
    blockmap.py plan OLD.blockmap NEW.blockmap [--server honest|multirangewhole|norange]
                                               prints what electron-updater fetches (JSON)
    blockmap.py selftest                       checks the fast chunker against a literal
                                               port of go-rabin's loop on random data

The fast chunker needs numba (`pip install numba`); without it the literal port is used,
which is correct but takes minutes per 100 MB.
"""
import base64, gzip, hashlib, json, mmap, os, sys

POLY64 = 0xBFE6B8A5BF378D83
WINDOW, MIN_SIZE, AVG_SIZE, MAX_SIZE = 64, 8 * 1024, 16 * 1024, 32 * 1024
BATCH = 1000  # operations per multi-range request (multipleRangeDownloader.ts)


def _poly_mod(value, poly=POLY64):
    degree = poly.bit_length() - 1
    while value and value.bit_length() - 1 >= degree:
        value ^= poly << (value.bit_length() - 1 - degree)
    return value


def rabin_tables(poly=POLY64, window=WINDOW):
    """go-rabin's NewTable: the push table (i·x^deg plus its residue, so the bits shifted
    out cancel) and the pop table (i·x^((window-1)·8) mod p)."""
    degree = poly.bit_length() - 1
    mask = (1 << 64) - 1
    push = [((i << degree) ^ _poly_mod(i << degree, poly)) & mask for i in range(256)]
    pop = [_poly_mod(i << ((window - 1) * 8), poly) for i in range(256)]
    return push, pop, degree - 8


def chunk_sizes_reference(data, min_size=MIN_SIZE, avg_size=AVG_SIZE, max_size=MAX_SIZE, window=WINDOW):
    """A literal port of go-rabin's Chunker.Next over a whole buffer (slow)."""
    push, pop, shift = rabin_tables(window=window)
    hash_mask = avg_size - 1
    mask64 = (1 << 64) - 1
    n, start, sizes, saw_eof = len(data), 0, [], False
    while True:
        if saw_eof:
            return sizes
        head = start + min_size - window
        if head + window > n:  # the discard or the priming reads hit the end
            if n - start:
                sizes.append(n - start)
            return sizes
        h = 0
        for b in data[head:head + window]:
            h = ((h << 8 | b) ^ push[(h >> shift) & 0xFF]) & mask64
        limit = start + max_size - window
        while (h & hash_mask) != hash_mask and head < limit:
            if head + window == n:  # a read at the end: io.EOF, sticky
                saw_eof = True
                break
            out, new = data[head], data[head + window]
            head += 1
            h ^= pop[out]
            h = ((h << 8 | new) ^ push[(h >> shift) & 0xFF]) & mask64
        end = head + window
        sizes.append(end - start)
        start = end
        if start == n and not saw_eof:
            # The chunk ended exactly at the end without a read seeing EOF: go-rabin's next
            # call discards past the end and returns a 0-byte chunk, which app-builder lists.
            sizes.append(0)
            return sizes


_fast = None


def _fast_chunker():
    global _fast
    if _fast is None:
        try:
            import numba, numpy as np
        except ImportError:
            _fast = False
            return _fast

        @numba.njit(cache=False, nogil=True)
        def ends(data, push, pop, shift, min_size, hash_mask, max_size, window):
            n = data.shape[0]
            out = np.empty(n // min_size + 3, np.int64)
            count = 0
            start = 0
            saw_eof = False
            mask8 = np.uint64(0xFF)
            sh = np.uint64(shift)
            eight = np.uint64(8)
            hm = np.uint64(hash_mask)
            while not saw_eof:
                head = start + min_size - window
                if head + window > n:
                    if n - start > 0:
                        out[count] = n
                        count += 1
                    break
                h = np.uint64(0)
                for i in range(head, head + window):
                    h = ((h << eight) | np.uint64(data[i])) ^ push[(h >> sh) & mask8]
                limit = start + max_size - window
                while (h & hm) != hm and head < limit:
                    if head + window == n:
                        saw_eof = True
                        break
                    h ^= pop[data[head]]
                    h = ((h << eight) | np.uint64(data[head + window])) ^ push[(h >> sh) & mask8]
                    head += 1
                end = head + window
                out[count] = end
                count += 1
                start = end
                if start == n and not saw_eof:
                    out[count] = n  # the 0-byte chunk (see the reference)
                    count += 1
                    break
            return out[:count]

        def run(data):
            push, pop, shift = rabin_tables()
            array = np.frombuffer(data, dtype=np.uint8)
            e = ends(array, np.array(push, dtype=np.uint64), np.array(pop, dtype=np.uint64),
                     shift, MIN_SIZE, AVG_SIZE - 1, MAX_SIZE, WINDOW)
            return [int(x) for x in np.diff(np.concatenate(([0], e)))]

        _fast = run
    return _fast


def chunk_sizes(data):
    fast = _fast_chunker()
    if len(data) == 0:
        return []
    return fast(data) if fast else chunk_sizes_reference(data)


def build(path, out_path):
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        sizes = chunk_sizes(data)
        checksums, offset = [], 0
        view = memoryview(data)
        for length in sizes:
            digest = hashlib.blake2b(view[offset:offset + length], digest_size=18).digest()
            checksums.append(base64.b64encode(digest).decode())
            offset += length
        view.release()
    assert offset == size, (offset, size)
    blockmap = {"version": "2", "files": [{"name": "file", "offset": 0, "checksums": checksums, "sizes": sizes}]}
    raw = json.dumps(blockmap, separators=(",", ":")).encode()
    packed = gzip.compress(raw, compresslevel=9, mtime=0)
    with open(out_path, "wb") as f:
        f.write(packed)
    return {"file": path, "size": size, "blocks": len(sizes), "blockmap": out_path,
            "blockmap_bytes": len(packed), "json_bytes": len(raw)}


def load(path):
    with open(path, "rb") as f:
        packed = f.read()
    return json.loads(gzip.decompress(packed)), len(packed)


def operations(old, new):
    """downloadPlanBuilder.computeOperations: [kind, start, end) with kind COPY (old file
    offsets) or DOWNLOAD (new file offsets)."""
    old_file, new_file = old["files"][0], new["files"][0]
    old_at, old_size = {}, {}
    offset = old_file["offset"]
    for checksum, size in zip(old_file["checksums"], old_file["sizes"]):
        if checksum not in old_size:
            old_at[checksum], old_size[checksum] = offset, size
        offset += size
    ops, last = [], None
    offset = new_file["offset"]
    for checksum, size in zip(new_file["checksums"], new_file["sizes"]):
        source = old_at.get(checksum)
        if source is not None and old_size[checksum] != size:
            source = None
        if source is None:
            if last is not None and last[0] == "DOWNLOAD" and last[2] == offset:
                last[2] += size
            else:
                last = ["DOWNLOAD", offset, offset + size]
                ops.append(last)
        else:
            if last is not None and last[0] == "COPY" and last[2] == source:
                last[2] += size
            else:
                last = ["COPY", source, source + size]
                ops.append(last)
        offset += size
    return ops


def plan(old_path, new_path, server="honest"):
    """What electron-updater fetches for the file (the two blockmaps, then the ranges or,
    when a multi-range request is not answered with 206 multipart, the whole file)."""
    old, old_bytes = load(old_path)
    new, new_bytes = load(new_path)
    size = sum(new["files"][0]["sizes"])
    ops = operations(old, new)
    download = [op for op in ops if op[0] == "DOWNLOAD"]
    ranges_bytes = sum(op[2] - op[1] for op in download)
    fetched, requests, fallback = old_bytes + new_bytes, 2, None
    for first in range(0, len(ops), BATCH):
        batch = [op for op in ops[first:first + BATCH] if op[0] == "DOWNLOAD"]
        if not batch:
            continue
        requests += 1
        single = len(batch) == 1
        if server == "norange" or (server == "multirangewhole" and not single):
            # A 200 to a Range request: electron-updater rejects it (no multipart Content-Type,
            # or no Accept-Ranges for a single range) and downloads the file whole. What
            # arrived of the 200's body before the connection closed is not counted.
            fallback = "HTTP 200 to a %s request" % ("single-range" if single else "multi-range")
            fetched += size
            requests += 1
            break
        fetched += sum(op[2] - op[1] for op in batch)
    return {"size": size, "blocks_old": len(old["files"][0]["sizes"]), "blocks_new": len(new["files"][0]["sizes"]),
            "changed_blocks_bytes": ranges_bytes, "ranges": len(download), "blockmap_old_bytes": old_bytes,
            "blockmap_new_bytes": new_bytes, "fetched": fetched, "requests": requests, "fallback": fallback}


def selftest():
    import random
    rng = random.Random(27)
    data = bytes(rng.getrandbits(8) for _ in range(600_000))
    # Repeated content and a low-entropy run exercise the maximum and the exact-end paths.
    data += data[100_000:180_000] + b"\0" * 70_000 + data[:5000]
    fast = _fast_chunker()
    if not fast:
        print("selftest: numba not installed; only the reference chunker is available")
        return 0
    for end in (len(data), len(data) - 1, 9000, 8191, 8192, 70_000, 123_457):
        ref, got = chunk_sizes_reference(data[:end]), fast(data[:end])
        assert ref == got, (end, ref[:10], got[:10])
        assert sum(ref) == end
    sizes = chunk_sizes_reference(data)
    body = [s for s in sizes[:-2]]
    assert all(MIN_SIZE <= s <= MAX_SIZE for s in body), "chunk outside [min, max]"
    print("selftest: fast chunker equals the go-rabin port on %d cases (%d chunks, mean %.0f bytes)"
          % (7, len(sizes), sum(sizes) / len(sizes)))
    return 0


def main(argv):
    if len(argv) >= 1 and argv[0] == "selftest":
        return selftest()
    if len(argv) == 3 and argv[0] == "build":
        print(json.dumps(build(argv[1], argv[2])))
        return 0
    if len(argv) in (3, 5) and argv[0] == "plan":
        server = "honest"
        if len(argv) == 5:
            if argv[3] != "--server" or argv[4] not in ("honest", "multirangewhole", "norange"):
                raise SystemExit(__doc__)
            server = argv[4]
        print(json.dumps(plan(argv[1], argv[2], server)))
        return 0
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
