"""``keys_create``, ``keys_rotate``, ``keys_sign`` and ``keys_push``: a target's key set
(``keys/N.json``), whose offline root keys sign the manifest keys apps trust, as functions.

Root keys held by different people: ``keys_rotate(..., out=DIR)`` writes a pending version
with the signatures at hand, each other holder runs ``keys_sign`` on ``DIR/keys/N.json``, and
``keys_push`` uploads it once proven against the target's newest key set.

Passphrases go to the binary's environment only (``$MODELCAST_SIGNING_PASSPHRASE``). The
binary runs without a terminal, so it never prompts: every encrypted root key of one call is
decrypted with ``passphrase``. Root keys with different passphrases sign in separate
calls: ``keys_rotate(..., out=DIR)`` with one, then ``keys_sign`` with each other.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

from modelcast._options import s3, signing
from modelcast._run import Arguments, LogFunction, PathLike, run, to_stderr
from modelcast.results import KeySetResult


def keys_create(
    target: Optional[PathLike] = None,
    *,
    root: Sequence[PathLike],
    manifest_key: Sequence[PathLike],
    root_threshold: Optional[int] = None,
    manifest_threshold: Optional[int] = None,
    sign_root: Sequence[PathLike] = (),
    passphrase: Optional[str] = None,
    sequence_floors: Optional[Mapping[str, int]] = None,
    expires_in: Optional[str] = None,
    out: Optional[PathLike] = None,
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
) -> KeySetResult:
    """Write ``target``'s first key set, ``keys/1.json`` (``target``: a published directory
    or ``s3://bucket/prefix``, default ``$MODELCAST_TARGET``): the ``root`` public key files
    (offline keys that sign key sets; ``root_threshold`` of them must, default 1) and the
    ``manifest_key`` files (keys that sign manifests; ``manifest_threshold``, default 1),
    signed by the ``sign_root`` secret key files. Refused (:class:`~modelcast.ModelcastError`,
    ``refused``), with nothing written, when the target has a key set or fewer ``sign_root``
    keys than the threshold signed. With ``out``, the files go under that directory instead,
    and fewer signatures (or none) make a pending version (``pending``) for ``keys_sign``.
    """
    arguments = Arguments("keys", "create")
    if target is not None:
        arguments.positional(target)
    arguments.repeated("--root", root)
    arguments.option("--root-threshold", root_threshold)
    arguments.repeated("--manifest-key", manifest_key)
    arguments.option("--manifest-threshold", manifest_threshold)
    arguments.repeated("--sequence-floor", _floors(sequence_floors))
    arguments.repeated("--sign-root", sign_root)
    arguments.option("--expires-in", expires_in)
    arguments.option("--out", out)
    secrets = signing(None, passphrase)
    secrets.update(s3(arguments, endpoint=endpoint, region=region, path_style=path_style, aws_access_key_id=aws_access_key_id,
                      aws_secret_access_key=aws_secret_access_key, aws_session_token=aws_session_token))
    return run(arguments, KeySetResult.from_json, secrets=secrets,
               extra_args=extra_args, env=env, log=log, process_timeout=process_timeout)


def keys_rotate(
    target: Optional[PathLike] = None,
    *,
    manifest_key: Sequence[PathLike] = (),
    root: Sequence[PathLike] = (),
    revoke: Sequence[str] = (),
    root_threshold: Optional[int] = None,
    manifest_threshold: Optional[int] = None,
    sign_root: Sequence[PathLike] = (),
    passphrase: Optional[str] = None,
    sequence_floors: Optional[Mapping[str, int]] = None,
    expires_in: Optional[str] = None,
    out: Optional[PathLike] = None,
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
) -> KeySetResult:
    """Write ``target``'s next key set: ``manifest_key`` and ``root`` public key files added,
    the keys with the ``revoke`` key ids removed, thresholds changed when given, the expiry
    renewed. Removing a manifest key sets each channel's sequence floor to its live sequence,
    else the floors carry forward; ``sequence_floors`` (channel name to floor) overrides.
    Written to the target only when the ``sign_root`` keys
    meet the current root threshold and the new one; with ``out``, under that directory
    instead, pending when they do not (``pending``): the other root key holders then run
    :func:`keys_sign`, and :func:`keys_push` uploads it.
    """
    arguments = Arguments("keys", "rotate")
    if target is not None:
        arguments.positional(target)
    arguments.repeated("--manifest-key", manifest_key)
    arguments.repeated("--root", root)
    arguments.repeated("--revoke", revoke)
    arguments.option("--root-threshold", root_threshold)
    arguments.option("--manifest-threshold", manifest_threshold)
    arguments.repeated("--sequence-floor", _floors(sequence_floors))
    arguments.repeated("--sign-root", sign_root)
    arguments.option("--expires-in", expires_in)
    arguments.option("--out", out)
    secrets = signing(None, passphrase)
    secrets.update(s3(arguments, endpoint=endpoint, region=region, path_style=path_style, aws_access_key_id=aws_access_key_id,
                      aws_secret_access_key=aws_secret_access_key, aws_session_token=aws_session_token))
    return run(arguments, KeySetResult.from_json, secrets=secrets,
               extra_args=extra_args, env=env, log=log, process_timeout=process_timeout)


def keys_sign(
    file: PathLike,
    *,
    sign_root: Sequence[PathLike],
    previous: Optional[PathLike] = None,
    passphrase: Optional[str] = None,
    extra_args: Sequence[str] = (),
    env: Optional[Mapping[str, str]] = None,
    log: Optional[LogFunction] = to_stderr,
    process_timeout: Optional[float] = None,
) -> KeySetResult:
    """Add the ``sign_root`` keys' signatures to the pending key set ``file``
    (``DIR/keys/N.json`` as :func:`keys_rotate` wrote it under ``out``), offline: the
    document is never changed, and a key that signed already adds nothing
    (``already_signed``). Each key must be a root key of version N or N-1; version N-1 is
    ``previous``, or else ``N-1.json`` beside ``file``. Returns how far the version is
    (``pending``, ``thresholds``) and what this call ``added``.
    """
    arguments = Arguments("keys", "sign")
    arguments.positional(file)
    arguments.repeated("--sign-root", sign_root)
    arguments.option("--previous", previous)
    return run(arguments, KeySetResult.from_json, secrets=signing(None, passphrase),
               extra_args=extra_args, env=env, log=log, process_timeout=process_timeout)


def keys_push(
    target: PathLike,
    file: PathLike,
    *,
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
) -> KeySetResult:
    """Upload the key set version ``file`` (``DIR/keys/N.json`` with its ``.minisig`` and
    ``.sigs``) to ``target``, a published directory or ``s3://bucket/prefix``, once a device
    that trusts the target's newest key set would accept it: version newest + 1, signed by
    the threshold of the newest set's root keys and of its own, every signature valid, not
    expired. Otherwise :class:`~modelcast.ModelcastError` (``refused``) naming what is
    missing, and nothing is written.
    """
    arguments = Arguments("keys", "push")
    arguments.positional(target)
    arguments.positional(file)
    secrets = s3(arguments, endpoint=endpoint, region=region, path_style=path_style, aws_access_key_id=aws_access_key_id,
                 aws_secret_access_key=aws_secret_access_key, aws_session_token=aws_session_token)
    return run(arguments, KeySetResult.from_json, secrets=secrets,
               extra_args=extra_args, env=env, log=log, process_timeout=process_timeout)


def _floors(floors: Optional[Mapping[str, int]]) -> Optional[list]:
    """``{"stable": 41, "beta": 57}`` as ``--sequence-floor CHANNEL=N`` values."""
    if floors is None:
        return None
    return [f"{channel}={floor}" for channel, floor in floors.items()]
