"""What the runner checks after every client call, and the helpers scenarios use to craft
hostile inputs."""

import hashlib
import json
import os
import re
import stat
import struct

from . import objects


class Failure(Exception):
    """The client did something the scenario forbids (the scenario fails)."""

# A client must stop reading within the declared size + 64 KiB. What the server manages to
# send past that also fills the sockets' buffers (the client's receive buffer grows to
# net.ipv4.tcp_rmem's maximum on Linux), which no client controls: that much is allowed.
def _socket_allowance():
    try:
        with open("/proc/sys/net/ipv4/tcp_rmem") as handle:
            return int(handle.read().split()[2])
    except (OSError, ValueError, IndexError):
        return 6 << 20


EXTRA_ALLOWANCE = (64 << 10) + _socket_allowance() + (256 << 10)


def plain(text):
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return "".join(c if c.isprintable() or c in "\n\t" else "\\x%02x" % ord(c) if ord(c) < 256 else "\\u%04x" % ord(c) for c in text)


def no_raw_control(data, stream):
    for byte in data:
        if byte < 0x20 and byte not in (0x0A, 0x09, 0x0D) or byte == 0x7F:
            raise Failure("the client printed a raw control character (0x%02x) on %s" % (byte, stream))


CANARY = b"canary: nothing may change this file\n"


