"""The Python API covers the CLI: every command ``modelcast --help`` lists (and its
subcommands') has a function in ``modelcast.COMMANDS`` or a reason in
``modelcast.NOT_COVERED``; each function runs the command it is listed for, with ``--json``;
and secrets reach the binary's environment only, never its command line or an error."""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import re
import subprocess
import unittest

from support import modelcast

from fakes import ECHO, fake_binary

#: What each secret keyword argument becomes in the binary's environment.
SECRETS = {
    "signing_key": "MODELCAST_SIGNING_KEY",
    "signing_passphrase": "MODELCAST_SIGNING_PASSPHRASE",
    "passphrase": "MODELCAST_SIGNING_PASSPHRASE",
    "model_signing_key": "MODELCAST_MODEL_SIGNING_KEY",
    "aws_access_key_id": "AWS_ACCESS_KEY_ID",
    "aws_secret_access_key": "AWS_SECRET_ACCESS_KEY",
    "aws_session_token": "AWS_SESSION_TOKEN",
}


def help_text(words: list[str]) -> str:
    environment = {**os.environ, "COLUMNS": "200"}
    result = subprocess.run([str(modelcast.binary_path()), *words, "--help"], capture_output=True, text=True, env=environment)
    if result.returncode != 0:
        raise AssertionError(f"modelcast {' '.join(words)} --help exited {result.returncode}: {result.stderr}")
    return result.stdout


def subcommands(text: str) -> list[str]:
    """The names a help text's SUBCOMMANDS section lists (``resign, refresh`` is ``resign``;
    ``set (default)`` is ``set``)."""
    if "SUBCOMMANDS:" not in text:
        return []
    section = text.split("SUBCOMMANDS:", 1)[1]
    names = []
    for line in section.splitlines()[1:]:
        if not line.strip():
            break
        match = re.match(r"^  ([a-z][a-z0-9-]*)", line)
        if match:
            names.append(match.group(1))
    return names


def cli_commands() -> list[str]:
    """Every command a user can run, found as a user finds them: the leaves of the SUBCOMMANDS
    tree under ``modelcast --help`` (``rollout`` is ``rollout set`` and ``rollout simulate``)."""
    found, queue = [], [[name] for name in subcommands(help_text([]))]
    while queue:
        words = queue.pop(0)
        below = subcommands(help_text(words))
        if below:
            queue += [words + [name] for name in below]
        else:
            found.append(" ".join(words))
    return found


def placeholder_call(function, **given):
    """Calls ``function`` with a placeholder for each argument it requires, and ``given``."""
    positional, keywords = [], {}
    for parameter in inspect.signature(function).parameters.values():
        if parameter.default is not inspect.Parameter.empty:
            continue
        if parameter.kind == inspect.Parameter.KEYWORD_ONLY:
            keywords[parameter.name] = "1"
        else:
            positional.append("placeholder")
    return function(*positional, **keywords, **given, log=None)


