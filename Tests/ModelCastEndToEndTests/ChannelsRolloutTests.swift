import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// Release channels (`--channel`, `promote`) and staged rollouts (`--rollout`, `rollout`),
/// end to end through the CLI, on a directory and on moto.
final class ChannelsRolloutTests: XCTestCase {
    let base = "https://cdn.example.com/m"

    func manifest(_ path: String) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
    }

    func version(_ manifest: [String: Any]) -> String? {
        ((manifest["models"] as? [String: Any])?["m"] as? [String: Any])?["version"] as? String
    }

    /// `verify DIR` checks every channel, and passes.
    func assertVerifies(_ target: String, channels: [String], environment: [String: String]? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
        let (result, report) = try verifyJSON([target], environment: environment)
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr, file: file, line: line)
        if channels.count > 1 {
            XCTAssertEqual(report?.channels.map(\.channel), channels, file: file, line: line)
        }
    }

    /// Channels on a directory, with no option but --channel: beta runs ahead of stable,
    /// both verify, the hosting files cover both; promote makes stable serve beta's bytes
    /// without storing anything; rollback and prune act on one channel and the other keeps
    /// verifying at every step.
    func testChannelsOnADirectory() throws {
        let scratch = try Scratch()
        let target = scratch.at("out")
        let v1 = try scratch.write("v1/m.bin", patternBytes(900, seed: 1))
        let v2 = try scratch.write("v2/m.bin", patternBytes(1100, seed: 2))
        let v3 = try scratch.write("v3/m.bin", patternBytes(1300, seed: 3))
        XCTAssertEqual(try PublishRun([v1], version: "1.0.0", baseURL: base, to: target).run().status, 0)
        let beta = try PublishRun([v2], version: "1.1.0", baseURL: base, to: target, ["--channel", "beta"]).run()
        XCTAssertEqual(beta.status, 0, beta.stderr)
        XCTAssertTrue(beta.stdout.contains("manifest: \(base)/channels/beta/manifest.json"), beta.stdout)
        XCTAssertEqual(version(try manifest(target + "/manifest.json")), "1.0.0")
        XCTAssertEqual(version(try manifest(target + "/channels/beta/manifest.json")), "1.1.0")
        XCTAssertEqual(try manifest(target + "/channels/beta/manifest.json")["channel"] as? String, "beta")
        XCTAssertTrue(FileManager.default.fileExists(atPath: target + "/manifests/channels/beta/00000001.json"))
        try assertVerifies(target, channels: ["stable", "beta"])

        // Hosting files list both manifests, whichever channel was published last.
        let headers = try String(contentsOfFile: target + "/_headers", encoding: .utf8)
        XCTAssertTrue(headers.contains("/m/manifest.json\n  Cache-Control: no-cache"), headers)
        XCTAssertTrue(headers.contains("/m/channels/beta/manifest.json\n  Cache-Control: no-cache"), headers)
        XCTAssertTrue(try String(contentsOfFile: target + "/_modelcast/nginx.conf", encoding: .utf8).contains("location = \"/m/channels/beta/manifest.json\" {"))
        for file in ["_modelcast/objects.json", "_modelcast/upload-aws.sh", "_modelcast/upload-rclone.sh", "_modelcast/upload-wrangler.sh"] {
            let text = try String(contentsOfFile: target + "/" + file, encoding: .utf8)
            for key in ["channels/beta/manifest.json", "manifests/channels/beta/00000001.json", "manifests/00000001.json", "models/m/1.0.0/m.bin", "models/m/1.1.0/m.bin"] {
                XCTAssertTrue(text.contains(key), "\(file) names \(key)")
            }
        }
        // Publishing stable again keeps beta's rules.
        XCTAssertEqual(try PublishRun([v3], version: "1.0.1", baseURL: base, to: target).run().status, 0)
        XCTAssertTrue(try String(contentsOfFile: target + "/_headers", encoding: .utf8).contains("/m/channels/beta/manifest.json"))
        try assertVerifies(target, channels: ["stable", "beta"])

        // A lower version on beta is refused there (version rules per channel), though stable has 1.0.1.
        XCTAssertNotEqual(try PublishRun([v3], version: "1.0.2", baseURL: base, to: target, ["--channel", "beta"]).run().status, 0)

        // promote: stable serves beta's exact files; nothing new is stored under models/.
        let modelsBefore = try scratch.listingOf(target + "/models")
        let promote = try modelcast(["promote", target, "--from", "beta", "--to", "stable"])
        XCTAssertEqual(promote.status, 0, promote.stderr)
        XCTAssertEqual(try scratch.listingOf(target + "/models"), modelsBefore)
        let stable = try manifest(target + "/manifest.json")
        let betaManifest = try manifest(target + "/channels/beta/manifest.json")
        XCTAssertEqual(stable["sequence"] as? Int, 3, "stable's own next sequence")
        XCTAssertEqual(stable["channel"] as? String, "stable")
        XCTAssertEqual(NSDictionary(dictionary: try XCTUnwrap(stable["models"] as? [String: Any])), NSDictionary(dictionary: try XCTUnwrap(betaManifest["models"] as? [String: Any])))
        XCTAssertEqual(((stable["rollback"] as? [String: Any])?["sequence"] as? Int), 2, "stable's previous release is its fallback")
        try assertVerifies(target, channels: ["stable", "beta"])
        // Promoting again changes nothing.
        let again = try modelcast(["promote", target, "--from", "beta"])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stdout.hasPrefix("unchanged"), again.stdout)
        XCTAssertEqual((again.stdout + again.stderr).components(separatedBy: "nothing was written").count - 1, 1, "said once: \(again.stdout + again.stderr)")

        // rollback on stable only; beta keeps 1.1.0.
        let rollback = try modelcast(["rollback", target, "--version", "1.0.1"])
        XCTAssertEqual(rollback.status, 0, rollback.stderr)
        XCTAssertEqual(version(try manifest(target + "/manifest.json")), "1.0.1")
        XCTAssertEqual(version(try manifest(target + "/channels/beta/manifest.json")), "1.1.0")
        try assertVerifies(target, channels: ["stable", "beta"])

        // prune stable to one release (and its rollback target): the promoted 1.1.0 is named
        // by no kept stable record, but it stays because beta serves it.
        let prune = try modelcast(["prune", target, "--keep", "1", "--json"])
        XCTAssertEqual(prune.status, 0, prune.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: target + "/models/m/1.1.0/m.bin"), "beta's live object stays")
        XCTAssertTrue(FileManager.default.fileExists(atPath: target + "/channels/beta/manifest.json"))
        try assertVerifies(target, channels: ["stable", "beta"])
        // The history of each channel is its own.
        let betaHistory = try modelcast(["history", target, "--channel", "beta", "--json"])
        XCTAssertEqual(betaHistory.status, 0, betaHistory.stderr)
        XCTAssertEqual(try JSONDecoder().decode(HistoryReport.self, from: Data(betaHistory.stdout.utf8)).releases.map(\.sequence), [1])
        // verify --channel checks that one only.
        let (onlyBeta, report) = try verifyJSON([target, "--channel", "beta"])
        XCTAssertEqual(onlyBeta.status, 0, onlyBeta.stdout)
        XCTAssertEqual(report?.channels.map(\.channel), ["beta"])
    }

    /// promote --model moves one model of a multi-model release; the destination's other
    /// model stays as it is, and a model lower than the destination's is refused.
    func testPromoteOneModelOfSeveral() throws {
        let scratch = try Scratch()
        let target = scratch.at("out")
        let a1 = try scratch.write("a1/a.bin", patternBytes(700, seed: 1))
        let b1 = try scratch.write("b1/b.bin", patternBytes(800, seed: 2))
        let a2 = try scratch.write("a2/a.bin", patternBytes(900, seed: 3))
        let b2 = try scratch.write("b2/b.bin", patternBytes(1000, seed: 4))
        try PublishRun(["a=" + a1, "b=" + b1], name: nil, version: "1.0.0", baseURL: base, to: target).succeeds()
        try PublishRun(["a=" + a2, "b=" + b2], name: nil, version: "2.0.0", baseURL: base, to: target, ["--channel", "beta"]).succeeds()
        let promote = try modelcast(["promote", target, "--from", "beta", "--model", "a"])
        XCTAssertEqual(promote.status, 0, promote.stderr)
        let stable = try XCTUnwrap(try manifest(target + "/manifest.json")["models"] as? [String: [String: Any]])
        XCTAssertEqual(stable["a"]?["version"] as? String, "2.0.0")
        XCTAssertEqual(stable["b"]?["version"] as? String, "1.0.0")
        try assertVerifies(target, channels: ["stable", "beta"])
        // beta going back below stable's model a is refused when promoted the other way.
        let down = try scratch.write("a0/a.bin", patternBytes(650, seed: 5))
        let beta = try modelcast(["rollback", target, "--channel", "beta", "--version", "2.0.0"])
        XCTAssertEqual(beta.status, 0, beta.stderr)
        let low = try modelcast(["publish", "a=" + down, "b=" + b2, "--version", "1.5.0", "--base-url", base, "--to", target, "--channel", "nightly"])
        XCTAssertEqual(low.status, 0, low.stderr)
        let refused = try modelcast(["promote", target, "--from", "nightly", "--model", "a"])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("version 1.5.0 of model a is lower than the live version 2.0.0; to go back, use rollback --channel stable"), refused.stderr)
    }

    /// Two publishes to two channels of one S3 target at the same moment both land, each
    /// channel with its own history, and the target verifies.
    func testTwoChannelsPublishedAtOnceOnS3() throws {
        let moto = try MotoS3()
        let scratch = try Scratch()
        let target = "s3://\(moto.bucket)/race"
        let first = try modelcast(["publish", try scratch.write("v0/m.bin", patternBytes(500, seed: 9)), "--name", "m", "--version", "1.0.0",
                                   "--base-url", base, "--to", target], environment: moto.environment)
        XCTAssertEqual(first.status, 0, first.stderr)
        let files = [try scratch.write("s/m.bin", patternBytes(3 << 20, seed: 10)), try scratch.write("b/m.bin", patternBytes(3 << 20, seed: 11))]
        let results = ResultsBox()
        let (environment, base) = (moto.environment, self.base)
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let channel = index == 0 ? "stable" : "beta"
            results.set(index, try? modelcast(["publish", files[index], "--name", "m", "--version", "1.1.\(index)", "--channel", channel,
                                               "--base-url", base, "--to", target], environment: environment))
        }
        for index in 0..<2 { XCTAssertEqual(results.get(index)?.status, 0, results.get(index)?.stderr ?? "") }
        let (verified, report) = try verifyJSON([target], environment: moto.environment)
        XCTAssertEqual(verified.status, 0, verified.stdout)
        XCTAssertEqual(report?.channels.map(\.channel), ["stable", "beta"])
        XCTAssertEqual(report?.channels.map(\.sequence), [2, 1])
    }

    /// Bad channel input is refused, naming the value, and leaves the target as it was.
    func testBadChannelInputIsRefused() throws {
        let scratch = try Scratch()
        let target = scratch.at("out")
        let v1 = try scratch.write("v1/m.bin", patternBytes(900, seed: 1))
        XCTAssertEqual(try PublishRun([v1], version: "1.0.0", baseURL: base, to: target).run().status, 0)
        let before = try snapshot(target)
        for (arguments, expected) in [
            (["publish", v1, "--name", "m", "--version", "1.0.1", "--base-url", base, "--to", target, "--channel", "Beta"], "channel 'Beta'"),
            (["publish", v1, "--name", "m", "--version", "1.0.1", "--base-url", base, "--to", target, "--manifest-key", "channels/x/manifest.json"], "manifest key 'channels/x/manifest.json'"),
            (["promote", target, "--from", "beta"], "channel beta has nothing published"),
            (["promote", target, "--from", "stable", "--to", "stable"], "--from and --to are both stable"),
            (["rollout", target, "--percent", "50"], "no staged rollout is in progress"),
            (["rollback", target, "--channel", "nightly", "--version", "1.0.0"], "nothing is published at \(target)/channels/nightly/manifest.json"),
            (["promote", target, "--from", "stable", "--to", "beta", "--model", "zzz"], "--model zzz: channel stable's live release has no model zzz (it has m)"),
            (["verify", target, "--channel", "Bad"], "channel 'Bad'"),
            (["rollout", target, "--percent", "150%"], "percentage '150%' is above 100%"),
            (["rollout", "simulate", target], "\(target) has no staged rollout: sequence 1 goes to every device"),
            (["rollout", "simulate", target, "--at", "soon"], "--at 'soon' is neither an RFC 3339 time"),
            (["publish", v1, "--name", "m", "--version", "1.0.1", "--base-url", base, "--to", target, "--rollout", "10%", "--rollout-schedule", "1%"],
             "give --rollout or --rollout-schedule, not both"),
            (["publish", v1, "--name", "m", "--version", "1.0.1", "--base-url", base, "--to", target, "--rollout", "0%"], "--rollout 0%: a rollout starts above 0%"),
            (["publish", v1, "--name", "m", "--version", "1.0.1", "--base-url", base, "--to", target, "--rollout-schedule", "1%,10%"],
             "--rollout-schedule step '10%' needs @DELAY"),
        ] {
            let result = try modelcast(arguments)
            XCTAssertNotEqual(result.status, 0, arguments.joined(separator: " "))
            XCTAssertTrue(result.stderr.contains(expected), "\(arguments): \(result.stderr)")
        }
        XCTAssertEqual(try snapshot(target), before)
    }

    /// A staged rollout's life on a directory: the block in the manifest, a new release
    /// refused while it runs, raising keeps every device of the cohort, halt sends every
    /// device to the fallback, complete makes the candidate plain; each step verifies.
    func testRolloutLifecycleOnADirectory() throws {
        let scratch = try Scratch()
        let target = scratch.at("out")
        let v1 = try scratch.write("v1/m.bin", patternBytes(900, seed: 1))
        let v2 = try scratch.write("v2/m.bin", patternBytes(1100, seed: 2))
        let v3 = try scratch.write("v3/m.bin", patternBytes(1300, seed: 3))
        let first = try PublishRun([v1], version: "1.0.0", baseURL: base, to: target, ["--rollout", "10%"]).run()
        XCTAssertNotEqual(first.status, 0, "nothing to fall back to")
        XCTAssertTrue(first.stderr.contains("publish the first release without it"), first.stderr)
        XCTAssertEqual(try PublishRun([v1], version: "1.0.0", baseURL: base, to: target).run().status, 0)
        let started = try PublishRun([v2], version: "1.1.0", baseURL: base, to: target, ["--rollout", "10%"]).run()
        XCTAssertEqual(started.status, 0, started.stderr)
        var live = try manifest(target + "/manifest.json")
        let rollout = try XCTUnwrap(live["rollout"] as? [String: Any])
        XCTAssertEqual(rollout["percent"] as? Int, 10)
        let salt = try XCTUnwrap(rollout["salt"] as? String)
        XCTAssertEqual(salt.count, 32)
        XCTAssertEqual(version(live), "1.1.0", "models are the candidate")
        XCTAssertEqual(((live["rollback"] as? [String: Any])?["sequence"] as? Int), 1, "the fallback")
        try assertVerifies(target, channels: ["stable"])
        let verifyText = try modelcast(["verify", target])
        XCTAssertTrue(verifyText.stdout.contains("PASS  manifest.rollout"), verifyText.stdout)
        XCTAssertTrue(verifyText.stdout.contains("rollback m 1.0.0/m.bin"), "the fallback's objects are checked")

        // simulate prints what the rule gives, and agrees with the rule itself.
        let simulated = try modelcast(["rollout", "simulate", target, "--devices", "100000", "--json"])
        XCTAssertEqual(simulated.status, 0, simulated.stderr)
        let simulation = try JSONDecoder().decode(RolloutSimulation.self, from: Data(simulated.stdout.utf8))
        let rule = Rollout(basisPoints: 1_000, salt: salt, startedAt: "2026-01-01T00:00:00Z")
        let cohort10 = Set((0..<100_000).filter { rule.selects(deviceID: "device-\($0)", at: Date()) })
        XCTAssertEqual(simulation.candidate.devices, cohort10.count)
        XCTAssertEqual(simulation.candidate.percent, 10, accuracy: 0.5)
        XCTAssertEqual(simulation.fallback.versions, ["m": "1.0.0"])

        // Another release while it runs: refused, target untouched.
        let before = try snapshot(target)
        let refused = try PublishRun([v3], version: "1.2.0", baseURL: base, to: target).run()
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("a staged rollout of sequence 2 is in progress"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("modelcast rollout \(target) --complete"), refused.stderr)
        XCTAssertEqual(try snapshot(target), before)
        // The same release again is unchanged.
        let same = try PublishRun([v2], version: "1.1.0", baseURL: base, to: target, ["--rollout", "10%"]).run()
        XCTAssertEqual(same.status, 0, same.stderr)
        XCTAssertTrue(same.stdout.hasPrefix("unchanged"), same.stdout)

        // Raise to 50%: same salt, every device of the 10% cohort stays.
        XCTAssertEqual(try modelcast(["rollout", target, "--percent", "50"]).status, 0)
        live = try manifest(target + "/manifest.json")
        XCTAssertEqual((live["rollout"] as? [String: Any])?["salt"] as? String, salt)
        XCTAssertEqual((live["rollout"] as? [String: Any])?["percent"] as? Int, 50)
        XCTAssertEqual(live["sequence"] as? Int, 3)
        let raised = try JSONDecoder().decode(RolloutSimulation.self, from: Data(try modelcast(["rollout", "simulate", target, "--json"]).stdout.utf8))
        XCTAssertEqual(raised.candidate.percent, 50, accuracy: 0.5)
        let rule50 = Rollout(basisPoints: 5_000, salt: salt, startedAt: "2026-01-01T00:00:00Z")
        XCTAssertTrue(cohort10.allSatisfy { rule50.selects(deviceID: "device-\($0)", at: Date()) })
        try assertVerifies(target, channels: ["stable"])

        // Halt: every device on the fallback.
        XCTAssertEqual(try modelcast(["rollout", target, "--halt"]).status, 0)
        let halted = try JSONDecoder().decode(RolloutSimulation.self, from: Data(try modelcast(["rollout", "simulate", target, "--json"]).stdout.utf8))
        XCTAssertEqual(halted.candidate.devices, 0)
        XCTAssertEqual(halted.fallback.devices, 100_000)
        let complete = try modelcast(["rollout", target, "--complete"])
        XCTAssertNotEqual(complete.status, 0)
        XCTAssertTrue(complete.stderr.contains("is halted"), complete.stderr)
        try assertVerifies(target, channels: ["stable"])

        // After a halt a fix goes out (its fallback is still 1.0.0, what every device runs).
        let fix = try PublishRun([v3], version: "1.2.0", baseURL: base, to: target, ["--rollout", "20%"]).run()
        XCTAssertEqual(fix.status, 0, fix.stderr)
        live = try manifest(target + "/manifest.json")
        XCTAssertEqual(((live["rollback"] as? [String: Any])?["sequence"] as? Int), 1)
        XCTAssertNotEqual((live["rollout"] as? [String: Any])?["salt"] as? String, salt, "a new rollout has its own salt")
        // Complete: the plain release, no rollout block.
        XCTAssertEqual(try modelcast(["rollout", target, "--complete"]).status, 0)
        live = try manifest(target + "/manifest.json")
        XCTAssertNil(live["rollout"])
        XCTAssertEqual(version(live), "1.2.0")
        let none = try modelcast(["rollout", target, "--halt"])
        XCTAssertNotEqual(none.status, 0)
        XCTAssertTrue(none.stderr.contains("no staged rollout is in progress"), none.stderr)
        try assertVerifies(target, channels: ["stable"])
    }

    /// A schedule is written with absolute times into the manifest; simulate at several
    /// times gives each step's share.
    func testScheduleIsEvaluatedAtEachStep() throws {
        let scratch = try Scratch()
        let target = scratch.at("out")
        XCTAssertEqual(try PublishRun([try scratch.write("v1/m.bin", patternBytes(900, seed: 1))], version: "1.0.0", baseURL: base, to: target).run().status, 0)
        let epoch = pinnedEnvironment(epoch: 1_800_000_000)
        let result = try PublishRun([try scratch.write("v2/m.bin", patternBytes(1100, seed: 2))], version: "1.1.0", baseURL: base, to: target, ["--rollout-schedule", "1%,10%@24h,50%@72h,100%@7d"], environment: epoch).run()
        XCTAssertEqual(result.status, 0, result.stderr)
        let schedule = try XCTUnwrap((try manifest(target + "/manifest.json")["rollout"] as? [String: Any])?["schedule"] as? [[String: Any]])
        XCTAssertEqual(schedule.compactMap { $0["at"] as? String }, ["2027-01-15T08:00:00Z", "2027-01-16T08:00:00Z", "2027-01-18T08:00:00Z", "2027-01-22T08:00:00Z"])
        for (at, expected) in [("2027-01-15T07:00:00Z", 0.0), ("2027-01-15T09:00:00Z", 1), ("2027-01-16T09:00:00Z", 10), ("2027-01-19T00:00:00Z", 50), ("2027-02-01T00:00:00Z", 100)] {
            let simulated = try modelcast(["rollout", "simulate", target, "--at", at, "--json"])
            XCTAssertEqual(simulated.status, 0, simulated.stderr)
            let simulation = try JSONDecoder().decode(RolloutSimulation.self, from: Data(simulated.stdout.utf8))
            XCTAssertEqual(simulation.percent, expected, at)
            XCTAssertEqual(simulation.candidate.percent, expected, accuracy: 0.5, at)
        }
        // The JSON Schema takes the rollout block and refuses one without a salt, above 100%, or with no fallback.
        let script = """
            import json, sys, jsonschema
            validator = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))
            doc = json.load(open(sys.argv[2]))
            validator.validate(doc)
            for damage in ["salt", "percent", "rollback"]:
                broken = json.loads(json.dumps(doc))
                if damage == "salt": del broken["rollout"]["salt"]
                if damage == "percent": broken["rollout"]["schedule"][0]["percent"] = 101
                if damage == "rollback": del broken["rollback"]
                assert not validator.is_valid(broken), damage
            print("ok")
            """
        let schema = try runProcess("/usr/bin/env", ["python3", "-c", script, repositoryRoot + "/schema/modelcast-manifest.schema.json", target + "/manifest.json"])
        XCTAssertEqual(schema.stdout, "ok\n", schema.stderr)
        let text = try modelcast(["rollout", "simulate", target, "--at", "2027-01-16T09:00:00Z"])
        XCTAssertTrue(text.stdout.hasPrefix("rollout of sequence 2 at 2027-01-16T09:00:00Z: 10% of devices on the candidate (schedule step 2)"), text.stdout)
    }

    /// Profiles whose clients have no cohort rule refuse --rollout, naming the profile;
    /// channels still work for them.
    func testRolloutIsRefusedForProfilesWithoutACohortRule() throws {
        let scratch = try Scratch()
        let v1 = try scratch.write("v1/m.bin", patternBytes(900, seed: 1))
        for profile in ["nomlens", "latest"] {
            let target = scratch.at("out-\(profile)")
            let extra = profile == "nomlens" ? ["--meta", "num_classes=3", "--meta", "class_list_version=1", "--meta", "training_date=2026-01-01"] : []
            let result = try PublishRun([v1], version: "1.0.0", baseURL: base, to: target, ["--profile", profile, "--rollout", "10%"] + extra).run()
            XCTAssertNotEqual(result.status, 0)
            XCTAssertTrue(result.stderr.contains("\(profile) clients have no cohort rule"), result.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: target + "/manifest.json"))
            let beta = try PublishRun([v1], version: "1.0.0", baseURL: base, to: target, ["--profile", profile, "--channel", "beta"] + extra).run()
            XCTAssertEqual(beta.status, 0, beta.stderr)
        }
    }

    /// A signed rollout: changing its percentage in the manifest breaks the signature, and
    /// `rollout --percent` without the key is refused (the live manifest is signed).
    func testTamperedRolloutBlockFailsSignatureVerification() throws {
        let scratch = try Scratch()
        let target = scratch.at("out")
        let key = scratch.at("key")
        let keygen = try modelcast(["keygen", "--unencrypted", "--public-key", key + ".pub", "--secret-key", key + ".key"])
        XCTAssertEqual(keygen.status, 0, keygen.stderr)
        XCTAssertEqual(try PublishRun([try scratch.write("v1/m.bin", patternBytes(900, seed: 1))], version: "1.0.0", baseURL: base, to: target, ["--sign", key + ".key"]).run().status, 0)
        let started = try PublishRun([try scratch.write("v2/m.bin", patternBytes(1100, seed: 2))], version: "1.1.0", baseURL: base, to: target, ["--sign", key + ".key", "--rollout", "5%"]).run()
        XCTAssertEqual(started.status, 0, started.stderr)
        let (good, _) = try verifyJSON([target, "--public-key", key + ".pub"])
        XCTAssertEqual(good.status, 0, good.stdout)
        let unsigned = try modelcast(["rollout", target, "--percent", "50"])
        XCTAssertNotEqual(unsigned.status, 0)
        XCTAssertTrue(unsigned.stderr.contains("is signed"), unsigned.stderr)
        XCTAssertEqual(try modelcast(["rollout", target, "--percent", "50", "--sign", key + ".key"]).status, 0)
        let (raised, _) = try verifyJSON([target, "--public-key", key + ".pub"])
        XCTAssertEqual(raised.status, 0, raised.stdout)

        let path = target + "/manifest.json"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let tampered = text.replacingOccurrences(of: "\"percent\": 50", with: "\"percent\": 100")
        XCTAssertNotEqual(tampered, text)
        try tampered.write(toFile: path, atomically: true, encoding: .utf8)
        let (bad, report) = try verifyJSON([target, "--public-key", key + ".pub"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertFalse(checks(report, "manifest.signature", .fail).isEmpty, bad.stdout)
    }

    /// Channels, promote, rollout, rollback and prune on moto: every step keeps every
    /// channel verifying through the S3 API.
    func testChannelsAndRolloutsOnS3() throws {
        let moto = try MotoS3()
        let scratch = try Scratch()
        let target = "s3://\(moto.bucket)/ml"
        let environment = moto.environment
        func run(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> ProcessOutput {
            let result = try modelcast(arguments, environment: environment)
            XCTAssertEqual(result.status, 0, "\(arguments): \(result.stderr)", file: file, line: line)
            return result
        }
        func verifyAll(_ channels: [String], file: StaticString = #filePath, line: UInt = #line) throws {
            let (result, report) = try verifyJSON([target], environment: environment)
            XCTAssertEqual(result.status, 0, result.stdout + result.stderr, file: file, line: line)
            if channels.count > 1 { XCTAssertEqual(report?.channels.map(\.channel), channels, file: file, line: line) }
        }
        let v1 = try scratch.write("v1/m.bin", patternBytes(900, seed: 1))
        let v2 = try scratch.write("v2/m.bin", patternBytes(1100, seed: 2))
        let v3 = try scratch.write("v3/m.bin", patternBytes(1300, seed: 3))
        _ = try run(["publish", v1, "--name", "m", "--version", "1.0.0", "--base-url", base, "--to", target])
        _ = try run(["publish", v2, "--name", "m", "--version", "1.1.0", "--base-url", base, "--to", target, "--channel", "beta"])
        try verifyAll(["stable", "beta"])
        XCTAssertNotNil(try moto.listing()["ml/channels/beta/manifest.json"])
        XCTAssertNotNil(try moto.listing()["ml/manifests/channels/beta/00000001.json"])

        let putsBefore = moto.loggedRequests().filter { $0.method == "PUT" && $0.path.contains("/ml/models/") }.count
        _ = try run(["promote", target, "--from", "beta", "--to", "stable", "--rollout", "10%"])
        XCTAssertEqual(moto.loggedRequests().filter { $0.method == "PUT" && $0.path.contains("/ml/models/") }.count, putsBefore, "promote uploads no artifact")
        let stable = try XCTUnwrap(try JSONSerialization.jsonObject(with: try moto.download("ml/manifest.json")) as? [String: Any])
        XCTAssertEqual((stable["rollout"] as? [String: Any])?["percent"] as? Int, 10)
        try verifyAll(["stable", "beta"])

        _ = try run(["publish", v3, "--name", "m", "--version", "1.2.0", "--base-url", base, "--to", target, "--channel", "beta"])
        _ = try run(["rollout", target, "--percent", "50"])
        try verifyAll(["stable", "beta"])
        _ = try run(["rollout", target, "--complete"])
        try verifyAll(["stable", "beta"])
        _ = try run(["rollback", target, "--channel", "beta", "--version", "1.1.0"])
        try verifyAll(["stable", "beta"])
        _ = try run(["prune", target, "--keep", "1"])
        _ = try run(["prune", target, "--channel", "beta", "--keep", "1"])
        try verifyAll(["stable", "beta"])
        let keys = Set(try moto.listing().keys)
        XCTAssertTrue(keys.contains("ml/models/m/1.1.0/m.bin"), "both channels serve it")
        XCTAssertTrue(keys.contains("ml/models/m/1.0.0/m.bin"), "stable's completed rollout names it as its rollback target")
        XCTAssertFalse(keys.contains("ml/models/m/1.2.0/m.bin"), "beta rolled back from it and pruned it; stable never named it")
    }
}

extension Scratch {
    /// Every file under `directory`, relative, sorted.
    func listingOf(_ directory: String) throws -> [String] {
        (FileManager.default.enumerator(atPath: directory)?.allObjects as? [String] ?? []).sorted()
    }
}

/// Results of processes run on several threads.
final class ResultsBox: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Int: ProcessOutput] = [:]
    func set(_ index: Int, _ result: ProcessOutput?) { lock.lock(); results[index] = result; lock.unlock() }
    func get(_ index: Int) -> ProcessOutput? { lock.lock(); defer { lock.unlock() }; return results[index] }
}
