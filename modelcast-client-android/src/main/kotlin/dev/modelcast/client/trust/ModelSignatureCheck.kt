package dev.modelcast.client.trust

import dev.modelcast.client.ClientError

/**
 * How a device checks a model version against its OpenSSF model signature with the pinned
 * key (the Swift client's `ModelSignatureCheck`): [verifiedStatement] proves a bundle's
 * bytes (already fetched and held to the manifest's SHA-256 and size by the caller) and
 * returns the statement it signs; [compare] then holds the version's files against that
 * statement before the version is switched to. Every refusal is a [ClientError].
 */
object ModelSignatureCheck {
    /**
     * The statement [bundle] signs, verified with [key], in the Swift client's order: parse
     * (hostile input), compare the key hint, verify, then parse the statement. Throws
     * [ClientError.ModelSignatureUntrustedKey] when the bundle names another key, and
     * [ClientError.BadModelSignature] (whose cause is the [TrustError]) when it is malformed,
     * does not verify, or signs a malformed statement. [url] names the bundle.
     */
    fun verifiedStatement(bundle: ByteArray, key: ModelSigningPublicKey, model: String, version: String, url: String): ModelSigningStatement {
        try {
            return ModelSignatureBundle.parse(bundle, url).verifiedStatement(key, url)
        } catch (error: TrustError.ModelSignatureUntrustedKey) {
            throw ClientError.ModelSignatureUntrustedKey(model, error.keyHint, error.pinnedHint).apply { initCause(error) }
        } catch (error: TrustError) {
            throw ClientError.BadModelSignature(model, version, error.message ?: "").apply { initCause(error) }
        }
    }

    /**
     * Holds [installed] (the version's files, see [InstalledFiles]) against the verified
     * [statement]: they must be exactly the files it lists, each with its SHA-256. Throws
     * [ClientError.ModelSignatureMismatch] naming every changed, missing or extra file and
     * every problem found on disk.
     */
    fun compare(statement: ModelSigningStatement, installed: InstalledFiles, model: String, version: String) {
        val problems = ModelSignatureDifferences(statement.files, installed.digests).descriptions + installed.problems
        if (problems.isNotEmpty()) throw ClientError.ModelSignatureMismatch(model, version, problems)
    }
}
