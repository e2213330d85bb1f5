"""``inspect`` and ``pack``: what a model is and the artifact it becomes, as functions.

Options and errors as in :mod:`modelcast.commands`.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, Union

from modelcast._run import Arguments, LogFunction, PathLike, run, to_stderr
from modelcast.results import InspectResult, PackedArtifact, PackedTree


def inspect(
    model: PathLike,
    *,
    no_hash: bool = False,
    model_signature: Optional[PathLike] = None,
    public_key: Optional[PathLike] = None,
    extra_args: Sequence[str] = (),
    env: Optional[Mapping[str, str]] = None,
    log: Optional[LogFunction] = to_stderr,
    process_timeout: Optional[float] = None,
) -> InspectResult:
    """Detect and validate a model and describe what would be published: its kind, checked
    details, interface and artifact (name, size, SHA-256; ``no_hash=True`` skips hashing).

    ``model_signature`` and ``public_key`` (a P-256 PEM file): verify the model against that
    OpenSSF model signature first; a model that fails it raises
    :class:`~modelcast.ModelcastError` (``refused``). A model that is not what its name says
    (a corrupt GGUF…) is refused too, naming what is wrong.
    """
    arguments = Arguments("inspect")
    arguments.positional(model)
    arguments.flag("--no-hash", no_hash)
    arguments.option("--model-signature", model_signature)
    arguments.option("--public-key", public_key)
    return run(arguments, InspectResult.from_json,
               extra_args=extra_args, env=env, log=log, process_timeout=process_timeout)


def _packed(report: Mapping[str, Any]) -> Union[PackedArtifact, PackedTree]:
    """pack's report: a directory's listing (``format`` ``tree``), or the artifact it wrote."""
    return PackedTree.from_json(report) if report.get("format") == "tree" else PackedArtifact.from_json(report)


def pack(
    model: PathLike,
    *,
    out: Optional[PathLike] = None,
    zip: Optional[bool] = None,
    compression: Optional[str] = None,
    extra_args: Sequence[str] = (),
    env: Optional[Mapping[str, str]] = None,
    log: Optional[LogFunction] = to_stderr,
    process_timeout: Optional[float] = None,
) -> Union[PackedArtifact, PackedTree]:
    """Build the artifact ``publish`` stores for a model: a file as it is, a directory as a
    deterministic zip (the same tree gives the same bytes on any machine).

    ``out``: the output file, or a directory (one ending in ``/`` is made if missing;
    default: the current directory). ``zip``: ``True`` zips a file too; ``False`` on a
    directory lists and hashes its files instead (:class:`~modelcast.results.PackedTree`,
    the listing written to ``NAME.files.json``). ``compression``: ``store`` (the default,
    byte-reproducible everywhere) or ``deflate``. Returns the
    :class:`~modelcast.results.PackedArtifact` (or the ``PackedTree``).
    """
    arguments = Arguments("pack")
    arguments.positional(model)
    arguments.option("--out", out)
    arguments.tristate("--zip", "--no-zip", zip)
    arguments.option("--compression", compression)
    return run(arguments, _packed, extra_args=extra_args, env=env, log=log, process_timeout=process_timeout)
