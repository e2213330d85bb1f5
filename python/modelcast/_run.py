"""Runs the bundled binary with ``--json`` and turns its output into a result or an error."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections import deque
from typing import Any, Callable, Collection, Mapping, Optional, Sequence, TypeVar, Union

from modelcast._binary import binary_path
from modelcast._stopping import Terminated, end_by, stop, terminations
from modelcast.errors import ModelcastError

PathLike = Union[str, "os.PathLike[str]"]
#: Receives each line the binary writes on standard error (progress, logs), without its newline.
LogFunction = Callable[[str], None]
#: What a command's function returns (a dataclass of :mod:`modelcast.results`).
Result = TypeVar("Result")


def to_stderr(line: str) -> None:
    """The default ``log``: the binary's standard-error lines go to this process's."""
    print(line, file=sys.stderr, flush=True)


class Arguments:
    """A command line under construction; ``None`` and ``False`` add nothing."""

    def __init__(self, *command: str) -> None:
        """``command``: the subcommand's words (``"rollout", "set"``)."""
        self.command = " ".join(command)
        self.argv: list[str] = list(command)

    def option(self, name: str, value: Union[None, str, int, float, "os.PathLike[str]"]) -> None:
        if value is None:
            return
        if isinstance(value, bool):
            raise TypeError(f"{name} takes a value, not a bool ({value!r})")
        # --name=value: a value that starts with "-" is still the option's value.
        self.argv.append(f"{name}={os.fspath(value) if isinstance(value, os.PathLike) else value}")

    def positional(self, value: "PathLike") -> None:
        """A path or URL argument; a relative path that starts with "-" gets "./" so it is not read as an option."""
        text = os.fspath(value)
        self.argv.append(f"./{text}" if text.startswith("-") else text)

    def repeated(self, name: str, values: Union[None, str, Sequence[Any]]) -> None:
        if values is None:
            return
        for value in [values] if isinstance(values, (str, os.PathLike)) else values:
            self.option(name, value)

    def flag(self, name: str, on: bool) -> None:
        if on:
            self.argv.append(name)

    def tristate(self, name: str, negative: str, value: Optional[bool]) -> None:
        if value is not None:
            self.argv.append(name if value else negative)


def _checked(extra_args: Sequence[str]) -> Sequence[str]:
    """``extra_args``, refused unless it is a sequence of strings: one string is a sequence
    of characters, and would reach the CLI as ``"-", "-", "s"…``."""
    if isinstance(extra_args, (str, bytes)):
        raise TypeError(f"extra_args is a list of arguments, not one string: extra_args={extra_args!r}")
    for argument in extra_args:
        if not isinstance(argument, str):
            raise TypeError(f"extra_args holds {argument!r}, not a string")
    return extra_args


def run(
    arguments: Arguments,
    parse: Callable[[Any], Result],
    *,
    extra_args: Sequence[str],
    secrets: Optional[Mapping[str, Optional[str]]] = None,
    env: Optional[Mapping[str, str]],
    log: Optional[LogFunction],
    process_timeout: Optional[float],
    report_statuses: Collection[int] = (),
) -> Result:
    """What every command's function ends with: :func:`run_json`, and its report as ``parse``
    (a result's ``from_json``) reads it."""
    _, report = run_json(
        arguments, extra_args=extra_args, secrets=secrets, env=env, log=log,
        process_timeout=process_timeout, report_statuses=report_statuses,
    )
    return parse(report)


def run_json(
    arguments: Arguments,
    *,
    extra_args: Sequence[str],
    secrets: Optional[Mapping[str, Optional[str]]],
    env: Optional[Mapping[str, str]],
    log: Optional[LogFunction],
    process_timeout: Optional[float],
    report_statuses: Collection[int] = (),
) -> tuple[int, Any]:
    """Runs ``modelcast ARGS EXTRA_ARGS --json`` and returns (exit status, parsed standard output).

    ``secrets`` are environment variables (keys, passphrases, credentials): they are set in the
    child's environment only, never on its command line. A JSON error object raises
    :class:`ModelcastError`; so does any other failure, unless the binary exited with one of
    ``report_statuses`` and printed its JSON report (verify's failed checks).

    A ``KeyboardInterrupt`` while the binary runs is passed on to it as SIGINT; once it has
    cleaned up and exited, the ``KeyboardInterrupt`` is raised again. SIGTERM and SIGHUP
    where they would end this process are passed on the same way, and then end it.
    """
    argv = [str(binary_path()), *arguments.argv, *_checked(extra_args), "--json"]
    child_env = dict(os.environ)
    if env:
        child_env.update(env)
    for name, value in (secrets or {}).items():
        if value is not None:
            child_env[name] = value
    tail: deque[str] = deque(maxlen=20)
    # Its own session: a Ctrl-C at the terminal (or a signal to this process group) reaches
    # this process only, which passes exactly one on (modelcast._stopping); and the binary
    # has no terminal to prompt on (secrets come as arguments).
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env,
        start_new_session=True,
    )

    def relay() -> None:
        assert process.stderr is not None
        for raw in process.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            tail.append(line)
            if log is not None:
                log(line)

    chunks: list[bytes] = []

    def collect() -> None:
        assert process.stdout is not None
        chunks.append(process.stdout.read())

    # Two readers, so neither pipe fills up while the other is waited on.
    readers = [threading.Thread(target=relay, daemon=True), threading.Thread(target=collect, daemon=True)]
    ending: Optional[int] = None  # SIGTERM or SIGHUP that arrived: this process ends by it
    try:
        with terminations():
            try:
                for reader in readers:
                    reader.start()
                process.wait(timeout=process_timeout)
            except subprocess.TimeoutExpired:
                stop(process, signal.SIGTERM)
                said = next((line for line in reversed(tail) if line), "")
                raise ModelcastError(
                    process.returncode,
                    "crashed",
                    f"stopped after process_timeout={process_timeout} s" + (f": {said}" if said else ""),
                    arguments.command,
                ) from None
            except KeyboardInterrupt:
                # The binary removes what it staged (or finishes a commit under way) and says
                # which on standard error; only then does the interrupt go on.
                stop(process, signal.SIGINT)
                raise
    except Terminated as terminated:
        stop(process, terminated.number)
        ending = terminated.number
    finally:
        for reader in readers:
            if reader.ident is not None:  # started
                reader.join()
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
    if ending is not None:
        end_by(ending)
    stdout = b"".join(chunks)
    status = process.returncode
    try:
        parsed = json.loads(stdout) if stdout.strip() else None
    except json.JSONDecodeError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
        error = parsed["error"]
        raise ModelcastError(
            int(error.get("code", status)), str(error.get("kind", "refused")), str(error.get("message", "")), arguments.command
        )
    if status == 0 and parsed is not None:
        return status, parsed
    if status in report_statuses and isinstance(parsed, dict):
        return status, parsed
    last = " | ".join(line for line in tail if line) or "no message on standard error"
    how = f"killed by signal {-status}" if status < 0 else f"exited with status {status} without a JSON result"
    raise ModelcastError(status, "crashed", f"{how}: {last}", arguments.command)

