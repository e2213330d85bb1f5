#!/usr/bin/env python3
"""Writes the example device's class archive: the classes one install loads, kept by the JVM
as a CDS archive that later starts read instead of loading each class again (about 0.1 s of
each call's start; BENCHMARKS.md, "The Kotlin client").

    tools/class-archive.py OUT/device.jsa

It serves a small unsigned release on 127.0.0.1 (a manifest and one 4 MiB file), runs one
install through the launcher with MODELCAST_DEVICE_DUMP_ARCHIVE set (so the JVM, its flags
and its class path are exactly the launcher's) and renames the archive into place only when
the install succeeded. The build calls it after compiling the device; a failure leaves no
archive, and the launcher then starts without one.
"""
import hashlib
import http.server
import json
import shutil
import os
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCHER = os.path.join(HERE, "..", "device")


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: class-archive.py ARCHIVE", file=sys.stderr)
        return 2
    archive = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="modelcast-class-archive.") as work:
        site = os.path.join(work, "site")
        os.makedirs(os.path.join(site, "models", "m", "1.0.0"))
        body = os.urandom(4 << 20)
        with open(os.path.join(site, "models", "m", "1.0.0", "m.bin"), "wb") as out:
            out.write(body)

        class Quiet(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=site, **kwargs)

            def log_message(self, *args):
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
        base = f"http://127.0.0.1:{server.server_address[1]}"
        manifest = {
            "format": "modelcast-manifest", "format_version": 1, "sequence": 1,
            "published_at": "2026-01-01T00:00:00Z", "channel": "stable", "profile": "modelcast",
            "models": {"m": {"version": "1.0.0", "files": [{
                "name": "m.bin", "key": "models/m/1.0.0/m.bin", "url": f"{base}/models/m/1.0.0/m.bin",
                "sha256": hashlib.sha256(body).hexdigest(), "size": len(body),
                "content_type": "application/octet-stream"}]}},
        }
        with open(os.path.join(site, "manifest.json"), "w") as out:
            json.dump(manifest, out)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        partial = os.path.join(work, "device.jsa")
        try:
            run = subprocess.run(
                [LAUNCHER, "--manifest", f"{base}/manifest.json", "--dir", os.path.join(work, "device")],
                env={**os.environ, "MODELCAST_DEVICE_DUMP_ARCHIVE": partial},
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        finally:
            server.shutdown()
        if run.returncode != 0 or not os.path.isfile(partial):
            err = run.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
            print(f"class-archive.py: the training install failed (exit {run.returncode}): {' | '.join(err)!r}", file=sys.stderr)
            return 1
        # Copied next to its place first: /tmp may be another file system.
        staged = f"{archive}.tmp-{os.getpid()}"
        shutil.copyfile(partial, staged)
        os.replace(staged, archive)
    return 0


if __name__ == "__main__":
    sys.exit(main())