def plant_canaries(work):
    """Files beside and above the client's directory that a path escaping it would hit."""
    for relative in ("canary.txt", "device/canary.txt", "inputs-canary/x.bin"):
        path = os.path.join(work, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(CANARY)


def outside_listing(work, excluded):
    """Every path under work except the excluded trees, with size and modification time."""
    listing = {}
    excluded = [os.path.realpath(e) for e in excluded]
    for root, folders, files in os.walk(work):
        real = os.path.realpath(root)
        folders[:] = [f for f in folders if os.path.realpath(os.path.join(root, f)) not in excluded]
        if real in excluded:
            continue
        for name in files + folders:
            path = os.path.join(root, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            # A directory's times change when the client's own directory is made inside it.
            listing[os.path.relpath(path, work)] = (info.st_mode,) if stat.S_ISDIR(info.st_mode) else (info.st_size, info.st_mtime_ns, info.st_mode)
    return listing


def same_outside(before, after):
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    if added or removed or changed:
        raise Failure("the client changed files outside its directory: %s" % plain(", ".join(
            ["+" + a for a in added] + ["-" + r for r in removed] + ["~" + c for c in changed])[:500]))


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def inside(directory, relative):
    """The file a state path names, refused unless it resolves inside the client's directory."""
    if relative.startswith("/") or ".." in relative.split("/"):
        raise Failure("state names %r, which is not a path inside the client's directory" % plain(relative))
    full = os.path.realpath(os.path.join(directory, relative))
    if not full.startswith(os.path.realpath(directory) + os.sep):
        raise Failure("state names %r, which resolves outside the client's directory" % plain(relative))
    if not os.path.isfile(full):
        raise Failure("state names %r, which is not a file" % plain(relative))
    return full


HEX64 = re.compile(r"^[0-9a-f]{64}$")
MODEL = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


def parse_state(raw):
    """The `state` document, checked against state.schema.json's rules (by hand: the kit
    needs nothing but the standard library)."""

    def bad(why):
        raise Failure("`state` printed an invalid document: " + why)
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        bad("not JSON (%s)" % error)
    if not isinstance(document, dict) or set(document) - {"licences"} != {"protocol", "sequence", "models"}:
        bad("the keys must be protocol, sequence, models and, optionally, licences")
    for name, terms in (document.get("licences") or {}).items():
        if not MODEL.match(name) or name in (".", "..") or not isinstance(terms, dict) or set(terms) != {"spdx", "url"} \
                or not all(v is None or isinstance(v, str) for v in terms.values()):
            bad("licences: %s must be a model name with exactly spdx and url (strings or null)" % plain(name))
    if document["protocol"] != 1:
        bad("protocol is %r, not 1" % document["protocol"])
    sequence = document["sequence"]
    if sequence is not None and (not isinstance(sequence, int) or isinstance(sequence, bool) or sequence < 0):
        bad("sequence is %r" % sequence)
    if not isinstance(document["models"], dict):
        bad("models is not an object")
    for name, model in document["models"].items():
        if not MODEL.match(name) or name in (".", ".."):
            bad("model name %r" % plain(name))
        if not isinstance(model, dict) or set(model) != {"version", "variant", "files", "previous", "refused"}:
            bad("model %s must have exactly version, variant, files, previous, refused" % name)
        if not isinstance(model["version"], str) or not model["version"]:
            bad("model %s version" % name)
        if model["variant"] is not None and not isinstance(model["variant"], str):
            bad("model %s variant" % name)
        if model["refused"] is not None and not isinstance(model["refused"], str):
            bad("model %s refused" % name)
        if not isinstance(model["previous"], list) or not all(isinstance(v, str) for v in model["previous"]):
            bad("model %s previous" % name)
        if not isinstance(model["files"], list) or not model["files"]:
            bad("model %s has no files" % name)
        for entry in model["files"]:
            if not isinstance(entry, dict) or set(entry) != {"path", "sha256"} or not isinstance(entry["path"], str) \
                    or not isinstance(entry["sha256"], str) or not HEX64.match(entry["sha256"]):
                bad("model %s has a file entry %r" % (name, plain(repr(entry))[:200]))
    return document


def _pointer(pointer):
    return [part.replace("~1", "/").replace("~0", "~") for part in pointer.lstrip("/").split("/")]


def json_set(document, pointer, value):
    parts = _pointer(pointer)
    node = document
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    last = parts[-1]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


def json_remove(document, pointer):
    parts = _pointer(pointer)
    node = document
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, list):
        del node[int(parts[-1])]
    else:
        node.pop(parts[-1], None)


def entries_with_path(document, url_path):
    """Every object entry (file, segments, model_signature) of the manifest served at url_path."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("url"), str) and objects.url_path(node) == url_path:
                found.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(document)
    return found


def rewrite_zip_sizes(path, declared):
    """Writes `declared` as every entry's uncompressed size in the local headers and the
    central directory: a zip whose entries inflate past what it declares."""
    data = bytearray(open(path, "rb").read())
    offset = 0
    while True:
        offset = data.find(b"PK\x03\x04", offset)
        if offset < 0:
            break
        struct.pack_into("<I", data, offset + 22, declared)
        offset += 4
    offset = 0
    while True:
        offset = data.find(b"PK\x01\x02", offset)
        if offset < 0:
            break
        struct.pack_into("<I", data, offset + 24, declared)
        offset += 4
    with open(path, "wb") as handle:
        handle.write(data)


def request_assertion(assertion, entries, run):
    """One assertion on the requests of a step (or of the whole scenario)."""
    kinds = run.known_kinds()
    if "only_kinds" in assertion:
        allowed = set(assertion["only_kinds"])
        others = [e for e in entries if kinds.get(e["path"], "other") not in allowed]
        if others:
            raise Failure("requests other than %s were made: %s" % (", ".join(sorted(allowed)), ", ".join(e["path"] for e in others)[:300]))
        return
    if "object" in assertion or "path" in assertion:
        selector = assertion.get("object") or {"path": assertion["path"]}
        wanted = {objects.resolve(selector, run.root_of(selector))}
        label = ", ".join(wanted)
    elif "kind" in assertion:
        wanted = {p for p, k in kinds.items() if k == assertion["kind"]}
        label = "every %s" % assertion["kind"]
    else:
        raise Failure("a request assertion names no object, path or kind")
    chosen = [e for e in entries if e["path"] in wanted and e.get("listener", "origin") == assertion.get("listener", e.get("listener"))]
    count = len(chosen)
    if "count" in assertion and count != assertion["count"]:
        raise Failure("%s was requested %d times, expected %d" % (label, count, assertion["count"]))
    if "min_count" in assertion and count < assertion["min_count"]:
        raise Failure("%s was requested %d times, expected at least %d" % (label, count, assertion["min_count"]))
    if "max_count" in assertion and count > assertion["max_count"]:
        raise Failure("%s was requested %d times, expected at most %d" % (label, count, assertion["max_count"]))
    sent = sum(e["bytes_sent"] for e in chosen)
    if "max_bytes" in assertion and sent > assertion["max_bytes"]:
        raise Failure("%d bytes of %s were sent, expected at most %d" % (sent, label, assertion["max_bytes"]))
    if "ranged_with_if_range" in assertion:
        for entry in chosen:
            if entry["range"] and not entry["if_range"]:
                raise Failure("%s was asked for range %s without If-Range" % (entry["path"], entry["range"]))
    if assertion.get("ranged") is True and not any(e["range"] for e in chosen):
        raise Failure("%s was never asked for by range" % label)
