"""Scenario files: read, checked before anything runs, so a malformed one is named with
the field that is wrong instead of failing half-way through."""

import json
import os
import re

GROUPS = [
    "signatures", "freeze", "rollback", "mix-and-match", "endless-data", "slow-retrieval",
    "wrong-software", "transport", "crash-safety", "policy", "conditions", "key-sets",
]

# Each step is an object with exactly one of these kinds, plus that kind's modifiers.
STEP_KINDS = {
    "make": set(),
    "make_zip": set(),
    "keygen": {"model_signing"},
    "publish": {"exit"},
    "modelcast": {"exit"},
    "snapshot": set(),
    "restore": set(),
    "copy": set(),
    "write": set(),
    "edit_manifest": set(),
    "replace_object": set(),
    "serve": set(),
    "client": {"exit", "timeout", "stderr", "killed", "max_rss_mib", "fsize_kib", "note"},
    "clients": {"exit", "timeout"},
    "state": set(),
    "requests": {"since"},
    "sleep": set(),
    "edit_signature": set(),
    "hostile_table": set(),
    "fill_disk": set(),
}

NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,80}$")


class ScenarioError(Exception):
    """A scenario file the runner cannot run, with where and why."""


def load(path):
    try:
        with open(path, "rb") as handle:
            raw = handle.read(1 << 20)
        document = json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ScenarioError("%s: not a readable JSON scenario (%s)" % (path, _plain(str(error))))
    return check(document, path)


def check(document, path):
    def fail(where, why):
        raise ScenarioError("%s: %s %s" % (path, where, why))

    if not isinstance(document, dict):
        fail("the file", "is not a JSON object")
    for key in ("name", "group", "summary", "steps"):
        if key not in document:
            fail("the scenario", "has no %r" % key)
    unknown = set(document) - {"name", "group", "summary", "steps", "disk_kib", "proves"}
    if unknown:
        fail("the scenario", "has unknown keys %s" % ", ".join(sorted(map(repr, unknown))))
    if not isinstance(document["name"], str) or not NAME.match(document["name"]):
        fail("'name'", "must be lowercase letters, digits and '-' (got %s)" % _plain(repr(document["name"])))
    expected = os.path.splitext(os.path.basename(path))[0]
    if document["name"] != expected:
        fail("'name'", "is %r but the file is named %r" % (document["name"], expected))
    if document["group"] not in GROUPS:
        fail("'group'", "%s is not one of %s" % (_plain(repr(document["group"])), ", ".join(GROUPS)))
    if not isinstance(document["summary"], str) or not document["summary"]:
        fail("'summary'", "must be a sentence")
    if "disk_kib" in document and (not isinstance(document["disk_kib"], int) or document["disk_kib"] <= 0):
        fail("'disk_kib'", "must be a positive whole number")
    steps = document["steps"]
    if not isinstance(steps, list) or not steps:
        fail("'steps'", "must be a non-empty list")
    for index, step in enumerate(steps):
        where = "step %d" % (index + 1)
        if not isinstance(step, dict):
            fail(where, "is not an object")
        kinds = [key for key in step if key in STEP_KINDS]
        if len(kinds) != 1:
            fail(where, "must have exactly one of %s (has %s)" % (", ".join(sorted(STEP_KINDS)), ", ".join(sorted(step)) or "none"))
        kind = kinds[0]
        extra = set(step) - {kind} - STEP_KINDS[kind]
        if extra:
            fail(where, "(%s) has unknown keys %s" % (kind, ", ".join(sorted(map(repr, extra)))))
        if kind in ("client", "publish", "modelcast") and not (isinstance(step[kind], list) and all(isinstance(a, str) for a in step[kind])):
            fail(where, "(%s) must be a list of strings" % kind)
        if kind == "client" and (not step["client"] or step["client"][0] not in ("init", "update", "state", "revert")):
            fail(where, "(client) must start with init, update, state or revert")
        if "timeout" in step and (not isinstance(step["timeout"], (int, float)) or not 0 < step["timeout"] <= 600):
            fail(where, "'timeout' must be a number of seconds in (0, 600]")
        if "exit" in step and not _exit_ok(step["exit"]):
            fail(where, "'exit' must be an exit status or a list of them")
        if kind == "serve" and not isinstance(step["serve"], dict):
            fail(where, "(serve) must be an object with 'rules'")
        if kind == "serve":
            unknown = set(step["serve"]) - {"rules", "etag_generation", "missing_status"}
            if unknown:
                fail(where, "(serve) has unknown keys %s" % ", ".join(sorted(_plain(repr(key)) for key in unknown)))
            missing = step["serve"].get("missing_status", 404)
            if isinstance(missing, bool) or missing not in (403, 404):
                fail(where, "(serve) 'missing_status' must be 404 or 403 (got %s)" % _plain(repr(missing)))
        if kind == "serve":
            for number, rule in enumerate(step["serve"].get("rules", [])):
                if not isinstance(rule, dict) or "action" not in rule:
                    fail("%s rule %d" % (where, number + 1), "has no 'action'")
                from .simulator import Rule
                if rule["action"] not in Rule.ACTIONS:
                    fail("%s rule %d" % (where, number + 1), "action %s is not one of %s" % (_plain(repr(rule["action"])), ", ".join(sorted(Rule.ACTIONS))))
                if "object" not in rule and "path" not in rule:
                    fail("%s rule %d" % (where, number + 1), "names no 'object' or 'path'")
        if kind == "sleep" and (not isinstance(step["sleep"], (int, float)) or not 0 <= step["sleep"] <= 30):
            fail(where, "(sleep) must be 0 to 30 seconds")
    return document


def _exit_ok(value):
    if isinstance(value, int):
        return 0 <= value <= 255
    return isinstance(value, list) and value and all(isinstance(v, int) and 0 <= v <= 255 for v in value)


def _plain(text):
    """Control characters as escapes: a hostile file name or value never reaches the terminal raw."""
    return "".join(c if c.isprintable() else "\\x%02x" % ord(c) if ord(c) < 256 else "\\u%04x" % ord(c) for c in text)


def discover(base, only=()):
    """Every scenario file in the group folders under base, sorted by group then name."""
    found = []
    for group in sorted(os.listdir(base)):
        folder = os.path.join(base, group)
        if not os.path.isdir(folder):
            continue
        for entry in sorted(os.listdir(folder)):
            if entry.endswith(".json"):
                found.append(os.path.join(folder, entry))
    selected = []
    for path in found:
        group = os.path.basename(os.path.dirname(path))
        name = os.path.splitext(os.path.basename(path))[0]
        if only and group not in only and name not in only:
            continue
        selected.append(path)
    return selected
