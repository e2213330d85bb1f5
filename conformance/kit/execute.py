"""Runs one scenario: builds its target with the real modelcast CLI, serves it through the
simulator, drives the client through the protocol and checks every step."""

import hashlib
import json
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import zipfile

from . import checks, objects
from .checks import Failure  # noqa: F401  (raised here, caught by the runner as execute.Failure)
from .simulator import Rule, Simulator

DEFAULT_TIMEOUT = 60
KIT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class KitError(Exception):
    """The kit could not run the scenario (a setup command failed): reported as an error."""


def under(root, relative, what):
    """root/relative, refused (KitError naming the value) unless it stays inside root: a
    scenario's file names and the keys a manifest names are input, never trusted as paths."""
    if not isinstance(relative, str) or not relative or relative.startswith("/") or "\0" in relative \
            or ".." in relative.replace("\\", "/").split("/"):
        raise KitError("%s %s is not a relative path inside the scenario's %s" % (what, checks.plain(repr(relative)), os.path.basename(root)))
    full = os.path.join(root, relative)
    real_root = os.path.realpath(root)
    if not os.path.realpath(full).startswith(real_root + os.sep):
        raise KitError("%s %s leads outside the scenario's %s" % (what, checks.plain(repr(relative)), os.path.basename(root)))
    return full


def key_id(public_key_file):
    """A minisign public key's id as `modelcast keys rotate --revoke` takes it: the one its
    untrusted comment names, as modelcast keygen wrote it."""
    with open(public_key_file, "r", encoding="utf-8") as handle:
        comment = handle.readline().split()
    if len(comment) < 2 or not re.match(r"^[0-9A-F]{1,16}$", comment[-1]):
        raise KitError("%s names no key id in its first line" % public_key_file)
    return comment[-1]


def deterministic_bytes(seed, size):
    out = bytearray()
    counter = 0
    while len(out) < size:
        out += hashlib.sha256(("%s:%d" % (seed, counter)).encode()).digest()
        counter += 1
    return bytes(out[:size])


