"""What the API returns: the CLI's ``--json`` output (schema/cli/*.schema.json) as frozen
dataclasses. Each result keeps the whole parsed object in ``raw``, so a field added to the
CLI's output later is readable before this module names it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Optional

#: ``pass``, ``warn`` or ``fail``: a verify check's outcome.
CheckStatus = Literal["pass", "warn", "fail"]


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
