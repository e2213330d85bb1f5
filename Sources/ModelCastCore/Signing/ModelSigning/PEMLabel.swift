import Foundation

/// What a PEM key file says it holds, read from its first `-----BEGIN …-----` line, so a
/// wrong kind of file gets an error that names what it is before libcrypto sees it.
enum PEMLabel: Equatable {
    /// `PRIVATE KEY`: an unencrypted PKCS#8 PrivateKeyInfo (what `openssl genpkey` writes).
    case privateKey
    /// `ENCRYPTED PRIVATE KEY`: a passphrase-protected PKCS#8 EncryptedPrivateKeyInfo.
    case encryptedPrivateKey
    /// `EC PRIVATE KEY`: SEC 1 (what `openssl ecparam -genkey` writes); `encrypted` when it
    /// has OpenSSL's legacy `Proc-Type: 4,ENCRYPTED` header.
    case ecPrivateKey(encrypted: Bool)
    /// `PUBLIC KEY`: a SubjectPublicKeyInfo.
    case publicKey
    /// Any other label (`RSA PRIVATE KEY`, `CERTIFICATE`, …).
    case other(String)

    /// The label of the first PEM block in `text`; nil when there is none.
    init?(text: String) {
        let lines = text.split(omittingEmptySubsequences: true) { $0.isNewline }
        guard let begin = lines.firstIndex(where: { $0.hasPrefix("-----BEGIN ") && $0.hasSuffix("-----") && $0.count > 16 }) else {
            return nil
        }
        let label = String(lines[begin].dropFirst("-----BEGIN ".count).dropLast(5))
        switch label {
        case "PRIVATE KEY": self = .privateKey
        case "ENCRYPTED PRIVATE KEY": self = .encryptedPrivateKey
        case "EC PRIVATE KEY":
            let header = lines[lines.index(after: begin)...].prefix(2)
            self = .ecPrivateKey(encrypted: header.contains { $0.hasPrefix("Proc-Type:") && $0.contains("ENCRYPTED") })
        case "PUBLIC KEY": self = .publicKey
        default: self = .other(label)
        }
    }

    /// True for a private key that needs a passphrase.
    var isEncrypted: Bool {
        switch self {
        case .encryptedPrivateKey, .ecPrivateKey(encrypted: true): return true
        default: return false
        }
    }

    /// True for any kind of private key.
    var isPrivateKey: Bool {
        switch self {
        case .privateKey, .encryptedPrivateKey, .ecPrivateKey: return true
        case .publicKey, .other: return false
        }
    }

    /// The label as the file spells it, for messages.
    var text: String {
        switch self {
        case .privateKey: return "PRIVATE KEY"
        case .encryptedPrivateKey: return "ENCRYPTED PRIVATE KEY"
        case .ecPrivateKey: return "EC PRIVATE KEY"
        case .publicKey: return "PUBLIC KEY"
        case .other(let label): return label
        }
    }
}
