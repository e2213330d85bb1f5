"""``publish``, ``verify``, ``rollback`` and ``history``: the CLI's commands as functions.

Each runs the bundled binary with ``--json`` and returns its report as a dataclass
(:mod:`modelcast.results`), or raises :class:`modelcast.ModelcastError`. Keyword arguments
mirror the CLI's options (``base_url`` is ``--base-url``); ``extra_args`` passes any other
option as written. What the CLI reads from the environment (signing keys, passphrases, AWS
credentials) is given here as keyword arguments too, and is set in the binary's environment
only: never on its command line, where other users of the machine could read it.

Options every function shares:

- ``env``: variables added to the binary's environment (it inherits this process's).
- ``log``: called with each line the binary writes on standard error (progress, logs);
  the default prints them on this process's standard error, ``None`` drops them.
- ``process_timeout``: seconds after which the binary is stopped (SIGTERM, which it cleans
  up on; SIGKILL if it is still there a grace period later) and ``ModelcastError`` with kind
  ``crashed`` is raised; default: no limit.

Ctrl-C during a call is passed on to the binary, which removes what it staged; once it has
exited, ``KeyboardInterrupt`` is raised (:mod:`modelcast._stopping`). The other commands
are in :mod:`modelcast.rollouts`, :mod:`modelcast.upkeep`, :mod:`modelcast.keys` and
:mod:`modelcast.models`, with the same options.
"""

from __future__ import annotations

import os
from typing import Mapping, Optional, Sequence, Union

from modelcast._options import run_go_live, percent_text, published_target, s3
from modelcast._run import Arguments, LogFunction, PathLike, run, run_json, to_stderr
from modelcast.errors import VerificationFailed
from modelcast.results import History, PublishResult, VerifyResult

#: A model given to :func:`publish`: a path (the files of one model), or NAME → path(s).
Models = Union[PathLike, Sequence[PathLike], Mapping[str, Union[PathLike, Sequence[PathLike]]]]


def _model_entries(models: Models) -> list[str]:
    """The MODEL arguments: plain paths, or NAME=PATH for each file of a named model."""
    if isinstance(models, (str, os.PathLike)):
        return [os.fspath(models)]
    if isinstance(models, Mapping):
        entries = []
        for name, paths in models.items():
            if not name or "=" in name or name.startswith("-"):
                raise ValueError(f"model name {name!r} must be non-empty, without '=' and not start with '-'")
            for path in [paths] if isinstance(paths, (str, os.PathLike)) else paths:
                entries.append(f"{name}={os.fspath(path)}")
        return entries
    return [os.fspath(path) for path in models]


def _meta_entries(meta: Optional[Mapping[str, str]]) -> list[str]:
    """The ``--meta`` values, KEY=VALUE: the CLI splits at the first ``=``, so a key holding
    one would be published as another key."""
    entries = []
    for key, value in (meta or {}).items():
        if "=" in key:
            raise ValueError(f"meta key {key!r} must not hold '=': --meta KEY=VALUE splits at the first one")
        entries.append(f"{key}={value}")
    return entries


