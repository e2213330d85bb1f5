"""Runs the install steps of examples/ci/publish-model-prebuilt.yml, as written, against the
tarball and wheel in DIST served on 127.0.0.1 (scripts/test-install calls it).

  python3 workflow_install.py WORKFLOW DIST VERSION

For MODELCAST_INSTALL=tarball and =wheel, on a fresh "runner" (an empty RUNNER_TEMP, a new
GITHUB_PATH file, PATH without any modelcast): the "Install modelcast (prebuilt)" step, then
"Check the installed modelcast" with the directories the first added to GITHUB_PATH in front
of PATH, as GitHub does. `${{ vars.X }}` expressions get test values; any other expression
fails. A value of MODELCAST_INSTALL the step does not know must fail the step, and so must a
tarball whose published .sha256 does not match it.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml

INSTALL, CHECK = "Install modelcast (prebuilt)", "Check the installed modelcast"


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def expand(text: str, values: dict[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        expression = match.group(1).strip()
        if expression not in values:
            raise SystemExit(f"workflow_install: FAILED: the test cannot evaluate ${{{{ {expression} }}}}")
        return values[expression]

    return re.sub(r"\$\{\{(.*?)\}\}", replace, text)


def run_step(step: dict, values: dict[str, str], runner: Path, path_prefix: list[str]) -> subprocess.CompletedProcess[str]:
    environment = {
        "PATH": ":".join(path_prefix + ["/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(runner / "home"),
        "RUNNER_TEMP": str(runner / "temp"),
        "GITHUB_PATH": str(runner / "github_path"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    for name, value in (step.get("env") or {}).items():
        environment[name] = expand(str(value), values)
    script = runner / "step.sh"
    script.write_text(expand(step["run"], values))
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                          cwd=runner / "checkout", env=environment, capture_output=True, text=True)


def main() -> None:
    workflow, dist, version = Path(sys.argv[1]), Path(sys.argv[2]).resolve(), sys.argv[3]
    steps = {step.get("name"): step for step in yaml.safe_load(workflow.read_text())["jobs"]["publish"]["steps"]}
    if INSTALL not in steps or CHECK not in steps:
        raise SystemExit(f"workflow_install: FAILED: {workflow} has no step {INSTALL!r} or {CHECK!r}")
    served = Path(tempfile.mkdtemp())  # links to DIST's files; the .sha256 is altered once below
    for file in dist.iterdir():
        (served / file.name).symlink_to(file)
    sums = sorted(served.glob("*.tar.gz.sha256"))
    if len(sums) != 1:
        raise SystemExit(f"workflow_install: FAILED: {dist} holds {len(sums)} .tar.gz.sha256 files, not one")
    good_sum = sums[0].read_text()
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(served)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        for mode in ["tarball", "wheel", "zipapp", "tampered"]:
            sums[0].unlink()
            # "tampered": the published SHA-256 is not the tarball's; sha256sum -c must stop the step.
            sums[0].write_text(("0" * 64 + good_sum[64:]) if mode == "tampered" else good_sum)
            values = {
                "vars.MODELCAST_VERSION": version,
                "vars.MODELCAST_RELEASE_URL": url,
                "vars.MODELCAST_INSTALL || 'tarball'": "tarball" if mode == "tampered" else mode,
            }
            with tempfile.TemporaryDirectory() as directory:
                runner = Path(directory)
                for sub in ["home", "temp", "checkout"]:
                    (runner / sub).mkdir()
                (runner / "github_path").write_text("")
                installed = run_step(steps[INSTALL], values, runner, [])
                if mode == "zipapp":
                    if installed.returncode == 0 or "'zipapp'" not in installed.stderr:
                        raise SystemExit(f"workflow_install: FAILED: MODELCAST_INSTALL=zipapp: exit {installed.returncode}, {installed.stderr.strip()!r}")
                    print(f"workflow_install: ok: an unknown MODELCAST_INSTALL fails the step: {installed.stderr.strip()}")
                    continue
                if mode == "tampered":
                    if installed.returncode == 0 or (runner / "github_path").read_text():
                        raise SystemExit(f"workflow_install: FAILED: a tarball whose SHA-256 is not the published one was installed (exit {installed.returncode})")
                    print(f"workflow_install: ok: a tarball that does not match its .sha256 fails the step: {installed.stdout.strip()}")
                    continue
                if installed.returncode != 0:
                    raise SystemExit(f"workflow_install: FAILED: {INSTALL} ({mode}) exited {installed.returncode}:\n{installed.stdout}{installed.stderr}")
                added = [line for line in (runner / "github_path").read_text().splitlines() if line]
                if len(added) != 1 or not (Path(added[0]) / "modelcast").is_file():
                    raise SystemExit(f"workflow_install: FAILED: {INSTALL} ({mode}) added {added} to GITHUB_PATH, not a directory holding modelcast")
                checked = run_step(steps[CHECK], values, runner, added)
                if checked.returncode != 0:
                    raise SystemExit(f"workflow_install: FAILED: {CHECK} ({mode}) exited {checked.returncode}: {checked.stderr.strip()}")
                wrong = run_step(steps[CHECK], {**values, "vars.MODELCAST_VERSION": version + ".1"}, runner, added)
                if wrong.returncode == 0:
                    raise SystemExit(f"workflow_install: FAILED: {CHECK} ({mode}) passed with the wrong MODELCAST_VERSION")
                print(f"workflow_install: ok: {mode}: installed into {added[0]} and `modelcast --version` is {version}")
    finally:
        server.shutdown()
        for file in served.iterdir():
            file.unlink()
        served.rmdir()


if __name__ == "__main__":
    main()
