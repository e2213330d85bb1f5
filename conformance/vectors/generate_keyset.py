#!/usr/bin/env python3
"""Writes the key set vectors (conformance/vectors/keyset/): chains of key sets a client walks,
manifests it verifies under the newest, and hostile documents and links it must refuse.

Usage: python3 conformance/vectors/generate_keyset.py [--renew-random]
(generate.py runs it too, as its keyset section.)

Python's standard library and the stock `minisign` (0.11), which makes every key (`-G -W`) and
every signature (`-S`, `-l` for the legacy one) and checks every signature of the valid chains
(`-V`). Expected outcomes are the rules of keyset/README.md, written here; the Swift test
(Tests/ModelCastClientTests/ConformanceVectorsTests.swift) holds ModelCastFormat to each one.

Re-running writes byte-identical files: key pairs are kept when they exist (made anew only when
missing or with --renew-random), and Ed25519 signatures are deterministic.
"""

import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FOLDER = os.path.join(HERE, "keyset")
RENEW_RANDOM = False

# Every case is judged at this time unless it says otherwise.
NOW = "2026-06-01T00:00:00Z"
EXPIRES = "2027-11-29T00:00:00Z"
EXPIRED = "2026-03-01T00:00:00Z"
MANIFEST_COMMENT = "timestamp:1767225600\tfile:{file}\tsequence:{sequence}\tversion:1.0.0\texpires:never"


def run(args, check=True, stdin=b""):
    result = subprocess.run(args, capture_output=True, input=stdin)
    if check and result.returncode != 0:
        sys.exit(f"generate_keyset.py: {' '.join(args)} failed ({result.returncode}):\n{result.stderr.decode(errors='replace')}")
    return result


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


def canonical(document):
    """The key set writer's bytes: keys sorted, two-space indentation, ASCII only, a final line feed."""
    return (json.dumps(document, indent=2, sort_keys=True, ensure_ascii=True) + "\n").encode()


# ---------------------------------------------------------------------------------------------
# Keys


class Key:
    def __init__(self, name):
        self.name = name
        self.pub = os.path.join(FOLDER, "keys", name + ".pub")
        self.key = os.path.join(FOLDER, "keys", name + ".key")
        if RENEW_RANDOM or not (os.path.exists(self.pub) and os.path.exists(self.key)):
            for path in (self.pub, self.key):
                if os.path.exists(path):
                    os.remove(path)
            os.makedirs(os.path.dirname(self.pub), exist_ok=True)
            run(["minisign", "-G", "-W", "-p", self.pub, "-s", self.key])
            lines = read(self.key).decode().split("\n")
            lines[0] = f"untrusted comment: TEST KEY {self.id_text} ({name}) for the conformance vectors only (published, unencrypted): never trust it"
            write(self.key, "\n".join(lines))

    @property
    def line(self):
        return read(self.pub).decode().splitlines()[1]

    @property
    def id_bytes(self):
        return base64.b64decode(self.line)[2:10]

    @property
    def id_text(self):
        """The key id as minisign prints it: the 8 bytes as a little-endian number, upper-case hex, no leading zeros."""
        return format(int.from_bytes(base64.b64decode(read(self.pub).decode().splitlines()[1])[2:10], "little"), "X")


def sign(key, message, comment, legacy=False, untrusted=None):
    with tempfile.TemporaryDirectory() as work:
        path, out = os.path.join(work, "m"), os.path.join(work, "m.minisig")
        write(path, message)
        args = ["minisign", "-S", "-s", key.key, "-m", path, "-x", out, "-t", comment,
                "-c", untrusted or f"signature from {key.name} (conformance vector key)"]
        run(args + (["-l"] if legacy else []))
        return read(out).decode()


def stock_minisign_accepts(message, signature, key):
    with tempfile.TemporaryDirectory() as work:
        path, sig = os.path.join(work, "m"), os.path.join(work, "m.minisig")
        write(path, message)
        write(sig, signature)
        return run(["minisign", "-V", "-q", "-H", "-m", path, "-x", sig, "-p", key.pub], check=False).returncode == 0


