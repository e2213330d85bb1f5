"""Smoke test of the installed wheel (scripts/test-install runs it in a fresh virtualenv).

  python smoke.py EXAMPLES_DIR WORK_DIR

Uses what `pip install` put in the virtualenv: the `modelcast` console command and
`import modelcast`. Publishes two versions of the example model (the second signed with an
encrypted key whose passphrase goes through the environment), serves the directory with
`modelcast serve` on 127.0.0.1, verifies through it, rolls back, reads the history, checks
the errors a bad input raises, and stops the server. Exits non-zero on the first failure.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import modelcast

BASE_URL = "https://cdn.example.com/models"
PASSPHRASE = "smoke-test passphrase 7f3a"


def check(condition: bool, what: str) -> None:
    if not condition:
        raise SystemExit(f"smoke: FAILED: {what}")
    print(f"smoke: ok: {what}")


def console_command() -> Path:
    """The `modelcast` script pip installed beside this interpreter."""
    return Path(sys.executable).parent / "modelcast"


def start_server(site: Path) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [str(console_command()), "serve", str(site), "--port", "0", "--host", "127.0.0.1"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert server.stdout is not None
    url = server.stdout.readline().strip()  # printed once the server listens
    if not url.startswith("http://127.0.0.1:"):
        server.kill()
        raise SystemExit(f"smoke: FAILED: modelcast serve printed {url!r}, not its http://127.0.0.1 URL")
    return server, url


def main() -> None:
    examples, work = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    gguf, mmproj = examples / "tiny-llm.gguf", examples / "tiny-llm-mmproj.gguf"
    site = work / "site"
    lines: list[str] = []  # everything the binary wrote on standard error, for the secrets check
    log = lines.append

    # The bundled binary and the console command.
    binary = modelcast.binary_path()
    check(binary.is_file() and "site-packages" in binary.parts, f"binary_path() is inside the installed package: {binary}")
    check(stat.S_IMODE(binary.stat().st_mode) == 0o755, f"the bundled binary's mode is 0755 ({stat.S_IMODE(binary.stat().st_mode):o})")
    version = subprocess.run([str(console_command()), "--version"], capture_output=True, text=True, check=True).stdout.strip()
    direct = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=True).stdout.strip()
    check(version == direct and version != "", f"`modelcast --version` is the binary's: {version}")
    bad = subprocess.run([str(console_command()), "publsh"], capture_output=True, text=True)
    check(bad.returncode == 2 and "publish" in bad.stderr, f"the console command passes on the exit status (2) and message: {bad.stderr.strip()}")

    # Two versions; the second signed with an encrypted key file (passphrase from the environment).
    first = modelcast.publish([gguf, mmproj], version="1.0.0", to=site, base_url=BASE_URL, log=log)
    check(first.sequence == 1 and not first.unchanged, f"publish 1.0.0: sequence {first.sequence}")
    check([(m.name, m.version, m.files) for m in first.models] == [("tiny-llm", "1.0.0", 2)], f"publish 1.0.0 models: {first.models}")
    check({o.key for o in first.objects if o.role == "artifact"} == {"models/tiny-llm/1.0.0/tiny-llm.gguf", "models/tiny-llm/1.0.0/tiny-llm-mmproj.gguf"},
          "publish 1.0.0 stored both files")
    check(first.manifest_url == f"{BASE_URL}/manifest.json" and first.manifest["sequence"] == 1, f"manifest at {first.manifest_url}")

    keys = work / "keys"
    keys.mkdir()
    subprocess.run([str(console_command()), "keygen", "--public-key", str(keys / "k.pub"), "--secret-key", str(keys / "k.key")],
                   env={**os.environ, "MODELCAST_SIGNING_PASSPHRASE": PASSPHRASE}, check=True, capture_output=True)
    public_key = (keys / "k.pub").read_text().splitlines()[1]
    second = modelcast.publish([gguf, mmproj], version="1.1.0", to=site, base_url=BASE_URL,
                               sign=keys / "k.key", signing_passphrase=PASSPHRASE, expires_in="14d", log=log)
    check(second.sequence == 2 and second.previous_sequence == 1, f"publish 1.1.0: sequence {second.sequence} after {second.previous_sequence}")
    check(any(o.role == "signature" for o in second.objects), "publish 1.1.0 wrote a signature")

    server, url = start_server(site)
    try:
        report = modelcast.verify(f"{url}/manifest.json", stand_in_for=BASE_URL, allow_http=True,
                                  public_key=public_key, require_signature=True, log=log)
        check(report.passed and report.failures == 0 and report.sequence == 2, f"verify through {url}: {len(report.checks)} checks passed, sequence {report.sequence}")
        check(any(c.check == "manifest.signature" and c.status == "pass" for c in report.checks), "verify checked the manifest signature against the public key")

        # Roll back, signing with the key's text from the environment (not a file this time).
        back = modelcast.rollback(site, version="1.0.0", signing_key=(keys / "k.key").read_text(), signing_passphrase=PASSPHRASE, log=log)
        check(back.sequence == 3 and back.models[0].version == "1.0.0", f"rollback to 1.0.0: sequence {back.sequence}")
        again = modelcast.verify(f"{url}/manifest.json", stand_in_for=BASE_URL, allow_http=True, public_key=public_key, log=log)
        check(again.passed and again.sequence == 3, f"verify after the rollback: sequence {again.sequence}")

        past = modelcast.history(site, log=log)
        check([r.sequence for r in past.releases] == [3, 2, 1], f"history lists sequences {[r.sequence for r in past.releases]}")
        check(past.live is not None and past.live.action == "rollback" and dict(past.live.versions) == {"tiny-llm": "1.0.0"},
              f"the live release is the rollback to 1.0.0: {past.live}")

        # Bad input: the CLI's JSON error, as ModelcastError.
        try:
            modelcast.publish([gguf, mmproj], version="0.9.0", to=site, base_url=BASE_URL, log=log)
            check(False, "publishing a lower version raises")
        except modelcast.ModelcastError as error:
            check(error.code == 1 and error.kind == "refused" and "0.9.0" in error.message,
                  f"a lower version raises ModelcastError(code=1, kind=refused): {error.message}")
        try:
            modelcast.publish(gguf, version="2.0.0", to=site, base_url=BASE_URL, compression="zip7", log=log)
            check(False, "an unknown --compression raises")
        except modelcast.ModelcastError as error:
            check(error.code == 2 and error.kind == "usage" and "zip7" in error.message,
                  f"an unknown compression raises ModelcastError(code=2, kind=usage): {error.message}")
        check(modelcast.history(site, log=log).releases[0].sequence == 3, "the refused publishes left the target as it was")

        # A served artifact that no longer matches its SHA-256 fails verification.
        artifact = site / "models/tiny-llm/1.0.0/tiny-llm.gguf"
        original = artifact.read_bytes()
        artifact.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))
        try:
            modelcast.verify(f"{url}/manifest.json", stand_in_for=BASE_URL, allow_http=True, log=log)
            check(False, "verify of a corrupted artifact raises")
        except modelcast.VerificationFailed as error:
            failed = error.result.failed_checks
            check(error.code == 1 and error.kind == "refused" and any("tiny-llm.gguf" in c.subject + c.detail for c in failed),
                  f"a corrupted artifact raises VerificationFailed: {error.message[:160]}")
        finally:
            artifact.write_bytes(original)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    check(server.returncode is not None, f"modelcast serve stopped (status {server.returncode})")

    text = "\n".join(lines)
    key_body = (keys / "k.key").read_text().splitlines()[1]
    check(PASSPHRASE not in text and key_body not in text, f"no secret in the {len(lines)} lines the binary logged")
    shutil.rmtree(keys)
    print("smoke: all checks passed")


if __name__ == "__main__":
    main()
