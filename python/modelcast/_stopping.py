"""Stopping the binary when this process is told to stop: Ctrl-C (SIGINT), SIGTERM or SIGHUP
is passed on to it, and this process goes on stopping only once it has cleaned up.

The binary runs in a session of its own (see :func:`modelcast._run.run_json`), so a signal
meant for this process's group reaches it only through here, and exactly once: it takes a
second SIGINT as "stop at once", even in the middle of its manifest write. It handles
SIGINT, SIGTERM and SIGHUP alike: it removes what it staged (or finishes a commit under
way) and says which on standard error, then ends by the signal.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
import time
from typing import Any, Iterator, Optional

#: Seconds the binary gets to clean up and exit after the signal that stops it (a commit
#: under way finishes first, and an S3 manifest write may retry). Then SIGTERM, and
#: ``KILL_GRACE`` seconds later SIGKILL.
STOP_GRACE = 60.0
KILL_GRACE = 10.0

#: Signals whose default action ends this process, passed on to the binary first.
TERMINATING = (signal.SIGTERM, signal.SIGHUP)


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived during a call (raised by the handler :func:`terminations`
    installs, caught by the call, which stops the binary and then ends this process by it)."""

    def __init__(self, number: int) -> None:
        super().__init__(signal.Signals(number).name)
        self.number = number


def stop(process: "subprocess.Popen[bytes]", first: int) -> None:
    """Stops the binary and waits until it has exited: ``first`` (SIGINT, SIGTERM or SIGHUP,
    which it cleans up on), then SIGTERM and SIGKILL if it outlives each grace period.

    Another Ctrl-C while waiting is passed on as one more SIGINT, which the binary takes as
    "stop at once", as it does at a terminal; the wait goes on.
    """
    steps: list[tuple[int, Optional[float]]] = [(first, STOP_GRACE)]
    if first != signal.SIGTERM:
        steps.append((signal.SIGTERM, KILL_GRACE))
    steps.append((signal.SIGKILL, None))
    for number, grace in steps:
        process.send_signal(number)  # nothing once it has been waited for
        deadline = None if grace is None else time.monotonic() + grace
        while True:
            try:
                process.wait(timeout=None if deadline is None else max(0.0, deadline - time.monotonic()))
                return
            except subprocess.TimeoutExpired:
                break
            except KeyboardInterrupt:
                process.send_signal(signal.SIGINT)
            except Terminated as again:
                process.send_signal(again.number)


@contextlib.contextmanager
def terminations() -> Iterator[None]:
    """For the length of a call: SIGTERM and SIGHUP, where they would end this process (their
    default action, in the main thread, where Python runs handlers), raise :class:`Terminated`
    instead, so the call can stop the binary first. A handler this program set is left alone,
    and so is every signal in other threads' calls."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, Any] = {}

    def raise_terminated(number: int, frame: Any) -> None:
        raise Terminated(number)

    for terminating in TERMINATING:
        if signal.getsignal(terminating) is signal.SIG_DFL:
            previous[terminating] = signal.signal(terminating, raise_terminated)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def end_by(number: int) -> None:
    """Ends this process by signal ``number``, as it would have ended without the call in the way."""
    signal.signal(number, signal.SIG_DFL)
    signal.raise_signal(number)
