"""What the API returns: the CLI's ``--json`` output (schema/cli/*.schema.json) as frozen
dataclasses. Each result keeps the whole parsed object in ``raw``, so a field added to the
CLI's output later is readable before this module names it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Optional

#: ``pass``, ``warn`` or ``fail``: a verify check's outcome.
# "skip": a check verify could not make from where it read (never a pass).
CheckStatus = Literal["pass", "warn", "fail", "skip"]


@dataclass(frozen=True)
class StoredObject:
    """One object a publish or rollback wrote or found (``objects`` in publish-report)."""

    key: str
    role: str
    """``artifact``, ``history``, ``signature`` or ``manifest``."""
    outcome: str
    """What happened to it: ``created``, ``replaced``, ``unchanged``, ``exists``…"""
    size: int
    sha256: str


@dataclass(frozen=True)
class ModelSummary:
    """One model of the release: its version, files and bytes, and how many files this run
    stored or found already stored."""

    name: str
    version: str
    files: int
    size: int
    stored: int
    reused: int


@dataclass(frozen=True)
class PublishResult:
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
        return cls(
            target=data["target"],
            profile=data["profile"],
            sequence=data["sequence"],
            previous_sequence=data.get("previous_sequence"),
            unchanged=data["unchanged"],
            dry_run=data["dry_run"],
            manifest_key=data["manifest_key"],
            manifest_url=data["manifest_url"],
            manifest_sha256=data.get("manifest_sha256"),
            manifest=data["manifest"],
            objects=[StoredObject(o["key"], o["role"], o["outcome"], o["size"], o["sha256"]) for o in data["objects"]],
            models=[
                ModelSummary(m["name"], m["version"], m["files"], m["size"], m["stored"], m["reused"])
                for m in data["models"]
            ],
            warnings=list(data["warnings"]),
            raw=data,
        )


@dataclass(frozen=True)
class Check:
    """One check verify ran."""

    check: str
    """What was checked, e.g. ``artifact.sha256``."""
    status: CheckStatus
    subject: str
    detail: str


@dataclass(frozen=True)
class VerifyResult:
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
        return cls(
            source=data["source"],
            passed=data["passed"],
            failures=data["failures"],
            warnings=data["warnings"],
            strict=data["strict"],
            sequence=data.get("sequence"),
            profile=data.get("profile"),
            served_as=data.get("served_as"),
            checks=[Check(c["check"], c["status"], c["subject"], c["detail"]) for c in data["checks"]],
            raw=data,
            skipped=data.get("skipped", 0),
        )


@dataclass(frozen=True)
class Release:
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
class History:
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
        return cls(
            target=data["target"],
            channel=data["channel"],
            manifest_key=data["manifest_key"],
            releases=[
                Release(
                    sequence=r["sequence"],
                    state=r["state"],
                    action=r["action"],
                    detail=r["detail"],
                    published_at=r["published_at"],
                    versions=r["versions"],
                    expires_at=r.get("expires_at"),
                    rollback_sequence=r.get("rollback_sequence"),
                    raw=r,
                )
                for r in data["releases"]
            ],
            raw=data,
        )


# -- prune ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PruneResult:
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

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "PruneResult":
        return cls(
            target=data["target"],
            dry_run=data["dry_run"],
            kept_sequences=list(data["kept_sequences"]),
            deleted=list(data["deleted"]),
            deleted_bytes=data["deleted_bytes"],
            aborted_uploads=list(data["aborted_uploads"]),
            raw=data,
        )


# -- rollout simulate ----------------------------------------------------------------------


@dataclass(frozen=True)
class SimulatedSide:
    """The devices on one side of a staged rollout (the candidate or the fallback)."""

    sequence: Optional[int]
    versions: Mapping[str, str]
    """Model (``NAME`` or ``NAME@VARIANT``) → version."""
    devices: int
    percent: float
    """Share of the synthetic devices, 0–100."""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "SimulatedSide":
        return cls(data.get("sequence"), data["versions"], data["devices"], data["percent"])


@dataclass(frozen=True)
class RolloutSimulation:
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
        return cls(
            sequence=data["sequence"],
            at=data["at"],
            percent=data["percent"],
            schedule_step=data.get("schedule_step"),
            devices=data["devices"],
            candidate=SimulatedSide.from_json(data["candidate"]),
            fallback=SimulatedSide.from_json(data["fallback"]),
            raw=data,
        )


@dataclass(frozen=True)
class SkippedVariant:
    """A variant a device passed over, and why (each requirement it does not meet)."""

    variant: str
    reasons: list[str]


@dataclass(frozen=True)
class ModelPick:
    """What one device takes of one model: the variant and version, or nothing (``None``:
    it meets no variant and keeps what it has)."""

    model: str
    variant: Optional[str]
    version: Optional[str]
    skipped: list[SkippedVariant]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "ModelPick":
        return cls(
            model=data["model"],
            variant=data.get("variant"),
            version=data.get("version"),
            skipped=[SkippedVariant(s["variant"], list(s["reasons"])) for s in data["skipped"]],
        )


@dataclass(frozen=True)
class DeviceSide:
    """One side of the release (candidate or fallback) as one device sees it."""

    sequence: Optional[int]
    models: list[ModelPick]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "DeviceSide":
        return cls(data.get("sequence"), [ModelPick.from_json(m) for m in data["models"]])


@dataclass(frozen=True)
class DeviceSimulation:
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
        fallback = data.get("fallback")
        return cls(
            sequence=data["sequence"],
            takes=data.get("takes"),
            candidate=DeviceSide.from_json(data["candidate"]),
            fallback=DeviceSide.from_json(fallback) if fallback is not None else None,
            raw=data,
        )


# -- report --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReportFile:
    """One file of a live model: where it goes in the model's directory, and its object."""

    name: str
    key: str
    size: int
    sha256: str


