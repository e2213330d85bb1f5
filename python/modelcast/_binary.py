"""Where the bundled binary is, and how the console command hands over to it."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def binary_path() -> Path:
    """The modelcast executable bundled in this package (``modelcast/bin/modelcast``).

    Raises ``FileNotFoundError`` naming the path when the package was installed without it
    (a source checkout rather than the wheel).
    """
    path = Path(__file__).resolve().parent / "bin" / "modelcast"
    if not path.is_file():
        raise FileNotFoundError(
            f"the modelcast binary is not bundled at {path}: install the wheel built by scripts/build-wheel"
        )
    if not os.access(path, os.X_OK):
        raise PermissionError(f"the bundled modelcast binary at {path} is not executable (mode {path.stat().st_mode & 0o777:o})")
    return path


def main() -> None:
    """The ``modelcast`` console command: runs the bundled binary in place of this process,
    with the same arguments, so its output, signals and exit status are the binary's own."""
    try:
        path = binary_path()
    except OSError as error:
        print(f"modelcast: {error}", file=sys.stderr)
        sys.exit(127)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(path, [str(path), *sys.argv[1:]])
