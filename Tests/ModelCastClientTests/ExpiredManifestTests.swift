import Foundation
import XCTest
import ModelCastClient
import ModelCastCore
import ModelCastTestSupport

/// A frozen server cannot keep a device on an expired manifest with a 304: the device
/// keeps the expiry of the manifest it trusts (`state.json`) and, once it has passed,
/// reports the manifest expired exactly as a fresh device does. A 304 the device did not
/// ask for (no trusted manifest, no `If-None-Match`) is no answer at all.
final class ExpiredManifestTests: XCTestCase {
    /// The error `updater.update()` throws (a failure of the test when it returns).
    func failure(of updater: ModelUpdater, _ label: String, file: StaticString = #filePath, line: UInt = #line) async -> ClientError? {
        do {
            let outcome = try await updater.update()
            XCTFail("\(label): \(outcome)", file: file, line: line)
        } catch let error as ClientError {
            return error
        } catch {
            XCTFail("\(label): \(error)", file: file, line: line)
        }
        return nil
    }

    func testA304DoesNotKeepAnExpiredManifestAlive() async throws {
        let site = try ClientTests.Site()
        try site.publish([try site.work.write("v1/m.bin", patternBytes(2000, seed: 1))], version: "1.0.0", ["--expires-in", "30d"])
        try site.start()
        let device = try ModelUpdater(site.configuration())
        let installed = try await device.update()
        XCTAssertEqual(installed, .updated(sequence: 1, models: ["m": "1.0.0"]))
        let unchanged = try await device.update()
        XCTAssertEqual(unchanged, .notModified, "while the manifest is fresh its ETag still makes a 304")

        // The same server, the same manifest (frozen), 40 days on.
        let later = Date().addingTimeInterval(40 * 86_400)
        let fresh = try ModelUpdater(site.configuration(directory: "fresh", now: { later }))
        let freshError = await failure(of: fresh, "a fresh device")
        guard case .expired = freshError else { return XCTFail("a fresh device: \(String(describing: freshError))") }
        let frozen = try ModelUpdater(site.configuration(now: { later }))
        let frozenError = await failure(of: frozen, "the device holding the ETag")
        XCTAssertEqual(frozenError, freshError, "the same error a fresh device gets, not 'not modified'")
        XCTAssertEqual(frozen.installed("m")?.version, "1.0.0", "the installed model stays")

        // A state.json written before the expiry was kept: it loads, and its ETag no longer
        // stands for a fresh manifest.
        let statePath = site.work.at("device/state.json")
        var state = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: statePath))) as? [String: Any])
        XCTAssertNotNil(state["etags"] as? [String: String], "the state holds an ETag")
        state["trusted"] = nil
        try JSONSerialization.data(withJSONObject: state).write(to: URL(fileURLWithPath: statePath))
        let older = try ModelUpdater(site.configuration(now: { later }))
        let olderError = await failure(of: older, "an older state file")
        XCTAssertEqual(olderError, freshError)
        let today = try await ModelUpdater(site.configuration()).update()
        XCTAssertEqual(today, .upToDate(sequence: 1), "an older state file loads; its ETag is not sent")
    }

    /// A server that answers 304 to everything: a device that trusts no manifest yet (and
    /// sent no `If-None-Match`) is told so, not "not modified".
    func testA304ToADeviceWithoutAManifestIsNotSuccess() async throws {
        let work = try Scratch("modelcast-304")
        let port = try freeLoopbackPort()
        let script = """
            import http.server, sys
            class Handler(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    self.send_response(304)
                    self.send_header("ETag", '"frozen"')
                    self.end_headers()
                def log_message(self, *args):
                    sys.stderr.write(self.command + " " + self.path + " " + str(self.headers.get("If-None-Match")) + "\\n")
            server = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
            print("ready", flush=True)
            server.serve_forever()
            """
        let server = try BackgroundProcess("/usr/bin/env", ["python3", "-c", script, String(port)])
        XCTAssertEqual(server.firstLine, "ready")
        let manifest = URL(string: "http://127.0.0.1:\(port)/models/manifest.json")!
        let device = try ModelUpdater(ClientConfiguration(manifestURL: manifest, directory: URL(fileURLWithPath: work.at("device")), deviceID: "d", requestTimeout: 10))
        let error = await failure(of: device, "a 304 to an unconditional GET")
        XCTAssertEqual(error, .http(url: manifest.absoluteString, status: 304))
        XCTAssertTrue(server.standardError.contains("GET /models/manifest.json None"), server.standardError)
        do {
            let plan = try await device.check()
            XCTFail("check() took the 304 as success: \(String(describing: plan))")
        } catch let error as ClientError {
            XCTAssertEqual(error, .http(url: manifest.absoluteString, status: 304))
        }
    }
}
