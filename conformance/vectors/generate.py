#!/usr/bin/env python3
"""Writes the conformance kit's shared test vectors (conformance/vectors/).

Usage: python3 conformance/vectors/generate.py [--modelcast PATH] [--renew-random]

Python's standard library plus three programs: the `modelcast` binary (--modelcast, default
the one on PATH), the stock `minisign` and `openssl`. Every expected result comes from the
real implementation or is checked against it here:

- what a modelcast command exposes is asked of the binary: manifests and their signatures
  (`publish`), segment indexes (`publish --segment-index always`), model signatures
  (`sign-model`, checked with `inspect --model-signature`), variant choices and rollout
  sides (`rollout simulate --device`), every hostile manifest's refusal and the field it
  names (`rollout simulate`, which reads a manifest as a client does);
- rules too small to have a command (the rollout bucket, app-version order, trusted-comment
  fields) are written here from their published definitions, and the Swift client's test
  (Tests/ModelCastClientTests/ConformanceVectorsTests.swift) holds the Swift implementation
  to every vector, so a disagreement fails that test.

Re-running writes byte-identical files, except what needs fresh randomness: key pairs and
ECDSA signatures (model-signature bundles). Those files are kept when they exist (so a re-run
changes nothing) and made anew only when missing or with --renew-random. Ed25519 (minisign)
signatures are deterministic, so they are re-made on every run and come out the same.
"""

import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# Every publish runs at this time (SOURCE_DATE_EPOCH), so manifests and trusted comments repeat.
EPOCH = 1767225600  # 2026-01-01T00:00:00Z
BASE_URL = "https://cdn.example.com/models"

MODELCAST = "modelcast"
RENEW_RANDOM = False


# ---------------------------------------------------------------------------------------------
# Small helpers


def run(args, env=None, check=True, cwd=None, stdin=None):
    full_env = dict(os.environ)
    full_env.update(env or {})
    result = subprocess.run(args, env=full_env, cwd=cwd, capture_output=True, input=stdin)
    if check and result.returncode != 0:
        sys.exit(f"generate.py: {' '.join(args)} failed ({result.returncode}):\n{result.stderr.decode(errors='replace')}")
    return result


def modelcast(*args, check=True, env=None, cwd=None):
    return run([MODELCAST, *args], env={"SOURCE_DATE_EPOCH": str(EPOCH), **(env or {})}, check=check, cwd=cwd)


def json_text(value):
    """Vector JSON: two-space indentation, ASCII only (every hostile character as an escape)."""
    return json.dumps(value, indent=2, ensure_ascii=True) + "\n"


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(path, "wb") as f:
        f.write(data)


def write_json(path, value):
    write(path, json_text(value))


def read(path):
    with open(path, "rb") as f:
        return f.read()


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def fail(message):
    sys.exit("generate.py: " + message)


def pattern_bytes(size, seed):
    """Deterministic filler: byte i is (i * 31 + seed) mod 251."""
    return bytes((i * 31 + seed) % 251 for i in range(size))


def fresh(*folders):
    """Empties folders whose every file the generator writes again, so no stale vector stays."""
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)


def keep_or_make(paths, make):
    """Files that need randomness (keys, ECDSA signatures): kept when all exist, else made."""
    if RENEW_RANDOM or not all(os.path.exists(p) for p in paths):
        make()


# ---------------------------------------------------------------------------------------------
# The base manifest every constructed manifest starts from


def file_entry(model, version, name, data, key=None):
    key = key or f"models/{model}/{version}/{name}"
    return {"name": name, "key": key, "url": f"{BASE_URL}/{key}", "sha256": sha256(data), "size": len(data),
            "content_type": "application/octet-stream"}


def base_release():
    """A small valid `modelcast` manifest: one model `m`, one file (what HostileManifestTests starts from)."""
    return {
        "format": "modelcast-manifest",
        "format_version": 1,
        "sequence": 2,
        "published_at": "2026-01-01T00:00:00Z",
        "channel": "stable",
        "profile": "modelcast",
        "models": {"m": {"version": "1.0.0", "files": [file_entry("m", "1.0.0", "m.bin", pattern_bytes(1000, 1))]}},
    }


def refusal(manifest_bytes, work, label):
    """What modelcast says reading this manifest as a client does (`rollout simulate FILE
    --device ''` decodes it with Release.decode): None when accepted, else the message."""
    path = os.path.join(work, "probe.json")
    write(path, manifest_bytes)
    result = modelcast("rollout", "simulate", path, "--device", "", "--json", check=False)
    if result.returncode == 0:
        return None
    if result.returncode != 1:
        fail(f"{label}: rollout simulate exited {result.returncode}: {result.stderr.decode(errors='replace')}")
    message = json.loads(result.stdout)["error"]["message"]
    return message.split(": ", 1)[1] if message.startswith("cannot read release record") else message


# ---------------------------------------------------------------------------------------------
# 1. rollout/


