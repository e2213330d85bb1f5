import Foundation
import ModelCastCore

/// The models a script under `scripts/` writes with each format's own writer (coremltools,
/// gguf-py, onnx): `make-interface-models.py`'s and its `expected.json` (`made()`), or
/// `make-licence-models.py`'s (`licenceModels()`), made once for every test process that
/// needs them: `--parallel` runs each test in a process of its own, and a script takes
/// seconds. They are kept under a name made of the script's SHA-256 (another script, other
/// models), written beside it and renamed into place, so a process finds them whole or
/// makes them itself.
package struct InterfaceModels: Sendable {
    package let path: String

    /// `path/relative`.
    package func at(_ relative: String) -> String { path + "/" + relative }

    /// The interface models, made by this process or an earlier one.
    package static func made() throws -> InterfaceModels { try shared.get() }

    /// The models that declare licences, made by this process or an earlier one.
    package static func licenceModels() throws -> InterfaceModels { try licences.get() }

    private static let shared = Result { try make(script: "make-interface-models.py", name: "interface", complete: "expected.json") }
    private static let licences = Result { try make(script: "make-licence-models.py", name: "licence", complete: "hostile.onnx") }

    /// Runs `scripts/SCRIPT` once; `complete` is a file the script writes last.
    private static func make(script name: String, name prefix: String, complete: String) throws -> InterfaceModels {
        let script = repositoryRoot + "/scripts/" + name
        let digest = try SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: script))).hex.prefix(16)
        let out = (NSTemporaryDirectory() as NSString).appendingPathComponent("modelcast-\(prefix)-\(getuid())-\(digest)")
        if FileManager.default.fileExists(atPath: out + "/" + complete) { return InterfaceModels(path: out) }
        let temporary = out + ".\(getpid()).tmp"
        try? FileManager.default.removeItem(atPath: temporary)
        let made = try runProcess("/usr/bin/env", ["python3", script, temporary])
        guard made.status == 0 else {
            try? FileManager.default.removeItem(atPath: temporary)
            throw NSError(domain: name, code: Int(made.status), userInfo: [NSLocalizedDescriptionKey: made.stderr])
        }
        // Another process may have renamed its copy into place first: then this one goes.
        if rename(temporary, out) != 0 { try? FileManager.default.removeItem(atPath: temporary) }
        return InterfaceModels(path: out)
    }
}