def key_set(version, roots, root_threshold, manifest, manifest_threshold=1, floors=None, expires=EXPIRES):
    document = {
        "expires_at": expires, "format": "modelcast-keys", "format_version": 1, "version": version,
        "root": {"keys": [k.line for k in roots], "threshold": root_threshold},
        "manifest": {"keys": [k.line for k in manifest], "threshold": manifest_threshold},
    }
    if floors is not None:
        document["sequence_floors"] = floors
    return document


def comment_for(document):
    version = document["version"]
    return f"file:keys/{version}.json\tkeyset:{version}\texpires:{document['expires_at']}"


# ---------------------------------------------------------------------------------------------
# Cases


class Case:
    """One folder cases/NAME/: the key set an app ships (`trusted.json`), the files a server
    holds (`keys/N.json`, `keys/N.json.sigs`, `keys/N.json.minisig`) and manifest signatures."""

    def __init__(self, name, description, trusted, now=NOW):
        self.name, self.folder = name, os.path.join(FOLDER, "cases", name)
        self.entry = {"name": name, "description": description, "now": now, "trusted": f"cases/{name}/trusted.json",
                      "trusted_version": trusted["version"]}
        self.documents = {trusted["version"]: trusted}
        write(os.path.join(self.folder, "trusted.json"), canonical(trusted))
        self.served = []
        self.manifests = []

    def link(self, version, data, signers, comment=None, legacy=False, sigs_text=None):
        """Serves `data` as keys/VERSION.json with the signatures of `signers` (in key-id order)."""
        path = f"keys/{version}.json"
        if sigs_text is None:
            if isinstance(data, dict):
                comment = comment or comment_for(data)
                data = canonical(data)
            ordered = sorted(signers, key=lambda k: int.from_bytes(k.id_bytes, "little"))
            signatures = [sign(k, data, comment, legacy=legacy) for k in ordered]
            sigs_text = "".join(signatures)
            if signatures:
                write(os.path.join(self.folder, path + ".minisig"), signatures[0])
        write(os.path.join(self.folder, path), data)
        write(os.path.join(self.folder, path + ".sigs"), sigs_text)
        self.served.append(path)
        return data

    def manifest(self, label, signers, outcome, sequence=42, file="manifest.json", signed_sequence=None, signed_file=None, counted=None):
        """A manifest (`manifest.json`, the same bytes for every label) with the signatures of `signers`."""
        message = json.dumps({"sequence": sequence, "note": "a stand-in manifest: only its bytes are signed"}).encode() + b"\n"
        write(os.path.join(self.folder, "manifest.json"), message)
        sigs = "".join(sign(k, message, MANIFEST_COMMENT.format(file=signed_file or file, sequence=signed_sequence or sequence))
                       for k in signers)
        write(os.path.join(self.folder, "manifests", label + ".sigs"), sigs)
        entry = {"label": label, "bytes": f"cases/{self.name}/manifest.json", "signatures": f"cases/{self.name}/manifests/{label}.sigs",
                 "file": file, "sequence": sequence, "expires_at": None, "outcome": outcome}
        if outcome == "accepted":
            entry["signers"] = [k.id_text for k in (counted or signers)]
        self.manifests.append(entry)

    def expect(self, outcome, final_version=None, floors=None, error=None, at=None, **details):
        self.entry["served"] = self.served
        self.entry["outcome"] = outcome
        if outcome == "accepted":
            self.entry["final_version"] = final_version
            self.entry["floors"] = floors
        else:
            self.entry["error"] = dict({"code": error, "at": at}, **details)
        if self.manifests:
            self.entry["manifests"] = self.manifests
        return self.entry


