import Crypto
import Foundation
import ModelCastFormat
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Checks model versions against their OpenSSF model signatures with the pinned key
/// (`ClientConfiguration.modelSigningPublicKey`): `statement(for:)` fetches the model's
/// bundle, proves its bytes by the manifest's SHA-256 and size, and returns the statement
/// its signature verifies; `compare` (ModelSignatureCheck+Files) then holds the version
/// directory on disk against that statement before the version is switched to.
struct ModelSignatureCheck: Sendable {
    let publicKey: ModelSigningPublicKey
    let http: HTTPStream
    /// Attempts after a dropped connection or a server error.
    let retries: Int

    /// The statement the model signature of `model` signs, verified with the pinned key.
    /// Throws `modelSignatureMissing` when the manifest names none, `hashMismatch` /
    /// `sizeMismatch` for bundle bytes other than the manifest's, `modelSignatureUntrustedKey`
    /// for a bundle another key made, and `badModelSignature` for one that is malformed
    /// or does not verify.
    func statement(for model: CheckedModel) async throws -> ModelSigningStatement {
        guard let reference = model.modelSignature else {
            throw ClientError.modelSignatureMissing(model: model.name.rawValue, version: model.version.rawValue)
        }
        let data = try await download(reference, model: model.name)
        let url = reference.url.rawValue
        do {
            let bundle = try ModelSignatureBundle(parsing: data, source: url)
            if let hint = bundle.keyHint, hint != publicKey.hint {
                throw ClientError.modelSignatureUntrustedKey(model: model.name.rawValue, keyHint: hint, pinnedHint: publicKey.hint)
            }
            return try bundle.verifiedStatement(keyHint: publicKey.hint, source: url) { signature, signed in
                publicKey.isValidSignature(signature, for: signed)
            }
        } catch FormatError.invalidModelSignature(_, let reason) {
            throw ClientError.badModelSignature(model: model.name.rawValue, url: url, reason: reason)
        }
    }

    /// The bundle's bytes, proven; a dropped connection or a server error is retried.
    private func download(_ reference: CheckedModelSignature, model: ModelName) async throws -> Data {
        var attempt = 0
        while true {
            do {
                return try await attemptDownload(reference, model: model)
            } catch let error as ClientError where attempt < retries && error.isRetriable {
                attempt += 1
                try await Task.sleep(nanoseconds: UInt64(200_000_000 * attempt))
            }
        }
    }

    /// One GET of the bundle: a 200 whose body is never read past the manifest's size
    /// (at most `ModelSignatureBundle.maximumSize`, as `CheckedModelSignature` holds), then
    /// exactly that size and SHA-256.
    private func attemptDownload(_ reference: CheckedModelSignature, model: ModelName) async throws -> Data {
        var request = URLRequest(url: reference.url.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        let url = reference.url.rawValue, size = reference.size, name = model.rawValue
        let body = BundleBody()
        _ = try await http.get(request, metadata: true, onResponse: { response in
            guard response.statusCode == 200 else { throw ClientError.http(url: url, status: response.statusCode) }
            if let length = response.value(forHTTPHeaderField: "Content-Length").flatMap(Int64.init), length != size {
                throw ClientError.sizeMismatch(model: name, file: url, expected: size, actual: length)
            }
        }, onData: { chunk in
            guard Int64(body.data.count + chunk.count) <= size else {
                throw ClientError.sizeMismatch(model: name, file: url, expected: size, actual: Int64(body.data.count + chunk.count))
            }
            body.data.append(chunk)
        })
        let data = body.data
        guard Int64(data.count) == size else { throw ClientError.sizeMismatch(model: name, file: url, expected: size, actual: Int64(data.count)) }
        let digest = hex(Array(SHA256.hash(data: data)))
        guard digest == reference.sha256.rawValue else {
            throw ClientError.hashMismatch(model: name, file: url, expected: reference.sha256.rawValue, actual: digest)
        }
        return data
    }
}

/// The bundle's bytes as they arrive (from the request's handlers, one at a time).
// @unchecked: a plain var, appended to by the request's handlers only (one at a time,
// under its lock), read after the request ended.
private final class BundleBody: @unchecked Sendable {
    var data = Data()
}
