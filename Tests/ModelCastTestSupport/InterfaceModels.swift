import Foundation
import ModelCastCore

/// The models `scripts/make-interface-models.py` writes with each format's own writer
/// (coremltools, gguf-py, onnx) and its `expected.json`, made once for every test process
/// that needs them: `--parallel` runs each test in a process of its own, and the script
/// takes seconds. They are kept under a name made of the script's SHA-256 (another script,
/// other models), written beside it and renamed into place, so a process finds them whole
/// or makes them itself.
package struct InterfaceModels: Sendable {
    package let path: String

    /// `path/relative`.
    package func at(_ relative: String) -> String { path + "/" + relative }

    /// The models, made by this process or an earlier one.
    package static func made() throws -> InterfaceModels { try shared.get() }

    private static let shared: Result<InterfaceModels, any Error> = Result {
        let script = repositoryRoot + "/scripts/make-interface-models.py"
        let digest = try SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: script))).hex.prefix(16)
        let out = (NSTemporaryDirectory() as NSString).appendingPathComponent("modelcast-interface-\(getuid())-\(digest)")
        if FileManager.default.fileExists(atPath: out + "/expected.json") { return InterfaceModels(path: out) }
        let temporary = out + ".\(getpid()).tmp"
        try? FileManager.default.removeItem(atPath: temporary)
        let made = try runProcess("/usr/bin/env", ["python3", script, temporary])
        guard made.status == 0 else {
            try? FileManager.default.removeItem(atPath: temporary)
            throw NSError(domain: "make-interface-models.py", code: Int(made.status), userInfo: [NSLocalizedDescriptionKey: made.stderr])
        }
        // Another process may have renamed its copy into place first: then this one goes.
        if rename(temporary, out) != 0 { try? FileManager.default.removeItem(atPath: temporary) }
        return InterfaceModels(path: out)
    }
}
