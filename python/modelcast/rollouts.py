"""``promote``, ``rollout`` and ``rollout_simulate``: channels and staged rollouts
(docs/releases.md), as functions.

Options, secrets and errors as in :mod:`modelcast.commands`: keyword arguments mirror the
CLI's options, keys, passphrases and credentials go to the binary's environment only, and
a failure raises :class:`modelcast.ModelcastError`.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence, Union, overload

from modelcast._options import run_go_live, percent_text, published_target, s3
from modelcast._run import Arguments, LogFunction, PathLike, run, to_stderr
from modelcast.results import DeviceSimulation, PublishResult, RolloutSimulation

#: A share of devices: ``"10%"``, ``"0.5%"``, or a number of percent (``10``, ``0.5``).
Percent = Union[str, int, float]


def promote(
    target: Optional[PathLike] = None,
    *,
    from_channel: str,
    to_channel: Optional[str] = None,
    model: Optional[str] = None,
    rollout: Optional[Percent] = None,
    rollout_schedule: Optional[str] = None,
    manifest_key: Optional[str] = None,
    templates: Optional[PathLike] = None,
    adopt_live: bool = False,
    verify_url: Optional[str] = None,
    dry_run: bool = False,
    trust_stored: bool = False,
    sign: Optional[PathLike] = None,
    signing_key: Optional[str] = None,
    signing_passphrase: Optional[str] = None,
    expires_in: Optional[str] = None,
    inline_signature: bool = False,
    unsigned: bool = False,
    rotate_key: bool = False,
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
    """Make channel ``to_channel`` (``--to``, default ``stable``) serve the live release of
    ``from_channel`` (``--from``; ``from`` is a Python keyword): the same keys and bytes,
    every object proven in the store first, nothing uploaded. The destination's live release
    becomes the fallback.

    ``model``: promote only this model; ``rollout`` / ``rollout_schedule``: stage it
    (``"10%"``, ``"1%,10%@24h,100%@7d"``), then move it on with :func:`rollout`.
    ``target``: a published directory or ``s3://bucket/prefix`` (default
    ``$MODELCAST_TARGET``). Signing and S3 secrets as in :func:`modelcast.publish`.
    Returns the new manifest's :class:`~modelcast.results.PublishResult`; a source channel in
    the middle of a rollout, or a version below the destination's, raises
    :class:`~modelcast.ModelcastError` (``refused``).
    """
    arguments = Arguments("promote")
    if target is not None:
        arguments.positional(target)
    arguments.option("--from", from_channel)
    arguments.option("--to", to_channel)
    arguments.option("--model", model)
    arguments.option("--rollout", percent_text(rollout))
    arguments.option("--rollout-schedule", rollout_schedule)
    arguments.option("--manifest-key", manifest_key)
    arguments.option("--templates", templates)
    arguments.flag("--adopt-live", adopt_live)
    return run_go_live(arguments, locals())


def rollout(
    target: Optional[PathLike] = None,
    *,
    percent: Optional[Percent] = None,
    halt: bool = False,
    complete: bool = False,
    channel: Optional[str] = None,
    manifest_key: Optional[str] = None,
    templates: Optional[PathLike] = None,
    verify_url: Optional[str] = None,
    dry_run: bool = False,
    trust_stored: bool = False,
    sign: Optional[PathLike] = None,
    signing_key: Optional[str] = None,
    signing_passphrase: Optional[str] = None,
    expires_in: Optional[str] = None,
    inline_signature: bool = False,
    unsigned: bool = False,
    rotate_key: bool = False,
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
    """Change the staged rollout in progress (``modelcast rollout set``): exactly one of
    ``percent`` (the candidate's new share, ``50`` or ``"0.5%"``; it replaces a schedule),
    ``halt=True`` (0 %: every device on the fallback) or ``complete=True`` (the candidate
    becomes the plain release).

    Each change is a new sequence, signed when the live manifest is (give ``sign`` or
    ``signing_key``). No rollout in progress raises :class:`~modelcast.ModelcastError`
    (``refused``); none or two of the three, ``usage``. Returns the new manifest's
    :class:`~modelcast.results.PublishResult`.
    """
    arguments = Arguments("rollout", "set")
    published_target(arguments, target, channel=channel, manifest_key=manifest_key, templates=templates)
    arguments.option("--percent", percent_text(percent))
    arguments.flag("--halt", halt)
    arguments.flag("--complete", complete)
    return run_go_live(arguments, locals())


@overload
def rollout_simulate(
    source: PathLike,
    *,
    device: None = None,
    device_id: None = None,
    devices: Optional[int] = None,
    at: Optional[str] = None,
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
) -> RolloutSimulation: ...


@overload
def rollout_simulate(
    source: PathLike,
    *,
    device: str,
    device_id: Optional[str] = None,
    devices: Optional[int] = None,
    at: Optional[str] = None,
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
) -> DeviceSimulation: ...


def rollout_simulate(
    source: PathLike,
    *,
    device: Optional[str] = None,
    device_id: Optional[str] = None,
    devices: Optional[int] = None,
    at: Optional[str] = None,
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
) -> Union[RolloutSimulation, DeviceSimulation]:
    """Evaluate a manifest's rollout rule, the one the client libraries run, writing nothing.

    ``source``: a published directory or ``s3://bucket/prefix`` (with ``channel``), a
    manifest file or a manifest URL. Without ``device``: the share of ``devices`` synthetic
    ids (``device-0``, ``device-1``…; default 100000) on the candidate and the fallback at
    ``at`` (an RFC 3339 time or ``"+72h"``; default now), as a
    :class:`~modelcast.results.RolloutSimulation`; a manifest with no staged rollout raises
    :class:`~modelcast.ModelcastError` (``refused``). With ``device`` (``"memory=8GiB,platform=ios,os=17.4"``):
    which variant and version of each model that device takes, as a
    :class:`~modelcast.results.DeviceSimulation`; ``device_id`` says which side of a rollout it is on.
    """
    arguments = Arguments("rollout", "simulate")
    arguments.positional(source)
    arguments.option("--devices", devices)
    arguments.option("--at", at)
    arguments.option("--channel", channel)
    arguments.option("--manifest-key", manifest_key)
    arguments.option("--device", device)
    arguments.option("--device-id", device_id)
    secrets = s3(arguments, endpoint=endpoint, region=region, path_style=path_style, aws_access_key_id=aws_access_key_id,
                 aws_secret_access_key=aws_secret_access_key, aws_session_token=aws_session_token)
    parse = DeviceSimulation.from_json if device is not None else RolloutSimulation.from_json
    return run(arguments, parse, secrets=secrets,
               extra_args=extra_args, env=env, log=log, process_timeout=process_timeout)
