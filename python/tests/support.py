"""What the Python API's tests share: which ``modelcast`` package they test, the example
models, and small helpers.

The tests import the installed package (scripts/test-install runs them with the wheel's
virtualenv). With ``MODELCAST_TEST_BINARY=PATH`` they test this checkout's package with that
binary instead, laid out as the wheel lays it out (``modelcast/bin/modelcast``) in a
temporary directory::

    MODELCAST_TEST_BINARY=.build/debug/modelcast python3 -m unittest discover -s python/tests -p 'test_*.py'
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
EXAMPLES = REPOSITORY / "examples" / "models"
BASE_URL = "https://cdn.example.com/models"


def _package_with_test_binary() -> None:
    """Puts a copy of python/modelcast whose bin/modelcast is $MODELCAST_TEST_BINARY first on sys.path."""
    binary = Path(os.environ["MODELCAST_TEST_BINARY"]).resolve()
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        raise SystemExit(f"MODELCAST_TEST_BINARY={binary} is not an executable file")
    root = Path(tempfile.mkdtemp(prefix="modelcast-python-"))
    atexit.register(shutil.rmtree, root, True)
    package = root / "modelcast"
    shutil.copytree(REPOSITORY / "python" / "modelcast", package, ignore=shutil.ignore_patterns("__pycache__", "bin"))
    (package / "bin").mkdir()
    (package / "bin" / "modelcast").symlink_to(binary)
    sys.path.insert(0, str(root))
    # Subprocesses the tests start (the Ctrl-C test's driver) import the same package.
    os.environ["PYTHONPATH"] = os.pathsep.join([str(root), *filter(None, [os.environ.get("PYTHONPATH")])])


if os.environ.get("MODELCAST_TEST_BINARY"):
    _package_with_test_binary()

import modelcast  # noqa: E402  (after the path is set)


def package_root() -> Path:
    """The directory holding the ``modelcast`` package under test (for a subprocess's PYTHONPATH)."""
    return Path(modelcast.__file__).resolve().parent.parent


def snapshot(directory: Path) -> dict[str, str]:
    """Every file and folder under ``directory``: relative path → SHA-256 (``dir`` for a folder)."""
    found: dict[str, str] = {}
    for path in sorted(directory.rglob("*")):
        relative = str(path.relative_to(directory))
        found[relative] = "dir" if path.is_dir() and not path.is_symlink() else hashlib.sha256(path.read_bytes()).hexdigest()
    return found


class Lines:
    """A ``log=`` that keeps the binary's standard-error lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, line: str) -> None:
        self.lines.append(line)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)