def publish(
    models: Models,
    *,
    version: Optional[str] = None,
    to: Optional[PathLike] = None,
    base_url: Optional[str] = None,
    name: Optional[str] = None,
    profile: Optional[str] = None,
    channel: Optional[str] = None,
    config: Optional[PathLike] = None,
    meta: Optional[Mapping[str, str]] = None,
    min_app_version: Optional[str] = None,
    manifest_key: Optional[str] = None,
    remove_models: Sequence[str] = (),
    adopt_live: bool = False,
    move_base_url: bool = False,
    rollout: Union[None, str, int, float] = None,
    rollout_schedule: Optional[str] = None,
    no_zip: bool = False,
    compression: Optional[str] = None,
    segment_index: Optional[str] = None,
    verify_url: Optional[str] = None,
    dry_run: bool = False,
    sign: Optional[PathLike] = None,
    signing_key: Optional[str] = None,
    signing_passphrase: Optional[str] = None,
    expires_in: Optional[str] = None,
    inline_signature: bool = False,
    unsigned: bool = False,
    rotate_key: bool = False,
    trust_stored: bool = False,
    model_signing_key: Optional[str] = None,
    endpoint: Optional[str] = None,
    region: Optional[str] = None,
    path_style: Optional[bool] = None,
    aws_access_key_id: Optional[str] = None,
    aws_secret_access_key: Optional[str] = None,
    aws_session_token: Optional[str] = None,
    extra_args: Sequence[str] = (),
    env: Optional[Mapping[str, str]] = None,
    log: Optional[LogFunction] = to_stderr,
    process_timeout: Optional[float] = None,
) -> PublishResult:
    """Publish models: pack, store under immutable keys, write the manifest last, prove it.

    ``models`` is one path, a list of paths (the files of one model, e.g. a GGUF and its
    mmproj), or a mapping ``{name: path or [paths]}`` for several models (``NAME=PATH``).
    ``to`` is a directory or ``s3://bucket/prefix`` (default ``$MODELCAST_TARGET``);
    ``base_url`` the URL it is served from (default ``$MODELCAST_BASE_URL``). ``meta`` gives
    profile fields (``--meta key=value``; a key holding ``=`` is refused); ``rollout`` a
    staged rollout share (``"10%"``, or a number of percent), ``rollout_schedule`` a
    self-ramping one (``"1%,10%@24h,100%@7d"``).

    Secrets go to the binary's environment, never its command line: ``signing_key`` (a
    minisign key's text, ``$MODELCAST_SIGNING_KEY``), ``signing_passphrase``
    (``$MODELCAST_SIGNING_PASSPHRASE``), ``model_signing_key`` (a P-256 PEM private key's text,
    ``$MODELCAST_MODEL_SIGNING_KEY``), and the ``aws_*`` credentials. ``sign`` is a key *file*
    (its path is on the command line, its content is not).

    Returns the :class:`~modelcast.results.PublishResult`; raises
    :class:`~modelcast.ModelcastError` when the publish is refused (kind ``refused``: e.g. a
    version lower than the live one), badly asked (``usage``) or fails (``io``).
    """
    arguments = Arguments("publish")
    for entry in _model_entries(models):
        arguments.positional(entry)
    arguments.option("--version", version)
    arguments.option("--to", to)
    arguments.option("--base-url", base_url)
    arguments.option("--name", name)
    arguments.option("--profile", profile)
    arguments.option("--channel", channel)
    arguments.option("--config", config)
    arguments.repeated("--meta", _meta_entries(meta))
    arguments.option("--min-app-version", min_app_version)
    arguments.option("--manifest-key", manifest_key)
    arguments.repeated("--remove-model", remove_models)
    arguments.flag("--adopt-live", adopt_live)
    arguments.flag("--move-base-url", move_base_url)
    arguments.option("--rollout", percent_text(rollout))
    arguments.option("--rollout-schedule", rollout_schedule)
    arguments.flag("--no-zip", no_zip)
    arguments.option("--compression", compression)
    arguments.option("--segment-index", segment_index)
    return run_go_live(arguments, locals(), secrets={"MODELCAST_MODEL_SIGNING_KEY": model_signing_key})


def verify(
    source: PathLike,
    *,
    base_url: Union[None, str, Sequence[str]] = None,
    stand_in_for: Optional[str] = None,
    allow_http: bool = False,
    public_key: Union[None, str, Sequence[str]] = None,
    require_signature: bool = False,
    model_signing_public_key: Optional[PathLike] = None,
    profile: Optional[str] = None,
    manifest_key: Optional[str] = None,
    channel: Optional[str] = None,
    origin: Optional[str] = None,
    state: Optional[PathLike] = None,
    strict: bool = False,
    timeout: Optional[float] = None,
    retries: Optional[int] = None,
    jobs: Optional[int] = None,
    check: bool = True,
    endpoint: Optional[str] = None,
    region: Optional[str] = None,
    path_style: Optional[bool] = None,
    aws_access_key_id: Optional[str] = None,
    aws_secret_access_key: Optional[str] = None,
    aws_session_token: Optional[str] = None,
    extra_args: Sequence[str] = (),
    env: Optional[Mapping[str, str]] = None,
    log: Optional[LogFunction] = to_stderr,
    process_timeout: Optional[float] = None,
) -> VerifyResult:
    """Verify a release as a device would: re-download every object the manifest names and
    check hashes, sizes, headers and signatures.

    ``source`` is a manifest URL, a published directory, ``s3://bucket/prefix`` or a manifest
    file. ``base_url``: where objects must live (repeatable); ``stand_in_for``: for a manifest
    served by ``modelcast serve``, the base URL the release was published for; ``public_key``:
    trusted minisign public key(s), a .pub file or the base64 key; ``timeout``: the CLI's
    deadline for the whole run, in seconds.

    With ``check`` (the default) a failed check raises
    :class:`~modelcast.errors.VerificationFailed` (a ``ModelcastError``: code 1, kind
    ``refused``; code 3, kind ``io`` when the only failures were hosts not reached) whose
    ``result`` is the report; with ``check=False`` the report is returned and ``passed``
    says whether every check passed.
    """
    arguments = Arguments("verify")
    arguments.positional(source)
    arguments.repeated("--base-url", base_url)
    arguments.option("--stand-in-for", stand_in_for)
    arguments.flag("--allow-http", allow_http)
    arguments.repeated("--public-key", public_key)
    arguments.flag("--require-signature", require_signature)
    arguments.option("--model-signing-public-key", model_signing_public_key)
    arguments.option("--profile", profile)
    arguments.option("--manifest-key", manifest_key)
    arguments.option("--channel", channel)
    arguments.option("--origin", origin)
    arguments.option("--state", state)
    arguments.flag("--strict", strict)
    arguments.option("--timeout", timeout)
    arguments.option("--retries", retries)
    arguments.option("--jobs", jobs)
    secrets = s3(arguments, endpoint=endpoint, region=region, path_style=path_style, aws_access_key_id=aws_access_key_id,
                 aws_secret_access_key=aws_secret_access_key, aws_session_token=aws_session_token)
    # The report comes with status 1 (a check failed) and 3 (only hosts not reached) too.
    status, report = run_json(arguments, secrets=secrets, report_statuses=(1, 3),
                              extra_args=extra_args, env=env, log=log, process_timeout=process_timeout)
    result = VerifyResult.from_json(report)
    if check and not result.passed:
        failed = result.failed_checks
        listed = "; ".join(f"{c.check} {c.subject}: {c.detail}" for c in failed[:5])
        more = f" (and {len(failed) - 5} more)" if len(failed) > 5 else ""
        raise VerificationFailed(f"{result.source}: {result.failures} check(s) failed: {listed}{more}", result, code=status)
    return result