@dataclass(frozen=True)
class ReportModel:
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
        return cls(
            name=data["name"],
            variant=data.get("variant"),
            requires=data.get("requires"),
            version=data["version"],
            size=data["size"],
            model_signed=data["model_signed"],
            meta=data["meta"],
            files=[ReportFile(f["name"], f["key"], f["size"], f["sha256"]) for f in data["files"]],
        )


@dataclass(frozen=True)
class LiveRelease:
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
        return cls(
            sequence=data["sequence"],
            published_at=data["published_at"],
            expires_at=data.get("expires_at"),
            profile=data["profile"],
            min_app_version=data.get("min_app_version"),
            models=[ReportModel.from_json(m) for m in data["models"]],
            total_size=data["total_size"],
        )


@dataclass(frozen=True)
class RolloutPoint:
    """A share of devices from a moment on."""

    at: str
    percent: float


@dataclass(frozen=True)
class RolloutState:
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
        return cls(
            state=data["state"],
            percent_now=data["percent_now"],
            candidate_sequence=data["candidate_sequence"],
            fallback_sequence=data.get("fallback_sequence"),
            candidate_versions=data["candidate_versions"],
            fallback_versions=data["fallback_versions"],
            started_at=data["started_at"],
            curve=[RolloutPoint(p["at"], p["percent"]) for p in data["curve"]],
            schedule=[RolloutPoint(p["at"], p["percent"]) for p in data.get("schedule", [])],
        )


@dataclass(frozen=True)
class SignatureState:
    """A channel's manifest signature: ``signed``, ``unsigned`` or ``unreadable``."""

    state: str
    key_id: Optional[str]
    signed_sequence: Optional[int]
    expires_at: Optional[str]
    days_left: Optional[float]
    """Days from the report's moment to ``expires_at`` (negative once expired)."""
    checked: Optional[CheckStatus]
    """With ``verify=True``: the verify run's signature check."""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "SignatureState":
        return cls(
            state=data["state"],
            key_id=data.get("key_id"),
            signed_sequence=data.get("signed_sequence"),
            expires_at=data.get("expires_at"),
            days_left=data.get("days_left"),
            checked=data.get("checked"),
        )


@dataclass(frozen=True)
class ReportEntry:
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

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "ReportEntry":
        return cls(
            sequence=data["sequence"],
            published_at=data["published_at"],
            state=data["state"],
            action=data.get("action"),
            detail=data.get("detail"),
            versions=data["versions"],
            changes=list(data["changes"]),
            rollout_percent=data.get("rollout_percent"),
        )


