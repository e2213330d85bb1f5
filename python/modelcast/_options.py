"""Option groups several commands share, as the CLI declares them once (its S3, signing and
go-live options), and the secrets that go with them.

Secrets (keys, passphrases, credentials) are returned as environment variables for
:func:`modelcast._run.run`, which sets them in the binary's environment only: never on
its command line, where other users of the machine could read them, and never in an
exception's message.
"""

from __future__ import annotations

import inspect
import math
from decimal import Decimal
from typing import Any, Mapping, Optional, Union

from modelcast._run import Arguments, PathLike, run
from modelcast.results import PublishResult


#: Environment variables for the binary that hold secrets (``None``: not set by the call).
Secrets = dict[str, Optional[str]]


def s3(
    arguments: Arguments,
    *,
    endpoint: Optional[str],
    region: Optional[str],
    path_style: Optional[bool],
    aws_access_key_id: Optional[str],
    aws_secret_access_key: Optional[str],
    aws_session_token: Optional[str],
) -> Secrets:
    """``--endpoint``, ``--region`` and ``--path-style``/``--no-path-style`` (the CLI's
    S3ConnectionOptions); returns the S3 credentials, as the binary reads them from its
    environment."""
    arguments.option("--endpoint", endpoint)
    arguments.option("--region", region)
    arguments.tristate("--path-style", "--no-path-style", path_style)
    return {
        "AWS_ACCESS_KEY_ID": aws_access_key_id,
        "AWS_SECRET_ACCESS_KEY": aws_secret_access_key,
        "AWS_SESSION_TOKEN": aws_session_token,
    }


def signing(key: Optional[str], passphrase: Optional[str]) -> Secrets:
    """A signing key's text and its passphrase, as the CLI reads them from its environment."""
    return {"MODELCAST_SIGNING_KEY": key, "MODELCAST_SIGNING_PASSPHRASE": passphrase}


def go_live(
    arguments: Arguments,
    *,
    sign: Optional[PathLike],
    signing_key: Optional[str],
    signing_passphrase: Optional[str],
    expires_in: Optional[str],
    inline_signature: bool,
    unsigned: bool,
    rotate_key: bool,
    trust_stored: bool,
    verify_url: Optional[str],
    dry_run: bool,
) -> Secrets:
    """What publish, rollback, resign, promote and rollout share (the CLI's GoLiveOptions):
    how the new manifest is signed, proven and gated before it goes live. Returns the signing
    key and passphrase, as secrets."""
    arguments.option("--sign", sign)
    arguments.option("--expires-in", expires_in)
    arguments.flag("--inline-signature", inline_signature)
    arguments.flag("--unsigned", unsigned)
    arguments.flag("--rotate-key", rotate_key)
    arguments.flag("--trust-stored", trust_stored)
    arguments.option("--verify-url", verify_url)
    arguments.flag("--dry-run", dry_run)
    return signing(signing_key, signing_passphrase)


def _keywords(function: Any) -> tuple[str, ...]:
    """The keyword-only parameters of ``function``: the names it takes from a caller's options."""
    return tuple(name for name, parameter in inspect.signature(function).parameters.items()
                 if parameter.kind is inspect.Parameter.KEYWORD_ONLY)


def run_go_live(arguments: Arguments, options: Mapping[str, Any], secrets: Optional[Secrets] = None) -> PublishResult:
    """The end every go-live command shares (publish, rollback, promote, rollout set,
    resign): its go-live and S3 options, then the run, whose answer is a
    :class:`~modelcast.results.PublishResult`. ``options`` is the command's keyword
    arguments (its ``locals()``); the names taken are the parameters of :func:`go_live`,
    :func:`s3` and the run's own, so none is listed twice. ``secrets``: the command's own."""
    collected = go_live(arguments, **{name: options[name] for name in _keywords(go_live)})
    collected.update(secrets or {})
    collected.update(s3(arguments, **{name: options[name] for name in _keywords(s3)}))
    return run(arguments, PublishResult.from_json, secrets=collected,
               **{name: options[name] for name in ("extra_args", "env", "log", "process_timeout")})


def published_target(
    arguments: Arguments,
    target: Optional[PathLike],
    *,
    channel: Optional[str],
    manifest_key: Optional[str],
    templates: Optional[PathLike] = None,
) -> None:
    """TARGET (default ``$MODELCAST_TARGET`` when ``None``), ``--channel``, ``--manifest-key``
    and ``--templates``: the CLI's PublishedTargetOptions."""
    if target is not None:
        arguments.positional(target)
    arguments.option("--channel", channel)
    arguments.option("--manifest-key", manifest_key)
    arguments.option("--templates", templates)


def percent_text(value: Union[None, str, int, float]) -> Optional[str]:
    """A share of devices as the CLI reads it: ``"10%"`` and ``"0.5%"`` as written, a number
    as that many percent (``10`` is ``"10"``, ``0.5`` is ``"0.5"``, never ``"5e-01"``).

    A float is written exactly as Python holds it, never rounded: rounded, ``1e-07`` would be
    ``"0"``, a halt. The CLI refuses what it cannot take (more than two decimals, out of
    0–100, ``nan``), naming the value."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"a percentage is a number or text such as '10%', not {value!r}")
    if isinstance(value, int) or not math.isfinite(value):
        return str(value)
    # repr is the shortest text that reads back as the same float; Decimal writes it without an exponent.
    text = format(Decimal(repr(value)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text