def rollback(
    target: Optional[PathLike] = None,
    *,
    version: str,
    model: Optional[str] = None,
    bump: bool = False,
    bump_to: Optional[str] = None,
    channel: Optional[str] = None,
    manifest_key: Optional[str] = None,
    manifest_cache_control: Optional[str] = None,
    base_url: Optional[str] = None,
    adopt_live: bool = False,
    verify_url: Optional[str] = None,
    dry_run: bool = False,
    sign: Optional[PathLike] = None,
    signing_key: Optional[str] = None,
    signing_passphrase: Optional[str] = None,
    expires_in: Optional[str] = None,
    inline_signature: bool = False,
    unsigned: bool = False,
    rotate_key: bool = False,
    trust_stored: bool = False,
    endpoint: Optional[str] = None,
    region: Optional[str] = None,
    path_style: Optional[bool] = None,
    aws_access_key_id: Optional[str] = None,
    aws_secret_access_key: Optional[str] = None,
    aws_session_token: Optional[str] = None,
    extra_args: Sequence[str] = (),
    env: Optional[Mapping[str, str]] = None,
    log: Optional[LogFunction] = to_stderr,
    process_timeout: Optional[float] = None,
) -> PublishResult:
    """Send every device back to ``version``, a version that went live before.

    ``target``: a published directory or ``s3://bucket/prefix`` (default ``$MODELCAST_TARGET``).
    ``model``: roll back one model of a multi-model release; ``bump``: republish the old
    bytes under a higher version (``bump_to``), for clients that only move up. Secrets as in
    :func:`publish`. Returns the :class:`~modelcast.results.PublishResult` of the new manifest.
    """
    arguments = Arguments("rollback")
    published_target(arguments, target, channel=channel, manifest_key=manifest_key)
    arguments.option("--version", version)
    arguments.option("--model", model)
    arguments.flag("--bump", bump)
    arguments.option("--bump-to", bump_to)
    arguments.option("--manifest-cache-control", manifest_cache_control)
    arguments.option("--base-url", base_url)
    arguments.flag("--adopt-live", adopt_live)
    return run_go_live(arguments, locals())


def history(
    target: Optional[PathLike] = None,
    *,
    channel: Optional[str] = None,
    manifest_key: Optional[str] = None,
    endpoint: Optional[str] = None,
    region: Optional[str] = None,
    path_style: Optional[bool] = None,
    aws_access_key_id: Optional[str] = None,
    aws_secret_access_key: Optional[str] = None,
    aws_session_token: Optional[str] = None,
    extra_args: Sequence[str] = (),
    env: Optional[Mapping[str, str]] = None,
    log: Optional[LogFunction] = to_stderr,
    process_timeout: Optional[float] = None,
) -> History:
    """The releases one channel of ``target`` published, newest first (``History.live`` is
    the one devices get). ``target``: a published directory or ``s3://bucket/prefix``
    (default ``$MODELCAST_TARGET``)."""
    arguments = Arguments("history")
    published_target(arguments, target, channel=channel, manifest_key=manifest_key)
    secrets = s3(arguments, endpoint=endpoint, region=region, path_style=path_style, aws_access_key_id=aws_access_key_id,
                 aws_secret_access_key=aws_secret_access_key, aws_session_token=aws_session_token)
    return run(arguments, History.from_json, secrets=secrets,
               extra_args=extra_args, env=env, log=log, process_timeout=process_timeout)