class CoverageTests(unittest.TestCase):
    def test_every_cli_command_has_a_function_or_a_documented_reason(self):
        commands = cli_commands()
        self.assertGreaterEqual(len(commands), 15, f"the commands found from modelcast --help: {commands}")
        missing = [c for c in commands if c not in modelcast.COMMANDS and c not in modelcast.NOT_COVERED]
        self.assertEqual(missing, [], "CLI commands with neither a Python function (modelcast.COMMANDS) nor a reason (modelcast.NOT_COVERED)")
        stale = [c for c in [*modelcast.COMMANDS, *modelcast.NOT_COVERED] if c not in commands]
        self.assertEqual(stale, [], f"listed, but not a command of this binary ({commands})")
        both = set(modelcast.COMMANDS) & set(modelcast.NOT_COVERED)
        self.assertEqual(both, set(), "a command both covered and excluded")
        for command, reason in modelcast.NOT_COVERED.items():
            self.assertGreater(len(reason), 40, f"{command}: the reason it has no function says why")
        for command, function in modelcast.COMMANDS.items():
            self.assertIn(function.__name__, modelcast.__all__, f"{command}: {function.__name__} is exported")
            self.assertTrue((function.__doc__ or "").strip(), f"{command}: {function.__name__} has a docstring")

    def test_each_function_runs_its_command_with_json(self):
        with fake_binary(ECHO):
            for command, function in modelcast.COMMANDS.items():
                with self.assertRaises(modelcast.ModelcastError, msg=command) as raised:
                    placeholder_call(function)
                argv = json.loads(raised.exception.message)["argv"]
                words = command.split(" ")
                self.assertEqual(argv[: len(words)], words, f"{function.__name__} runs `modelcast {command}`: {argv}")
                self.assertEqual(argv[-1], "--json", f"{function.__name__}: {argv}")
                self.assertEqual(raised.exception.command, command)
                self.assertEqual((raised.exception.code, raised.exception.kind), (2, "usage"))

    def test_secrets_go_to_the_environment_only(self):
        with fake_binary(ECHO):
            for command, function in modelcast.COMMANDS.items():
                names = [name for name in inspect.signature(function).parameters if name in SECRETS]
                values = {name: f"secret {name} of {command} 7f3a" for name in names}
                with self.assertRaises(modelcast.ModelcastError) as raised:
                    placeholder_call(function, **values)
                seen = json.loads(raised.exception.message)
                for name, value in values.items():
                    self.assertNotIn(value, " ".join(seen["argv"]), f"{command}: {name} on the command line")
                    self.assertEqual(seen["env"].get(SECRETS[name]), hashlib.sha256(value.encode()).hexdigest(),
                                     f"{command}: {name} reaches ${SECRETS[name]}")
                    self.assertNotIn(value, str(raised.exception) + repr(raised.exception), command)
        self.assertTrue(any(SECRETS.keys() & set(inspect.signature(f).parameters) for f in modelcast.COMMANDS.values()))

    def test_percentages_are_written_as_the_cli_reads_them(self):
        with fake_binary(ECHO):
            for value, written in [(10, "10"), (0.5, "0.5"), (12.25, "12.25"), ("7%", "7%"), (0.0001, "0.0001")]:
                with self.assertRaises(modelcast.ModelcastError) as raised:
                    modelcast.rollout("site", percent=value, log=None)
                self.assertIn(f"--percent={written}", json.loads(raised.exception.message)["argv"], value)
        with self.assertRaises(TypeError):
            modelcast.rollout("site", percent=True, log=None)

    def test_extra_args_given_as_one_string_is_refused_naming_it(self):
        # A string is a sequence of characters: "--strict" would reach the CLI as "-", "-", "s"…
        with fake_binary(ECHO):
            for command, function in modelcast.COMMANDS.items():
                with self.assertRaises(TypeError, msg=command) as raised:
                    placeholder_call(function, extra_args="--strict")
                self.assertIn("extra_args='--strict'", str(raised.exception), command)
                with self.assertRaises(TypeError, msg=command) as raised:
                    placeholder_call(function, extra_args=["--jobs", 4])
                self.assertIn("extra_args holds 4", str(raised.exception), command)

    def test_a_percentage_is_never_rounded_into_another_one(self):
        # Rounded, 1e-07 was "0": a halt. As written, the CLI refuses it, naming it.
        with fake_binary(ECHO):
            for value, written in [(1e-07, "0.0000001"), (-1e-07, "-0.0000001"), (0.1 * 3, "0.30000000000000004"),
                                   (1e20, "100000000000000000000"), (10.0, "10"), (float("nan"), "nan")]:
                with self.assertRaises(modelcast.ModelcastError) as raised:
                    modelcast.rollout("site", percent=value, log=None)
                self.assertIn(f"--percent={written}", json.loads(raised.exception.message)["argv"], value)


if __name__ == "__main__":
    unittest.main()
