"""``resign``, ``prune`` and ``report``: keeping a published target valid, small and seen,
as functions.

Options, secrets and errors as in :mod:`modelcast.commands`.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence, Union

from modelcast._options import run_go_live, published_target, s3
from modelcast._run import Arguments, LogFunction, PathLike, run, to_stderr
from modelcast.results import PruneResult, PublishResult, ReleaseReport


def resign(
    target: Optional[PathLike] = None,
    *,
    expires_in: Optional[str] = None,
    sign: Optional[PathLike] = None,
    signing_key: Optional[str] = None,
    signing_passphrase: Optional[str] = None,
    inline_signature: bool = False,
    unsigned: bool = False,
    rotate_key: bool = False,
    channel: Optional[str] = None,
    manifest_key: Optional[str] = None,
    templates: Optional[PathLike] = None,
    verify_url: Optional[str] = None,
    dry_run: bool = False,
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
    """Re-sign the live manifest with a new expiry and the next sequence; no artifact changes.

    Run it on a schedule, well before ``expires_at``, so a signed, expiring manifest never
    lapses. ``expires_in`` (``"30d"``): the new validity period (default: the live
    manifest's). The key: ``sign`` (a file) or ``signing_key`` (its text), with
    ``signing_passphrase``, as in :func:`modelcast.publish`. Returns the new manifest's
    :class:`~modelcast.results.PublishResult`.
    """
    arguments = Arguments("resign")
    published_target(arguments, target, channel=channel, manifest_key=manifest_key, templates=templates)
    return run_go_live(arguments, locals())


def prune(
    target: Optional[PathLike] = None,
    *,
    keep: int,
    abort_uploads_older_than: Optional[str] = None,
    dry_run: bool = False,
    channel: Optional[str] = None,
    manifest_key: Optional[str] = None,
    templates: Optional[PathLike] = None,
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
) -> PruneResult:
    """Delete superseded releases' objects and history records, never what the live manifest
    needs: ``keep`` releases that went live stay (the live one counts), with the live one's
    rollback target and any publish under way; objects another channel names always stay.

    ``abort_uploads_older_than`` (``"1d"``, S3 only): also abort multipart uploads started at
    least that long ago. ``dry_run``: list what would go, delete nothing. Returns the
    :class:`~modelcast.results.PruneResult`.
    """
    arguments = Arguments("prune")
    published_target(arguments, target, channel=channel, manifest_key=manifest_key, templates=templates)
    arguments.option("--keep", keep)
    arguments.option("--abort-uploads-older-than", abort_uploads_older_than)
    arguments.flag("--dry-run", dry_run)
    secrets = s3(arguments, endpoint=endpoint, region=region, path_style=path_style, aws_access_key_id=aws_access_key_id,
                 aws_secret_access_key=aws_secret_access_key, aws_session_token=aws_session_token)
    return run(arguments, PruneResult.from_json, secrets=secrets,
               extra_args=extra_args, env=env, log=log, process_timeout=process_timeout)


def report(
    source: PathLike,
    *,
    at: Optional[str] = None,
    channel: Optional[str] = None,
    verify: bool = False,
    public_key: Union[None, str, Sequence[str]] = None,
    allow_http: bool = False,
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
) -> ReleaseReport:
    """What the release page shows, as data: each channel's live release, rollout curve,
    signature and history (``modelcast report --json``).

    ``source``: a published directory, ``s3://bucket/prefix`` or a manifest URL; ``at``: the
    moment described (an RFC 3339 time or ``"+7d"``; default now); ``channel``: only that
    one. With ``verify=True`` each channel is also verified (every object re-read;
    ``public_key``: trusted key(s)), and the report is returned even when a check failed:
    ``ReleaseReport.passed`` and each channel's ``verify`` say how it went. The HTML page is
    the CLI's: ``modelcast report SOURCE -o page.html``.
    """
    arguments = Arguments("report")
    arguments.positional(source)
    arguments.option("--at", at)
    arguments.option("--channel", channel)
    arguments.flag("--verify", verify)
    arguments.repeated("--public-key", public_key)
    arguments.flag("--allow-http", allow_http)
    arguments.option("--manifest-key", manifest_key)
    secrets = s3(arguments, endpoint=endpoint, region=region, path_style=path_style, aws_access_key_id=aws_access_key_id,
                 aws_secret_access_key=aws_secret_access_key, aws_session_token=aws_session_token)
    # With --verify the status is verify's (1: a check failed, 3: a host not reached), and
    # the page's data is still printed.
    return run(arguments, ReleaseReport.from_json, secrets=secrets, report_statuses=(1, 3) if verify else (),
               extra_args=extra_args, env=env, log=log, process_timeout=process_timeout)
