import Foundation
import ModelCastFormat

extension ModelUpdater {
    /// With a pinned model-signing key (`ClientConfiguration.modelSigningPublicKey`): the
    /// verified statement of each model version an update is about to switch to, by model
    /// name, fetched before any of the models' files (a refusal costs no model download).
    /// Without a key, none: no bundle is fetched.
    func modelSignatureStatements(_ models: [CheckedModel]) async throws -> [ModelName: ModelSigningStatement] {
        guard let publicKey = configuration.modelSigningPublicKey else { return [:] }
        let check = ModelSignatureCheck(publicKey: publicKey, http: http, retries: configuration.retries)
        var statements: [ModelName: ModelSigningStatement] = [:]
        for model in models {
            statements[model.name] = try await check.statement(for: model)
        }
        return statements
    }
}
