import Foundation

/// A model whose signature verified and whose files are exactly the ones it lists.
package struct ModelSignatureVerification: Sendable {
    /// The verified statement.
    package let statement: ModelSigningStatement
    /// The hint of the key that verified it (the given public key's).
    package let keyHint: String
    /// The statement's subject digest (over every file's digest).
    package let rootDigest: SHA256Hex

    /// One line saying what was proven: "model signature verified: …".
    package var summary: String {
        return "model signature verified: valid for the public key with hint \(keyHint), and every file of the model matches it (\(counted(statement.resources.count, "file")), model '\(statement.modelName)', subject sha256 \(rootDigest.hex))"
    }
}

/// OpenSSF model signatures with a key: what `model_signing sign key` and `model_signing
/// verify key` do, on a model file or directory on disk.
package enum ModelSigning {
    /// The statement of `model`'s files and the bundle signing it with `key`. A signature
    /// that will be kept at `signaturePath` inside a directory model is left out of it (and
    /// listed in `ignore_paths`), like the paths model_signing ignores by default (`.git`,
    /// `.gitattributes`, `.github`, `.gitignore` at the model's top).
    package static func sign(model: String, key: P256PrivateKey, signaturePath: String?) throws -> (statement: ModelSigningStatement, bundle: ModelSignatureBundle) {
        var ignorePaths = ModelSigningStatement.defaultIgnorePaths
        if let signaturePath, let inside = ModelFiles.signatureName(signaturePath, inside: model) { ignorePaths.append(inside) }
        let files = try ModelFiles.scan(model, ignoring: ignorePaths)
        guard !files.files.isEmpty else {
            throw ModelCastError.usage("\(model) has no file to sign (only paths model signing leaves out: \(ignorePaths.map(\.rawValue).joined(separator: ", ")))")
        }
        let statement = ModelSigningStatement(modelName: files.name, files: try files.digests(), ignorePaths: ignorePaths)
        return (statement, try ModelSignatureBundle.sign(statement, with: key))
    }

    /// Verifies the bundle file at `signaturePath` against `publicKey` and the model on
    /// disk. Throws `invalidModelSignature` for a bundle that is malformed or does not
    /// verify, and `modelSignatureMismatch` naming every changed, missing or extra file.
    package static func verify(model: String, signaturePath: String, publicKey: P256PublicKey) throws -> ModelSignatureVerification {
        let data = try ModelSignatureBundle.readFile(signaturePath)
        return try verify(model: model, bundle: data, source: signaturePath, signaturePath: signaturePath, publicKey: publicKey)
    }

    /// Verifies bundle bytes (read from `source`; `signaturePath` when it is a file that may
    /// sit inside the model) against `publicKey` and the model on disk.
    package static func verify(model: String, bundle data: Data, source: String, signaturePath: String?, publicKey: P256PublicKey) throws -> ModelSignatureVerification {
        let bundle = try ModelSignatureBundle(parsing: data, source: source)
        let statement = try bundle.verifiedStatement(publicKey: publicKey, source: source)
        var ignorePaths = statement.ignorePaths
        if let signaturePath, let inside = ModelFiles.signatureName(signaturePath, inside: model) { ignorePaths.append(inside) }
        let actual = try ModelFiles.scan(model, ignoring: ignorePaths).digests()
        let differences = ModelSignatureDifferences(signed: statement.files, actual: actual)
        guard differences.isEmpty else {
            throw ModelCastError.modelSignatureMismatch(model: model, source: source, differences: differences.descriptions)
        }
        return ModelSignatureVerification(statement: statement, keyHint: publicKey.hint, rootDigest: statement.rootDigest())
    }
}

extension ModelSignatureVerification: Encodable {
    enum CodingKeys: String, CodingKey {
        case verified, modelName = "model_name", files, subjectSHA256 = "subject_sha256", keyHint = "key_hint"
    }

    /// `{"verified": true, "model_name", "files", "subject_sha256", "key_hint"}`.
    package func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(true, forKey: .verified)
        try container.encode(statement.modelName, forKey: .modelName)
        try container.encode(statement.resources.count, forKey: .files)
        try container.encode(rootDigest.hex, forKey: .subjectSHA256)
        try container.encode(keyHint, forKey: .keyHint)
    }
}