def generate():
    shutil.rmtree(os.path.join(FOLDER, "cases"), ignore_errors=True)
    r1, r2, r3 = Key("root-1"), Key("root-2"), Key("root-3")
    k1, k2, k3 = Key("manifest-1"), Key("manifest-2"), Key("manifest-3")
    one = key_set(1, [r1, r2], 2, [k1])
    cases = []

    # --- valid chains
    c = Case("rotation", "key set 2 (signed by R1+R2, threshold 2) replaces manifest key K1 with K2 and sets floors stable 41, beta 57", one)
    two = key_set(2, [r1, r2], 2, [k2], floors={"stable": 41, "beta": 57})
    c.link(2, two, [r1, r2])
    c.manifest("signed-by-k2", [k2], "accepted")
    c.manifest("signed-by-k1-after-its-revocation", [k1], "refused")
    cases.append(c.expect("accepted", final_version=2, floors=[{"stable": 41, "beta": 57}]))

    c = Case("revocation", "key set 2 adds K3 (the floors stay), key set 3 revokes K1 (stable's floor becomes 41, beta's, not named, 0)", key_set(1, [r1, r2], 2, [k1, k2]))
    c.link(2, key_set(2, [r1, r2], 2, [k1, k2, k3], floors={"stable": 7}), [r1, r2])
    c.link(3, key_set(3, [r1, r2], 2, [k2, k3], floors={"stable": 41}), [r1, r2])
    c.manifest("signed-by-k1", [k1], "refused")
    c.manifest("signed-by-k1-and-k2", [k1, k2], "accepted", counted=[k2])
    cases.append(c.expect("accepted", final_version=3, floors=[None, {"stable": 41, "beta": 0}]))

    c = Case("two-of-three", "manifest keys K1, K2, K3 with threshold 2", key_set(1, [r1, r2], 2, [k1, k2, k3], manifest_threshold=2))
    c.manifest("signed-by-k1-and-k2", [k1, k2], "accepted")
    c.manifest("signed-by-k3-and-k1", [k3, k1], "accepted")
    c.manifest("signed-by-k1-only", [k1], "refused")
    c.manifest("signed-by-k1-twice", [k1, k1], "refused")
    c.manifest("k2-signed-another-sequence", [k1, k2], "refused", signed_sequence=43)
    c.manifest("k2-signed-the-beta-manifest", [k1, k2], "refused", signed_file="channels/beta/manifest.json")
    cases.append(c.expect("accepted", final_version=1, floors=[]))

    c = Case("root-rotation", "key set 2 replaces root R1 with R3: signed by R1+R2 (set 1's threshold) and R2+R3 (its own)", one)
    c.link(2, key_set(2, [r2, r3], 2, [k1]), [r1, r2, r3])
    cases.append(c.expect("accepted", final_version=2, floors=[None]))

    c = Case("expired-intermediate", "key set 2 has expired, but key set 3 replaced it and is fresh", one)
    c.link(2, key_set(2, [r1, r2], 2, [k1], expires=EXPIRED), [r1, r2])
    c.link(3, key_set(3, [r1, r2], 2, [k1]), [r1, r2])
    cases.append(c.expect("accepted", final_version=3, floors=[None, None]))

    c = Case("long-chain", "40 versions: a check walks at most 32 (the verified prefix is kept, the next check continues)", key_set(1, [r1], 1, [k1]))
    for version in range(2, 41):
        c.link(version, key_set(version, [r1], 1, [k1]), [r1])
    entry = c.expect("accepted", final_version=40, floors=[None] * 39)
    entry["max_versions_per_check"] = 32
    entry["version_after_first_check"] = 33
    cases.append(entry)

    # --- hostile links
    def hostile(name, description, data, signers, error, at="keys/2.json", trusted=one, **kwargs):
        details = {k: kwargs.pop(k) for k in list(kwargs) if k in ("role", "key_set_version", "field", "found")}
        c = Case(name, description, trusted)
        c.link(2, data, signers, **kwargs)
        cases.append(c.expect("refused", error=error, at=at, **details))

    two_k2 = key_set(2, [r1, r2], 2, [k2])
    hostile("signed-by-old-manifest-key", "key set 2 signed by manifest key K1 alone (a leaked CI key)", two_k2, [k1],
            "threshold_not_met", role="root", key_set_version=1)
    hostile("one-root-of-two", "key set 2 signed by R1 alone; the threshold is 2", two_k2, [r1], "threshold_not_met", role="root", key_set_version=1)
    hostile("same-root-twice", "key set 2 signed twice by R1; a key counts once", two_k2, [r1, r1], "threshold_not_met", role="root", key_set_version=1)
    hostile("new-roots-not-met", "key set 2 makes R3 a root with threshold 2 of R1, R3 but only R1+R2 signed",
            key_set(2, [r1, r3], 2, [k2]), [r1, r2], "threshold_not_met", role="root", key_set_version=2)
    hostile("legacy-signatures", "key set 2 signed by R1+R2 with legacy (unprehashed 'Ed') signatures, which never count", two_k2, [r1, r2],
            "threshold_not_met", role="root", key_set_version=1, legacy=True)
    hostile("version-gap", "keys/2.json holds a key set that says version 3", key_set(3, [r1, r2], 2, [k2]), [r1, r2],
            "version_gap", found=3)
    hostile("comment-names-another-version", "the roots' signatures over keys/2.json carry the trusted comment of key set 3", two_k2, [r1, r2],
            "threshold_not_met", role="root", key_set_version=1, comment=comment_for(key_set(3, [r1, r2], 2, [k2])))
    hostile("comment-names-another-expiry", "the roots' trusted comments bind another expires_at than the document's", two_k2, [r1, r2],
            "threshold_not_met", role="root", key_set_version=1, comment=comment_for(dict(two_k2, expires_at="2030-01-01T00:00:00Z")))
    other = canonical(key_set(2, [r1, r2], 2, [k3]))
    moved = "".join(sign(k, other, comment_for(two_k2)) for k in (r1, r2))
    hostile("signatures-moved-from-another-document", "signatures made over another version 2 document, served beside this one",
            canonical(two_k2), [], "threshold_not_met", role="root", key_set_version=1, sigs_text=moved)
    c = Case("expired-newest", "key set 2 verifies but expired before now: no manifest is trusted under it", one)
    c.link(2, key_set(2, [r1, r2], 2, [k2], expires=EXPIRED), [r1, r2])
    cases.append(c.expect("refused", error="expired", at="keys/2.json"))

    # --- hostile documents (each signed by R1+R2 with a comment naming version 2, so only the document is at fault)
    def document(name, description, data, field):
        comment = f"file:keys/2.json\tkeyset:2\texpires:{EXPIRES}"
        data = data if isinstance(data, bytes) else canonical(data)
        hostile(name, description, data, [r1, r2], "invalid_document", field=field, comment=comment)

    good = canonical(two_k2).decode()
    document("huge", "a document of more than 64 KiB (spaces after the version)", good.replace('"version": 2', '"version": 2' + " " * 65536).encode(),
             "(document)")
    document("duplicate-root-keys", "root lists R1 twice", key_set(2, [r1, r1], 1, [k2]), "root.keys[1]")
    document("threshold-zero", "root threshold 0", key_set(2, [r1, r2], 0, [k2]), "root.threshold")
    document("threshold-above-count", "manifest threshold 2 with one key", key_set(2, [r1, r2], 2, [k2], manifest_threshold=2), "manifest.threshold")
    small = base64.b64encode(b"Ed" + bytes(range(1, 9)) + bytes(32)).decode()
    document("small-order-key", "a root key that is a point of small order (signatures forgeable without its secret)",
             dict(two_k2, root={"keys": [r1.line, small], "threshold": 1}), "root.keys[1]")
    document("control-characters", "format carries a terminal escape sequence", dict(two_k2, format="modelcast-keys\u001b[2J"), "format")
    document("control-characters-in-key", "a manifest key carries a line feed and a bell", dict(two_k2, manifest={"keys": [k2.line + "\n\u0007"], "threshold": 1}),
             "manifest.keys[0]")
    document("unknown-field", "a field format_version 1 does not have", dict(two_k2, mirrors=["https://cdn.example.net/"]), "mirrors")
    document("repeated-field", "version given twice (readers would disagree on which counts)", good.replace('"version": 2', '"version": 2,\n  "version": 3').encode(),
             "version")
    document("fractional-version", "version written as 2.0", good.replace('"version": 2', '"version": 2.0').encode(), "version")
    document("manifest-key-is-a-root-key", "a manifest key that is also a root key", key_set(2, [r1, r2], 2, [r2]), "manifest.keys[0]")
    document("floors-not-an-object", "sequence_floors written as one number", dict(two_k2, sequence_floors=41), "sequence_floors")
    document("floors-bad-channel", "sequence_floors names a channel with a capital letter", dict(two_k2, sequence_floors={"Stable": 41}), "sequence_floors")
    document("floors-negative", "stable's floor is -1", dict(two_k2, sequence_floors={"stable": -1}), "sequence_floors.stable")
    document("floors-above-2-53", "stable's floor is 2^53 + 1", dict(two_k2, sequence_floors={"stable": 2**53 + 1}), "sequence_floors.stable")
    document("floors-65-channels", "sequence_floors names 65 channels", dict(two_k2, sequence_floors={f"c{i}": 1 for i in range(65)}), "sequence_floors")
    document("seventeen-manifest-keys", "17 manifest keys", dict(two_k2, manifest={"keys": [k1.line] * 17, "threshold": 1}), "manifest.keys")

    seventeen = "".join(sign(r1, canonical(two_k2), comment_for(two_k2)) for _ in range(17))
    hostile("seventeen-signatures", "keys/2.json.sigs holds 17 signatures", canonical(two_k2), [], "malformed_signatures",
            at="keys/2.json.sigs", sigs_text=seventeen)
    long_comment = "x" * 1000
    large = "".join(sign(r1 if i % 2 else r2, canonical(two_k2), comment_for(two_k2), untrusted=long_comment) for i in range(16))
    hostile("signatures-above-16-kib", "keys/2.json.sigs of 16 signatures with long untrusted comments, more than 16 KiB", canonical(two_k2), [],
            "malformed_signatures", at="keys/2.json.sigs", sigs_text=large)

    # Stock minisign agrees with every signature of the valid chains.
    for case in cases:
        if case["outcome"] != "accepted":
            continue
        for path in case["served"]:
            folder = os.path.join(FOLDER, "cases", case["name"])
            message, text = read(os.path.join(folder, path)), read(os.path.join(folder, path + ".sigs")).decode()
            lines = text.split("\n")
            for i in range(0, len(lines) - 1, 4):
                signature = "\n".join(lines[i:i + 4]) + "\n"
                key_id = base64.b64decode(lines[i + 1])[2:10]
                key = next(k for k in (r1, r2, r3) if k.id_bytes == key_id)
                if not stock_minisign_accepts(message, signature, key):
                    sys.exit(f"generate_keyset.py: minisign -V refuses {case['name']}/{path}.sigs signature {i // 4 + 1}")

    index = {
        "keys": {k.name: {"public_key": k.line, "key_id": k.id_text, "file": f"keys/{k.name}.pub"} for k in (r1, r2, r3, k1, k2, k3)},
        "cases": cases,
    }
    write(os.path.join(FOLDER, "keyset.json"), json.dumps(index, indent=2, ensure_ascii=True) + "\n")
    return {"cases": len(cases), "manifest checks": sum(len(c.get("manifests", [])) for c in cases)}


def main():
    global RENEW_RANDOM
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--renew-random", action="store_true", help="make new keys instead of keeping the committed ones")
    RENEW_RANDOM = parser.parse_args().renew_random
    if not shutil.which("minisign"):
        sys.exit("generate_keyset.py: the stock minisign is needed")
    counts = generate()
    print("keyset: " + ", ".join(f"{n} {what}" for what, n in counts.items()))


if __name__ == "__main__":
    main()