def bucket(salt, device_id):
    """The published rule (docs/releases.md): SHA-256(salt ":" device_id), first 8 bytes big-endian, mod 10 000."""
    digest = hashlib.sha256((salt + ":" + device_id).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % 10_000


def first_id_with_bucket(salt, wanted):
    n = 0
    while bucket(salt, f"device-{n}") != wanted:
        n += 1
    return f"device-{n}"


def percent_json(basis_points):
    return basis_points // 100 if basis_points % 100 == 0 else basis_points / 100


def rollout_manifest(rollout):
    release = base_release()
    candidate = release["models"]["m"]
    release["models"]["m"] = {"version": "1.1.0", "files": [file_entry("m", "1.1.0", "m.bin", pattern_bytes(1000, 2))]}
    release["rollout"] = rollout
    release["rollback"] = {"sequence": 1, "models": {"m": candidate}}
    return json_text(release).encode()


def side(manifest, device_id, at, work):
    path = os.path.join(work, "rollout.json")
    write(path, manifest)
    result = modelcast("rollout", "simulate", path, "--device", "", "--device-id", device_id, "--at", at, "--json")
    return json.loads(result.stdout)["takes"] == "candidate"


def generate_rollout(work):
    salts = ["0123456789abcdef", "4ce54ab08a4ef3db1d1e420fd8ab4b67",
             "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"]
    ids = [f"device-{n}" for n in range(8)] + [
        "", " device-0", "device-0 ", "DEVICE-0", "a:b", ":", "\u00e9", "e\u0301", "\u65e5\u672c\u8a9e", "\U0001F4F1",
        "6F9619FF-8B86-D011-B42D-00C04FC964FF", "6f9619ff-8b86-d011-b42d-00c04fc964ff", "x" * 256,
    ]
    salt = salts[1]
    boundary = {b: first_id_with_bucket(salt, b) for b in (0, 49, 50, 9999)}
    percents = [0, 1, 50, 100, 1000, 5000, 9999, 10000]  # basis points: 0 %, 0.01 %, 0.5 %, 1 %, 10 %, 50 %, 99.99 %, 100 %

    vectors = []
    for s in salts:
        for device_id in ids + (list(boundary.values()) if s == salt else []):
            vectors.append({"salt": s, "device_id": device_id, "bucket": bucket(s, device_id)})
    decisions = []
    for bp in percents:
        manifest = rollout_manifest({"percent": percent_json(bp), "salt": salt, "started_at": "2026-01-01T00:00:00Z"})
        for device_id in ids[:8] + ["", "\u00e9", "e\u0301"] + list(boundary.values()):
            expected = bucket(salt, device_id) < bp
            if side(manifest, device_id, "2026-06-01T00:00:00Z", work) != expected:
                fail(f"rollout: modelcast disagrees for {device_id!r} at {bp} basis points")
            decisions.append({"salt": salt, "percent": percent_json(bp), "basis_points": bp, "device_id": device_id,
                              "bucket": bucket(salt, device_id), "candidate": expected})

    schedule = [{"at": "2026-01-02T00:00:00Z", "percent": 1}, {"at": "2026-01-03T00:00:00Z", "percent": 10},
                {"at": "2026-01-04T12:00:00Z", "percent": 50}, {"at": "2026-01-08T00:00:00Z", "percent": 100}]
    block = {"percent": 1, "salt": salt, "started_at": "2026-01-01T00:00:00Z", "schedule": schedule}
    manifest = rollout_manifest(block)
    schedules = []
    for at, bp in [("2026-01-01T00:00:00Z", 0), ("2026-01-01T23:59:59Z", 0), ("2026-01-02T00:00:00Z", 100),
                   ("2026-01-02T12:00:00Z", 100), ("2026-01-03T00:00:00Z", 1000), ("2026-01-04T11:59:59Z", 1000),
                   ("2026-01-04T12:00:00Z", 5000), ("2026-01-07T23:59:59Z", 5000), ("2026-01-08T00:00:00Z", 10000),
                   ("2030-01-01T00:00:00Z", 10000)]:
        for device_id in (boundary[49], boundary[50], "device-2"):
            expected = bucket(salt, device_id) < bp
            if side(manifest, device_id, at, work) != expected:
                fail(f"rollout schedule: modelcast disagrees for {device_id!r} at {at}")
            schedules.append({"at": at, "basis_points": bp, "device_id": device_id, "candidate": expected})

    write_json(os.path.join(HERE, "rollout", "rollout.json"), {
        "rule": "bucket = first 8 bytes of SHA-256(UTF-8(salt) || ':' || UTF-8(device_id)), big-endian, mod 10000; "
                "the device runs the candidate iff bucket < basis_points (percent x 100)",
        "buckets": vectors,
        "decisions": decisions,
        "schedule": {"rollout": block, "evaluations": schedules},
    })
    return {"buckets": len(vectors), "decisions": len(decisions), "schedule evaluations": len(schedules)}


# ---------------------------------------------------------------------------------------------
# 2. variants/


def device_description(device):
    """The device as `modelcast rollout simulate --device` takes it."""
    parts = []
    if device.get("memory") is not None:
        parts.append(f"memory={device['memory']}")
    if device.get("platform"):
        parts.append(f"platform={device['platform']}")
    if device.get("os_version"):
        parts.append(f"os={device['os_version']}")
    if device.get("architecture"):
        parts.append(f"arch={device['architecture']}")
    if device.get("accelerators"):
        parts.append("accelerators=" + "+".join(device["accelerators"]))
    if device.get("capabilities"):
        parts.append("capabilities=" + "+".join(device["capabilities"]))
    return ",".join(parts)


KNOWN_REQUIREMENTS = ["min_memory", "platforms", "accelerators", "architectures", "capabilities"]


def unmet_requirements(requires, device):
    """The requirement each unmet reason is about, in the order a client gives them (the
    documented rule; the messages themselves come from modelcast)."""
    keys = [k for k in sorted(requires) if k not in KNOWN_REQUIREMENTS]
    if "min_memory" in requires and (device.get("memory") is None or device["memory"] < requires["min_memory"]):
        keys.append("min_memory")
    if "platforms" in requires:
        lowest = requires["platforms"].get(device.get("platform") or "")
        if lowest is None:
            keys.append("platforms")
        elif device.get("os_version") is not None:
            if app_version_compare(device["os_version"], lowest) < 0:
                keys.append("platforms")
        elif app_version_compare(lowest, "0") != 0:
            keys.append("platforms")
    for accelerator in sorted(requires.get("accelerators", [])):
        if accelerator not in device.get("accelerators", []):
            keys.append("accelerators")
    if requires.get("architectures") and device.get("architecture") not in requires["architectures"]:
        keys.append("architectures")
    if set(requires.get("capabilities", [])) - set(device.get("capabilities", [])):
        keys.append("capabilities")
    return keys


def variants_manifest(variants):
    release = base_release()
    entries = []
    for index, (name, requires) in enumerate(variants):
        data = pattern_bytes(100 + index, index)
        entries.append({"name": name, "requires": requires, "version": "1.0.0",
                        "files": [file_entry("m", "1.0.0", "m.bin", data, key=f"models/m/variants/{name}/1.0.0/m.bin")]})
    release["models"]["m"] = {"version": "1.0.0", "files": entries[0]["files"], "variant": entries[0]["name"], "variants": entries}
    return json_text(release).encode()


GIB = 1 << 30


def generate_variants(work):
    phone = {"memory": 6 * GIB, "platform": "ios", "os_version": "17.4.1", "architecture": "arm64",
             "accelerators": ["gpu", "neural-engine"], "capabilities": ["metal3"]}
    mac = {"memory": 16 * GIB, "platform": "macos", "os_version": "14.5", "architecture": "arm64",
           "accelerators": ["gpu", "neural-engine"], "capabilities": []}
    linux = {"memory": 8 * GIB, "platform": "linux", "os_version": None, "architecture": "x86_64", "accelerators": [], "capabilities": []}
    unknown = {"memory": None, "platform": None, "os_version": None, "architecture": None, "accelerators": [], "capabilities": []}

    def dev(base, **changes):
        d = dict(base)
        d.update(changes)
        return d

    big = {"min_memory": 8 * GIB}
    cases = [
        ("no requirements: the first variant", phone, [("any", {}), ("other", {})]),
        ("memory met", phone, [("3b", {"min_memory": 6 * GIB}), ("1b", {})]),
        ("memory one byte short", dev(phone, memory=6 * GIB - 1), [("3b", {"min_memory": 6 * GIB}), ("1b", {})]),
        ("memory unknown", unknown, [("3b", big), ("1b", {})]),
        ("memory in fractions of a GiB", dev(phone, memory=3 * GIB // 2), [("3b", {"min_memory": 5 * GIB // 2}), ("1b", {})]),
        ("platform and OS met", phone, [("ane", {"platforms": {"ios": "17.0"}}), ("cpu", {})]),
        ("OS equal counts as met (17.4 = 17.4.0)", dev(phone, os_version="17.4"), [("ane", {"platforms": {"ios": "17.4.0"}}), ("cpu", {})]),
        ("OS compared number by number (17.4.1 < 17.10)", phone, [("ane", {"platforms": {"ios": "17.10"}}), ("cpu", {})]),
        ("OS pre-release below its release", dev(phone, os_version="18.0-beta.2"), [("new", {"platforms": {"ios": "18.0"}}), ("cpu", {})]),
        ("OS version unknown, lowest 0: met", dev(linux, os_version=None), [("linux", {"platforms": {"linux": "0"}}), ("any", {})]),
        ("OS version unknown, lowest 17.0: unmet", dev(phone, os_version=None), [("ane", {"platforms": {"ios": "17.0"}}), ("cpu", {})]),
        ("platform not listed", linux, [("apple", {"platforms": {"ios": "16.0", "macos": "13.0"}}), ("any", {})]),
        ("platform unknown", unknown, [("apple", {"platforms": {"ios": "16.0"}}), ("any", {})]),
        ("one of several platforms", mac, [("apple", {"platforms": {"ios": "16.0", "macos": "13.0"}}), ("any", {})]),
        ("Neural Engine missing", linux, [("ane", {"accelerators": ["neural-engine"]}), ("cpu", {})]),
        ("two accelerators missing: one reason each", unknown, [("both", {"accelerators": ["neural-engine", "gpu"]}), ("cpu", {})]),
        ("GPU present", linux | {"accelerators": ["gpu"]}, [("gpu", {"accelerators": ["gpu"]}), ("cpu", {})]),
        ("architecture met", phone, [("arm", {"architectures": ["arm64", "arm64e"]}), ("any", {})]),
        ("architecture not listed", linux, [("arm", {"architectures": ["arm64"]}), ("any", {})]),
        ("architecture unknown", unknown, [("arm", {"architectures": ["arm64"]}), ("any", {})]),
        ("capability missing", mac, [("m3", {"capabilities": ["metal3"]}), ("any", {})]),
        ("capabilities missing: one reason naming both", unknown, [("m3", {"capabilities": ["metal3", "bf16"]}), ("any", {})]),
        ("capabilities are matched exactly (case)", dev(phone, capabilities=["Metal3"]), [("m3", {"capabilities": ["metal3"]}), ("any", {})]),
        ("unknown requirement: never taken", mac, [("vram", {"min_vram": 8 * GIB}), ("any", {})]),
        ("unknown requirements, reasons sorted by key", mac, [("new", {"z_future": True, "a_future": 1}), ("any", {})]),
        ("every requirement unmet, reasons in rule order", unknown,
         [("all", {"min_memory": GIB, "platforms": {"ios": "17.0"}, "accelerators": ["gpu", "neural-engine"],
                   "architectures": ["arm64"], "capabilities": ["c"], "x_new": "y"}), ("any", {})]),
        ("first met wins, though a later one fits too", mac, [("small", {}), ("big", {"min_memory": 8 * GIB})]),
        ("falls through to the third", linux,
         [("ane", {"accelerators": ["neural-engine"]}), ("apple", {"platforms": {"macos": "14.0"}}), ("cpu", {})]),
        ("none fits: nothing chosen", unknown, [("big", big), ("ane", {"accelerators": ["neural-engine"]})]),
        ("every requirement met", phone,
         [("all", {"min_memory": 4 * GIB, "platforms": {"ios": "17", "macos": "14"}, "accelerators": ["neural-engine"],
                   "architectures": ["arm64"], "capabilities": ["metal3"]}), ("any", {})]),
    ]
    vectors = []
    for label, device, variants in cases:
        path = os.path.join(work, "variants.json")
        write(path, variants_manifest(variants))
        result = modelcast("rollout", "simulate", path, "--device", device_description(device), "--json")
        pick = json.loads(result.stdout)["candidate"]["models"][0]
        skipped = []
        for entry in pick["skipped"]:
            requires = dict(variants)[entry["variant"]]
            keys = unmet_requirements(requires, device)
            if len(keys) != len(entry["reasons"]):
                fail(f"variants '{label}': {entry['variant']}: modelcast gives {entry['reasons']}, the rule {keys}")
            skipped.append({"variant": entry["variant"],
                            "reasons": [{"requirement": k, "message": m} for k, m in zip(keys, entry["reasons"])]})
        names = [n for n, _ in variants]
        passed = names[: names.index(pick["variant"])] if pick.get("variant") else names
        if [s["variant"] for s in skipped] != passed or any(not unmet_requirements(r, device) for n, r in variants if n in passed):
            fail(f"variants '{label}': modelcast skips {[s['variant'] for s in skipped]}, chooses {pick.get('variant')}")
        if pick.get("variant") and unmet_requirements(dict(variants)[pick["variant"]], device):
            fail(f"variants '{label}': modelcast chooses {pick['variant']}, whose requirements the rule says are unmet")
        vectors.append({"name": label, "device": device,
                        "variants": [{"name": n, "requires": r} for n, r in variants],
                        "chosen": pick.get("variant"), "skipped": skipped})

    invalid = []
    for label, requires, field in [
        ("min_memory negative", {"min_memory": -1}, "requires.min_memory"),
        ("min_memory above 2^53", {"min_memory": (1 << 53) + 1}, "requires.min_memory"),
        ("min_memory as text", {"min_memory": "8GB"}, "requires.min_memory"),
        ("min_memory fractional", {"min_memory": 1.5}, "requires.min_memory"),
        ("platforms empty", {"platforms": {}}, "requires.platforms"),
        ("platforms as a list", {"platforms": ["ios"]}, "requires.platforms"),
        ("unknown platform", {"platforms": {"symbian": "9"}}, "requires.platforms.symbian"),
        ("platform version not a version", {"platforms": {"ios": "seventeen"}}, "requires.platforms.ios"),
        ("platform version as a number", {"platforms": {"ios": 17}}, "requires.platforms.ios"),
        ("unknown accelerator", {"accelerators": ["tpu"]}, "requires.accelerators"),
        ("accelerators not a list", {"accelerators": "gpu"}, "requires.accelerators"),
        ("architecture with a control character", {"architectures": ["arm64\u001b[2J"]}, "requires.architectures"),
        ("capability empty", {"capabilities": [""]}, "requires.capabilities"),
        ("65 capabilities", {"capabilities": [f"c{i}" for i in range(65)]}, "requires.capabilities"),
        ("requirement name with a line feed", {"x\ny": 1}, "requires"),
    ]:
        field = "models.m.variants[0]." + field
        message = refusal(variants_manifest([("v", requires), ("any", {})]), work, f"variants '{label}'")
        if message is None or not message.startswith(field):
            fail(f"variants '{label}': expected a refusal naming {field}, modelcast says {message!r}")
        invalid.append({"name": label, "requires": requires, "field": field})

    write_json(os.path.join(HERE, "variants", "variants.json"), {"choices": vectors, "invalid_requirements": invalid})
    return {"choices": len(vectors), "invalid requirements": len(invalid)}


# ---------------------------------------------------------------------------------------------
# 3. app-version/  (AppVersion: min_app_version and OS versions; SemanticVersion: model versions)


def app_version(text):
    """AppVersion (ManifestValues.swift): one to four numbers, optional pre-release, build ignored."""
    if len(text.encode("utf-8")) > 64:
        return None
    core, pre = text, []
    if "+" in core:
        core = core[: core.index("+")]
    if "-" in core:
        pre = core[core.index("-") + 1:].split(".")
        core = core[: core.index("-")]
        if not all(p and re.fullmatch(r"[0-9A-Za-z-]+", p) for p in pre):
            return None
    parts = core.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    if not all(re.fullmatch(r"[0-9]{1,18}", p) for p in parts):
        return None
    return [int(p) for p in parts], pre


def uint64(text):
    return int(text) if re.fullmatch(r"[0-9]+", text) and int(text) < 1 << 64 else None


def app_version_compare(a, b):
    (an, ap), (bn, bp) = app_version(a), app_version(b)
    for i in range(max(len(an), len(bn))):
        x = an[i] if i < len(an) else 0
        y = bn[i] if i < len(bn) else 0
        if x != y:
            return -1 if x < y else 1
    if not ap and not bp:
        return 0
    if not ap:
        return 1
    if not bp:
        return -1
    for x, y in zip(ap, bp):
        if x == y:
            continue
        m, n = uint64(x), uint64(y)
        if m is not None and n is not None:
            if m != n:
                return -1 if m < n else 1
            return 0  # numerically equal identifiers spelled differently ("01", "1"): Swift stops here
        if m is not None:
            return -1
        if n is not None:
            return 1
        return -1 if x.encode() < y.encode() else 1
    return (len(ap) > len(bp)) - (len(ap) < len(bp))


def semantic_version(text):
    """SemanticVersion (semver 2.0.0) at most 128 bytes, as a model version must be."""
    if len(text.encode("utf-8")) > 128:
        return None
    ident = r"[0-9A-Za-z-]+"
    rest, build = text, []
    if "+" in rest:
        build = rest[rest.index("+") + 1:].split(".")
        rest = rest[: rest.index("+")]
        if not all(re.fullmatch(ident, b) for b in build):
            return None
    pre = []
    if "-" in rest:
        pre = rest[rest.index("-") + 1:].split(".")
        rest = rest[: rest.index("-")]
        for p in pre:
            if not re.fullmatch(ident, p) or (re.fullmatch(r"[0-9]+", p) and len(p) > 1 and p.startswith("0")):
                return None
    core = rest.split(".")
    if len(core) != 3 or not all(re.fullmatch(r"0|[1-9][0-9]*", c) and int(c) < 1 << 64 for c in core):
        return None
    return [int(c) for c in core], pre


def semantic_compare(a, b):
    (an, ap), (bn, bp) = semantic_version(a), semantic_version(b)
    if an != bn:
        return -1 if an < bn else 1
    if not ap and not bp:
        return 0
    if not ap:
        return 1
    if not bp:
        return -1
    for x, y in zip(ap, bp):
        if x == y:
            continue
        xd, yd = x.isascii() and x.isdigit(), y.isascii() and y.isdigit()
        if xd and yd:
            return -1 if (len(x), x) < (len(y), y) else 1
        if xd:
            return -1
        if yd:
            return 1
        return -1 if x.encode() < y.encode() else 1
    return (len(ap) > len(bp)) - (len(ap) < len(bp))


ORDER = {-1: "<", 0: "=", 1: ">"}


def generate_app_version():
    valid_app = ["5", "5.2", "1.4.0", "1.0.0.123", "0", "0.0.0.0", "2.0.0-beta.1", "2.0-rc1", "1.0.0+build.7", "1.0.0-alpha+exp.sha.5114f85",
                 "000123.0", "999999999999999999", "17.4.1", "1.0.0-x-y-z.--", "1.0.0-0A.is.legal"]
    invalid_app = [("", "empty"), ("v1.0", "a leading v"), ("1.2.3.4.5", "five numbers"), ("1..2", "an empty number"),
                   ("1.", "a trailing dot"), (".1", "a leading dot"), ("1.0 ", "a space"), (" 1.0", "a space"),
                   ("1.0-", "an empty pre-release"), ("1.0-beta..1", "an empty pre-release identifier"),
                   ("1.0-be_ta", "'_' in a pre-release"), ("1.0-\u03b2", "a non-ASCII pre-release"),
                   ("1.x", "a letter for a number"), ("-1.0", "a negative number"), ("1,0", "a comma"),
                   ("1234567890123456789", "a number of 19 digits"), ("\uff11.0", "a full-width digit"),
                   ("1.0\u0000", "NUL"), ("1.0\n", "a line feed"), ("1.0.0-" + "a" * 59, "longer than 64 bytes"),
                   ("latest", "a word")]
    pairs = [("1", "1.0"), ("1.0", "1.0.0.0"), ("5.2", "5.10"), ("1.9", "1.10"), ("2", "10"), ("1.0.0.1", "1.0.0"),
             ("1.0.0-beta", "1.0.0"), ("1.0.0-alpha", "1.0.0-alpha.1"), ("1.0.0-alpha.1", "1.0.0-alpha.beta"),
             ("1.0.0-alpha.beta", "1.0.0-beta"), ("1.0.0-beta.2", "1.0.0-beta.11"), ("1.0.0-rc.1", "1.0.0"),
             ("1.0.0-1", "1.0.0-a"), ("1.0.0-B", "1.0.0-a"), ("1.0.0+build.1", "1.0.0+build.2"), ("1.0.0+x", "1.0.0"),
             ("1.0-beta", "1.0.0-beta"), ("1.0.0-01", "1.0.0-1"), ("000123.0", "123"), ("17.4.1", "17.10"),
             ("18.0-beta.2", "18.0"), ("0", "0.0.0.1"), ("999999999999999999", "999999999999999998.9.9.9"),
             ("3.0.0", "2.99.99.99")]

    valid_model = ["1.0.0", "0.0.0", "10.20.30", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-0.3.7", "1.0.0-x.7.z.92", "1.0.0+20130313144700",
                   "1.0.0-beta+exp.sha.5114f85", "1.0.0-x-y-z.--", "18446744073709551615.0.0"]
    invalid_model = [("1.0", "two numbers"), ("1.0.0.0", "four numbers"), ("01.0.0", "a leading zero"), ("1.0.0-01", "a numeric pre-release with a leading zero"),
                     ("1.0.0-", "an empty pre-release"), ("1.0.0+", "empty build metadata"), ("1.0.0+a..b", "an empty build identifier"),
                     ("v1.0.0", "a leading v"), ("1.0.0-a_b", "'_' in a pre-release"), ("18446744073709551616.0.0", "a number above 2^64-1"),
                     ("1.0.0/../../x", "a path"), ("", "empty"), ("\uff11.0.0", "a full-width digit"), ("1.0.0-" + "a" * 123, "longer than 128 bytes")]
    model_pairs = [("1.0.0", "2.0.0"), ("2.0.0", "2.1.0"), ("2.1.0", "2.1.1"), ("1.0.0-alpha", "1.0.0"), ("1.0.0-alpha", "1.0.0-alpha.1"),
                   ("1.0.0-alpha.1", "1.0.0-alpha.beta"), ("1.0.0-alpha.beta", "1.0.0-beta"), ("1.0.0-beta", "1.0.0-beta.2"),
                   ("1.0.0-beta.2", "1.0.0-beta.11"), ("1.0.0-beta.11", "1.0.0-rc.1"), ("1.0.0-rc.1", "1.0.0"),
                   ("1.0.0+a", "1.0.0+b"), ("1.9.0", "1.10.0"), ("1.0.0-B", "1.0.0-a"), ("1.0.0-9", "1.0.0-10")]

    for text in valid_app + [a for p in pairs for a in p]:
        if app_version(text) is None:
            fail(f"app-version: {text!r} should be valid")
    for text, _ in invalid_app:
        if app_version(text) is not None:
            fail(f"app-version: {text!r} should be invalid")
    for text in valid_model + [a for p in model_pairs for a in p]:
        if semantic_version(text) is None:
            fail(f"model version: {text!r} should be valid")
    for text, _ in invalid_model:
        if semantic_version(text) is not None:
            fail(f"model version: {text!r} should be invalid")
    document = {
        "app_version": {
            "valid": [{"text": t, "numbers": app_version(t)[0], "prerelease": app_version(t)[1]} for t in valid_app],
            "invalid": [{"text": t, "why": w} for t, w in invalid_app],
            "comparisons": [{"a": a, "b": b, "order": ORDER[app_version_compare(a, b)]} for a, b in pairs],
        },
        "model_version": {
            "valid": [{"text": t, "core": [str(n) for n in semantic_version(t)[0]], "prerelease": semantic_version(t)[1]} for t in valid_model],
            "invalid": [{"text": t, "why": w} for t, w in invalid_model],
            "comparisons": [{"a": a, "b": b, "order": ORDER[semantic_compare(a, b)]} for a, b in model_pairs],
        },
    }
    write_json(os.path.join(HERE, "app-version", "app-version.json"), document)
    return {"app versions": len(valid_app) + len(invalid_app) + len(pairs),
            "model versions": len(valid_model) + len(invalid_model) + len(model_pairs)}


# ---------------------------------------------------------------------------------------------
# 4. segment-index/


def parse_index(data):
    """The fields of a segment index (docs/segment-index.md), for the expected values; the
    Swift test decodes the same bytes with SegmentIndex(decoding:)."""
    scheme_length = int.from_bytes(data[6:8], "little")
    at = 8 + scheme_length
    count = int.from_bytes(data[at + 40: at + 44], "little")
    segments = []
    offset = 0
    for i in range(count):
        entry = data[at + 44 + 36 * i: at + 80 + 36 * i]
        length = int.from_bytes(entry[:4], "little")
        segments.append({"offset": offset, "length": length, "sha256": entry[4:].hex()})
        offset += length
    return {"format_version": int.from_bytes(data[4:6], "little"), "scheme": data[8:at].decode(),
            "artifact_size": int.from_bytes(data[at: at + 8], "little"), "artifact_sha256": data[at + 8: at + 40].hex(),
            "segments": segments}


def published_index(artifact, name, work):
    site = os.path.join(work, "segments-" + name)
    shutil.rmtree(site, ignore_errors=True)
    path = os.path.join(work, name)
    write(path, artifact)
    modelcast("publish", path, "--name", "m", "--version", "1.0.0", "--base-url", BASE_URL, "--to", site, "--segment-index", "always")
    manifest = json.loads(read(os.path.join(site, "manifest.json")))
    index = manifest["models"]["m"]["files"][0]["segments"]
    data = read(os.path.join(site, index["key"]))
    if sha256(data) != index["sha256"] or len(data) != index["size"]:
        fail(f"segment index of {name}: the manifest's digest or size is not the file's")
    return data


def generate_segment_index(work):
    folder = os.path.join(HERE, "segment-index")
    fresh(os.path.join(folder, "invalid"))
    docs_hex = read(os.path.join(REPO, "docs", "segment-index.test-vector.hex")).decode()
    docs_index = bytes.fromhex("".join(docs_hex.split()))
    docs_artifact = bytes(i % 251 for i in range(1_048_579))
    gguf = read(os.path.join(REPO, "examples", "models", "tiny-llm.gguf"))
    valid = [
        ("docs-vector.mcsx", docs_index, docs_artifact, None,
         "docs/segment-index.md's test vector: an artifact of 1,048,579 bytes, byte i being i mod 251, "
         "cut as one tensor region (one 1 MiB slice, then 3 bytes); ModelCastCoreTests.SegmentIndexTests proves modelcast "
         "cuts and encodes it so"),
        ("tiny-llm.gguf.mcsx", published_index(gguf, "tiny-llm.gguf", work), gguf, "tiny-llm.gguf",
         "the index `modelcast publish --segment-index always` writes for examples/models/tiny-llm.gguf "
         "(a GGUF: one metadata region, then one region per tensor), the artifact beside it"),
        ("empty.mcsx", published_index(b"", "empty.bin", work), b"", None,
         "the index modelcast writes for an empty artifact: no segments"),
    ]
    entries = []
    for file_name, data, artifact, artifact_file, description in valid:
        fields = parse_index(data)
        if fields["artifact_sha256"] != sha256(artifact) or fields["artifact_size"] != len(artifact):
            fail(f"segment index {file_name}: not the artifact's size or digest")
        for segment in fields["segments"]:
            if sha256(artifact[segment["offset"]: segment["offset"] + segment["length"]]) != segment["sha256"]:
                fail(f"segment index {file_name}: a segment's digest is not its bytes'")
        write(os.path.join(folder, file_name), data)
        if artifact_file:
            write(os.path.join(folder, artifact_file), artifact)
        entry = {"file": file_name, "valid": True, "description": description, "index_sha256": sha256(data), "index_size": len(data)}
        entry.update({"artifact_file": artifact_file} if artifact_file else {})
        entry.update(fields)
        entries.append(entry)

    good = valid[1][1]
    scheme_end = 8 + int.from_bytes(good[6:8], "little")
    count_at = scheme_end + 40

    def mutated(change):
        data = bytearray(good)
        change(data)
        return bytes(data)

    def put(at, value, width):
        return lambda d: d.__setitem__(slice(at, at + width), value.to_bytes(width, "little"))

    invalid = [
        ("bad-magic", mutated(lambda d: d.__setitem__(0, 0x4E)), "the magic is not MCSX", "no MCSX magic"),
        ("format-version-2", mutated(put(4, 2, 2)), "format version 2 (only 1 is defined)", "format version 2"),
        ("scheme-length-0", mutated(put(6, 0, 2)), "scheme length 0", "scheme length 0"),
        ("scheme-length-65", mutated(put(6, 65, 2)), "scheme length 65 (at most 64)", "scheme length 65"),
        ("scheme-with-slash", mutated(lambda d: d.__setitem__(8, 0x2F)), "a '/' in the scheme", "is not 1...64 ASCII"),
        ("scheme-with-line-feed", mutated(lambda d: d.__setitem__(8, 0x0A)), "a control character in the scheme", "is not 1...64 ASCII"),
        ("artifact-size-2^63", mutated(put(scheme_end, 1 << 63, 8)), "artifact size 2^63 (below 2^63 allowed)", "exceeds 2^63"),
        ("segments-do-not-add-up", mutated(put(scheme_end, len(valid[1][2]) + 1, 8)),
         "the artifact size is one more than the segments' lengths", "the segments cover 1024 bytes, but the artifact has 1025"),
        ("count-above-bytes", mutated(put(count_at, 4, 4)), "4 segments declared, 3 present", "4 segments need 144 bytes, but 108 follow"),
        ("count-below-bytes", mutated(put(count_at, 2, 4)), "2 segments declared, 3 present (bytes left over)", "2 segments need 72 bytes, but 108 follow"),
        ("count-above-maximum", mutated(put(count_at, (1 << 20) + 1, 4)), "1,048,577 segments (at most 1,048,576)", "segments (at most 1048576)"),
        ("segment-length-0", mutated(put(count_at + 4, 0, 4)), "a segment of length 0", "segment 0 has length 0"),
        ("segment-length-above-16-MiB", mutated(put(count_at + 4, (16 << 20) + 1, 4)), "a segment longer than 16 MiB",
         "segment 0 has length 16777217"),
        ("trailing-byte", good + b"\x00", "a byte after the last segment", "but 109 follow"),
        ("cut-in-the-header", good[:20], "the file ends inside the scheme", "ends inside its scheme"),
        ("cut-in-a-segment", good[:-1], "the file ends inside the last segment's digest", "3 segments need 108 bytes, but 107 follow"),
        ("empty-file", b"", "no bytes at all", "ends inside its magic"),
    ]
    for name, data, why, problem in invalid:
        write(os.path.join(folder, "invalid", name + ".mcsx"), data)
        entries.append({"file": "invalid/" + name + ".mcsx", "valid": False, "why": why, "problem": problem})
    write_json(os.path.join(folder, "segment-index.json"), {"indexes": entries})
    return {"valid": len(valid), "invalid": len(invalid)}


# ---------------------------------------------------------------------------------------------
# 5. minisign/


def minisign_keygen(folder, name):
    pub, key = os.path.join(folder, "keys", name + ".pub"), os.path.join(folder, "keys", name + ".key")
    os.makedirs(os.path.dirname(pub), exist_ok=True)

    def make():
        for p in (pub, key):
            if os.path.exists(p):
                os.remove(p)
        modelcast("keygen", "--unencrypted", "--public-key", pub, "--secret-key", key)

    keep_or_make([pub, key], make)
    # The first line of a minisign key file is an untrusted comment: it says what this key is.
    lines = read(key).decode().split("\n")
    lines[0] = f"untrusted comment: TEST KEY {minisign_key_id_text(pub)} for the conformance vectors only (published, unencrypted): never trust it"
    write(key, "\n".join(lines))
    return pub, key


def key_line(pub):
    return read(pub).decode().splitlines()[1]


def key_id(pub):
    return base64.b64decode(key_line(pub))[2:10]


def minisign_key_id_text(pub):
    """The key id as minisign prints it: the 8 bytes as a little-endian number, upper-case hex, no leading zeros."""
    return format(int.from_bytes(key_id(pub), "little"), "X")


def minisign_sign(key, message_path, comment, out, legacy=False):
    args = ["minisign", "-S", "-s", key, "-m", message_path, "-x", out, "-t", comment, "-c", "signature from the vector test key"]
    run(args + (["-l"] if legacy else []), stdin=b"")


def stock_minisign_accepts(message_path, signature_path, pub, prehashed_only=True):
    args = ["minisign", "-V", "-q", "-m", message_path, "-x", signature_path, "-p", pub] + (["-H"] if prehashed_only else [])
    return run(args, check=False).returncode == 0


def replace_line(text, number, line):
    lines = text.split("\n")
    lines[number - 1] = line
    return "\n".join(lines)


def signature_structure(text):
    return base64.b64decode(text.split("\n")[1])


def with_structure(text, structure):
    return replace_line(text, 2, base64.b64encode(structure).decode())


def trusted_comment_fields(text):
    """TrustedComment(parsing:) (TrustedComment.swift): tab-separated `key:value` fields;
    timestamp and sequence 64-bit signed integers; `expires:never` is no expiry."""
    fields = {}
    for part in [p for p in text.split("\t") if p]:
        if ":" not in part:
            return None
        key, value = part.split(":", 1)
        fields[key] = value

    def int64(value):
        if value is None or not re.fullmatch(r"[+-]?[0-9]+", value):
            return None
        number = int(value)
        return number if -(1 << 63) <= number < 1 << 63 else None

    timestamp, sequence = int64(fields.get("timestamp")), int64(fields.get("sequence"))
    if timestamp is None or sequence is None or not all(k in fields for k in ("file", "version", "expires")):
        return None
    return {"timestamp": timestamp, "file": fields["file"], "sequence": sequence, "version": fields["version"],
            "expires_at": None if fields["expires"] == "never" else fields["expires"]}


def generate_minisign(work):
    folder = os.path.join(HERE, "minisign")
    test_pub, test_key = minisign_keygen(folder, "test")
    other_pub, other_key = minisign_keygen(folder, "other")
    # A key with the test key's id but the other key's bytes: two trusted keys may share an id.
    same_id = b"Ed" + key_id(test_pub) + base64.b64decode(key_line(other_pub))[10:]
    same_id_pub = os.path.join(folder, "keys", "same-id.pub")
    write(same_id_pub, f"untrusted comment: minisign public key {minisign_key_id_text(test_pub)} (the test key's id, the other key's bytes)\n"
                       + base64.b64encode(same_id).decode() + "\n")
    keys = {"test": test_pub, "other": other_pub, "same-id": same_id_pub}

    fresh(os.path.join(folder, "signatures"), os.path.join(folder, "messages"))
    # Manifests signed by modelcast publish: stable with an expiry, beta without.
    messages = os.path.join(folder, "messages")
    os.makedirs(messages, exist_ok=True)
    model = os.path.join(work, "model.bin")
    write(model, pattern_bytes(2000, 5))
    site = os.path.join(work, "minisign-site")
    shutil.rmtree(site, ignore_errors=True)
    modelcast("publish", model, "--name", "m", "--version", "1.0.0", "--base-url", BASE_URL, "--to", site, "--sign", test_key,
              "--expires-in", "5200w")
    modelcast("publish", model, "--name", "m", "--version", "1.0.0", "--base-url", BASE_URL, "--to", site, "--sign", test_key,
              "--channel", "beta")
    for source, target in [("manifest.json", "stable-manifest.json"), ("channels/beta/manifest.json", "beta-manifest.json")]:
        write(os.path.join(messages, target), read(os.path.join(site, source)))
        write(os.path.join(folder, "signatures", target + ".minisig"), read(os.path.join(site, source + ".minisig")))
    hello = os.path.join(messages, "hello.txt")
    write(hello, "hello, modelcast\n")
    write(os.path.join(messages, "hello-altered.txt"), "hello, modelcasT\n")
    comment = "timestamp:1767225600\tfile:hello.txt\tsequence:7\tversion:1.0.0\texpires:never"
    signatures = os.path.join(folder, "signatures")
    sig = lambda name: os.path.join(signatures, name + ".minisig")
    minisign_sign(test_key, hello, comment, sig("hello-by-test"))
    minisign_sign(other_key, hello, comment, sig("hello-by-other"))
    minisign_sign(test_key, hello, comment, sig("hello-legacy"), legacy=True)
    good = read(sig("hello-by-test")).decode()
    structure = signature_structure(good)
    flipped = bytearray(structure)
    flipped[40] ^= 1
    global_line = good.split("\n")[3]
    global_flipped = bytearray(base64.b64decode(global_line))
    global_flipped[0] ^= 1
    crafted = {
        "hello-untrusted-comment-changed": replace_line(good, 1, "untrusted comment: anyone can change this line"),
        "hello-trusted-comment-changed": replace_line(good, 3, "trusted comment: " + comment.replace("sequence:7", "sequence:8")),
        "hello-signature-changed": with_structure(good, bytes(flipped)),
        "hello-global-signature-changed": replace_line(good, 4, base64.b64encode(bytes(global_flipped)).decode()),
        "hello-names-other-key-id": with_structure(good, structure[:2] + key_id(other_pub) + structure[10:]),
        "hello-crlf": good.replace("\n", "\r\n"),
        "hello-no-final-newline": good.rstrip("\n"),
        "hello-algorithm-XX": with_structure(good, b"XX" + structure[2:]),
        "malformed-empty": "",
        "malformed-three-lines": "\n".join(good.split("\n")[:3]) + "\n",
        "malformed-five-lines": good + "extra\n",
        "malformed-carriage-return-inside": replace_line(good, 3, "trusted comment: " + comment.replace("\t", "\r", 1)),
        "malformed-untrusted-prefix": replace_line(good, 1, "comment: signature"),
        "malformed-trusted-prefix": replace_line(good, 3, "trusted-comment: " + comment),
        "malformed-signature-not-base64": replace_line(good, 2, "not base64!"),
        "malformed-signature-short": with_structure(good, structure[:-1]),
        "malformed-global-signature-short": replace_line(good, 4, base64.b64encode(base64.b64decode(global_line)[:-1]).decode()),
    }
    for name, text in crafted.items():
        write(sig(name), text)

    stable_comment = read(sig("stable-manifest.json")).decode().split("\n")[2][len("trusted comment: "):]
    beta_comment = read(sig("beta-manifest.json")).decode().split("\n")[2][len("trusted comment: "):]
    cases = [
        ("stable manifest signed by modelcast publish", "stable-manifest.json", "stable-manifest.json", ["test"], "valid", "test", stable_comment),
        ("beta manifest signed by modelcast publish", "beta-manifest.json", "beta-manifest.json", ["test"], "valid", "test", beta_comment),
        ("signed by minisign", "hello.txt", "hello-by-test", ["test"], "valid", "test", comment),
        ("signed by another key", "hello.txt", "hello-by-other", ["test"], "untrusted-key", None, None),
        ("signed by another key, both trusted", "hello.txt", "hello-by-other", ["test", "other"], "valid", "other", comment),
        ("altered message", "hello-altered.txt", "hello-by-test", ["test"], "signature-mismatch", None, None),
        ("manifest verified against another manifest's signature", "beta-manifest.json", "stable-manifest.json", ["test"], "signature-mismatch", None, None),
        ("altered trusted comment", "hello.txt", "hello-trusted-comment-changed", ["test"], "trusted-comment-mismatch", None, None),
        ("altered untrusted comment (not covered)", "hello.txt", "hello-untrusted-comment-changed", ["test"], "valid", "test", comment),
        ("altered signature", "hello.txt", "hello-signature-changed", ["test"], "signature-mismatch", None, None),
        ("altered trusted comment signature", "hello.txt", "hello-global-signature-changed", ["test"], "trusted-comment-mismatch", None, None),
        ("names another key's id", "hello.txt", "hello-names-other-key-id", ["test"], "untrusted-key", None, None),
        ("names another key's id, both trusted", "hello.txt", "hello-names-other-key-id", ["test", "other"], "signature-mismatch", None, None),
        ("a trusted key with the signer's id but other bytes", "hello.txt", "hello-by-test", ["same-id"], "signature-mismatch", None, None),
        ("two trusted keys share the id: the signature decides", "hello.txt", "hello-by-test", ["same-id", "test"], "valid", "test", comment),
        ("legacy (not prehashed) signature", "hello.txt", "hello-legacy", ["test"], "legacy-refused", None, None),
        ("CRLF line ends", "hello.txt", "hello-crlf", ["test"], "valid", "test", comment),
        ("no final newline", "hello.txt", "hello-no-final-newline", ["test"], "valid", "test", comment),
        ("unknown algorithm", "hello.txt", "hello-algorithm-XX", ["test"], "unsupported-algorithm", None, None),
    ] + [(name.replace("malformed-", "malformed: ").replace("-", " "), "hello.txt", name, ["test"], "malformed", None, None)
         for name in crafted if name.startswith("malformed-")]

    entries = []
    for label, message, signature, trusted, outcome, signer, trusted_comment in cases:
        message_path = os.path.join(messages, message)
        entry = {"name": label, "message": "messages/" + message, "signature": "signatures/" + signature + ".minisig",
                 "trusted_keys": ["keys/" + k + ".pub" for k in trusted], "outcome": outcome}
        # What the stock tool says with one trusted key (`minisign -V -H`: legacy signatures refused, as clients do).
        # Every valid vector must pass it; where a client is stricter, the vector records the difference.
        if len(trusted) == 1:
            accepted = stock_minisign_accepts(message_path, sig(signature), keys[trusted[0]])
            if accepted != (outcome == "valid"):
                if outcome == "valid":
                    fail(f"minisign '{label}': stock minisign refuses a signature the vector calls valid")
                entry["stock_minisign"] = "accepts"
        if outcome == "valid":
            entry["signer"] = "keys/" + signer + ".pub"
            entry["trusted_comment"] = trusted_comment
        entries.append(entry)
    if not stock_minisign_accepts(hello, sig("hello-legacy"), test_pub, prehashed_only=False):
        fail("minisign: stock minisign -V (without -H) should accept the legacy signature")

    key_files = {name: {"file": "keys/" + name + ".pub", "key_id": minisign_key_id_text(path), "public_key": key_line(path)}
                 for name, path in keys.items()}
    write_json(os.path.join(folder, "minisign.json"), {"keys": key_files, "signatures": entries})
    comments = generate_trusted_comments(folder, [stable_comment, beta_comment, comment])
    return {"signatures": len(entries), **comments}


def generate_trusted_comments(folder, real):
    texts = [
        (real[0], "written by modelcast publish (stable, with an expiry)"),
        (real[1], "written by modelcast publish (beta channel)"),
        (real[2], "modelcast's form, signed by minisign"),
        ("timestamp:1767225600\tfile:hello.txt\thashed", "minisign's default comment: not modelcast's (no sequence)"),
        ("timestamp:1 file:manifest.json sequence:1 version:1.0.0 expires:never", "spaces, not tabs"),
        ("timestamp:1\tfile:manifest.json\tsequence:1\tversion:1.0.0", "no expires field"),
        ("timestamp:1\tfile:manifest.json\tversion:1.0.0\texpires:never", "no sequence field"),
        ("timestamp:1\tfile:manifest.json\tsequence:one\tversion:1.0.0\texpires:never", "a sequence that is no number"),
        ("timestamp:1\tfile:manifest.json\tsequence:9223372036854775808\tversion:1.0.0\texpires:never", "a sequence above 2^63-1"),
        ("timestamp:1\tfile:manifest.json\tsequence:9223372036854775807\tversion:1.0.0\texpires:never", "the largest sequence"),
        ("timestamp:1\tfile:manifest.json\tsequence:-3\tversion:1.0.0\texpires:never", "a negative sequence parses (the manifest's own is refused)"),
        ("timestamp:1\tfile:manifest.json\tsequence: 3\tversion:1.0.0\texpires:never", "a space before the number"),
        ("timestamp:x\tfile:manifest.json\tsequence:3\tversion:1.0.0\texpires:never", "a timestamp that is no number"),
        ("timestamp:1\tfile:manifest.json\tsequence:3\tversion:1.0.0\texpires:never\textra", "a field without a colon"),
        ("timestamp:1\tfile:manifest.json\tsequence:3\tversion:1.0.0\texpires:never\tnote:later fields are ignored", "an unknown field"),
        ("timestamp:1\tfile:manifest.json\tsequence:3\tsequence:4\tversion:1.0.0\texpires:never", "a repeated field: the last one counts"),
        ("timestamp:1\t\tfile:manifest.json\tsequence:3\tversion:1.0.0\texpires:never\t", "empty fields between tabs are skipped"),
        ("timestamp:1\tfile:channels/beta/manifest.json\tsequence:3\tversion:a@1.0.0,b@2.0.0\texpires:2026-12-01T00:00:00Z",
         "another channel's file, two models' versions, an expiry"),
        ("timestamp:1\tfile:a:b\tsequence:3\tversion:1.0.0\texpires:never", "a value holding a colon"),
        ("", "empty"),
    ]
    parse = []
    for text, why in texts:
        parse.append({"comment": text, "why": why, "parsed": trusted_comment_fields(text)})

    def binding(comment, sequence, expires_at, channel, manifest_name="manifest.json"):
        fields = trusted_comment_fields(comment)
        problems = []
        if sequence != fields["sequence"]:
            problems.append("sequence")
        if expires_at is not None and expires_at != fields["expires_at"]:
            problems.append("expires_at")
        if fields["file"] != (manifest_name if channel == "stable" else f"channels/{channel}/{manifest_name}"):
            problems.append("file")
        return {"comment": comment, "manifest": {"sequence": sequence, "expires_at": expires_at, "channel": channel, "manifest_name": manifest_name},
                "problems": problems}

    stable = trusted_comment_fields(real[0])
    beta = trusted_comment_fields(real[1])
    bindings = [
        binding(real[0], stable["sequence"], stable["expires_at"], "stable"),
        binding(real[0], stable["sequence"] + 1, stable["expires_at"], "stable"),
        binding(real[0], stable["sequence"], None, "stable"),
        binding(real[0], stable["sequence"], "2026-02-01T00:00:00Z", "stable"),
        binding(real[0], stable["sequence"], stable["expires_at"], "beta"),
        binding(real[1], beta["sequence"], None, "beta"),
        binding(real[1], beta["sequence"], None, "stable"),
        binding(real[1], beta["sequence"], "2030-01-01T00:00:00Z", "beta"),
        binding(real[1], beta["sequence"] - 1, "2030-01-01T00:00:00Z", "stable"),
        binding(real[2], 7, None, "stable", manifest_name="hello.txt"),
        binding(real[2], 7, None, "stable"),
    ]
    write_json(os.path.join(folder, "trusted-comments.json"), {"parse": parse, "bindings": bindings})
    return {"trusted comments": len(parse), "bindings": len(bindings)}


# ---------------------------------------------------------------------------------------------
# 6. model-signature/

PAYLOAD_TYPE = "application/vnd.in-toto+json"


def pae(payload):
    """DSSE v1 pre-authentication encoding (docs/model-signing.md)."""
    return b"DSSEv1 %d %s %d " % (len(PAYLOAD_TYPE), PAYLOAD_TYPE.encode(), len(payload)) + payload


def bundle_parts(data):
    bundle = json.loads(data)
    return bundle, base64.b64decode(bundle["dsseEnvelope"]["payload"])


def with_payload(bundle, payload, signature=None):
    copy = json.loads(json.dumps(bundle))
    copy["dsseEnvelope"]["payload"] = base64.b64encode(payload).decode()
    if signature is not None:
        copy["dsseEnvelope"]["signatures"][0]["sig"] = base64.b64encode(signature).decode()
    return json.dumps(copy, separators=(",", ":")).encode()


def statement_bytes(statement):
    return json.dumps(statement, indent=2).encode()


def root_digest(resources):
    return hashlib.sha256(b"".join(bytes.fromhex(r["digest"]) for r in resources)).hexdigest()


def generate_model_signature(work):
    folder = os.path.join(HERE, "model-signature")
    keys = os.path.join(folder, "keys")
    os.makedirs(keys, exist_ok=True)
    for name in ("signer", "other"):
        pem, pub = os.path.join(keys, name + ".pem"), os.path.join(keys, name + ".pub")

        def make(pem=pem, pub=pub):
            for p in (pem, pub):
                if os.path.exists(p):
                    os.remove(p)
            modelcast("keygen", "--model-signing", "--unencrypted", "--private-key", pem, "--public-key", pub)

        keep_or_make([pem, pub], make)
    signer_pem, signer_pub = os.path.join(keys, "signer.pem"), os.path.join(keys, "signer.pub")
    other_pem = os.path.join(keys, "other.pem")

    models = os.path.join(folder, "models")
    files = {"README.md": b"# tiny-model\nA model for the conformance vectors.\n", "config.json": b'{"labels": 3}\n',
             "weights/w.bin": pattern_bytes(3000, 9), ".gitignore": b"# left out of the signature (a top-level git file)\n"}
    shutil.rmtree(models, ignore_errors=True)
    variants = {
        "tiny-model": files,
        "tiny-model-changed": {**files, "weights/w.bin": pattern_bytes(2999, 9) + b"\x00"},
        "tiny-model-extra": {**files, "weights/extra.bin": b"not signed\n"},
        "tiny-model-missing": {k: v for k, v in files.items() if k != "config.json"},
    }
    for directory, content in variants.items():
        for name, data in content.items():
            write(os.path.join(models, directory, name), data)
    write(os.path.join(models, "single.bin"), pattern_bytes(1500, 4))
    write(os.path.join(models, "single-changed.bin"), pattern_bytes(1500, 5))

    bundles = os.path.join(folder, "bundles")
    os.makedirs(bundles, exist_ok=True)
    out = lambda name: os.path.join(bundles, name + ".sig")

    def sign_model(model, key, name):
        keep_or_make([out(name)], lambda: modelcast("sign-model", os.path.join(models, model), "--key", key, "--signature", out(name), "--force"))

    sign_model("tiny-model", signer_pem, "directory")
    sign_model("single.bin", signer_pem, "single-file")
    sign_model("tiny-model", other_pem, "other-key")
    if shutil.which("model_signing"):
        keep_or_make([out("directory-by-model-signing")], lambda: run(
            ["model_signing", "sign", "key", os.path.join(models, "tiny-model"), "--private_key", signer_pem, "--signature", out("directory-by-model-signing")]))

    def openssl_signed(name, payload):
        """A statement modelcast would not write, signed with the signer's key by openssl."""
        def make():
            message = os.path.join(work, name + ".pae")
            write(message, pae(payload))
            der = run(["openssl", "dgst", "-sha256", "-sign", signer_pem, message]).stdout
            write(out(name), with_payload(bundle, payload, der))
        keep_or_make([out(name)], make)

    bundle, payload = bundle_parts(read(out("directory")))
    statement = json.loads(payload)
    resources = statement["predicate"]["resources"]

    def statement_with(change):
        copy = json.loads(json.dumps(statement))
        change(copy)
        return statement_bytes(copy)

    def set_subject(s):
        s["subject"][0]["digest"]["sha256"] = "0" * 64

    def set_resources(s, items):
        s["predicate"]["resources"] = items
        s["subject"][0]["digest"]["sha256"] = root_digest(items)

    openssl_signed("wrong-subject-digest", statement_with(set_subject))
    openssl_signed("predicate-v0.2", statement_with(lambda s: s.__setitem__("predicateType", "https://model_signing/Digests/v0.1")))
    openssl_signed("sharded", statement_with(lambda s: s["predicate"]["serialization"].__setitem__("method", "shards")))
    openssl_signed("resource-climbing-out", statement_with(lambda s: set_resources(s, resources[:1] + [dict(resources[1], name="../x")])))
    openssl_signed("resource-listed-twice", statement_with(lambda s: set_resources(s, resources + resources[:1])))
    openssl_signed("digest-uppercase", statement_with(lambda s: set_resources(s, [dict(resources[0], digest=resources[0]["digest"].upper())] + resources[1:])))

    altered = json.loads(payload)
    altered["predicate"]["resources"][0]["digest"] = sha256(b"something else")
    altered["subject"][0]["digest"]["sha256"] = root_digest(altered["predicate"]["resources"])
    raw = read(out("directory"))
    other_bundle = json.loads(read(out("other-key")))
    no_hint = json.loads(json.dumps(other_bundle))
    no_hint["verificationMaterial"]["publicKey"] = {}
    signer_no_hint = json.loads(raw)
    signer_no_hint["verificationMaterial"]["publicKey"] = {}

    def edited(change):
        copy = json.loads(raw)
        change(copy)
        return json.dumps(copy, separators=(",", ":")).encode()

    der = base64.b64decode(bundle["dsseEnvelope"]["signatures"][0]["sig"])
    crafted = {
        "without-hint": json.dumps(signer_no_hint, separators=(",", ":")).encode(),
        "other-key-without-hint": json.dumps(no_hint, separators=(",", ":")).encode(),
        "altered-file-digest": with_payload(bundle, statement_bytes(altered)),
        "signature-cut": with_payload(bundle, payload, der[:-1]),
        "truncated-json": raw[: len(raw) // 2],
        "not-json": b"this is not a bundle\n",
        "payload-not-base64": edited(lambda b: b["dsseEnvelope"].__setitem__("payload", "not base64!")),
        "two-signatures": edited(lambda b: b["dsseEnvelope"]["signatures"].append(dict(b["dsseEnvelope"]["signatures"][0]))),
        "certificate": edited(lambda b: b["verificationMaterial"].__setitem__("certificate", {"rawBytes": "AAAA"})),
        "tlog-entry": edited(lambda b: b["verificationMaterial"]["tlogEntries"].append({"logIndex": "1"})),
        "other-media-type": edited(lambda b: b.__setitem__("mediaType", "application/vnd.dev.sigstore.bundle+json;version=0.2")),
        "unknown-member": edited(lambda b: b.__setitem__("extra", True)),
    }
    for name, data in crafted.items():
        write(out(name), data)

    cases = [
        ("directory signed by modelcast sign-model", "directory", "tiny-model", "signer", "valid", None),
        ("single file signed by modelcast sign-model", "single-file", "single.bin", "signer", "valid", None),
        ("directory signed by model_signing 1.1.1", "directory-by-model-signing", "tiny-model", "signer", "valid", None),
        ("no key hint (optional)", "without-hint", "tiny-model", "signer", "valid", None),
        ("signed by another key", "other-key", "tiny-model", "signer", "untrusted-key", None),
        ("another key's bundle without its hint", "other-key-without-hint", "tiny-model", "signer", "bad-signature", None),
        ("a file digest altered after signing", "altered-file-digest", "tiny-model", "signer", "bad-signature", None),
        ("the signature cut by a byte", "signature-cut", "tiny-model", "signer", "bad-signature", None),
        ("signed statement whose subject digest is not its resources'", "wrong-subject-digest", "tiny-model", "signer", "invalid-statement",
         "payload.subject[0].digest.sha256"),
        ("signed statement of model_signing 0.2", "predicate-v0.2", "tiny-model", "signer", "invalid-statement", "payload.predicateType"),
        ("signed sharded statement", "sharded", "tiny-model", "signer", "invalid-statement", "payload.predicate.serialization.method"),
        ("signed statement naming '../x'", "resource-climbing-out", "tiny-model", "signer", "invalid-statement", "payload.predicate.resources[1].name"),
        ("signed statement listing a file twice", "resource-listed-twice", "tiny-model", "signer", "invalid-statement",
         f"payload.predicate.resources[{len(resources)}].name"),
        ("signed statement with an uppercase digest", "digest-uppercase", "tiny-model", "signer", "invalid-statement", "payload.predicate.resources[0].digest"),
        ("truncated JSON", "truncated-json", "tiny-model", "signer", "malformed-bundle", None),
        ("not JSON", "not-json", "tiny-model", "signer", "malformed-bundle", None),
        ("payload not base64", "payload-not-base64", "tiny-model", "signer", "malformed-bundle", "bundle.dsseEnvelope.payload"),
        ("two signatures", "two-signatures", "tiny-model", "signer", "malformed-bundle", "bundle.dsseEnvelope.signatures"),
        ("certificate-based bundle", "certificate", "tiny-model", "signer", "malformed-bundle", "bundle.verificationMaterial.certificate"),
        ("transparency log entry", "tlog-entry", "tiny-model", "signer", "malformed-bundle", "bundle.verificationMaterial.tlogEntries"),
        ("another media type", "other-media-type", "tiny-model", "signer", "malformed-bundle", "bundle.mediaType"),
        ("unknown top-level member", "unknown-member", "tiny-model", "signer", "malformed-bundle", "bundle"),
        ("a file changed", "directory", "tiny-model-changed", "signer", "files-differ", None),
        ("an extra file", "directory", "tiny-model-extra", "signer", "files-differ", None),
        ("a file missing", "directory", "tiny-model-missing", "signer", "files-differ", None),
        ("single file changed", "single-file", "single-changed.bin", "signer", "files-differ", None),
    ]
    entries = []
    for label, name, model, key, outcome, field in cases:
        if not os.path.exists(out(name)):
            print(f"generate.py: skipping '{label}' ({out(name)} is missing)", file=sys.stderr)
            continue
        pub = os.path.join(keys, key + ".pub")
        result = modelcast("inspect", os.path.join(models, model), "--model-signature", out(name), "--public-key", pub, check=False)
        if (result.returncode == 0) != (outcome == "valid") or result.returncode not in (0, 1):
            fail(f"model-signature '{label}': modelcast inspect exits {result.returncode}, the vector says {outcome}:\n{result.stderr.decode()}")
        entry = {"name": label, "bundle": "bundles/" + name + ".sig", "model": "models/" + model, "public_key": "keys/" + key + ".pub",
                 "outcome": outcome}
        if field:
            entry["field"] = field
        if outcome in ("valid", "files-differ"):
            _, signed = bundle_parts(read(out(name)))
            signed_statement = json.loads(signed)
            entry["signed_files"] = [{"path": r["name"], "sha256": r["digest"]} for r in signed_statement["predicate"]["resources"]]
            entry["ignore_paths"] = sorted(signed_statement["predicate"]["serialization"].get("ignore_paths", []))
        if outcome == "files-differ":
            entry["differences"] = file_differences(entry["signed_files"], os.path.join(models, model), entry["ignore_paths"])
        entries.append(entry)
    hints = {name: sha256(read(os.path.join(keys, name + ".pub"))) for name in ("signer", "other")}
    write_json(os.path.join(folder, "model-signature.json"), {"key_hints": hints, "bundles": entries})
    return {"bundles": len(entries)}


def file_differences(signed, model, ignore):
    """How the model on disk differs from the signed list: each a change, a missing or an extra file."""
    found = {}
    if os.path.isfile(model):
        found["."] = sha256(read(model))
    else:
        for root, _, names in os.walk(model):
            for name in names:
                path = os.path.relpath(os.path.join(root, name), model).replace(os.sep, "/")
                if not any(path == i or path.startswith(i + "/") for i in ignore):
                    found[path] = sha256(read(os.path.join(root, name)))
    listed = {f["path"]: f["sha256"] for f in signed}
    differences = [{"kind": "changed", "path": p} for p in sorted(listed) if p in found and found[p] != listed[p]]
    differences += [{"kind": "missing", "path": p} for p in sorted(listed) if p not in found]
    differences += [{"kind": "extra", "path": p} for p in sorted(found) if p not in listed]
    return differences


# ---------------------------------------------------------------------------------------------
# 7. manifest/


def publish_site(work, name, runs):
    """Runs each publish (arguments after `publish`) into a fresh site; returns its path."""
    site = os.path.join(work, "site-" + name)
    shutil.rmtree(site, ignore_errors=True)
    for args in runs:
        modelcast("publish", *args, "--base-url", BASE_URL, "--to", site, cwd=work)
    return site


def release_summary(manifest):
    """What a client must read from a valid `modelcast` manifest (the Swift test decodes the
    same bytes with Release.decode and compares)."""
    def model_summary(model):
        summary = {"version": model["version"],
                   "files": [{"placement": f.get("path", f["name"]), "url": f["url"], "sha256": f["sha256"], "size": f["size"],
                              "segment_index": f["segments"]["url"] if "segments" in f else None} for f in model["files"]]}
        if "tree" in model:
            summary["tree"] = model["tree"]
        if "variants" in model:
            summary["variants"] = [v["name"] for v in model["variants"]]
        if "download" in model:
            summary["download"] = model["download"]
        return summary

    summary = {"sequence": manifest["sequence"], "channel": manifest["channel"], "expires_at": manifest.get("expires_at"),
               "min_app_version": manifest.get("min_app_version"),
               "models": {name: model_summary(m) for name, m in sorted(manifest["models"].items())}}
    if "rollout" in manifest:
        summary["rollout"] = {"salt": manifest["rollout"]["salt"], "rollback_sequence": manifest["rollback"]["sequence"],
                              "fallback": {name: model_summary(m) for name, m in sorted(manifest["rollback"]["models"].items())}}
    return summary


def profile_objects(profile, manifest):
    """The objects a reader of a fixed-shape profile downloads: url, sha256 and exact size where the profile has them."""
    if profile == "nomlens":
        return [{"url": manifest["url"], "sha256": manifest["sha256"], "size": None}]
    if profile == "tiers":
        current = [{"url": t["url"], "sha256": t["sha256"], "size": t["size_bytes"]} for _, t in sorted(manifest["models"].items())]
        return current + [{"url": manifest[k], "sha256": None, "size": None} for k in sorted(manifest) if k.startswith("rollback_url_")]
    if profile == "catalog":
        items = [m for _, m in sorted(manifest["models"].items())] + [manifest["prototypes"]]
        return [{"url": m["url"], "sha256": m["checksum"][len("sha256:"):], "size": m.get("size")} for m in items]
    return [{"url": manifest["url"], "sha256": None, "size": None}]


def json_pointer(document, pointer):
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
    parent = document
    for part in parts[:-1]:
        parent = parent[int(part)] if isinstance(parent, list) else parent[part]
    return parent, parts[-1]


def apply_patch(document, patch):
    """RFC 6902 JSON Patch, the operations the hostile table uses: add, replace, remove, move."""
    document = json.loads(json.dumps(document))
    for op in patch:
        if op["op"] == "move":
            parent, key = json_pointer(document, op["from"])
            value = parent.pop(int(key)) if isinstance(parent, list) else parent.pop(key)
            parent, key = json_pointer(document, op["path"])
            parent[key] = value
            continue
        parent, key = json_pointer(document, op["path"])
        if op["op"] == "remove":
            parent.pop(int(key)) if isinstance(parent, list) else parent.pop(key)
        elif isinstance(parent, list):
            if key == "-":
                parent.append(op["value"])
            elif op["op"] == "add":
                parent.insert(int(key), op["value"])
            else:
                parent[int(key)] = op["value"]
        else:
            parent[key] = op["value"]
    return document


def generate_manifest(work):
    folder = os.path.join(HERE, "manifest")
    fresh(os.path.join(folder, "valid"), os.path.join(folder, "raw"))
    models = os.path.join(REPO, "examples", "models")
    gguf, mmproj = os.path.join(models, "tiny-llm.gguf"), os.path.join(models, "tiny-llm-mmproj.gguf")
    tree = os.path.join(work, "tiny-tree")
    shutil.rmtree(tree, ignore_errors=True)
    write(os.path.join(tree, "config.json"), b'{"labels": 3}\n')
    write(os.path.join(tree, "weights", "w.bin"), pattern_bytes(3000, 9))
    write(os.path.join(work, "v1", "weights.bin"), pattern_bytes(2000, 11))
    write(os.path.join(work, "v2", "weights.bin"), pattern_bytes(2000, 12))
    write(os.path.join(work, "prototypes.json"), json.dumps({"version": "2.1.0", "classes": 3, "prototypes": [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]}))
    write(os.path.join(work, "catalog.yml"), f"""profile: catalog
min_app_version: "2.0.0"
models:
  tiny-llm:
    version: 0.3.0
    files: [{gguf}]
    meta:
      minAppVersion: "2.1.0"
      features: [generation]
      hardware: {{neuralEngine: false, gpu: true, cpu: true}}
  tiny-mmproj:
    version: 1.2.0
    files: [{mmproj}]
    meta:
      minAppVersion: "2.0.0"
      features: [vision]
      hardware: {{neuralEngine: true, gpu: true, cpu: true}}
prototypes:
  version: 2.1.0
  file: prototypes.json
  classes: 3
""")
    sites = [
        ("modelcast-basic", "modelcast", "manifest.json",
         [[gguf, mmproj, "--name", "assistant", "--version", "1.0.0"]],
         "one model, two files (docs/manifest.md's example)"),
        ("modelcast-variants", "modelcast", "channels/beta/manifest.json",
         [["--name", "llm", "--version", "1.0.0", "--variant", "3b=" + mmproj, "--variant", "1b=" + gguf,
           "--requires", "3b:min_memory=6GiB", "--requires", "3b:platforms=ios:17.0,macos:14.0", "--requires", "3b:accelerators=neural-engine",
           "--default-variant", "1b", "--download", "essential", "--min-app-version", "2.0", "--expires-in", "5200w", "--channel", "beta",
           "--segment-index", "always"]],
         "variants with requirements, a download policy, min_app_version, expires_at, the beta channel, segment indexes"),
        ("modelcast-tree", "modelcast", "manifest.json",
         [[tree, "--name", "tree", "--version", "1.0.0", "--no-zip"]],
         "a directory published as its files (tree, each file's path)"),
        ("modelcast-rollout", "modelcast", "manifest.json",
         [[os.path.join(work, "v1", "weights.bin"), "--name", "llm", "--version", "1.0.0"],
          [os.path.join(work, "v2", "weights.bin"), "--name", "llm", "--version", "1.1.0", "--rollout-schedule", "1%,10%@24h,100%@7d"]],
         "a staged rollout with a schedule: the candidate in models, the fallback in rollback"),
        ("nomlens", "nomlens", "manifest.json",
         [[gguf, "--name", "m", "--version", "1.0.0", "--profile", "nomlens", "--meta", "num_classes=3", "--meta", "class_list_version=v1",
           "--meta", "training_date=2026-01-01"]],
         "seed 000's shape (version equality)"),
        ("tiers", "tiers", "manifest.json",
         [["1b=" + gguf, "3b=" + mmproj, "--version", "2.0.0", "--profile", "tiers", "--meta", "release_notes=First", "--min-app-version", "3.0"],
          ["1b=" + gguf, "3b=" + mmproj, "--version", "2.1.0", "--profile", "tiers", "--meta", "release_notes=Second", "--min-app-version", "3.0"]],
         "seed 004's shape (current_version compared as a string), with the rollback fields"),
        ("catalog", "catalog", "manifest.json", [["--config", os.path.join(work, "catalog.yml")]],
         "seed 003's shape (per-model versions, prototypes)"),
        ("latest", "latest", "manifest.json", [[gguf, "--version", "1.0.0", "--profile", "latest"]],
         "seed 002's shape: the URL's file name is the version"),
    ]
    valid = []
    for name, profile, path, runs, description in sites:
        site = publish_site(work, name, runs)
        data = read(os.path.join(site, path))
        write(os.path.join(folder, "valid", name + ".json"), data)
        manifest = json.loads(data)
        entry = {"file": "valid/" + name + ".json", "profile": profile, "description": description}
        if profile == "modelcast":
            if refusal(data, work, name) is not None:
                fail(f"manifest {name}: modelcast refuses its own manifest")
            entry["release"] = release_summary(manifest)
        else:
            entry["objects"] = profile_objects(profile, manifest)
        valid.append(entry)

    base = base_release()
    write(os.path.join(folder, "base.json"), json_text(base))
    hostile, raw = hostile_cases(base)
    entries = []
    for name, field, patch, is_valid, why in hostile:
        message = refusal(json_text(apply_patch(base, patch)).encode(), work, f"manifest '{name}'")
        if is_valid != (message is None) or (message is not None and field not in message):
            fail(f"manifest '{name}': the vector says {'valid' if is_valid else 'refused mentioning ' + repr(field)}; modelcast says {message!r}")
        entry = {"name": name, "patch": patch, "valid": is_valid, "why": why}
        if not is_valid:
            entry["mentions"] = field
        entries.append(entry)
    raw_entries = []
    for name, data, field, why in raw:
        message = refusal(data, work, f"manifest raw '{name}'")
        if message is None or field not in message:
            fail(f"manifest raw '{name}': modelcast says {message!r}, the vector expects a refusal naming {field!r}")
        write(os.path.join(folder, "raw", name + ".json"), data)
        raw_entries.append({"name": name, "file": "raw/" + name + ".json", "valid": False, "mentions": field, "why": why})
    write_json(os.path.join(folder, "manifest.json"), {"valid": valid, "base": "base.json", "hostile": entries, "raw": raw_entries})
    return {"valid": len(valid), "hostile": len(entries), "raw": len(raw_entries)}


def hostile_cases(base):
    """(name, what modelcast's refusal mentions (its JSON path, mostly), JSON Patch on base.json, valid, why)."""
    f0 = "/models/m/files/0"
    F0 = "models.m.files[0]"
    good_file = base["models"]["m"]["files"][0]
    good_sha = good_file["sha256"]
    salt = "0123456789abcdef0123456789abcdef"
    rollback = {"sequence": 1, "models": {"m": base["models"]["m"]}}

    def rename(name):
        return [{"op": "move", "from": "/models/m", "path": "/models/" + name.replace("~", "~0").replace("/", "~1")}]

    def set_(path, value):
        return [{"op": "replace" if _exists(base, path) else "add", "path": path, "value": value}]

    def tree(tree_name, path):
        return [{"op": "add", "path": "/models/m/tree", "value": tree_name}, {"op": "add", "path": f0 + "/path", "value": path}]

    def rollout(block):
        return [{"op": "add", "path": "/rollout", "value": block}, {"op": "add", "path": "/rollback", "value": rollback}]

    def ro(**changes):
        block = {"percent": 10, "salt": salt, "started_at": "2026-01-01T00:00:00Z"}
        block.update(changes)
        return rollout(block)

    def segments(**changes):
        block = {"key": "models/m/segments/i.s1.mcsx", "url": BASE_URL + "/models/m/segments/i.s1.mcsx", "sha256": "a" * 64, "size": 84}
        block.update(changes)
        return set_(f0 + "/segments", block)

    def signature(**changes):
        block = {"key": "models/m/signatures/s.sigstore.json", "url": BASE_URL + "/models/m/signatures/s.sigstore.json", "sha256": "b" * 64, "size": 900}
        block.update(changes)
        return set_("/models/m/model_signature", block)

    def variants(items, variant="a"):
        entries = [{"name": n, "requires": {}, "version": "1.0.0", "files": [good_file]} for n in items]
        return [{"op": "add", "path": "/models/m/variant", "value": variant}, {"op": "add", "path": "/models/m/variants", "value": entries}]

    def nested(depth):
        value = []
        for _ in range(depth - 1):
            value = [value]
        return value
    cases = [
        # Model names: each becomes a directory on the device.
        ("name climbing out", "models.['../../victim']", rename("../../victim"), False, "a model name is a directory name: no '/' or '..'"),
        ("empty name", "models.['']", rename(""), False, "a model name is not empty"),
        ("name '.'", "models.['.']", rename("."), False, "'.' is the directory itself"),
        ("name '..'", "models.['..']", rename(".."), False, "'..' is the directory above"),
        ("name with a slash", "models.['a/b']", rename("a/b"), False, "a path separator"),
        ("name with a backslash", "is not a model name", rename("a\\b"), False, "a Windows path separator"),
        ("name with a full-width letter", "is not a model name", rename("\uff4d"), False, "model names are ASCII letters, digits, '.', '_', '-'"),
        ("name with NUL", "\\u{0}", rename("m\u0000x"), False, "a control character"),
        ("name with a bidi override", "\\u{202e}", rename("m\u202eexe.txt"), False, "an invisible character that reorders text"),
        ("name of 129 characters", "is not a model name", rename("n" * 129), False, "at most 128 characters"),
        ("name of 128 characters", "", rename("n" * 128), True, "the longest name"),
        ("name with dots, dashes and underscores", "", rename("A.b_c-1"), True, "every allowed character"),
        # Versions: each becomes part of a directory name.
        ("version climbing out", "models.m.version", set_("/models/m/version", "../../../../x"), False, "not a semantic version"),
        ("version with a path after it", "models.m.version", set_("/models/m/version", "1.0.0/../../x"), False, "'/' is not in a semantic version"),
        ("empty version", "models.m.version", set_("/models/m/version", ""), False, "not a semantic version"),
        ("version with two numbers", "models.m.version", set_("/models/m/version", "1.0"), False, "a model version has three numbers"),
        ("version with a leading v", "models.m.version", set_("/models/m/version", "v1.0.0"), False, "not a semantic version"),
        ("version in full-width digits", "models.m.version", set_("/models/m/version", "\uff11.0.0"), False, "ASCII digits only"),
        ("version of 129 characters", "models.m.version", set_("/models/m/version", "1.0.0-" + "a" * 123), False, "at most 128 characters"),
        ("version of 128 characters", "", set_("/models/m/version", "1.0.0-" + "a" * 122), True, "the longest version"),
        ("version as a number", "models.m.version", set_("/models/m/version", 1), False, "a version is a string"),
        ("version null", "models.m.version", set_("/models/m/version", None), False, "a version is required"),
        # Tree directories and paths.
        ("tree climbing out", "models.m.tree", tree("../../../../../treeout", "w.bin"), False, "a tree is one directory name"),
        ("tree '.'", "models.m.tree", tree(".", "w.bin"), False, "made only of dots"),
        ("tree of dot look-alikes", "models.m.tree", tree("\u2024\u2024", "w.bin"), False, "ONE DOT LEADERs look like '..'"),
        ("tree with a bidi override", "\\u{202e}", tree("a\u202eb.mlpackage", "w.bin"), False, "an invisible character"),
        ("tree path climbing out", F0 + ".path", tree("T.mlpackage", "../../../escape"), False, "a path segment '..'"),
        ("absolute tree path", F0 + ".path", tree("T.mlpackage", "/etc/x"), False, "an absolute path"),
        ("tree path with an empty segment", F0 + ".path", tree("T.mlpackage", "a//b"), False, "an empty segment"),
        ("tree path with a '.' segment", F0 + ".path", tree("T.mlpackage", "a/./b"), False, "a segment made only of dots"),
        ("tree path with a backslash", F0 + ".path", tree("T.mlpackage", "a\\..\\b"), False, "a Windows path separator"),
        ("tree path not in NFC", F0 + ".path", tree("T.mlpackage", "e\u0301.bin"), False, "two spellings of one name"),
        ("tree path in NFC", "", tree("T.mlpackage", "Data/\u00e9/w.bin"), True, "a nested NFC path"),
        ("path on a model that is no tree", F0 + ".path", set_(f0 + "/path", "a/b"), False, "only a tree model's files have a path"),
        ("tree without paths", F0 + ".path", set_("/models/m/tree", "T.mlpackage"), False, "every file of a tree has a path"),
        # File names: each becomes a file on the device.
        ("file name climbing out", F0 + ".name", set_(f0 + "/name", "../../canary"), False, "a path separator"),
        ("absolute file name", F0 + ".name", set_(f0 + "/name", "/etc/passwd"), False, "a path separator"),
        ("file name '..'", F0 + ".name", set_(f0 + "/name", ".."), False, "made only of dots"),
        ("file name of dot look-alikes", F0 + ".name", set_(f0 + "/name", "\uff0e\uff0e"), False, "FULLWIDTH FULL STOPs look like '..'"),
        ("file name with look-alike slashes", F0 + ".name", set_(f0 + "/name", "a\u2215..\u2215b"), False, "DIVISION SLASH looks like '/'"),
        ("file name with a backslash", F0 + ".name", set_(f0 + "/name", "..\\x"), False, "a Windows path separator"),
        ("empty file name", F0 + ".name", set_(f0 + "/name", ""), False, "a file needs a name"),
        ("file name with a line feed", "\\u{a}", set_(f0 + "/name", "x\n.bin"), False, "a control character"),
        ("file name with a zero-width space", "\\u{200b}", set_(f0 + "/name", "m\u200b.bin"), False, "an invisible character"),
        ("file name not in NFC", F0 + ".name", set_(f0 + "/name", "e\u0301.bin"), False, "two spellings of one name"),
        ("file name of 256 bytes", F0 + ".name", set_(f0 + "/name", "n" * 256), False, "at most 255 bytes"),
        ("file name of 255 bytes", "", set_(f0 + "/name", "n" * 255), True, "the longest file name"),
        ("file name in NFC with non-ASCII letters", "", set_(f0 + "/name", "\u00e9\u65e5\u672c.bin"), True, "names are Unicode"),
        ("file name with dots inside", "", set_(f0 + "/name", "..m.bin"), True, "dots are fine when not the whole name"),
        # Keys (object paths under the target).
        ("key climbing out", F0 + ".key", set_(f0 + "/key", "../../x"), False, "a '..' segment"),
        ("absolute key", F0 + ".key", set_(f0 + "/key", "/models/m/1.0.0/m.bin"), False, "an absolute path"),
        ("key with an empty segment", F0 + ".key", set_(f0 + "/key", "models//m.bin"), False, "an empty segment"),
        ("empty key", F0 + ".key", set_(f0 + "/key", ""), False, "an empty segment"),
        ("key of 1025 bytes", F0 + ".key", set_(f0 + "/key", "/".join(["k" * 204] * 5) + "k"), False, "at most 1024 bytes"),
        # SHA-256 digests: the download's file name.
        ("digest climbing out", F0 + ".sha256", set_(f0 + "/sha256", "../../canary"), False, "not 64 hex digits"),
        ("uppercase digest", F0 + ".sha256", set_(f0 + "/sha256", good_sha.upper()), False, "one digest, one spelling: lowercase"),
        ("digest of 63 digits", F0 + ".sha256", set_(f0 + "/sha256", good_sha[:-1]), False, "64 digits"),
        ("digest of 65 digits", F0 + ".sha256", set_(f0 + "/sha256", good_sha + "0"), False, "64 digits"),
        ("digest that is not hex", F0 + ".sha256", set_(f0 + "/sha256", "g" * 64), False, "hexadecimal digits only"),
        ("digest in full-width digits", F0 + ".sha256", set_(f0 + "/sha256", "\uff46" * 64), False, "ASCII only"),
        ("digest as a number", "sha256", set_(f0 + "/sha256", 0), False, "a digest is a string"),
        ("digest with a prefix", F0 + ".sha256", set_(f0 + "/sha256", "sha256:" + good_sha), False, "the bare digest"),
        # URLs.
        ("empty URL", F0 + ".url", set_(f0 + "/url", ""), False, "not an absolute URL"),
        ("relative URL", F0 + ".url", set_(f0 + "/url", "models/m/1.0.0/m.bin"), False, "not an absolute URL"),
        ("scheme-relative URL", F0 + ".url", set_(f0 + "/url", "//cdn.example.com/m.bin"), False, "no scheme"),
        ("ftp URL", "scheme 'ftp'", set_(f0 + "/url", "ftp://cdn.example.com/m.bin"), False, "http or https only"),
        ("file URL", "scheme 'file'", set_(f0 + "/url", "file:///etc/passwd"), False, "http or https only"),
        ("javascript URL", "scheme 'javascript'", set_(f0 + "/url", "javascript:alert(1)"), False, "http or https only"),
        ("data URL", "scheme 'data'", set_(f0 + "/url", "data:application/octet-stream;base64,AAAA"), False, "http or https only"),
        ("URL with a password", "user name or password", set_(f0 + "/url", "https://user:secret@cdn.example.com/m.bin"), False, "credentials in a URL"),
        ("URL with a user name", "user name or password", set_(f0 + "/url", "https://user@cdn.example.com/m.bin"), False, "credentials in a URL"),
        ("URL without a host", F0 + ".url", set_(f0 + "/url", "http://"), False, "no host"),
        ("URL with a space", F0 + ".url", set_(f0 + "/url", "https://cdn.example.com/a b.bin"), False, "spaces must be percent-encoded"),
        ("URL with a line feed", F0 + ".url", set_(f0 + "/url", "https://cdn.example.com/a\n.bin"), False, "a control character"),
        ("URL with non-ASCII", F0 + ".url", set_(f0 + "/url", "https://cdn.example.com/\u00e9.bin"), False, "non-ASCII must be percent-encoded"),
        ("URL of 4097 characters", F0 + ".url", set_(f0 + "/url", "https://cdn.example.com/" + "a" * 4073), False, "at most 4096 characters"),
        ("URL of 4096 characters", "", set_(f0 + "/url", "https://cdn.example.com/" + "a" * 4072), True, "the longest URL"),
        ("URL with an uppercase scheme", "", set_(f0 + "/url", "HTTPS://cdn.example.com/m.bin"), True, "schemes are case-insensitive"),
        ("URL with a port, a query and percent-encoding", "", set_(f0 + "/url", "https://cdn.example.com:8443/a%20b.bin?v=1"), True, "an ordinary URL"),
        ("plain http URL", "", set_(f0 + "/url", "http://cdn.example.com/m.bin"), True, "http is allowed (the SHA-256 proves the bytes)"),
        # Sizes.
        ("negative size", F0 + ".size", set_(f0 + "/size", -1), False, "0 to 2^53"),
        ("size 2^63-1", F0 + ".size", set_(f0 + "/size", (1 << 63) - 1), False, "0 to 2^53"),
        ("size 2^53+1", F0 + ".size", set_(f0 + "/size", (1 << 53) + 1), False, "0 to 2^53: every size exact in a double"),
        ("size 2^64", "", set_(f0 + "/size", 1 << 64), False, "not a 64-bit integer"),
        ("size 2^53", "", set_(f0 + "/size", 1 << 53), True, "the largest size"),
        ("size 0", "", set_(f0 + "/size", 0), True, "an empty file"),
        ("fractional size", "", set_(f0 + "/size", 1.5), False, "a whole number of bytes"),
        ("size as a string", "size", set_(f0 + "/size", "1000"), False, "a size is a number"),
        ("size 1e300", "", set_(f0 + "/size", 1e300), False, "not a 64-bit integer"),
        # Content types (headers on the device's request path).
        ("content type with a header in it", F0 + ".content_type", set_(f0 + "/content_type", "text/plain\r\nX-Injected: 1"), False, "printable ASCII only"),
        ("empty content type", F0 + ".content_type", set_(f0 + "/content_type", ""), False, "1 to 255 characters"),
        ("content type of 256 characters", F0 + ".content_type", set_(f0 + "/content_type", "a/" + "b" * 254), False, "1 to 255 characters"),
        # Files of a model.
        ("a model without files", "models.m.files", set_("/models/m/files", []), False, "a model has at least one file"),
        ("two files going to one place", "same place", [{"op": "add", "path": "/models/m/files/-", "value": good_file}], False, "one file would overwrite the other"),
        ("two files differing only in case", "same place", [{"op": "add", "path": "/models/m/files/-", "value": dict(good_file, name="M.bin", key="models/m/1.0.0/M.bin")}],
         False, "the same file on a case-insensitive file system"),
        ("files as an object", "files", set_("/models/m/files", {"0": good_file}), False, "files is a list"),
        # The release's own fields.
        ("sequence negative", "sequence", set_("/sequence", -5), False, "0 to 2^53"),
        ("sequence 2^63-1", "sequence", set_("/sequence", (1 << 63) - 1), False, "0 to 2^53"),
        ("sequence 2^53+1", "sequence", set_("/sequence", (1 << 53) + 1), False, "0 to 2^53"),
        ("sequence 2^53", "", set_("/sequence", 1 << 53), True, "the largest sequence"),
        ("sequence 0", "", set_("/sequence", 0), True, "the smallest sequence"),
        ("sequence as a string", "sequence", set_("/sequence", "2"), False, "a number"),
        ("sequence missing", "sequence", [{"op": "remove", "path": "/sequence"}], False, "required"),
        ("channel climbing out", "channel", set_("/channel", "../beta"), False, "lowercase letters, digits and '-'"),
        ("channel in uppercase", "channel", set_("/channel", "Beta"), False, "lowercase only"),
        ("channel starting with '-'", "channel", set_("/channel", "-beta"), False, "starts with a letter or digit"),
        ("empty channel", "channel", set_("/channel", ""), False, "not empty"),
        ("channel of 65 characters", "channel", set_("/channel", "b" * 65), False, "at most 64"),
        ("another channel", "", set_("/channel", "beta"), True, "valid; a client configured for stable refuses it as another channel's manifest"),
        ("published_at that is no time", "published_at", set_("/published_at", "yesterday"), False, "RFC 3339"),
        ("published_at as a number", "published_at", set_("/published_at", 1767225600), False, "RFC 3339 text"),
        ("published_at with fractional seconds", "", set_("/published_at", "2026-01-01T00:00:00.250Z"), True, "RFC 3339 with fractions"),
        ("expires_at that is no time", "expires_at", set_("/expires_at", "never"), False, "RFC 3339; leave it out for no expiry"),
        ("expires_at empty", "expires_at", set_("/expires_at", ""), False, "RFC 3339"),
        ("expires_at in the past", "", set_("/expires_at", "2000-01-01T00:00:00Z"), True, "a valid value: a client refuses it as expired when it fetches it"),
        ("min_app_version that is no version", "min_app_version", set_("/min_app_version", "latest"), False, "one to four numbers"),
        ("min_app_version with a leading v", "min_app_version", set_("/min_app_version", "v2.0"), False, "one to four numbers"),
        ("min_app_version of five numbers", "min_app_version", set_("/min_app_version", "1.2.3.4.5"), False, "one to four numbers"),
        ("min_app_version pre-release", "", set_("/min_app_version", "2.0.0-beta.1"), True, "an app version with a pre-release"),
        ("profile with a line feed", "profile", set_("/profile", "modelcast\n"), False, "printable ASCII"),
        ("profile of 33 characters", "profile", set_("/profile", "p" * 33), False, "at most 32"),
        ("format of another tool", "format", set_("/format", "other-manifest"), False, "format is modelcast-manifest"),
        ("format_version 2", "format_version", set_("/format_version", 2), False, "a reader of version 1 refuses what it does not know"),
        ("replaces negative", "replaces", set_("/replaces", -1), False, "0 to 2^53"),
        ("models as an array", "models", set_("/models", [1, 2]), False, "models is an object"),
        ("nesting 65 levels deep", "deeper than 64", set_("/meta", {"x": nested(63)}), False,
         "at most 64 levels of arrays and objects (the document is level 1): a recursive decoder must not run out of stack"),
        ("nesting 64 levels deep", "", set_("/meta", {"x": nested(62)}), True, "the deepest nesting allowed"),
        ("download policy unknown", "models.m.download", set_("/models/m/download", "sometimes"), False, "essential, prefetch or on-demand"),
        ("download policy", "", set_("/models/m/download", "prefetch"), True, "a known policy"),
        # Licences, download conditions and storage (issue 50).
        ("licence spdx with control characters", "models.m.licence.spdx", set_("/models/m/licence", {"spdx": "MIT\u001b[2J", "acceptance": "required"}), False,
         "an SPDX expression: letters, digits, '.-+:()' and single spaces"),
        ("licence spdx of 129 characters", "models.m.licence.spdx", set_("/models/m/licence", {"spdx": "A" * 129}), False, "at most 128 characters"),
        ("licence URL with a password", "models.m.licence.url", set_("/models/m/licence", {"url": "https://user:secret@example.com/LICENSE"}), False,
         "credentials in a URL"),
        ("licence URL of another scheme", "models.m.licence.url", set_("/models/m/licence", {"url": "file:///etc/passwd"}), False, "http or https"),
        ("licence naming nothing", "models.m.licence", set_("/models/m/licence", {"acceptance": "required"}), False, "spdx, url or both"),
        ("licence acceptance with a line feed", "models.m.licence.acceptance", set_("/models/m/licence", {"spdx": "MIT", "acceptance": "required\n"}), False,
         "printable ASCII"),
        ("licence as a string", "licence", set_("/models/m/licence", "MIT"), False, "an object"),
        ("licence, acceptance required", "", set_("/models/m/licence", {"spdx": "LicenseRef-Llama-3.2-Community OR (MIT AND Apache-2.0)",
         "url": "https://example.com/LICENSE.txt", "acceptance": "required"}), True, "an SPDX expression and a URL"),
        ("licence acceptance unknown", "", set_("/models/m/licence", {"spdx": "MIT", "acceptance": "twice"}), True,
         "a value a newer publisher may write: the client holds the model back (waiting), it does not refuse the manifest"),
        ("cellular_max negative", "models.m.download_conditions.cellular_max", set_("/models/m/download_conditions", {"cellular_max": -1}), False, "0 to 2^53"),
        ("cellular_max 2^63-1", "models.m.download_conditions.cellular_max", set_("/models/m/download_conditions", {"cellular_max": 2**63 - 1}), False, "0 to 2^53"),
        ("cellular_max as text", "cellular_max", set_("/models/m/download_conditions", {"cellular_max": "100MB"}), False, "a number of bytes"),
        ("network with control characters", "models.m.download_conditions.network", set_("/models/m/download_conditions", {"network": "wifi\u0007"}), False,
         "printable ASCII"),
        ("network unknown", "", set_("/models/m/download_conditions", {"network": "satellite"}), True,
         "a value a newer publisher may write: the client holds the model back (waiting), it does not refuse the manifest"),
        ("charging unknown", "", set_("/models/m/download_conditions", {"charging": "sometimes"}), True, "the model waits, the manifest stands"),
        ("download conditions", "", set_("/models/m/download_conditions", {"network": "any", "cellular_max": 2**53, "charging": "required"}), True,
         "every condition at its limit"),
        ("install_size negative", "models.m.storage.install_size", set_("/models/m/storage", {"install_size": -1}), False, "0 to 2^53"),
        ("install_size 2^63-1", "models.m.storage.install_size", set_("/models/m/storage", {"install_size": 2**63 - 1}), False, "0 to 2^53"),
        ("storage without install_size", "install_size", set_("/models/m/storage", {"priority": 10}), False, "install_size is required"),
        ("storage priority 101", "models.m.storage.priority", set_("/models/m/storage", {"install_size": 10, "priority": 101}), False, "0 to 100"),
        ("storage", "", set_("/models/m/storage", {"install_size": 2**53, "priority": 0}), True, "the largest size, the lowest priority"),
        # Variants.
        ("variant without variants", "models.m.variant", set_("/models/m/variant", "a"), False, "names no variant"),
        ("variants empty", "models.m.variants", variants([])[1:] + [{"op": "add", "path": "/models/m/variant", "value": "a"}], False, "1 to 32 variants"),
        ("variant naming none of them", "models.m.variant", variants(["a", "b"], variant="c"), False, "the default must be one of them"),
        ("variant names repeated", "models.m.variants[1].name", variants(["a", "A"]), False, "names are unique, ignoring case"),
        ("variant name climbing out", "models.m.variants[0].name", variants(["../x"], variant="../x"), False, "a variant name is a model name"),
        ("variants", "", variants(["a", "b"]), True, "two variants, the first the default"),
        # Staged rollouts.
        ("rollout salt empty", "rollout.salt", ro(salt=""), False, "16 to 64 lowercase hexadecimal digits"),
        ("rollout salt of 15 digits", "rollout.salt", ro(salt="0123456789abcde"), False, "16 to 64 digits"),
        ("rollout salt of 65 digits", "rollout.salt", ro(salt="0" * 65), False, "16 to 64 digits"),
        ("rollout salt in uppercase", "rollout.salt", ro(salt=salt.upper()), False, "one salt, one spelling"),
        ("rollout salt with an escape sequence", "rollout.salt", ro(salt="0123456789abcdef\u001b]0;owned\u0007"), False, "control characters"),
        ("rollout salt of 16 digits", "", ro(salt="0123456789abcdef"), True, "the shortest salt"),
        ("rollout of 200 percent", "rollout", ro(percent=200), False, "0 to 100"),
        ("rollout of -1 percent", "rollout", ro(percent=-1), False, "0 to 100"),
        ("rollout of 0.125 percent", "percent", ro(percent=0.125), False, "at most two decimals"),
        ("rollout of 0.5 percent", "", ro(percent=0.5), True, "hundredths of a percent"),
        ("rollout of 0 percent (halted)", "", ro(percent=0), True, "every device on the fallback"),
        ("rollout started_at that is no time", "rollout", ro(started_at="soon"), False, "RFC 3339"),
        ("rollout schedule with no time", "rollout", ro(schedule=[{"at": "soon", "percent": 10}]), False, "RFC 3339"),
        ("rollout schedule empty", "rollout", ro(schedule=[]), False, "a schedule has steps"),
        ("rollout schedule going down", "rollout", ro(schedule=[{"at": "2026-01-02T00:00:00Z", "percent": 50}, {"at": "2026-01-03T00:00:00Z", "percent": 10}]),
         False, "steps increase in time and percent"),
        ("rollout schedule going back in time", "rollout", ro(schedule=[{"at": "2026-01-03T00:00:00Z", "percent": 10}, {"at": "2026-01-02T00:00:00Z", "percent": 50}]),
         False, "steps increase in time and percent"),
        ("rollout schedule", "", ro(schedule=[{"at": "2026-01-02T00:00:00Z", "percent": 1}, {"at": "2026-01-03T00:00:00Z", "percent": 100}]), True, "a schedule"),
        ("rollback naming a model outside", "rollback.models", set_("/rollback", {"sequence": 1, "models": {"../../victim": base["models"]["m"]}}), False,
         "the fallback's names are directory names too"),
        ("rollback sequence negative", "rollback.sequence", set_("/rollback", {"sequence": -1, "models": base["models"]}), False, "0 to 2^53"),
        # Segment indexes: every field parsed before the index is fetched.
        ("segment index key climbing out", F0 + ".segments.key", segments(key="../../canary"), False, "a relative path inside the target"),
        ("segment index URL with a password", F0 + ".segments.url", segments(url="https://user:secret@cdn.example.com/i.mcsx"), False, "credentials in a URL"),
        ("segment index URL of another scheme", F0 + ".segments.url", segments(url="file:///etc/passwd"), False, "http or https only"),
        ("segment index digest climbing out", F0 + ".segments.sha256", segments(sha256="../../canary"), False, "64 hex digits"),
        ("segment index of 10 bytes", F0 + ".segments.size", segments(size=10), False, "an index is 48 bytes and up"),
        ("segment index of 2^60 bytes", F0 + ".segments.size", segments(size=1 << 60), False, "above the largest index the format allows"),
        ("segment index as a string", "segments", set_(f0 + "/segments", "index.mcsx"), False, "an object"),
        ("segment index", "", segments(), True, "a segment index object"),
        # Model signatures.
        ("model signature key climbing out", "models.m.model_signature.key", signature(key="../../x"), False, "a relative path inside the target"),
        ("model signature URL of another scheme", "models.m.model_signature.url", signature(url="javascript:alert(1)"), False, "http or https only"),
        ("model signature of 0 bytes", "models.m.model_signature.size", signature(size=0), False, "1 byte to 32 MiB"),
        ("model signature above 32 MiB", "models.m.model_signature.size", signature(size=(32 << 20) + 1), False, "1 byte to 32 MiB"),
        ("model signature", "", signature(), True, "a model signature object"),
        # Prototypes (the catalog's extra object).
        ("prototypes file name climbing out", "prototypes.files[0].name",
         set_("/prototypes", {"version": "1.0.0", "files": [dict(good_file, name="../p.json")]}), False, "a file name"),
    ]
    raw = [
        ("invalid-utf8", json_text(base).encode().replace(b'"m.bin"', b'"m\xff.bin"'), "", "a byte that is not UTF-8"),
        ("truncated", json_text(base).encode()[:100], "", "the document ends early"),
        ("array", b"[]\n", "", "a manifest is a JSON object"),
        ("empty", b"", "", "no bytes"),
        ("nested-2000", b'{"meta": ' + b"[" * 2000 + b"]" * 2000 + b"}", "deeper than 64", "refused before decoding, without recursing 2000 levels"),
    ]
    return cases, raw


def _exists(document, pointer):
    try:
        parent, key = json_pointer(document, pointer)
        return key in parent if isinstance(parent, dict) else 0 <= int(key) < len(parent)
    except (KeyError, IndexError, ValueError, TypeError):
        return False


# ---------------------------------------------------------------------------------------------


def main():
    global MODELCAST, RENEW_RANDOM
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modelcast", default="modelcast", help="the modelcast binary (default: the one on PATH)")
    parser.add_argument("--renew-random", action="store_true", help="make new keys and ECDSA signatures instead of keeping the committed ones")
    args = parser.parse_args()
    MODELCAST = shutil.which(args.modelcast) or fail(f"no modelcast binary at {args.modelcast!r} (pass --modelcast PATH)")
    MODELCAST = os.path.abspath(MODELCAST)
    RENEW_RANDOM = args.renew_random
    for tool in ("minisign", "openssl"):
        if not shutil.which(tool):
            fail(f"{tool} is needed (the stock tool cross-checks and crafts the vectors)")
    counts = {}
    with tempfile.TemporaryDirectory(prefix="modelcast-vectors-") as work:
        counts["rollout"] = generate_rollout(work)
        counts["variants"] = generate_variants(work)
        counts["app-version"] = generate_app_version()
        counts["segment-index"] = generate_segment_index(work)
        counts["minisign"] = generate_minisign(work)
        counts["model-signature"] = generate_model_signature(work)
        counts["manifest"] = generate_manifest(work)
    # Key sets need only the stock minisign: their generator runs on its own too.
    import generate_keyset
    generate_keyset.RENEW_RANDOM = RENEW_RANDOM
    counts["keyset"] = generate_keyset.generate()
    for name, parts in counts.items():
        print(f"{name}: " + ", ".join(f"{n} {what}" for what, n in parts.items()))


if __name__ == "__main__":
    main()
