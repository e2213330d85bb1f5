#!/usr/bin/env python3
"""The kit's own tests: bad input to the runner is named and never hangs, and a scenario
can fail. Standard library only: `python3 conformance/selftest.py --modelcast BIN`.

They use tiny scratch clients written here (shell scripts), not a real client: one that
hangs, one that exits at once, one that writes outside its directory.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

KIT = os.path.dirname(os.path.abspath(__file__))
MODELCAST = "modelcast"


def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)
    os.chmod(path, mode)


def scenario(name, steps, group="policy"):
    return {"name": name, "group": group, "summary": "selftest", "steps": steps}


class RunnerInput(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="mc-kit-selftest-")
        self.scenarios = os.path.join(self.tmp, "scenarios")
        self.client = os.path.join(self.tmp, "client.sh")
        write(self.client, "#!/bin/sh\nexit 0\n", 0o755)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def put(self, document, group="policy", name=None):
        write(os.path.join(self.scenarios, group, (name or document.get("name", "x")) + ".json"),
              document if isinstance(document, str) else json.dumps(document))

    def run_kit(self, *extra, timeout=120):
        started = time.monotonic()
        result = subprocess.run([sys.executable, os.path.join(KIT, "run"), "--client", self.client, "--modelcast", MODELCAST,
                                 "--scenarios", self.scenarios, "--report", os.path.join(self.tmp, "report.json")] + list(extra),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        return result.returncode, result.stdout.decode(), result.stderr.decode(), time.monotonic() - started

    def test_malformed_json_is_named(self):
        self.put("{not json", name="broken")
        status, _, err, _ = self.run_kit()
        self.assertEqual(status, 2)
        self.assertIn("broken.json", err)
        self.assertIn("not a readable JSON scenario", err)

    def test_unknown_step_kind_is_named(self):
        self.put(scenario("odd", [{"teleport": 1}]))
        status, _, err, _ = self.run_kit()
        self.assertEqual(status, 2)
        self.assertIn("odd.json: step 1 must have exactly one of", err)

    def test_unknown_rule_action_is_named(self):
        self.put(scenario("odd-rule", [{"serve": {"rules": [{"path": "/x", "action": "explode"}]}}]))
        status, _, err, _ = self.run_kit()
        self.assertEqual(status, 2)
        self.assertIn("action 'explode' is not one of", err)

    def test_name_must_match_file(self):
        self.put(scenario("one", [{"sleep": 0}]), name="two")
        status, _, err, _ = self.run_kit()
        self.assertEqual(status, 2)
        self.assertIn("is 'one' but the file is named 'two'", err)

    def test_control_characters_in_a_bad_value_are_escaped(self):
        self.put(scenario("esc", [{"sleep": 0}], group="policy") | {"group": "pol\u001bicy"}, name="esc")
        status, _, err, _ = self.run_kit()
        self.assertEqual(status, 2)
        self.assertNotIn("\u001b", err)
        self.assertIn("\\x1b", err)

    def test_a_scenario_path_leading_outside_is_refused(self):
        # A scenario's file names are input too: one that climbs out of the work area is
        # named, and nothing is written beside the kit's scratch directories.
        outside = os.path.join(tempfile.gettempdir(), "mc-kit-escape-%d.bin" % os.getpid())
        for step in ({"make": {"path": "../../../../../.." + outside, "size": 10}},
                     {"make": {"path": outside, "size": 10}},
                     {"snapshot": "../../escaped"},
                     {"restore": "../../escaped"},
                     {"keygen": "../../escaped"}):
            self.put(scenario("escapes-by-path", [step]))
            status, out, _, _ = self.run_kit()
            self.assertEqual(status, 1, out)
            self.assertIn("ERROR policy/escapes-by-path", out)
            self.assertIn("is not a relative path inside the scenario's", out)
            self.assertFalse(os.path.exists(outside))

    def test_a_bad_serve_option_is_named(self):
        for serve, named in (({"missing_status": 500}, "(serve) 'missing_status' must be 404 or 403 (got 500)"),
                             ({"missing_status": True}, "(serve) 'missing_status' must be 404 or 403 (got True)"),
                             ({"rules": [], "missing": 403}, "(serve) has unknown keys 'missing'")):
            self.put(scenario("odd-serve", [{"serve": serve}]))
            status, _, err, _ = self.run_kit()
            self.assertEqual(status, 2, err)
            self.assertIn("odd-serve.json: step 1 " + named, err)

    def test_missing_status_answers_a_missing_file_as_a_private_bucket_does(self):
        # The scratch client GETs the manifest URL of an empty target and exits 0 only when
        # the status is the one its argument names (and a 403 carries S3's AccessDenied).
        write(self.client, """#!/bin/sh
[ "$1" = init ] || exit 0
exec python3 -c '
import sys, urllib.request, urllib.error
try:
    urllib.request.urlopen(sys.argv[1], timeout=10)
    code, body = 200, b""
