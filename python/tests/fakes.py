"""Stand-in binaries for the tests that check what the API itself does (the command line it
builds, where secrets go, how it stops a binary), patched in for the bundled one."""

from __future__ import annotations

import contextlib
import sys
import tempfile
from pathlib import Path
from typing import Iterator
from unittest import mock

#: Prints the command line it got, and the SHA-256 of each secret variable set, as a JSON
#: error (so every function raises ModelcastError with them as its message).
ECHO = r'''
import hashlib, json, os, sys
names = ["MODELCAST_SIGNING_KEY", "MODELCAST_SIGNING_PASSPHRASE", "MODELCAST_MODEL_SIGNING_KEY",
         "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"]
seen = {n: hashlib.sha256(os.environ[n].encode()).hexdigest() for n in names if n in os.environ}
print(json.dumps({"error": {"code": 2, "kind": "usage", "message": json.dumps({"argv": sys.argv[1:], "env": seen})}}))
sys.exit(2)
'''

#: Says it is ready (its pid in $FAKE_DIR/ready), then waits. Each SIGINT is counted in
#: $FAKE_DIR/signals; $FAKE_INTS_TO_EXIT of them end it with status 130. With
#: $FAKE_IGNORE_TERM, SIGTERM is ignored too (only SIGKILL ends it).
STUBBORN = r'''
import os, signal, sys, time
directory = os.environ["FAKE_DIR"]
needed = int(os.environ.get("FAKE_INTS_TO_EXIT", "0"))
count = 0
def on_signal(number, frame):
    global count
    with open(os.path.join(directory, "signals"), "a") as f:
        f.write(signal.Signals(number).name + "\n")
    if number == signal.SIGINT:
        count += 1
        if needed and count >= needed:
            sys.stderr.write("stopped after %d SIGINT\n" % count)
            sys.exit(130)
    elif number == signal.SIGTERM:
        sys.stderr.write("interrupted by SIGTERM: nothing went live\n")
        sys.exit(143)
signal.signal(signal.SIGINT, on_signal)
signal.signal(signal.SIGTERM, signal.SIG_IGN if os.environ.get("FAKE_IGNORE_TERM") else on_signal)
with open(os.path.join(directory, "ready.tmp"), "w") as f:
    f.write(str(os.getpid()))
os.rename(os.path.join(directory, "ready.tmp"), os.path.join(directory, "ready"))
while True:
    time.sleep(0.05)
'''


@contextlib.contextmanager
def fake_binary(source: str) -> Iterator[Path]:
    """Runs every API call with a Python script ``source`` instead of the bundled binary; yields its directory."""
    with tempfile.TemporaryDirectory(prefix="modelcast-fake-") as name:
        directory = Path(name)
        script = directory / "modelcast"
        script.write_text(f"#!{sys.executable}\n{source}")
        script.chmod(0o755)
        with mock.patch("modelcast._run.binary_path", return_value=script):
            yield directory
