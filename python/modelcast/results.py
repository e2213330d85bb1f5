"""What the API returns: the CLI's ``--json`` output (schema/cli/*.schema.json) as frozen
dataclasses. Each result keeps the whole parsed object in ``raw``, so a field added to the
CLI's output later is readable before this module names it."""

from __future__ import annotations

import functools
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Iterable, Literal, Mapping, Optional, TypeVar, get_args, get_type_hints

#: ``pass``, ``warn`` or ``fail``: a verify check's outcome.
# "skip": a check verify could not make from where it read (never a pass).
CheckStatus = Literal["pass", "warn", "fail", "skip"]

R = TypeVar("R", bound="_Result")


class _Result:
    """What every result shares: ``from_json``, which reads each field from the JSON key of
    its name. A result with nested results overrides it to say how they are read."""

    @classmethod
    def from_json(cls: type[R], data: Mapping[str, Any]) -> R:
        """The result the CLI's JSON object ``data`` describes."""
        return _read(cls, data)


def _read(cls: type[R], data: Mapping[str, Any], **nested: Any) -> R:
    """``cls`` from ``data``: each field from the key of its name (an absent key is ``None``
    for an ``Optional`` field, the default for a field with one, and a ``KeyError``
    otherwise), ``raw`` the whole object, and ``nested`` as given."""
    values = dict(nested)
    for each in fields(cls):
        if each.name in values:
            continue
        if each.name == "raw":
            values["raw"] = data
        elif each.name in data:
            values[each.name] = data[each.name]
        elif each.default is not MISSING:
            values[each.name] = each.default
        elif _optional(cls)[each.name]:
            values[each.name] = None
        else:
            raise KeyError(f"{cls.__name__}: the CLI's JSON has no {each.name!r}")
    return cls(**values)


@functools.lru_cache(maxsize=None)
def _optional(cls: type) -> dict[str, bool]:
    """Whether each field of ``cls`` may be ``None``."""
    return {name: type(None) in get_args(hint) for name, hint in get_type_hints(cls).items()}


def _each(cls: type[R], items: Iterable[Mapping[str, Any]]) -> list[R]:
    """A JSON array of ``cls`` objects, read."""
    return [cls.from_json(item) for item in items]


def _maybe(cls: type[R], data: Optional[Mapping[str, Any]]) -> Optional[R]:
    """A JSON object of ``cls`` that may be absent or ``null``, read."""
    return cls.from_json(data) if data is not None else None


@dataclass(frozen=True)
class StoredObject(_Result):
    """One object a publish or rollback wrote or found (``objects`` in publish-report)."""

    key: str
    role: str
    """``artifact``, ``history``, ``signature`` or ``manifest``."""
    outcome: str
    """What happened to it: ``created``, ``replaced``, ``unchanged``, ``exists``…"""
    size: int
    sha256: str


@dataclass(frozen=True)
class ModelSummary(_Result):
    """One model of the release: its version, files and bytes, and how many files this run
    stored or found already stored."""

    name: str
    version: str
    files: int
    size: int
    stored: int
    reused: int


