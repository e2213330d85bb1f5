#!/usr/bin/env python3
"""Judges the mutants modelcast accepted with readers modelcast does not share code with.

    bench/fuzz_oracle.py DIR

DIR holds the mutants `MutationFuzzTests` kept (MODELCAST_FUZZ_KEEP): `<sha256>.gguf`
files that modelcast's GGUF reader accepted, `<sha256>.zip` files its zip inspector
found clean. Each is read again by:

  GGUF  gguf-py's GGUFReader (llama.cpp's own Python reader), every field and
        tensor touched, in a worker limited to 4 GiB of address space and 20 s per
        file (it grew to 23 GB on one mutated file in an earlier round).
  zip   Python's zipfile (the central directory: open, CRC of every entry), Info-ZIP
        `unzip -Z1` (honours Unicode Path extra fields) and libarchive's `bsdtar`
        reading from a pipe (a streaming reader: it walks the local headers). All
        three must open it and list the same names.

Prints one JSON object: counts per format and the first disagreements.
"""
import hashlib, json, os, resource, signal, subprocess, sys, zipfile
from multiprocessing import Pool

LIMIT_BYTES = 4 << 30
SECONDS = 20


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


class Timeout(Exception):
    pass


def alarm(*_):
    raise Timeout()


def judge_gguf(path):
    import gguf
    signal.signal(signal.SIGALRM, alarm)
    signal.alarm(SECONDS)
    try:
        reader = gguf.GGUFReader(path)
        for field in reader.fields.values():
            field.parts and [bytes(p) for p in field.parts]
            if field.types and field.types[0] == gguf.GGUFValueType.STRING:
                for index in field.data:
                    bytes(field.parts[index]).decode("utf-8")
        for tensor in reader.tensors:
            tensor.data.tobytes()
        return (path, "ok", "")
    except Timeout:
        return (path, "hang", "over %d s" % SECONDS)
    except MemoryError:
        return (path, "refused", "MemoryError (4 GiB limit)")
    except Exception as error:  # any refusal by the oracle
        return (path, "refused", "%s: %s" % (type(error).__name__, str(error)[:200]))
    finally:
        signal.alarm(0)


def names_zipfile(path):
    with zipfile.ZipFile(path) as archive:
        bad = archive.testzip()
        if bad is not None:
            raise ValueError("CRC mismatch in %r" % bad)
        return sorted(archive.namelist())


def names_unzip(path):
    run = subprocess.run(["unzip", "-Z1", path], capture_output=True, timeout=SECONDS)
    if run.returncode != 0:
        raise ValueError("unzip -Z1 exit %d: %s" % (run.returncode, run.stderr.decode(errors="replace")[:200]))
    return sorted(line for line in run.stdout.decode("utf-8", errors="surrogateescape").split("\n") if line)


def names_bsdtar(path):
    with open(path, "rb") as data:
        run = subprocess.run(["bsdtar", "-tf", "-"], stdin=data, capture_output=True, timeout=SECONDS)
    if run.returncode != 0:
        raise ValueError("bsdtar -tf - exit %d: %s" % (run.returncode, run.stderr.decode(errors="replace")[:200]))
    return sorted(line for line in run.stdout.decode("utf-8", errors="surrogateescape").split("\n") if line)


def judge_zip(path):
    try:
        central = names_zipfile(path)
        info = names_unzip(path)
        streamed = names_bsdtar(path)
    except subprocess.TimeoutExpired:
        return (path, "hang", "over %d s" % SECONDS)
    except Exception as error:
        return (path, "refused", "%s: %s" % (type(error).__name__, str(error)[:200]))
    if not (central == info == streamed):
        return (path, "refused", "names differ: zipfile %r, unzip %r, bsdtar (streaming) %r" % (central, info, streamed))
    return (path, "ok", "")


def classify(reason):
    """Data-level damage (a stored CRC-32 or deflate stream that does not match the bytes:
    verify checks the headers, not the inflated data, which the artifact's SHA-256 and the
    device's own CRC check cover) apart from disagreements about the archive's structure."""
    if "CRC mismatch" in reason or "Bad CRC" in reason:
        return "data: CRC-32 of the data"
    if "while decompressing" in reason or "invalid" in reason and "distance" in reason:
        return "data: deflate stream"
    if "names differ" in reason:
        return "structure: readers list different names"
    return "structure: " + reason.split(":")[0]


def judge(path):
    return judge_gguf(path) if path.endswith(".gguf") else judge_zip(path)


def main():
    directory = sys.argv[1]
    # argv[2] (optional): where to copy every file an oracle refused, for replay.
    refused_dir = sys.argv[2] if len(sys.argv) > 2 else None
    paths = sorted(os.path.join(directory, name) for name in os.listdir(directory) if name.endswith((".gguf", ".zip")))
    report = {}
    with Pool(2, initializer=limit, maxtasksperchild=200) as pool:
        for path, verdict, reason in pool.imap_unordered(judge, paths, chunksize=8):
            kind = "gguf" if path.endswith(".gguf") else "zip"
            entry = report.setdefault(kind, {"judged": 0, "ok": 0, "refused": 0, "hang": 0, "by_reason": {}, "examples": {}})
            entry["judged"] += 1
            entry[verdict] += 1
            if verdict != "ok" and refused_dir:
                os.makedirs(refused_dir, exist_ok=True)
                with open(path, "rb") as source, open(os.path.join(refused_dir, os.path.basename(path)), "wb") as copy:
                    copy.write(source.read())
            if verdict != "ok":
                category = classify(reason)
                entry["by_reason"][category] = entry["by_reason"].get(category, 0) + 1
                entry["examples"].setdefault(category, {"file": os.path.basename(path), "verdict": verdict, "reason": reason})
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
