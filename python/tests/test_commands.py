"""Every command a pipeline runs, through the Python API against the real binary: typed
results that say what the CLI did (checked against the files it wrote), and the CLI's
errors as ModelcastError with its exit status, kind and message."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import unittest
from pathlib import Path

from support import BASE_URL, EXAMPLES, Lines, modelcast

PASSPHRASE = "python api passphrase 51c2"
CLASSIFIER = EXAMPLES / "TinyClassifier.mlpackage"
RETRAINED = EXAMPLES / "retrained" / "TinyClassifier.mlpackage"
GGUF = EXAMPLES / "tiny-llm.gguf"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class CommandTests(unittest.TestCase):
    def setUp(self) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="modelcast-api-"))
        self.addCleanup(shutil.rmtree, self.work, True)
        self.log = Lines()

    def test_keygen_and_resign(self):
        keys = self.work / "keys"
        keys.mkdir()
        pair = modelcast.keygen(public_key=keys / "k.pub", secret_key=keys / "k.key", passphrase=PASSPHRASE, log=self.log)
        self.assertEqual((pair.kind, pair.encrypted), ("minisign", True))
        self.assertEqual(pair.public_key, (keys / "k.pub").read_text().splitlines()[1])
        self.assertEqual(pair.secret_key_path, str(keys / "k.key"))
        self.assertRegex(pair.key_id or "", r"^[0-9A-F]{1,16}$")
        self.assertIn(pair.key_id, (keys / "k.pub").read_text().splitlines()[0])
        self.assertEqual((keys / "k.key").stat().st_mode & 0o777, 0o600)

        # No passphrase, and no terminal to ask on (the binary runs in a session of its own,
        # even when this process has one): refused before anything is written.
        with self.assertRaises(modelcast.ModelcastError) as raised:
            modelcast.keygen(public_key=keys / "other.pub", secret_key=keys / "other.key", log=self.log)
        self.assertEqual((raised.exception.code, raised.exception.kind), (1, "refused"))
        self.assertIn("MODELCAST_SIGNING_PASSPHRASE", raised.exception.message)
        self.assertEqual(sorted(p.name for p in keys.iterdir()), ["k.key", "k.pub"])
        with self.assertRaises(modelcast.ModelcastError) as raised:
            modelcast.keygen(public_key=keys / "k.pub", secret_key=keys / "k.key", unencrypted=True, log=self.log)
        self.assertEqual(raised.exception.code, 1)
        self.assertIn("k.key", raised.exception.message)

        site = self.work / "site"
        first = modelcast.publish(GGUF, version="1.0.0", to=site, base_url=BASE_URL, sign=keys / "k.key",
                                  signing_passphrase=PASSPHRASE, expires_in="7d", log=self.log)
        renewed = modelcast.resign(site, expires_in="30d", signing_key=(keys / "k.key").read_text(),
                                   signing_passphrase=PASSPHRASE, log=self.log)
        self.assertEqual((renewed.sequence, renewed.previous_sequence), (2, first.sequence))
        self.assertEqual(renewed.manifest["models"], first.manifest["models"])
        self.assertTrue(any(o.role == "signature" for o in renewed.objects))
        self.assertEqual(json.loads((site / "manifest.json").read_text())["sequence"], 2)

        # A wrong passphrase: the CLI's error, and no secret in it.
        wrong = "not the passphrase 9d0e"
        with self.assertRaises(modelcast.ModelcastError) as raised:
            modelcast.resign(site, expires_in="30d", sign=keys / "k.key", signing_passphrase=wrong, log=self.log)
        self.assertEqual(raised.exception.kind, "refused", raised.exception)
        for text in (str(raised.exception), repr(raised.exception), self.log.text):
            self.assertNotIn(wrong, text)
            self.assertNotIn(PASSPHRASE, text)
        self.assertEqual(json.loads((site / "manifest.json").read_text())["sequence"], 2, "the refused resign wrote nothing")

    def test_key_set_create_rotate_sign_and_push(self):
        """Issue 51: a key set created with two root keys, rotated by two people (one signs a
        pending version under ``out``, the other adds a signature offline), then pushed."""
        keys = self.work / "keys"
        keys.mkdir()
        pairs = {name: modelcast.keygen(public_key=keys / f"{name}.pub", secret_key=keys / f"{name}.key", passphrase=PASSPHRASE, log=self.log)
                 for name in ("r1", "r2", "k1", "k2")}
        site = self.work / "site"
        modelcast.publish(GGUF, version="1.0.0", to=site, base_url=BASE_URL, sign=keys / "k1.key", signing_passphrase=PASSPHRASE, log=self.log)

        created = modelcast.keys_create(site, root=[keys / "r1.pub", keys / "r2.pub"], root_threshold=2, manifest_key=[keys / "k1.pub"],
                                        sign_root=[keys / "r1.key", keys / "r2.key"], passphrase=PASSPHRASE, log=self.log)
        self.assertEqual((created.version, created.path, created.pending), (1, "keys/1.json", False))
        self.assertEqual(created.root_keys, [pairs["r1"].key_id, pairs["r2"].key_id])
        self.assertEqual([(t.key_set, t.threshold, len(t.signed_by)) for t in created.thresholds], [(1, 2, 2)])
        self.assertTrue((site / "keys" / "1.json.sigs").is_file())

        packet = self.work / "packet"
        pending = modelcast.keys_rotate(site, manifest_key=[keys / "k2.pub"], revoke=[pairs["k1"].key_id], sign_root=[keys / "r1.key"],
                                        out=packet, passphrase=PASSPHRASE, log=self.log)
        self.assertEqual((pending.version, pending.pending, pending.signed_by), (2, True, [pairs["r1"].key_id]))
        self.assertEqual(pending.sequence_floors, {"stable": 1})
        self.assertFalse((site / "keys" / "2.json").exists(), "out leaves the target alone")
        with self.assertRaises(modelcast.ModelcastError) as raised:
            modelcast.keys_push(site, packet / "keys" / "2.json", log=self.log)
        self.assertEqual((raised.exception.code, raised.exception.kind), (1, "refused"))
        self.assertIn("needs 2", raised.exception.message)

        document = (packet / "keys" / "2.json").read_bytes()
        signed = modelcast.keys_sign(packet / "keys" / "2.json", sign_root=[keys / "r2.key"], passphrase=PASSPHRASE, log=self.log)
        self.assertEqual((signed.pending, signed.added, signed.already_signed), (False, [pairs["r2"].key_id], []))
        self.assertEqual((packet / "keys" / "2.json").read_bytes(), document)
        pushed = modelcast.keys_push(site, packet / "keys" / "2.json", log=self.log)
        self.assertEqual((pushed.version, pushed.pending, pushed.target), (2, False, str(site)))
        self.assertEqual((site / "keys" / "2.json").read_bytes(), document)

        # A wrong passphrase: the CLI's error, and no secret in it.
        wrong = "not the passphrase 7a41"
        with self.assertRaises(modelcast.ModelcastError) as raised:
            modelcast.keys_rotate(site, sign_root=[keys / "r1.key"], out=self.work / "other", passphrase=wrong, log=self.log)
        self.assertEqual(raised.exception.kind, "refused", raised.exception)
        for text in (str(raised.exception), repr(raised.exception), self.log.text):
            self.assertNotIn(wrong, text)
            self.assertNotIn(PASSPHRASE, text)

    def test_model_signing_keygen_sign_model_and_inspect(self):
        pair = modelcast.keygen(model_signing=True, public_key=self.work / "m.pub", private_key=self.work / "m.pem",
                                unencrypted=True, log=self.log)
        self.assertEqual((pair.kind, pair.encrypted, pair.key_id), ("model-signing", False, None))
        self.assertTrue(pair.hint)
        model = self.work / "tiny-llm.gguf"
        shutil.copyfile(GGUF, model)
        signed = modelcast.sign_model(model, key=self.work / "m.pem", signature=self.work / "model.sig", log=self.log)
        self.assertEqual((signed.files, signed.key_hint, signed.signature), (1, pair.hint, str(self.work / "model.sig")))
        self.assertRegex(signed.subject_sha256, r"^[0-9a-f]{64}$")
        self.assertTrue((self.work / "model.sig").is_file())

        found = modelcast.inspect(model, model_signature=self.work / "model.sig", public_key=self.work / "m.pub", log=self.log)
        self.assertEqual((found.kind, found.details["tensors"], found.details["architecture"]), ("gguf", 2, "llama"))
        self.assertEqual((found.artifact.format, found.artifact.sha256), ("file", sha256(GGUF)))
        self.assertIsNotNone(found.model_signature)
        self.assertEqual(found.model_signature["subject_sha256"], signed.subject_sha256)
        self.assertEqual(found.interface["format"], "gguf")

        model.write_bytes(model.read_bytes() + b"\0")
        with self.assertRaises(modelcast.ModelcastError) as raised:
            modelcast.inspect(model, model_signature=self.work / "model.sig", public_key=self.work / "m.pub", log=self.log)
        self.assertEqual(raised.exception.code, 1)
        with self.assertRaises(modelcast.ModelcastError) as raised:
            modelcast.sign_model(model, key=self.work / "m.pem", signature=self.work / "model.sig", log=self.log)
        self.assertEqual(raised.exception.code, 1, "an existing signature is kept without force")

    def test_inspect_and_pack(self):
        unhashed = modelcast.inspect(CLASSIFIER, no_hash=True, log=self.log)
        self.assertEqual((unhashed.kind, unhashed.artifact.format, unhashed.artifact.sha256), ("mlpackage", "zip", None))
        out = self.work / "out"
        packed = modelcast.pack(CLASSIFIER, out=f"{out}/", log=self.log)
        self.assertIsInstance(packed, modelcast.PackedArtifact)
        self.assertEqual((packed.format, packed.compression), ("zip", "store"))
        self.assertEqual((packed.sha256, packed.size), (sha256(Path(packed.path)), Path(packed.path).stat().st_size))
        self.assertEqual(modelcast.inspect(CLASSIFIER, log=self.log).artifact.sha256, packed.sha256)
        tree = modelcast.pack(CLASSIFIER, zip=False, out=f"{out}/", log=self.log)
        self.assertIsInstance(tree, modelcast.PackedTree)
        self.assertEqual(tree.size, sum(f.size for f in tree.files))
        self.assertEqual(unhashed.install_size, tree.size, "a directory installs as its files, zipped or not")
        self.assertIsNone(unhashed.declared_licence)
        for file in tree.files:
            self.assertEqual(file.sha256, sha256(CLASSIFIER / file.path), file.path)
        with self.assertRaises(modelcast.ModelcastError) as raised:
            modelcast.pack(GGUF, zip=False, compression="deflate", log=self.log)
        self.assertEqual((raised.exception.code, raised.exception.kind), (2, "usage"))
        with self.assertRaises(modelcast.ModelcastError) as raised:
            modelcast.inspect(self.work / "missing.gguf", log=self.log)
        self.assertIn("missing.gguf", raised.exception.message)

    def test_a_meta_key_with_an_equals_sign_is_refused_naming_it(self):
        # --meta a=b=c is key "a", value "b=c": the key would be published changed.
        site = self.work / "site"
        with self.assertRaises(ValueError) as raised:
            modelcast.publish(GGUF, version="1.0.0", to=site, base_url=BASE_URL, meta={"a=b": "c"}, log=self.log)
        self.assertIn("'a=b'", str(raised.exception))
        self.assertFalse(site.exists())
        published = modelcast.publish(GGUF, version="1.0.0", to=site, base_url=BASE_URL, meta={"a": "b=c"}, log=self.log)
        self.assertEqual(published.manifest["models"]["tiny-llm"]["meta"], {"a": "b=c"}, "an '=' in a value is kept")

    def test_bad_arguments_are_refused_naming_them(self):
        site = self.work / "site"
        modelcast.publish(GGUF, version="1.0.0", to=site, base_url=BASE_URL, log=self.log)
        modelcast.publish(GGUF, version="1.1.0", to=site, base_url=BASE_URL, rollout=10, log=self.log)
        before = (site / "manifest.json").read_bytes()
        for call, kind, named in [
            (lambda: modelcast.rollout(site, percent=150, log=self.log), "refused", "'150'"),
            (lambda: modelcast.rollout(site, percent=-5, log=self.log), "refused", "'-5'"),
            (lambda: modelcast.rollout(site, percent="0.001%", log=self.log), "refused", "'0.001%'"),
            (lambda: modelcast.rollout(site, halt=True, complete=True, log=self.log), "usage", "--halt and --complete"),
            (lambda: modelcast.rollout(site, percent=20, halt=True, log=self.log), "usage", "--percent, --halt"),
            (lambda: modelcast.prune(site, keep=-1, log=self.log), "refused", "--keep -1"),
            (lambda: modelcast.rollout_simulate(site, devices=0, log=self.log), "usage", "got 0"),
        ]:
            with self.assertRaises(modelcast.ModelcastError) as raised:
                call()
            self.assertEqual(raised.exception.kind, kind, raised.exception)
            self.assertIn(named, raised.exception.message)
        with self.assertRaises(TypeError) as raised:
            modelcast.prune(site, keep=True, log=self.log)
        self.assertIn("True", str(raised.exception))
        self.assertEqual((site / "manifest.json").read_bytes(), before, "nothing written")

    def test_verify_of_a_host_not_reached_is_an_io_failure_with_the_report(self):
        # Port 9 (discard) on loopback: nothing listens there.
        source = "http://127.0.0.1:9/models/manifest.json"
        with self.assertRaises(modelcast.VerificationFailed) as raised:
            modelcast.verify(source, allow_http=True, retries=0, log=self.log)
        self.assertEqual((raised.exception.code, raised.exception.kind), (3, "io"), raised.exception)
        self.assertIn("127.0.0.1:9", raised.exception.message)
        self.assertFalse(raised.exception.result.passed)
        report = modelcast.verify(source, allow_http=True, retries=0, check=False, log=self.log)
        self.assertEqual([c.check for c in report.failed_checks], ["manifest.fetch"])

    def test_channels_promote_rollout_simulate_report_and_prune(self):
        site = self.work / "site"
        modelcast.publish(CLASSIFIER, version="1.0.0", to=site, base_url=BASE_URL, log=self.log)
        modelcast.publish(RETRAINED, version="1.1.0", channel="beta", to=site, base_url=BASE_URL, log=self.log)

        promoted = modelcast.promote(site, from_channel="beta", rollout=10, log=self.log)
        self.assertEqual((promoted.sequence, promoted.previous_sequence), (2, 1))
        self.assertEqual(promoted.manifest["rollout"]["percent"], 10)
        self.assertEqual([m.version for m in promoted.models], ["1.1.0"])
        self.assertEqual([o.role for o in promoted.objects if o.role == "artifact"], [], "nothing uploaded")

        simulated = modelcast.rollout_simulate(site, devices=20000, log=self.log)
        self.assertIsInstance(simulated, modelcast.RolloutSimulation)
        self.assertEqual((simulated.sequence, simulated.percent, simulated.devices), (2, 10, 20000))
        self.assertEqual(dict(simulated.candidate.versions), {"TinyClassifier": "1.1.0"})
        self.assertEqual(dict(simulated.fallback.versions), {"TinyClassifier": "1.0.0"})
        self.assertEqual(simulated.candidate.devices + simulated.fallback.devices, 20000)
        self.assertTrue(5 < simulated.candidate.percent < 15, simulated.candidate)
        # One device: the side the documented rule (docs/releases.md) puts it on, computed here.
        salt = promoted.manifest["rollout"]["salt"]
        for device_id in ["device-0", "device-1", "device-2", "device-3"]:
            bucket = int.from_bytes(hashlib.sha256(f"{salt}:{device_id}".encode()).digest()[:8], "big") % 10000
            device = modelcast.rollout_simulate(site, device="platform=ios", device_id=device_id, log=self.log)
            self.assertIsInstance(device, modelcast.DeviceSimulation)
            self.assertEqual(device.takes, "candidate" if bucket < 10 * 100 else "fallback", f"{device_id}: bucket {bucket}")
            self.assertEqual([(p.model, p.version) for p in device.candidate.models], [("TinyClassifier", "1.1.0")])
            self.assertEqual([(p.model, p.version) for p in device.fallback.models], [("TinyClassifier", "1.0.0")])
        self.assertIsNone(modelcast.rollout_simulate(site, device="platform=ios", log=self.log).takes, "no device_id: no side")

        raised_to = modelcast.rollout(site, percent="50%", log=self.log)
        self.assertEqual((raised_to.sequence, raised_to.manifest["rollout"]["percent"]), (3, 50))
        halted = modelcast.rollout(site, halt=True, log=self.log)
        self.assertEqual(halted.manifest["rollout"]["percent"], 0)
        dry = modelcast.rollout(site, percent=25, dry_run=True, log=self.log)
        self.assertTrue(dry.dry_run)
        self.assertEqual(json.loads((site / "manifest.json").read_text())["sequence"], 4, "a dry run writes nothing")
        with self.assertRaises(modelcast.ModelcastError) as raised:
            modelcast.rollout(site, percent=1e-07, log=self.log)
        self.assertEqual(raised.exception.kind, "refused", "a share too fine for the CLI is refused, not rounded to 0 (a halt)")
        self.assertIn("'0.0000001'", raised.exception.message)
        with self.assertRaises(modelcast.ModelcastError) as raised:
            modelcast.rollout(site, complete=True, log=self.log)
        self.assertIn("halted", raised.exception.message, "a halted rollout is raised again before it is completed")
        modelcast.rollout(site, percent=25, log=self.log)
        completed = modelcast.rollout(site, complete=True, log=self.log)
        self.assertNotIn("rollout", completed.manifest)
        with self.assertRaises(modelcast.ModelcastError) as raised:
            modelcast.rollout(site, complete=True, log=self.log)
        self.assertEqual((raised.exception.code, raised.exception.kind, raised.exception.command), (1, "refused", "rollout set"))
        with self.assertRaises(modelcast.ModelcastError) as raised:
            modelcast.rollout(site, log=self.log)
        self.assertEqual(raised.exception.code, 2)
        self.assertIn("--percent", raised.exception.message)
        with self.assertRaises(modelcast.ModelcastError) as raised:
            modelcast.rollout_simulate(site, log=self.log)
        self.assertEqual(raised.exception.code, 1)
        self.assertIn("has no staged rollout", raised.exception.message)

        page = modelcast.report(site, log=self.log)
        self.assertEqual(page.format, "modelcast-report/1")
        self.assertEqual(sorted(c.name for c in page.channels), ["beta", "stable"])
        stable = page.channel("stable")
        self.assertEqual(stable.live.sequence, 6)
        self.assertEqual([(m.name, m.version) for m in stable.live.models], [("TinyClassifier", "1.1.0")])
        self.assertEqual([e.sequence for e in stable.history], [6, 5, 4, 3, 2, 1])
        self.assertEqual(stable.rollout.state, "complete")
        self.assertEqual([(e.action, e.rollout_percent) for e in stable.history],
                         [("rollout-complete", None), ("rollout", 25), ("rollout-halt", 0), ("rollout", 50), ("rollout", 10), ("publish", None)])
        self.assertEqual((stable.rollout.curve[0].percent, stable.rollout.curve[-1].percent), (10, 100))
        self.assertEqual(stable.signature.state, "unsigned")
        self.assertIsNone(page.passed)
        verified = modelcast.report(site, verify=True, channel="stable", log=self.log)
        self.assertTrue(verified.passed)

        # A corrupted artifact: the report still comes back, saying the check failed.
        artifact = site / stable.live.models[0].files[0].key
        original = artifact.read_bytes()
        artifact.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))
        failed = modelcast.report(site, verify=True, channel="stable", log=self.log)
        self.assertFalse(failed.passed)
        self.assertTrue(any(c.status == "fail" for c in failed.channel("stable").verify.checks))
        artifact.write_bytes(original)

        planned = modelcast.prune(site, keep=1, dry_run=True, log=self.log)
        self.assertTrue(planned.dry_run)
        self.assertTrue(planned.deleted, "superseded records to delete")
        self.assertTrue(all((site / key).exists() for key in planned.deleted), "a dry run deletes nothing")
        pruned = modelcast.prune(site, keep=1, log=self.log)
        self.assertEqual(pruned.deleted, planned.deleted)
        self.assertEqual(pruned.kept_sequences, [1, 6], "the live release and its rollback target (1.0.0, the fallback)")
        self.assertFalse(any((site / key).exists() for key in pruned.deleted))
        self.assertTrue(modelcast.verify(site, log=self.log).passed)


if __name__ == "__main__":
    unittest.main()
