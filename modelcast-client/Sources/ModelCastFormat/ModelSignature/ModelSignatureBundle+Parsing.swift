import Foundation

extension ModelSignatureBundle {
    /// How deeply a bundle's JSON may nest (it needs 5 levels).
    static let maximumDepth = 8

    /// Parses a bundle file (hostile input): at most `maximumSize` bytes and `maximumDepth`
    /// levels, only the members a key-based model signature has, each of its type, base64
    /// strict. The statement inside is parsed only after its signature is checked
    /// (`verifiedStatement`). `source` names the file for errors.
    public init(parsing data: Data, source: String) throws {
        guard data.count <= Self.maximumSize else {
            throw FormatError.invalidModelSignature(source: source, reason: "\(data.count) bytes is larger than \(Self.maximumSize), so not a model signature")
        }
        do {
            try checkJSONDepth(data, limit: Self.maximumDepth)
            let json: JSONValue
            do { json = try JSONValue(parsing: data) } catch is DecodingError {
                throw FormatError.invalidModelSignature(source: source, reason: "not JSON (\(data.count) bytes: truncated, or not a signature bundle)")
            }
            try self.init(json: json)
        } catch let error as ManifestValueError {
            throw FormatError.invalidModelSignature(source: source, reason: error.description)
        }
    }

    private init(json: JSONValue) throws {
        let root = try BundleJSONObject(json, field: "bundle", allowed: ["mediaType", "verificationMaterial", "dsseEnvelope", "messageSignature"])
        try root.constant("mediaType", Self.mediaType)
        if root.has("messageSignature") {
            throw ManifestValueError(field: root.path("messageSignature"), value: "(present)", rule: "is a plain message signature; a model signature is a DSSE envelope")
        }
        let material = try root.object("verificationMaterial", allowed: ["publicKey", "tlogEntries", "certificate", "x509CertificateChain", "timestampVerificationData"])
        for key in ["certificate", "x509CertificateChain"] where material.has(key) {
            throw ManifestValueError(field: material.path(key), value: "(present)", rule: "is certificate-based signing, which is not supported: only key-based bundles (publicKey) are")
        }
        if material.has("tlogEntries"), try !material.array("tlogEntries", limit: 1024).isEmpty {
            throw ManifestValueError(field: material.path("tlogEntries"), value: "(entries)", rule: "must be empty: a key-based model signature has no transparency log entry")
        }
        let publicKey = try material.object("publicKey", allowed: ["hint"])
        let hint = publicKey.has("hint") ? try publicKey.string("hint", limit: 128) : nil
        let envelope = try root.object("dsseEnvelope", allowed: ["payload", "payloadType", "signatures"])
        try envelope.constant("payloadType", DSSE.inTotoPayloadType)
        let signatures = try envelope.array("signatures", limit: 16)
        guard signatures.count == 1 else {
            throw ManifestValueError(field: envelope.path("signatures"), value: "(\(signatures.count) entries)", rule: "must have exactly one signature")
        }
        let entry = try BundleJSONObject(signatures[0], field: envelope.path("signatures") + "[0]", allowed: ["sig", "keyid"])
        if entry.has("keyid") { _ = try entry.string("keyid", limit: 256) }
        self.init(keyHint: hint.flatMap { $0.isEmpty ? nil : $0 },
                  payload: try envelope.base64("payload", limit: Self.maximumSize),
                  signature: try entry.base64("sig", limit: Self.maximumSignatureSize))
    }
}
