"""modelcast for Python pipelines: the bundled ``modelcast`` binary and a small typed API.

::

    import modelcast

    result = modelcast.publish(["model.gguf", "model-mmproj.gguf"], version="1.2.0",
                               to="s3://models/prod", base_url="https://cdn.example.com/models")
    print(result.sequence, result.manifest_url)

Every function runs the binary with ``--json`` (see :mod:`modelcast.commands`), returns a
dataclass from :mod:`modelcast.results`, and raises :class:`ModelcastError` (``code``,
``kind``, ``message``) when the command fails. ``binary_path()`` is the bundled executable.
"""

from modelcast._binary import binary_path
from modelcast.commands import history, publish, rollback, verify
from modelcast.errors import ModelcastError, VerificationFailed
from modelcast.results import (
    Check,
    History,
    ModelSummary,
    PublishResult,
    Release,
    StoredObject,
    VerifyResult,
)

__all__ = [
    "binary_path",
    "publish",
    "verify",
    "rollback",
    "history",
    "ModelcastError",
    "VerificationFailed",
    "PublishResult",
    "VerifyResult",
    "History",
    "Release",
    "Check",
    "StoredObject",
    "ModelSummary",
]