@dataclass(frozen=True)
class PublishResult(_Result):
    """What ``publish`` or ``rollback`` did (or, with ``dry_run``, would do)."""

    target: str
    profile: str
    sequence: int
    previous_sequence: Optional[int]
    unchanged: bool
    """True when the target already served this release and nothing was written."""
    dry_run: bool
    manifest_key: str
    manifest_url: str
    manifest_sha256: Optional[str]
    manifest: Mapping[str, Any] = field(repr=False)
    """The manifest as published, parsed."""
    objects: list[StoredObject]
    models: list[ModelSummary]
    warnings: list[str]
    raw: Mapping[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "PublishResult":
        return _read(cls, data, objects=_each(StoredObject, data["objects"]), models=_each(ModelSummary, data["models"]))


@dataclass(frozen=True)
class Check(_Result):
    """One check verify ran."""

    check: str
    """What was checked, e.g. ``artifact.sha256``."""
    status: CheckStatus
    subject: str
    detail: str


@dataclass(frozen=True)
class VerifyResult(_Result):
    """Every check ``verify`` ran and its outcome."""

    source: str
    passed: bool
    failures: int
    warnings: int
    strict: bool
    sequence: Optional[int]
    profile: Optional[str]
    served_as: Optional[str]
    checks: list[Check]
    raw: Mapping[str, Any] = field(repr=False)
    skipped: int = 0
    """Checks not made (status ``skip``), e.g. a CDN's Range answers through a bucket's API."""

    @property
    def failed_checks(self) -> list[Check]:
        """The checks whose status is ``fail``."""
        return [c for c in self.checks if c.status == "fail"]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "VerifyResult":
        return _read(cls, data, checks=_each(Check, data["checks"]))


@dataclass(frozen=True)
class Release(_Result):
    """One release of a channel, from its history record."""

    sequence: int
    state: str
    """``live``, ``went live``, ``never live`` or ``pending``."""
    action: str
    """``publish``, ``rollout``, ``rollout-halt``, ``rollout-complete``, ``rollback``, ``promote`` or ``republish``."""
    detail: str
    published_at: str
    """ISO 8601 (UTC), as the manifest has it."""
    versions: Mapping[str, str]
    """Model name → version."""
    expires_at: Optional[str]
    rollback_sequence: Optional[int]
    raw: Mapping[str, Any] = field(repr=False)


@dataclass(frozen=True)
class History(_Result):
    """One channel of a target and the releases it published, newest first."""

    target: str
    channel: str
    manifest_key: str
    releases: list[Release]
    raw: Mapping[str, Any] = field(repr=False)

    @property
    def live(self) -> Optional[Release]:
        """The release whose state is ``live``, if any."""
        return next((r for r in self.releases if r.state == "live"), None)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "History":
        return _read(cls, data, releases=_each(Release, data["releases"]))


# -- prune ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PruneResult(_Result):
    """What ``prune`` deleted (or, with ``dry_run``, would delete): prune-report.schema.json."""

    target: str
    dry_run: bool
    kept_sequences: list[int]
    """The releases kept (the live one, its rollback target, the newest that went live), in order."""
    deleted: list[str]
    """The keys deleted."""
    deleted_bytes: int
    """Bytes of the artifacts among them."""
    aborted_uploads: list[str]
    """S3 multipart uploads aborted (``abort_uploads_older_than``)."""
    raw: Mapping[str, Any] = field(repr=False)


# -- rollout simulate ----------------------------------------------------------------------


@dataclass(frozen=True)
class SimulatedSide(_Result):
    """The devices on one side of a staged rollout (the candidate or the fallback)."""

    sequence: Optional[int]
    versions: Mapping[str, str]
    """Model (``NAME`` or ``NAME@VARIANT``) → version."""
    devices: int
    percent: float
    """Share of the synthetic devices, 0–100."""


@dataclass(frozen=True)
class RolloutSimulation(_Result):
    """``rollout_simulate`` without ``device``: the rollout rule over synthetic device ids at
    one moment (rollout-simulate.schema.json)."""

    sequence: int
    at: str
    """The moment evaluated, ISO 8601 (UTC)."""
    percent: float
    """The candidate's share the rule gives at that moment."""
    schedule_step: Optional[int]
    devices: int
    candidate: SimulatedSide
    fallback: SimulatedSide
    raw: Mapping[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "RolloutSimulation":
        return _read(cls, data, candidate=SimulatedSide.from_json(data["candidate"]),
                     fallback=SimulatedSide.from_json(data["fallback"]))


@dataclass(frozen=True)
class SkippedVariant(_Result):
    """A variant a device passed over, and why (each requirement it does not meet)."""

    variant: str
    reasons: list[str]


@dataclass(frozen=True)
class ModelPick(_Result):
    """What one device takes of one model: the variant and version, or nothing (``None``:
    it meets no variant and keeps what it has)."""

    model: str
    variant: Optional[str]
    version: Optional[str]
    skipped: list[SkippedVariant]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "ModelPick":
        return _read(cls, data, skipped=_each(SkippedVariant, data["skipped"]))


@dataclass(frozen=True)
class DeviceSide(_Result):
    """One side of the release (candidate or fallback) as one device sees it."""

    sequence: Optional[int]
    models: list[ModelPick]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "DeviceSide":
        return _read(cls, data, models=_each(ModelPick, data["models"]))


@dataclass(frozen=True)
class DeviceSimulation(_Result):
    """``rollout_simulate(..., device=...)``: which variant and version of each model one
    described device takes (rollout-simulate-device.schema.json)."""

    sequence: int
    takes: Optional[str]
    """``candidate`` (also without a rollout) or ``fallback``; ``None`` during a rollout when
    no ``device_id`` was given."""
    candidate: DeviceSide
    fallback: Optional[DeviceSide]
    """During a staged rollout: what the device takes on the fallback."""
    raw: Mapping[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "DeviceSimulation":
        return _read(cls, data, candidate=DeviceSide.from_json(data["candidate"]),
                     fallback=_maybe(DeviceSide, data.get("fallback")))


# -- report --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReportFile(_Result):
    """One file of a live model: where it goes in the model's directory, and its object."""

    name: str
    key: str
    size: int
    sha256: str


@dataclass(frozen=True)
class ReportModel(_Result):
    """A model (or one variant of it) of the live release."""

    name: str
    variant: Optional[str]
    requires: Optional[str]
    """What a device needs to take the variant, as ``KEY=VALUE`` pairs."""
    version: str
    size: int
    model_signed: bool
    meta: Mapping[str, str]
    files: list[ReportFile]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "ReportModel":
        return _read(cls, data, files=_each(ReportFile, data["files"]))


@dataclass(frozen=True)
class LiveRelease(_Result):
    """The release a channel's devices get at the report's moment."""

    sequence: int
    published_at: str
    expires_at: Optional[str]
    profile: str
    min_app_version: Optional[str]
    models: list[ReportModel]
    total_size: int

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "LiveRelease":
        return _read(cls, data, models=_each(ReportModel, data["models"]))


@dataclass(frozen=True)
class RolloutPoint(_Result):
    """A share of devices from a moment on."""

    at: str
    percent: float


@dataclass(frozen=True)
class RolloutState(_Result):
    """The staged rollout a channel's live release is in, or just ended."""

    state: str
    """``in progress``, ``halted`` or ``complete``."""
    percent_now: float
    candidate_sequence: int
    fallback_sequence: Optional[int]
    candidate_versions: Mapping[str, str]
    fallback_versions: Mapping[str, str]
    started_at: str
    curve: list[RolloutPoint]
    """The share as the releases set it, oldest first (points after the report's moment are
    a schedule's steps to come)."""
    schedule: list[RolloutPoint]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "RolloutState":
        return _read(cls, data, curve=_each(RolloutPoint, data["curve"]),
                     schedule=_each(RolloutPoint, data.get("schedule", [])))


@dataclass(frozen=True)
class SignatureState(_Result):
    """A channel's manifest signature: ``signed``, ``unsigned`` or ``unreadable``."""

    state: str
    key_id: Optional[str]
    signed_sequence: Optional[int]
    expires_at: Optional[str]
    days_left: Optional[float]
    """Days from the report's moment to ``expires_at`` (negative once expired)."""
    checked: Optional[CheckStatus]
    """With ``verify=True``: the verify run's signature check."""


@dataclass(frozen=True)
class ReportEntry(_Result):
    """One release of a channel's history, as the report shows it."""

    sequence: int
    published_at: str
    state: str
    """``live``, ``went live``, ``never live`` or ``pending``."""
    action: Optional[str]
    detail: Optional[str]
    versions: Mapping[str, str]
    changes: list[str]
    """Versions changed against the record before: ``m 1.0.0 → 2.0.0``, ``m 1.0.0 added``…"""
    rollout_percent: Optional[float]


@dataclass(frozen=True)
class ChannelVerification(_Result):
    """The verify run of one channel (``report(..., verify=True)``)."""

    passed: bool
    failures: int
    warnings: int
    checks: list[Check]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "ChannelVerification":
        return _read(cls, data, checks=_each(Check, data["checks"]))


@dataclass(frozen=True)
class ChannelReport(_Result):
    """One channel of the report: its live release, rollout, signature and history."""

    name: str
    manifest_key: str
    live: Optional[LiveRelease]
    rollout: Optional[RolloutState]
    signature: SignatureState
    history: list[ReportEntry]
    """Newest first."""
    verify: Optional[ChannelVerification]
    notes: list[str]
    """What could not be read, or reads oddly."""
    raw: Mapping[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "ChannelReport":
        return _read(
            cls,
            data,
            live=_maybe(LiveRelease, data.get("live")),
            rollout=_maybe(RolloutState, data.get("rollout")),
            signature=SignatureState.from_json(data["signature"]),
            history=_each(ReportEntry, data["history"]),
            verify=_maybe(ChannelVerification, data.get("verify")),
        )


@dataclass(frozen=True)
class ReleaseReport(_Result):
    """What the release page shows (report.schema.json): each channel of a target, or the
    one a manifest URL serves, at one moment."""

    format: str
    target: str
    at: str
    channels: list[ChannelReport]
    raw: Mapping[str, Any] = field(repr=False)

    @property
    def passed(self) -> Optional[bool]:
        """With ``verify=True``: whether every channel's checks passed; otherwise ``None``."""
        runs = [c.verify for c in self.channels if c.verify is not None]
        return all(r.passed for r in runs) if runs else None

    def channel(self, name: str) -> Optional[ChannelReport]:
        """The channel called ``name`` (``stable`` is the default one), if the report has it."""
        return next((c for c in self.channels if c.name == name), None)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "ReleaseReport":
        return _read(cls, data, channels=_each(ChannelReport, data["channels"]))


# -- inspect and pack ----------------------------------------------------------------------


@dataclass(frozen=True)
class ArtifactSummary(_Result):
    """The artifact ``publish`` would store for a model: a file as it is, or a zip."""

    name: str
    format: str
    """``file`` or ``zip``."""
    content_type: str
    size: Optional[int]
    """``None`` with ``no_hash``."""
    sha256: Optional[str]


@dataclass(frozen=True)
class InspectResult(_Result):
    """What ``inspect`` found (inspect.schema.json): the model's kind and checked details, its
    interface, and the artifact that would be published."""

    path: str
    kind: str
    """``gguf``, ``mlpackage``, ``mlmodelc``, ``mlmodel``, ``onnx``, ``tflite``, ``file`` or ``directory``."""
    files: int
    model_size: int
    install_size: int
    """What ``publish`` writes as the model's ``storage.install_size`` (modelcast profile) unless
    a larger size is stated: the bytes its files take installed."""
    declared_licence: Optional[Mapping[str, Any]]
    """The licence the model file declares (``text``, and ``name``/``url`` when the file has
    them), escaped and cut to 256 characters; only information, never published."""
    declared_licence_error: Optional[str]
    details: Mapping[str, Any]
    """Format details: ``gguf_version``, ``tensors``, ``architecture``… (numbers are ints)."""
    artifact: ArtifactSummary
    interface: Optional[Mapping[str, Any]]
    """The interface an app depends on (docs/interface-contract.md), for Core ML, GGUF and ONNX."""
    interface_error: Optional[str]
    model_signature: Optional[Mapping[str, Any]]
    """With ``model_signature=``: the verified OpenSSF model signature."""
    raw: Mapping[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "InspectResult":
        return _read(cls, data, artifact=ArtifactSummary.from_json(data["artifact"]))


@dataclass(frozen=True)
class PackedArtifact(_Result):
    """The artifact ``pack`` wrote: a file as it is, or a deterministic zip (pack.schema.json)."""

    path: str
    name: str
    kind: str
    format: str
    """``file`` or ``zip``."""
    content_type: str
    files: int
    size: int
    sha256: str
    compression: Optional[str]
    """Zip entry compression (``store`` or ``deflate``); ``None`` for a file."""
    raw: Mapping[str, Any] = field(repr=False)


@dataclass(frozen=True)
class TreeFile(_Result):
    """One file of a directory published as a tree (``pack(..., zip=False)``)."""

    path: str
    """The path inside the directory, ``/``-separated."""
    size: int
    sha256: str
    content_type: str


@dataclass(frozen=True)
class PackedTree(_Result):
    """``pack(directory, zip=False)``: the tree's listing, every file hashed where it is
    (pack.schema.json, ``format`` ``tree``)."""

    path: str
    """Where the listing (``NAME.files.json``) was written."""
    name: str
    kind: str
    format: str
    size: int
    """The files' sizes added up."""
    files: list[TreeFile]
    raw: Mapping[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "PackedTree":
        return _read(cls, data, files=_each(TreeFile, data["files"]))


# -- keys ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class KeyPair(_Result):
    """The key pair ``keygen`` wrote (keygen.schema.json). The secret key stays in its file."""

    kind: str
    """``minisign`` (Ed25519, manifest signatures) or ``model-signing`` (ECDSA P-256, OpenSSF
    model signatures)."""
    public_key_path: str
    secret_key_path: str
    """The minisign secret key, or the model-signing private key (PEM), mode 0600."""
    encrypted: bool
    """Whether the secret key is encrypted with the passphrase."""
    key_id: Optional[str]
    """minisign: the key ID, 16 hexadecimal digits."""
    public_key: Optional[str]
    """minisign: the public key in base64, what an app pins and ``verify(public_key=…)`` takes."""
    hint: Optional[str]
    """model-signing: the public key's hint."""
    raw: Mapping[str, Any] = field(repr=False)


@dataclass(frozen=True)
class ModelSignature(_Result):
    """The OpenSSF model signature ``sign_model`` wrote (sign-model.schema.json)."""

    model: str
    signature: str
    """The Sigstore bundle's path."""
    model_name: str
    files: int
    subject_sha256: str
    """The signed statement's subject digest, over every file of the model."""
    key_hint: str
    raw: Mapping[str, Any] = field(repr=False)


@dataclass(frozen=True)
class KeySetThreshold(_Result):
    """One threshold a key set version must meet: how many of key set ``key_set``'s root
    keys must sign it, and which did."""

    key_set: int
    threshold: int
    signed_by: list[str]
    """Key ids of that set's root keys whose signatures verify and bind the document."""
    raw: Mapping[str, Any] = field(repr=False)


@dataclass(frozen=True)
class KeySetResult(_Result):
    """The key set version ``keys_create``, ``keys_rotate``, ``keys_sign`` or ``keys_push``
    wrote, signed or uploaded (keys.schema.json). Key ids are as minisign prints them."""

    target: str
    """Where it is: the target or ``out`` directory written, the file signed, the target pushed to."""
    path: str
    """Its key on a target: ``keys/N.json``."""
    version: int
    expires_at: str
    root_threshold: int
    root_keys: list[str]
    manifest_threshold: int
    manifest_keys: list[str]
    sequence_floors: dict[str, int]
    """Per channel name, the sequence floor clients take when this key set removes a
    manifest key (empty when it names none)."""
    signed_by: list[str]
    """Every root key with a signature over the document (empty when nobody signed yet)."""
    pending: bool
    """True while a threshold is not met: only ``keys_sign`` by more root keys, then
    ``keys_push``, puts it on a target."""
    thresholds: list[KeySetThreshold]
    """The previous version's root threshold (none for version 1), then its own."""
    added: Optional[list[str]]
    """``keys_sign``: the keys whose signatures this call added."""
    already_signed: Optional[list[str]]
    """``keys_sign``: the keys given that had signed already (nothing added for them)."""
    raw: Mapping[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "KeySetResult":
        return _read(cls, data, thresholds=_each(KeySetThreshold, data["thresholds"]))
