"""Ctrl-C during an API call raises KeyboardInterrupt, after the binary has cleaned up.

The real case: a Python program publishes through the API; the publish has stored its
objects in the target and waits on a slow check (``verify_url`` pointing at a server that
holds every request); SIGINT reaches the Python program (alone, as ``kill -INT`` sends it,
or its whole process group, as a terminal's Ctrl-C does). The program must see
KeyboardInterrupt — not ModelcastError(kind="crashed") — only once the binary has exited,
and the target must be left exactly as it was: the binary's own cleanup ran. SIGTERM to
the group (a CI runner stopping a job) stops the binary the same way, then the program.

The API's side alone (stand-in binaries): a binary that ignores SIGINT gets SIGTERM, one
that ignores both gets SIGKILL, each after its grace period; a second Ctrl-C is passed on
at once; ``process_timeout`` stops the binary with SIGTERM and says what it said.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from unittest import mock

from support import EXAMPLES, package_root, snapshot, modelcast

from fakes import STUBBORN, fake_binary

#: The program under test: publishes with a verify_url that never answers (the base URL the
#: target was published for), and reports how the call ended on stdout. It then waits for stdin to close, so the test looks at the
#: binary's process while its parent is still there.
DRIVER = r"""
import sys, modelcast
target, model, url = sys.argv[1:4]
try:
    modelcast.publish(model, version="2.0.0", to=target, base_url=url, verify_url=url,
                      log=lambda line: print("log: " + line, flush=True))
    print("returned", flush=True)
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
except BaseException as error:
    print("raised " + repr(error), flush=True)
