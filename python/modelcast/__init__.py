"""modelcast for Python pipelines: the bundled ``modelcast`` binary and a typed API over
every command a pipeline runs.

::

    import modelcast

    result = modelcast.publish(["model.gguf", "model-mmproj.gguf"], version="1.2.0",
                               to="s3://models/prod", base_url="https://cdn.example.com/models")
    print(result.sequence, result.manifest_url)

Every function runs the binary with ``--json``, returns a dataclass from
:mod:`modelcast.results`, and raises :class:`ModelcastError` (``code``, ``kind``,
``message``) when the command fails. Ctrl-C (``KeyboardInterrupt``) is passed on to the
binary, which removes what it staged; once it has exited, ``KeyboardInterrupt`` goes on.
``binary_path()`` is the bundled executable.

- :mod:`modelcast.commands`: ``publish``, ``verify``, ``rollback``, ``history``
- :mod:`modelcast.rollouts`: ``promote``, ``rollout``, ``rollout_simulate``
- :mod:`modelcast.upkeep`: ``resign``, ``prune``, ``report``
- :mod:`modelcast.keys`: ``keygen``, ``sign_model``
- :mod:`modelcast.keysets`: ``keys_create``, ``keys_rotate``, ``keys_sign``, ``keys_push``
- :mod:`modelcast.models`: ``inspect``, ``pack``
"""

from modelcast._binary import binary_path
from modelcast.commands import history, publish, rollback, verify
from modelcast.errors import ModelcastError, VerificationFailed
from modelcast.keys import keygen, sign_model
from modelcast.keysets import keys_create, keys_push, keys_rotate, keys_sign
from modelcast.models import inspect, pack
from modelcast.results import (
    ArtifactSummary,
    ChannelReport,
    ChannelVerification,
    Check,
    DeviceSide,
    DeviceSimulation,
    History,
    InspectResult,
    KeyPair,
    KeySetResult,
    KeySetThreshold,
    LiveRelease,
    ModelPick,
    ModelSignature,
    ModelSummary,
    PackedArtifact,
    PackedTree,
    PruneResult,
    PublishResult,
    Release,
    ReleaseReport,
    ReportEntry,
    ReportFile,
    ReportModel,
    RolloutPoint,
    RolloutSimulation,
    RolloutState,
    SignatureState,
    SimulatedSide,
    SkippedVariant,
    StoredObject,
    TreeFile,
    VerifyResult,
)
from modelcast.rollouts import promote, rollout, rollout_simulate
from modelcast.upkeep import prune, report, resign

#: The CLI's commands, by the words that name them (``rollout set``), and the function
#: that runs each; python/tests/test_coverage.py checks it against ``modelcast --help``.
COMMANDS = {
    "inspect": inspect,
    "pack": pack,
    "publish": publish,
    "verify": verify,
    "rollback": rollback,
    "promote": promote,
    "rollout set": rollout,
    "rollout simulate": rollout_simulate,
    "prune": prune,
    "history": history,
    "report": report,
    "resign": resign,
    "keygen": keygen,
    "sign-model": sign_model,
    "keys create": keys_create,
    "keys rotate": keys_rotate,
    "keys sign": keys_sign,
    "keys push": keys_push,
}

#: The CLI's commands with no function, and why: python/tests/test_coverage.py fails on any
#: other command without one.
NOT_COVERED = {
    "serve": "a long-running preview server, not a step that returns a result: run "
    "`modelcast serve DIR` with subprocess (its first stdout line is the URL) and stop it "
    "with SIGINT or SIGTERM",
}

__all__ = [
    "binary_path",
    "COMMANDS",
    "NOT_COVERED",
    # commands
    "inspect",
    "pack",
    "publish",
    "verify",
    "rollback",
    "promote",
    "rollout",
    "rollout_simulate",
    "prune",
    "history",
    "report",
    "resign",
    "keygen",
    "sign_model",
    "keys_create",
    "keys_rotate",
    "keys_sign",
    "keys_push",
    # errors
    "ModelcastError",
    "VerificationFailed",
    # results
    "PublishResult",
    "StoredObject",
    "ModelSummary",
    "VerifyResult",
    "Check",
    "History",
    "Release",
    "PruneResult",
    "RolloutSimulation",
    "SimulatedSide",
    "DeviceSimulation",
    "DeviceSide",
    "ModelPick",
    "SkippedVariant",
    "ReleaseReport",
    "ChannelReport",
    "LiveRelease",
    "ReportModel",
    "ReportFile",
    "RolloutState",
    "RolloutPoint",
    "SignatureState",
    "ReportEntry",
    "ChannelVerification",
    "InspectResult",
    "ArtifactSummary",
    "PackedArtifact",
    "PackedTree",
    "TreeFile",
    "KeyPair",
    "ModelSignature",
    "KeySetResult",
    "KeySetThreshold",
]
