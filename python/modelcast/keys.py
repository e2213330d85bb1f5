"""``keygen`` and ``sign_model``: signing keys and OpenSSF model signatures, as functions.

Passphrases go to the binary's environment only (``$MODELCAST_SIGNING_PASSPHRASE``). The
binary runs without a terminal, so it never prompts: an encrypted key needs
``passphrase=``, and ``keygen`` needs one or ``unencrypted=True``.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

from modelcast._options import signing
from modelcast._run import Arguments, LogFunction, PathLike, run, to_stderr
from modelcast.results import KeyPair, ModelSignature


def keygen(
    *,
    public_key: Optional[PathLike] = None,
    secret_key: Optional[PathLike] = None,
    model_signing: bool = False,
    private_key: Optional[PathLike] = None,
    passphrase: Optional[str] = None,
    unencrypted: bool = False,
    force: bool = False,
    extra_args: Sequence[str] = (),
    env: Optional[Mapping[str, str]] = None,
    log: Optional[LogFunction] = to_stderr,
    process_timeout: Optional[float] = None,
) -> KeyPair:
    """Create a signing key pair: Ed25519 in minisign's formats (``public_key``,
    ``secret_key``; default ``modelcast.pub`` and ``modelcast.key``), or with
    ``model_signing=True`` an ECDSA P-256 PEM pair for OpenSSF model signatures
    (``public_key``, ``private_key``; default ``model-signing.pub`` and ``model-signing.pem``).

    The secret key is encrypted with ``passphrase`` unless ``unencrypted=True`` (a key kept
    only in a CI secret store); one of the two is required. Existing files are refused
    (:class:`~modelcast.ModelcastError`, ``refused``) unless ``force=True``. Returns the
    :class:`~modelcast.results.KeyPair`: its paths, and for minisign the key ID and the
    base64 public key an app pins.
    """
    arguments = Arguments("keygen")
    arguments.option("--public-key", public_key)
    arguments.option("--secret-key", secret_key)
    arguments.flag("--model-signing", model_signing)
    arguments.option("--private-key", private_key)
    arguments.flag("--unencrypted", unencrypted)
    arguments.flag("--force", force)
    return run(arguments, KeyPair.from_json, secrets=signing(None, passphrase),
               extra_args=extra_args, env=env, log=log, process_timeout=process_timeout)


def sign_model(
    model: PathLike,
    *,
    key: PathLike,
    signature: PathLike,
    passphrase: Optional[str] = None,
    force: bool = False,
    extra_args: Sequence[str] = (),
    env: Optional[Mapping[str, str]] = None,
    log: Optional[LogFunction] = to_stderr,
    process_timeout: Optional[float] = None,
) -> ModelSignature:
    """Sign a model file or directory with an OpenSSF model signature: the Sigstore bundle
    ``model_signing sign key`` writes, at ``signature``, with the P-256 private key file
    ``key`` (``passphrase`` when it is encrypted). ``publish(..., model_signing_key=…)``
    signs in the same run instead. An existing signature file is replaced only with
    ``force=True``. Returns the :class:`~modelcast.results.ModelSignature`.
    """
    arguments = Arguments("sign-model")
    arguments.positional(model)
    arguments.option("--key", key)
    arguments.option("--signature", signature)
    arguments.flag("--force", force)
    return run(arguments, ModelSignature.from_json, secrets=signing(None, passphrase),
               extra_args=extra_args, env=env, log=log, process_timeout=process_timeout)