sys.stdin.read()
"""


class HoldingServer:
    """An HTTP server on 127.0.0.1 that holds every request until released, and never answers."""

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self.released = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.arrived.set()
                outer.released.wait(120)
                self.close_connection = True

            do_HEAD = do_GET

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/models"

    def close(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


def children(pid: int) -> list[int]:
    """The processes ``pid`` started that still exist (Linux: /proc/PID/task/*/children)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(p) for p in (task / "children").read_text().split()]
    return found


def ended(process: "subprocess.Popen[bytes]") -> None:
    """Kills ``process`` if it still runs, and closes its pipes."""
    if process.poll() is None:
        process.kill()
        process.wait()
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            pipe.close()


def exists(pid: int) -> bool:
    """Whether process ``pid`` exists at all (a zombie, not yet waited for, does)."""
    return Path(f"/proc/{pid}").exists()


class ReadLines:
    """The driver's stdout, line by line, with a deadline."""

    def __init__(self, process: subprocess.Popen) -> None:
        self.process = process
        self.lines: list[str] = []
        self.buffer = b""

    def until(self, predicate, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while time.monotonic() < deadline:
            while b"\n" in self.buffer:
                raw, self.buffer = self.buffer.split(b"\n", 1)
                line = raw.decode("utf-8", "replace")
                self.lines.append(line)
                if predicate(line):
                    return line
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                self.buffer += chunk
        return ""


class CtrlCDuringAPublishTests(unittest.TestCase):
    def run_interrupted_publish(self, number: int, whole_group: bool) -> None:
        work = Path(tempfile.mkdtemp(prefix="modelcast-interrupt-"))
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", str(work)]))
        target = work / "site"
        model = EXAMPLES / "tiny-llm.gguf"
        # Published for the holding server's URL, so verify_url (which must be the base URL) is it.
        server = HoldingServer()
        self.addCleanup(server.close)
        modelcast.publish(model, version="1.0.0", to=target, base_url=server.url, log=None)
        before = snapshot(target)
        environment = {**os.environ, "PYTHONPATH": str(package_root()), "TMPDIR": str(work)}
        # A process group of its own, as a shell gives a foreground job: the "terminal" below
        # signals that group.
        driver = subprocess.Popen(
            [sys.executable, "-c", DRIVER, str(target), str(model), server.url],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environment, start_new_session=True,
        )
        self.addCleanup(ended, driver)
        output = ReadLines(driver)
        self.assertTrue(server.arrived.wait(60), "the publish reached its verify_url check:\n" + "\n".join(output.lines))
        binaries = children(driver.pid)
        self.assertEqual(len(binaries), 1, f"one modelcast process under the driver: {binaries}")
        binary = binaries[0]
        self.assertEqual(Path(f"/proc/{binary}/cmdline").read_bytes().split(b"\0")[1], b"publish")
        self.assertNotEqual(snapshot(target), before, "the publish had stored its objects in the target when interrupted")

        if whole_group:
            os.killpg(driver.pid, number)  # a terminal's Ctrl-C, or a CI runner stopping the job's group
        else:
            os.kill(driver.pid, number)
        name = signal.Signals(number).name
        if number == signal.SIGINT:
            outcome = output.until(lambda line: not line.startswith("log: "), timeout=60)
            self.assertEqual(outcome, "KeyboardInterrupt", "how the API call ended:\n" + "\n".join(output.lines))
            self.assertFalse(exists(binary), "the binary has exited and was waited for when KeyboardInterrupt was raised")
            self.assertEqual(children(driver.pid), [])
            assert driver.stdin is not None
            driver.stdin.close()
            self.assertEqual(driver.wait(30), 0)
        else:
            # The program ends by the signal, as it would without the call in the way, but only
            # once the binary has stopped (held by the server, it would run on otherwise).
            output.until(lambda line: False, timeout=60)
            self.assertEqual(driver.wait(30), -number, "\n".join(output.lines))
            self.assertFalse(exists(binary), f"{name} was passed on to the binary, which stopped")
        logged = [line for line in output.lines if line.startswith("log: ")]
        interrupted = [line for line in logged if "interrupted by" in line]
        self.assertEqual(len(interrupted), 1, "the binary said once which signal stopped it:\n" + "\n".join(logged))
        self.assertIn(f"interrupted by {name}: nothing went live", interrupted[0])
        self.assertEqual(snapshot(target), before, "the target is exactly as it was: the binary removed what it had staged")
        self.assertEqual([p.name for p in work.iterdir() if p.name != "site"], [], "no staging left in TMPDIR")

    def test_sigint_to_the_python_process(self):
        self.run_interrupted_publish(signal.SIGINT, whole_group=False)

    def test_ctrl_c_at_a_terminal_signals_the_whole_group(self):
        self.run_interrupted_publish(signal.SIGINT, whole_group=True)

    def test_sigterm_to_the_whole_group_stops_the_binary_then_the_program(self):
        self.run_interrupted_publish(signal.SIGTERM, whole_group=True)

    def test_sigterm_to_the_python_process_stops_the_binary_then_the_program(self):
        self.run_interrupted_publish(signal.SIGTERM, whole_group=False)


class StoppingTheBinaryTests(unittest.TestCase):
    """What the API does when the binary is slow to stop (stand-in binaries)."""

    def interrupt_once_ready(self, directory: Path, then=None) -> threading.Thread:
        """SIGINT to this process once the stand-in says it is ready; then ``then()``."""

        def send() -> None:
            deadline = time.monotonic() + 30
            while not (directory / "ready").exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            os.kill(os.getpid(), signal.SIGINT)
            if then is not None:
                then()

        thread = threading.Thread(target=send, daemon=True)
        thread.start()
        return thread

    def signals(self, directory: Path) -> list[str]:
        path = directory / "signals"
        return path.read_text().split() if path.exists() else []

    def test_a_binary_that_ignores_sigint_gets_sigterm_after_the_grace_period(self):
        with fake_binary(STUBBORN) as directory, mock.patch.dict(os.environ, {"FAKE_DIR": str(directory)}), \
                mock.patch("modelcast._stopping.STOP_GRACE", 1.0):
            self.interrupt_once_ready(directory)
            start = time.monotonic()
            with self.assertRaises(KeyboardInterrupt):
                modelcast.history("site", log=None)
            elapsed = time.monotonic() - start
            pid = int((directory / "ready").read_text())
            self.assertFalse(exists(pid))
            self.assertEqual(self.signals(directory), ["SIGINT", "SIGTERM"])
            self.assertGreaterEqual(elapsed, 1.0)
            self.assertLess(elapsed, 10)

    def test_a_binary_that_ignores_sigint_and_sigterm_gets_sigkill(self):
        environment = {"FAKE_DIR": "", "FAKE_IGNORE_TERM": "1"}
        with fake_binary(STUBBORN) as directory, mock.patch.dict(os.environ, {**environment, "FAKE_DIR": str(directory)}), \
                mock.patch("modelcast._stopping.STOP_GRACE", 0.5), mock.patch("modelcast._stopping.KILL_GRACE", 0.5):
            self.interrupt_once_ready(directory)
            start = time.monotonic()
            with self.assertRaises(KeyboardInterrupt):
                modelcast.history("site", log=None)
            self.assertGreaterEqual(time.monotonic() - start, 1.0)
            self.assertFalse(exists(int((directory / "ready").read_text())))
            self.assertEqual(self.signals(directory), ["SIGINT"], "SIGTERM ignored, SIGKILL not catchable")

    def test_a_second_ctrl_c_is_passed_on_at_once(self):
        environment = {"FAKE_INTS_TO_EXIT": "2"}
        with fake_binary(STUBBORN) as directory, mock.patch.dict(os.environ, {**environment, "FAKE_DIR": str(directory)}):

            def again() -> None:
                deadline = time.monotonic() + 30
                while self.signals(directory) != ["SIGINT"] and time.monotonic() < deadline:
                    time.sleep(0.02)
                os.kill(os.getpid(), signal.SIGINT)

            self.interrupt_once_ready(directory, then=again)
            lines: list[str] = []
            start = time.monotonic()
            with self.assertRaises(KeyboardInterrupt):
                modelcast.history("site", log=lines.append)
            self.assertLess(time.monotonic() - start, 20, "not the 60 s grace period: the second SIGINT ended it")
            self.assertEqual(self.signals(directory), ["SIGINT", "SIGINT"])
            self.assertEqual(lines, ["stopped after 2 SIGINT"])

    def test_process_timeout_stops_the_binary_with_sigterm_and_says_what_it_said(self):
        with fake_binary(STUBBORN) as directory, mock.patch.dict(os.environ, {"FAKE_DIR": str(directory)}):
            with self.assertRaises(modelcast.ModelcastError) as raised:
                modelcast.history("site", log=None, process_timeout=3.0)
            self.assertEqual(raised.exception.kind, "crashed")
            self.assertEqual(self.signals(directory), ["SIGTERM"])
            self.assertIn("process_timeout=3.0", raised.exception.message)
            self.assertIn("interrupted by SIGTERM: nothing went live", raised.exception.message)


if __name__ == "__main__":
    unittest.main()