except urllib.error.HTTPError as error:
    code, body = error.code, error.read()
if code != int(sys.argv[2]) or (code == 403 and b"AccessDenied" not in body):
    sys.exit("got HTTP %d %r" % (code, body))
' "$5" "$6"
""", 0o755)
        self.put(scenario("private", [{"serve": {"missing_status": 403}}, {"client": ["init", "403"]},
                                      {"serve": {}}, {"client": ["init", "404"]}]))
        status, out, _, _ = self.run_kit()
        self.assertEqual(status, 0, out)
        self.put(scenario("private", [{"serve": {"missing_status": 403}}, {"client": ["init", "404"]}]))
        status, out, _, _ = self.run_kit()
        self.assertEqual(status, 1, out)
        self.assertIn("got HTTP 403", out)

    def test_missing_client(self):
        self.put(scenario("ok", [{"sleep": 0}]))
        self.client = os.path.join(self.tmp, "no-such-client")
        status, _, err, _ = self.run_kit()
        self.assertEqual(status, 2)
        self.assertIn("no-such-client", err)

    def test_hanging_client_is_bounded(self):
        write(self.client, "#!/bin/sh\nsleep 1000\n", 0o755)
        self.put(scenario("hangs", [{"client": ["init"], "timeout": 2}]))
        status, out, _, seconds = self.run_kit()
        self.assertEqual(status, 1)
        self.assertIn("did not return within 2 s", out)
        self.assertLess(seconds, 30)

    def test_port_in_use(self):
        taken = socket.socket()
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        self.put(scenario("ok", [{"sleep": 0}]))
        try:
            status, _, err, _ = self.run_kit("--port", str(port))
        finally:
            taken.close()
        self.assertEqual(status, 2)
        self.assertIn("127.0.0.1:%d cannot be used" % port, err)

    def test_stale_xfail_is_reported(self):
        self.put(scenario("passes", [{"sleep": 0}]))
        xfails = os.path.join(self.tmp, "xfails")
        write(xfails, "passes  thought to fail\n")
        status, out, _, _ = self.run_kit("--xfails", xfails)
        self.assertEqual(status, 1)
        self.assertIn("XPASS policy/passes", out)
        self.assertIn("0 passed, 1 failed", out)

    def test_an_xfail_reason_never_reaches_the_terminal_raw(self):
        self.put(scenario("passes", [{"sleep": 0}]))
        xfails = os.path.join(self.tmp, "xfails")
        write(xfails, "passes  known \u001b[2J bad\n")
        status, out, _, _ = self.run_kit("--xfails", xfails)
        self.assertEqual(status, 1)
        self.assertNotIn("\u001b", out)
        self.assertIn("known \\x1b[2J bad", out)

    def test_xfail_naming_no_scenario(self):
        self.put(scenario("passes", [{"sleep": 0}]))
        xfails = os.path.join(self.tmp, "xfails")
        write(xfails, "nothing-like-it  reason\n")
        status, _, err, _ = self.run_kit("--xfails", xfails)
        self.assertEqual(status, 2)
        self.assertIn("names 'nothing-like-it', which is no scenario", err)

    def test_a_client_writing_outside_fails(self):
        # init writes a file beside the client's directory: the outside check catches it.
        write(self.client, "#!/bin/sh\n[ \"$1\" = init ] && { mkdir -p \"$3\"; touch \"$3/../escaped\"; }\nexit 0\n", 0o755)
        self.put(scenario("escapes", [{"client": ["init"]}]))
        status, out, _, _ = self.run_kit()
        self.assertEqual(status, 1)
        self.assertIn("outside its directory", out)
        self.assertIn("+device/escaped", out)

    def test_summary_line_and_report(self):
        self.put(scenario("passes", [{"sleep": 0}]))
        status, out, _, _ = self.run_kit()
        self.assertEqual(status, 0)
        self.assertIn("PASS  policy/passes", out)
        self.assertIn("1 passed, 0 failed", out)
        with open(os.path.join(self.tmp, "report.json")) as handle:
            report = json.load(handle)
        self.assertEqual(report["passed"], 1)
        self.assertEqual(report["scenarios"][0]["outcome"], "pass")


class ShippedScenarios(unittest.TestCase):
    def test_every_shipped_scenario_parses(self):
        sys.path.insert(0, KIT)
        from kit import scenario as loader
        paths = loader.discover(os.path.join(KIT, "scenarios"))
        self.assertGreaterEqual(len(paths), 45)
        groups = set()
        for path in paths:
            groups.add(loader.load(path)["group"])
        self.assertEqual(groups, set(loader.GROUPS))


if __name__ == "__main__":
    if "--modelcast" in sys.argv:
        index = sys.argv.index("--modelcast")
        MODELCAST = sys.argv[index + 1]
        del sys.argv[index:index + 2]
    unittest.main()