@dataclass(frozen=True)
class ChannelVerification:
    """The verify run of one channel (``report(..., verify=True)``)."""

    passed: bool
    failures: int
    warnings: int
    checks: list[Check]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "ChannelVerification":
        return cls(
            passed=data["passed"],
            failures=data["failures"],
            warnings=data["warnings"],
            checks=[Check(c["check"], c["status"], c["subject"], c["detail"]) for c in data["checks"]],
        )


@dataclass(frozen=True)
class ChannelReport:
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
        live, rollout, verify = data.get("live"), data.get("rollout"), data.get("verify")
        return cls(
            name=data["name"],
            manifest_key=data["manifest_key"],
            live=LiveRelease.from_json(live) if live is not None else None,
            rollout=RolloutState.from_json(rollout) if rollout is not None else None,
            signature=SignatureState.from_json(data["signature"]),
            history=[ReportEntry.from_json(e) for e in data["history"]],
            verify=ChannelVerification.from_json(verify) if verify is not None else None,
            notes=list(data["notes"]),
            raw=data,
        )


@dataclass(frozen=True)
class ReleaseReport:
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
        return cls(
            format=data["format"],
            target=data["target"],
            at=data["at"],
            channels=[ChannelReport.from_json(c) for c in data["channels"]],
            raw=data,
        )


# -- inspect and pack ----------------------------------------------------------------------


@dataclass(frozen=True)
class ArtifactSummary:
    """The artifact ``publish`` would store for a model: a file as it is, or a zip."""

    name: str
    format: str
    """``file`` or ``zip``."""
    content_type: str
    size: Optional[int]
    """``None`` with ``no_hash``."""
    sha256: Optional[str]


@dataclass(frozen=True)
class InspectResult:
    """What ``inspect`` found (inspect.schema.json): the model's kind and checked details, its
    interface, and the artifact that would be published."""

    path: str
    kind: str
    """``gguf``, ``mlpackage``, ``mlmodelc``, ``mlmodel``, ``onnx``, ``tflite``, ``file`` or ``directory``."""
    files: int
    model_size: int
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
        a = data["artifact"]
        return cls(
            path=data["path"],
            kind=data["kind"],
            files=data["files"],
            model_size=data["model_size"],
            details=data["details"],
            artifact=ArtifactSummary(a["name"], a["format"], a["content_type"], a.get("size"), a.get("sha256")),
            interface=data.get("interface"),
            interface_error=data.get("interface_error"),
            model_signature=data.get("model_signature"),
            raw=data,
        )


@dataclass(frozen=True)
class PackedArtifact:
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

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "PackedArtifact":
        return cls(
            path=data["path"],
            name=data["name"],
            kind=data["kind"],
            format=data["format"],
            content_type=data["content_type"],
            files=data["files"],
            size=data["size"],
            sha256=data["sha256"],
            compression=data.get("compression"),
            raw=data,
        )


@dataclass(frozen=True)
class TreeFile:
    """One file of a directory published as a tree (``pack(..., zip=False)``)."""

    path: str
    """The path inside the directory, ``/``-separated."""
    size: int
    sha256: str
    content_type: str


@dataclass(frozen=True)
class PackedTree:
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
        return cls(
            path=data["path"],
            name=data["name"],
            kind=data["kind"],
            format=data["format"],
            size=data["size"],
            files=[TreeFile(f["path"], f["size"], f["sha256"], f["content_type"]) for f in data["files"]],
            raw=data,
        )


# -- keys ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class KeyPair:
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

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "KeyPair":
        return cls(
            kind=data["kind"],
            public_key_path=data["public_key_path"],
            secret_key_path=data["secret_key_path"],
            encrypted=data["encrypted"],
            key_id=data.get("key_id"),
            public_key=data.get("public_key"),
            hint=data.get("hint"),
            raw=data,
        )


@dataclass(frozen=True)
class ModelSignature:
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

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "ModelSignature":
        return cls(
            model=data["model"],
            signature=data["signature"],
            model_name=data["model_name"],
            files=data["files"],
            subject_sha256=data["subject_sha256"],
            key_hint=data["key_hint"],
            raw=data,
        )