class Run:
    def __init__(self, scenario, client, modelcast, keep=False, log=None, port=0):
        self.scenario = scenario
        self.client = client            # argv prefix of the client under test
        self.modelcast = modelcast
        self.keep = keep
        self.say = log or (lambda text: None)
        self.work = tempfile.mkdtemp(prefix="mc-conformance-")
        self.inputs = os.path.join(self.work, "inputs")
        self.target = os.path.join(self.work, "target")
        self.keys = os.path.join(self.work, "keys")
        self.snapshots = os.path.join(self.work, "snapshots")
        self.client_dir = os.path.join(self.work, "device", "client")
        self.mounted = None
        for folder in (self.inputs, self.target, self.keys, self.snapshots, os.path.dirname(self.client_dir)):
            os.makedirs(folder, exist_ok=True)
        checks.plant_canaries(self.work)
        self.sim = Simulator(self.target)
        self.step_mark = 0
        self.pinned = False          # the client was given a public key at init
        self.expected = {}           # (model, version, variant) -> sorted file digests, from every manifest published
        self.fsize_kib = None
        self.port = port

    # -- set-up ----------------------------------------------------------------------
    def start(self):
        self.sim.start(self.port)
        disk = self.scenario.get("disk_kib")
        if disk:
            mount_point = os.path.dirname(self.client_dir)
            result = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dk" % disk, "tmpfs", mount_point],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if result.returncode == 0:
                self.mounted = mount_point
            else:
                # No tmpfs here (not root): a file size limit stands in for the small disk.
                self.fsize_kib = disk
                self.say("  (no tmpfs: the client's files are limited to %d KiB instead)" % disk)

    def close(self):
        self.sim.stop()
        if self.mounted:
            subprocess.run(["umount", "-l", self.mounted], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not self.keep:
            shutil.rmtree(self.work, ignore_errors=True)

    def substitute(self, text):
        replacements = {
            "{target}": self.target, "{base}": self.sim.base_url(), "{other}": self.sim.base_url("other"),
            "{inputs}": self.inputs, "{dir}": self.client_dir,
        }
        for name in os.listdir(self.keys):
            stem, ext = os.path.splitext(name)
            replacements["{%s:%s}" % (ext.lstrip("."), stem)] = os.path.join(self.keys, name)
            if ext == ".pub" and "{keyid:%s}" % stem in text:
                replacements["{keyid:%s}" % stem] = key_id(os.path.join(self.keys, name))
        for key, value in replacements.items():
            text = text.replace(key, value)
        for side in ("in", "out"):
            if "{cohort:%s}" % side in text:
                text = text.replace("{cohort:%s}" % side, self.cohort_device(side == "in"))
        return text

    def cohort_device(self, inside):
        """A device id the live rollout puts on the candidate (inside) or on the fallback,
        by the published rule: SHA-256 of `salt:id`, first 8 bytes big-endian, mod 10 000,
        against the percent in hundredths."""
        rollout = objects.load_manifest(self.target).get("rollout") or {}
        basis = round(float(rollout.get("percent", 0)) * 100)
        for number in range(100000):
            device = "device-%d" % number
            digest = hashlib.sha256(("%s:%s" % (rollout.get("salt", ""), device)).encode()).digest()
            bucket = int.from_bytes(digest[:8], "big") % 10000
            if (bucket < basis) == inside:
                return device
        raise KitError("no device id found %s the rollout's cohort" % ("in" if inside else "outside"))

    # -- steps -----------------------------------------------------------------------
    def run(self):
        for number, step in enumerate(self.scenario["steps"], start=1):
            kind = next(k for k in step if k in STEP_HANDLERS)
            try:
                STEP_HANDLERS[kind](self, step)
            except Failure as failure:
                raise Failure("step %d (%s): %s" % (number, kind, failure))
            except objects.SelectorError as error:
                raise KitError("step %d (%s): %s" % (number, kind, error))

    def step_make(self, step):
        spec = step["make"]
        path = under(self.inputs, spec["path"], "make path")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if "from" in spec:
            data = bytearray(open(under(self.inputs, spec["from"], "make from"), "rb").read())
            for offset, length in spec.get("change", []):
                data[offset:offset + length] = deterministic_bytes(spec.get("seed", "change"), length)
            data = bytes(data)
        elif "text" in spec:
            data = spec["text"].encode()
        else:
            data = deterministic_bytes(spec.get("seed", spec["path"]), int(spec["size"]))
        with open(path, "wb") as handle:
            handle.write(data)

    def step_make_zip(self, step):
        """A zip the scenario crafts: entries with chosen names, and optionally declared
        sizes smaller than what the entries inflate to (a bomb)."""
        spec = step["make_zip"]
        path = under(self.inputs, spec["path"], "make_zip path")
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for entry in spec["entries"]:
                info = zipfile.ZipInfo(entry["name"], date_time=(2026, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                data = b"\0" * entry["size"] if entry.get("zeros") else deterministic_bytes(entry["name"], entry["size"])
                archive.writestr(info, data)
        lie = spec.get("declare_sizes")
        if lie is not None:
            checks.rewrite_zip_sizes(path, lie)

    def step_keygen(self, step):
        name = step["keygen"]
        if step.get("model_signing"):
            args = ["keygen", "--model-signing", "--unencrypted", "--private-key", under(self.keys, name + ".pem", "keygen name"),
                    "--public-key", under(self.keys, name + ".pem-pub", "keygen name")]
        else:
            args = ["keygen", "--unencrypted", "--secret-key", under(self.keys, name + ".key", "keygen name"),
                    "--public-key", under(self.keys, name + ".pub", "keygen name")]
        self.modelcast_call(args, 0)

    def step_publish(self, step):
        args = ["publish"] + [self.substitute(a) for a in step["publish"]]
        args += ["--to", self.target, "--base-url", self.sim.base_url(), "--progress", "none"]
        self.modelcast_call(args, step.get("exit", 0))
        self.record_expected()

    def step_modelcast(self, step):
        self.modelcast_call([self.substitute(a) for a in step["modelcast"]], step.get("exit", 0))
        self.record_expected()

    def modelcast_call(self, args, expected):
        result = subprocess.run([self.modelcast] + args, cwd=self.inputs, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                timeout=120, env=dict(os.environ, MODELCAST_PROGRESS="none"))
        if result.returncode != expected:
            raise KitError("modelcast %s exited %d (expected %d): %s" % (
                args[0], result.returncode, expected, checks.plain(result.stderr.decode("utf-8", "replace").strip()[-600:])))

    def record_expected(self):
        """What each model version installs, from every manifest and history record in the
        target: the files' digests (unpacked, for a zipped package)."""
        for root, _, names in os.walk(self.target):
            for name in names:
                if not name.endswith(".json") or "_modelcast" in root:
                    continue
                path = os.path.join(root, name)
                try:
                    manifest = json.load(open(path, "rb"))
                except ValueError:
                    continue
                if not isinstance(manifest, dict) or manifest.get("format") != "modelcast-manifest":
                    continue
                for section in (manifest, manifest.get("rollback") or {}):
                    for model_name, model in (section.get("models") or {}).items():
                        units = [(model.get("variant"), model)] + [(v.get("name"), v) for v in model.get("variants", [])]
                        for variant, unit in units:
                            digests = self.unit_digests(unit)
                            if digests is not None:
                                self.expected[(model_name, unit.get("version"), variant)] = digests

    def unit_digests(self, unit):
        digests = []
        for entry in unit.get("files") or []:
            local = under(self.target, entry.get("key"), "the manifest's key")
            name = entry.get("name", "")
            # A zipped directory (NAME.EXT.zip) is installed unpacked; any other file as it is.
            if entry.get("content_type") == "application/zip" and name.endswith(".zip") and "." in name[:-4] and os.path.isfile(local):
                with zipfile.ZipFile(local) as archive:
                    for info in archive.infolist():
                        if not info.is_dir():
                            digests.append(hashlib.sha256(archive.read(info)).hexdigest())
            else:
                digests.append(entry.get("sha256"))
        return sorted(digests)

    def step_snapshot(self, step):
        destination = under(self.snapshots, step["snapshot"], "snapshot name")
        shutil.rmtree(destination, ignore_errors=True)
        shutil.copytree(self.target, destination)

    def step_restore(self, step):
        """Serves a snapshot again as the whole target: what was published since (by a
        leaked key, say) is gone, as after the owner redeploys from a backup."""
        source = under(self.snapshots, step["restore"], "snapshot name")
        if not os.path.isdir(source):
            raise KitError("no snapshot %s to restore" % checks.plain(repr(step["restore"])))
        shutil.rmtree(self.target)
        shutil.copytree(source, self.target)

    def root_of(self, selector):
        if "snapshot" in selector:
            return under(self.snapshots, selector["snapshot"], "snapshot name")
        return self.target

    def object_file(self, selector):
        """The file of the target (or of the snapshot the selector names) behind an object selector."""
        root = self.root_of(selector)
        return under(root, objects.resolve(selector, root).lstrip("/"), "object path")

    def step_copy(self, step):
        source, destination = step["copy"]["from"], step["copy"]["to"]
        src = self.object_file(source)
        dst = self.object_file(destination)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(src, dst)

    def step_write(self, step):
        spec = step["write"]
        dst = self.object_file(spec)
        if spec.get("delete"):
            if os.path.exists(dst):
                os.remove(dst)
            return
        data = bytes.fromhex(spec["hex"]) if "hex" in spec else spec.get("text", "").encode()
        with open(dst, "wb") as handle:
            handle.write(data)

    def step_edit_manifest(self, step):
        """Changes fields of the served manifest (JSON pointers); the signature beside it is
        removed unless `keep_signature` (an edited manifest signed by no one)."""
        spec = step["edit_manifest"]
        key = spec.get("manifest", "/manifest.json").lstrip("/")
        path = under(self.target, key, "manifest")
        document = json.load(open(path, "rb"))
        for pointer, value in spec.get("set", {}).items():
            checks.json_set(document, pointer, value)
        for pointer in spec.get("remove", []):
            checks.json_remove(document, pointer)
        text = json.dumps(document, indent=2, ensure_ascii=spec.get("ascii", True))
        if "raw" in spec:
            text = spec["raw"]
        with open(path, "wb") as handle:
            handle.write(text.encode("utf-8", "surrogatepass"))
        if not spec.get("keep_signature") and os.path.exists(path + ".minisig"):
            os.remove(path + ".minisig")

    def step_edit_signature(self, step):
        """Alters the minisign signature beside the manifest: its key id, its trusted
        comment (without re-signing it) or one byte of the signature itself."""
        import base64
        spec = step["edit_signature"]
        path = under(self.target, spec.get("manifest", "/manifest.json").lstrip("/") + ".minisig", "manifest")
        lines = open(path, "rb").read().decode().split("\n")
        raw = bytearray(base64.b64decode(lines[1]))
        if "key_id" in spec:
            raw[2:10] = bytes.fromhex(spec["key_id"])[::-1]
        if "flip_signature_byte" in spec:
            raw[10 + int(spec["flip_signature_byte"])] ^= 0x01
        lines[1] = base64.b64encode(bytes(raw)).decode()
        if "trusted_comment" in spec:
            lines[2] = "trusted comment: " + self.substitute(spec["trusted_comment"])
        if "replace_in_trusted_comment" in spec:
            old, new = spec["replace_in_trusted_comment"]
            lines[2] = lines[2].replace(old, new)
        with open(path, "wb") as handle:
            handle.write("\n".join(lines).encode())

    def step_hostile_table(self, step):
        """For each row of a table of hostile manifest values: the manifest as published
        with that one value changed (unsigned; no key is pinned), then `update`, which
        must refuse it (exit 1) and leave everything as it was."""
        spec = step["hostile_table"]
        table = json.load(open(os.path.join(KIT_ROOT, spec["table"]), "rb"))
        manifest_path = os.path.join(self.target, "manifest.json")
        original = open(manifest_path, "rb").read()
        for row in table["rows"]:
            document = json.loads(original)
            try:
                for pointer, value in row.get("set", {}).items():
                    checks.json_set(document, pointer, value)
                for pointer in row.get("remove", []):
                    checks.json_remove(document, pointer)
                for old, new in row.get("rename", {}).items():
                    parent, _, name = old.rpartition("/")
                    node = document
                    for part in [p for p in parent.split("/") if p]:
                        node = node[part]
                    node[new] = node.pop(name)
            except (KeyError, IndexError, ValueError) as error:
                raise KitError("table row %r does not apply to the manifest: %s" % (row["name"], error))
            with open(manifest_path, "wb") as handle:
                handle.write(json.dumps(document, indent=2, ensure_ascii=False).encode("utf-8", "surrogatepass"))
            try:
                self.step_client({"client": ["update"], "exit": row.get("exit", spec.get("exit", 1)), "timeout": 30})
                self.step_state({"state": {"models": spec.get("expect_models", {})}})
            except Failure as failure:
                raise Failure("row %r (%s): %s" % (row["name"], row.get("why", ""), failure))
        with open(manifest_path, "wb") as handle:
            handle.write(original)

    def step_replace_object(self, step):
        """Puts other bytes at an object's key and pins them in the (then unsigned) manifest."""
        spec = step["replace_object"]
        path_in_url = objects.resolve(spec["object"], self.target)
        data = open(under(self.inputs, spec["with"], "replace_object with"), "rb").read()
        with open(under(self.target, path_in_url.lstrip("/"), "object"), "wb") as handle:
            handle.write(data)
        manifest_path = os.path.join(self.target, "manifest.json")
        document = json.load(open(manifest_path, "rb"))
        for entry in checks.entries_with_path(document, path_in_url):
            entry["sha256"] = hashlib.sha256(data).hexdigest()
            entry["size"] = len(data)
        with open(manifest_path, "w") as handle:
            json.dump(document, handle, indent=2)
        if os.path.exists(manifest_path + ".minisig"):
            os.remove(manifest_path + ".minisig")

    def step_serve(self, step):
        spec = step["serve"]
        rules = []
        for raw in spec.get("rules", []):
            rule = dict(raw)
            selector = rule.get("object") or {"path": rule["path"]}
            path = objects.resolve(selector, self.root_of(selector))
            if rule["action"] == "swap":
                source = rule["from"]
                if "inputs" in source:
                    rule["_bytes"] = open(under(self.inputs, source["inputs"], "swap from inputs"), "rb").read()
                else:
                    rule["_bytes"] = open(self.object_file(source), "rb").read()
            rules.append(Rule(rule, {path}))
        self.sim.rules = rules
        self.sim.etag_generation = spec.get("etag_generation", 0)
        self.sim.missing_status = spec.get("missing_status", 404)

    def step_fill_disk(self, step):
        """Fills the scenario's small volume (`disk_kib`) beside the client's directory until
        `leave_kib` are free: other data of the app. Without a tmpfs (not root) there is no
        volume to fill, and the verbose output says so."""
        if not self.mounted:
            self.say("  (no tmpfs: fill_disk does nothing)")
            return
        info = os.statvfs(self.mounted)
        free = info.f_bavail * info.f_frsize
        size = free - int(step["fill_disk"]["leave_kib"]) * 1024
        if size > 0:
            with open(os.path.join(self.mounted, "filler"), "wb") as handle:
                handle.truncate(0)
                chunk = b"\0" * (1 << 20)
                while size > 0:
                    handle.write(chunk[:min(size, len(chunk))])
                    size -= len(chunk)

    def step_sleep(self, step):
        time.sleep(step["sleep"])

    # -- the client ------------------------------------------------------------------
    def client_argv(self, args):
        command, rest = args[0], [self.substitute(a) for a in args[1:]]
        if command == "init":
            if "--public-key" in rest or "--trusted-keys" in rest:
                self.pinned = True
            has_url = "--manifest-url" in rest
            return self.client + ["init", "--dir", self.client_dir] + ([] if has_url else ["--manifest-url", self.sim.base_url() + "manifest.json"]) + rest
        return self.client + [command, "--dir", self.client_dir] + rest

    def launch(self, args, fsize_kib=None):
        limit = fsize_kib or self.fsize_kib

        def prepare():
            if limit:
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                resource.setrlimit(resource.RLIMIT_FSIZE, (limit * 1024, limit * 1024))
        return subprocess.Popen(self.client_argv(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                preexec_fn=prepare, cwd=self.work, start_new_session=True)

    def finish(self, process, timeout):
        """Waits (bounded) for the client; returns (status, stdout, stderr, peak RSS MiB, seconds, timed out)."""
        started = time.monotonic()
        out, err = [], []

        def drain(stream, into, cap=1 << 20):
            total = 0
            for chunk in iter(lambda: stream.read(65536), b""):
                if total < cap:
                    into.append(chunk[:cap - total])
                total += len(chunk)
        readers = [threading.Thread(target=drain, args=(process.stdout, out), daemon=True),
                   threading.Thread(target=drain, args=(process.stderr, err), daemon=True)]
        for reader in readers:
            reader.start()
        timed_out = False
        status, rusage = None, None
        while True:
            pid, raw, rusage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                status = os.waitstatus_to_exitcode(raw)
                break
            if time.monotonic() - started > timeout:
                timed_out = True
                os.killpg(process.pid, signal.SIGKILL)
                _, raw, rusage = os.wait4(process.pid, 0)
                status = os.waitstatus_to_exitcode(raw)
                break
            time.sleep(0.02)
        process.returncode = status
        for reader in readers:
            reader.join(2)
        seconds = time.monotonic() - started
        return status, b"".join(out), b"".join(err), rusage.ru_maxrss / 1024.0, seconds, timed_out

    def step_client(self, step):
        args = step["client"]
        timeout = step.get("timeout", DEFAULT_TIMEOUT)
        self.step_mark = self.sim.log.mark()
        before = checks.outside_listing(self.work, self.excluded())
        self.sim.killed.clear()
        process = self.launch(args, step.get("fsize_kib"))
        self.sim.client_pid = process.pid
        status, out, err, rss, seconds, timed_out = self.finish(process, timeout)
        self.sim.client_pid = None
        killed = self.sim.killed.is_set()
        text = err.decode("utf-8", "replace")
        self.say("  client %s -> %s in %.1f s, peak %.0f MiB%s" % (
            " ".join(args[:1]), "killed" if killed else status, seconds, rss, (": " + checks.plain(text.strip().splitlines()[-1][:200])) if text.strip() else ""))
        if timed_out:
            raise Failure("`%s` did not return within %g s (the protocol bounds every call)" % (" ".join(args), timeout))
        # "maybe": a kill timed after the last byte may come after the client has finished.
        if step.get("killed") != "maybe" and killed != bool(step.get("killed")):
            if step.get("killed"):
                raise Failure("the kill point was never reached (exit %d)" % status)
            raise Failure("the client was killed unexpectedly")
        if not killed:
            expected = step.get("exit", 0)
            allowed = expected if isinstance(expected, list) else [expected]
            if status not in allowed:
                raise Failure("`%s` exited %d, expected %s%s" % (" ".join(args), status, " or ".join(map(str, allowed)),
                                                                (" (stderr: %s)" % checks.plain(text.strip()[-300:])) if text.strip() else ""))
            if status not in (0, 2) and not text.strip():
                raise Failure("`%s` exited %d with nothing on stderr (the protocol asks for a reason)" % (" ".join(args), status))
            if "stderr" in step and step["stderr"].lower() not in text.lower():
                raise Failure("stderr does not mention %r: %s" % (step["stderr"], checks.plain(text.strip()[-300:])))
        checks.no_raw_control(err, "stderr")
        if args[0] == "state":
            checks.no_raw_control(out, "stdout")
        limit = step.get("max_rss_mib", 1024)
        if rss > limit:
            raise Failure("the client's peak memory was %.0f MiB (at most %d MiB allowed)" % (rss, limit))
        after = checks.outside_listing(self.work, self.excluded())
        checks.same_outside(before, after)
        self.check_transfers(seconds)
        if args[0] in ("update", "revert") or killed:
            self.consistent_state()

    def step_clients(self, step):
        """Several client calls at once (an app and its extension on one directory)."""
        timeout = step.get("timeout", DEFAULT_TIMEOUT)
        self.step_mark = self.sim.log.mark()
        processes = [self.launch(args) for args in step["clients"]]
        results = [self.finish(p, timeout) for p in processes]
        expected = step.get("exit", 0)
        allowed = expected if isinstance(expected, list) else [expected]
        for args, (status, _, err, _, _, timed_out) in zip(step["clients"], results):
            if timed_out:
                raise Failure("`%s` did not return within %g s" % (" ".join(args), timeout))
            if status not in allowed:
                raise Failure("`%s` exited %d, expected %s (stderr: %s)" % (" ".join(args), status, allowed, checks.plain(err.decode("utf-8", "replace").strip()[-300:])))
        self.consistent_state()

    def excluded(self):
        return [self.client_dir, self.target, self.snapshots, self.inputs, self.keys]

    def check_transfers(self, seconds):
        """Every transfer the client started has stopped: the simulator saw each response end
        (sent, or the connection closed by the client) once the client returned."""
        deadline = time.monotonic() + 3
        while True:
            entries = self.sim.log.snapshot()[self.step_mark:]
            open_ones = [e for e in entries if e["ended"] is None]
            if not open_ones or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        if open_ones:
            raise Failure("the transfer of %s was still running after the client returned" % ", ".join(sorted({e["path"] for e in open_ones})))
        for entry in entries:
            if "extra_sent" in entry:
                self.say("  %s: %d bytes sent past the declared body; the transfer ended at %.1f s (%s)" % (
                    entry["path"], entry["extra_sent"], entry["ended"] - entry["started"], entry.get("send_error", "sent")))
            if "extra_sent" in entry and entry["extra_sent"] > checks.EXTRA_ALLOWANCE:
                raise Failure("%s: the server sent %d bytes past the declared body before the client stopped reading (at most %d: 64 KiB plus the sockets' buffers)" % (
                    entry["path"], entry["extra_sent"], checks.EXTRA_ALLOWANCE))
        self.check_order(entries)

    def known_kinds(self):
        """URL path -> object kind, for every object the target's manifest or a snapshot's names."""
        kinds = objects.kinds_by_path(self.target)
        for snapshot in os.listdir(self.snapshots):
            for path, kind in objects.kinds_by_path(os.path.join(self.snapshots, snapshot)).items():
                kinds.setdefault(path, kind)
        return kinds

    def check_order(self, entries):
        """No object a release names is asked for before the manifest (and, with a pinned key,
        its signature) has been received whole."""
        kinds = self.known_kinds()
        proven_at = {"manifest": None, "signature": None}
        for entry in entries:
            kind = kinds.get(entry["path"])
            if kind in ("manifest", "signature") and entry["status"] in (200, 304) and entry["ended"] is not None:
                if proven_at[kind] is None:
                    proven_at[kind] = entry["ended"]
            if kind in ("artifact", "segment_index", "model_signature"):
                needed = ["manifest"] + (["signature"] if self.pinned else [])
                for need in needed:
                    if proven_at[need] is None or proven_at[need] > entry["started"]:
                        raise Failure("%s (%s) was requested before the %s was received" % (entry["path"], kind, need))

    def consistent_state(self):
        """`state` is valid and every model is wholly one published version: its files on
        disk are exactly that version's files."""
        process = self.launch(["state"])
        status, out, err, _, _, timed_out = self.finish(process, 30)
        if timed_out or status != 0:
            raise Failure("`state` failed (exit %s): %s" % (status, checks.plain(err.decode("utf-8", "replace").strip()[-300:])))
        document = checks.parse_state(out)
        for name, model in document["models"].items():
            digests = []
            for entry in model["files"]:
                full = checks.inside(self.client_dir, entry["path"])
                actual = checks.file_sha256(full)
                if actual != entry["sha256"]:
                    raise Failure("state says %s has SHA-256 %s, the file has %s" % (entry["path"], entry["sha256"], actual))
                digests.append(actual)
            key = (name, model["version"], model["variant"])
            wanted = self.expected.get(key)
            if wanted is None:
                raise Failure("model %s runs %s%s, which no manifest published" % (name, model["version"], " (variant %s)" % model["variant"] if model["variant"] else ""))
            if sorted(digests) != wanted:
                raise Failure("model %s %s is a mix: its files are not the files published for that version" % (name, model["version"]))
        return document

    def step_state(self, step):
        document = self.consistent_state()
        expected = step["state"]
        if "sequence" in expected and document["sequence"] != expected["sequence"]:
            raise Failure("the trusted sequence is %s, expected %s" % (document["sequence"], expected["sequence"]))
        for name, want in expected.get("models", {}).items():
            have = document["models"].get(name)
            if want is None:
                if have is not None:
                    raise Failure("model %s is installed (%s), expected none" % (name, have["version"]))
                continue
            if have is None:
                raise Failure("model %s is not installed, expected %s" % (name, want))
            want = {"version": want} if isinstance(want, str) else want
            for field, value in want.items():
                if have.get(field) != value:
                    raise Failure("model %s: %s is %r, expected %r" % (name, field, have.get(field), value))

    def step_requests(self, step):
        entries = self.sim.log.snapshot()
        if step.get("since", "step") == "step":
            entries = entries[self.step_mark:]
        for assertion in step["requests"]:
            checks.request_assertion(assertion, entries, self)


STEP_HANDLERS = {name: getattr(Run, "step_" + name) for name in (
    "edit_signature", "hostile_table", "make", "make_zip", "keygen", "publish", "modelcast", "snapshot", "copy", "write", "edit_manifest",
    "replace_object", "restore", "serve", "client", "clients", "state", "requests", "sleep", "fill_disk")}


def split_client(command):
    return shlex.split(command)
