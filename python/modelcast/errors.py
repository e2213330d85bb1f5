"""The error every API call raises when modelcast refuses or fails."""

from __future__ import annotations

from typing import Any, Literal

#: What went wrong, as the CLI names it: ``refused`` (exit 1: a rule, a conflict, a failed
#: check), ``usage`` (exit 2: a bad or missing option), ``io`` (exit 3: input/output, network,
#: credentials), or ``crashed`` when the binary ended without printing its JSON error (killed
#: by a signal, or ``process_timeout`` reached).
ErrorKind = Literal["refused", "usage", "io", "crashed"]


class ModelcastError(Exception):
    """A modelcast command failed.

    ``code`` is the CLI's exit status (1, 2 or 3; for ``crashed``, the negative signal number
    or the status it exited with), ``kind`` one of :data:`ErrorKind` and ``message`` the
    CLI's own message, which names the offending value.
    """

    def __init__(self, code: int, kind: str, message: str, command: str = "") -> None:
        super().__init__(f"modelcast {command}: {message}" if command else message)
        self.code = code
        self.kind = kind
        self.message = message
        self.command = command

    def __repr__(self) -> str:
        return f"ModelcastError(code={self.code!r}, kind={self.kind!r}, message={self.message!r})"


class VerificationFailed(ModelcastError):
    """``verify(..., check=True)`` found failed checks; ``result`` holds the whole report.

    As the CLI's exit status says: code 1, kind ``refused`` when a check failed; code 3,
    kind ``io`` when the only failures were hosts that could not be reached.
    """

    def __init__(self, message: str, result: Any, code: int = 1) -> None:
        super().__init__(code, "io" if code == 3 else "refused", message, "verify")
        self.result = result
