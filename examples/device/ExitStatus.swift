import Foundation
import ModelCastClient

/// The exit statuses of the conformance kit's client protocol (`conformance/CLIENT-CLI.md`),
/// which the one-shot form shares.
enum ExitStatus: Int32 {
    /// Done: installed, up to date, reverted, recorded, printed.
    case success = 0
    /// A rule said no: the manifest, a signature, an object, the device's own limits or a
    /// refusal; nothing was installed from it.
    case refused = 1
    /// The command line (or, for the one-shot form, the configuration it builds) is wrong.
    case usage = 2
    /// The network or the disk failed: a request failed or timed out, the disk is full or
    /// unwritable, the directory holds no configuration. Another attempt may succeed.
    case unavailable = 3

    /// The status a failed call exits with, by the library's own classification of its
    /// errors (`ClientError.kind`, where every case is named).
    init(_ error: Error) {
        // URLError, a file error, a cancellation: none is a rule saying no.
        guard let error = error as? ClientError else {
            self = .unavailable
            return
        }
        switch error.kind {
        case .network, .io: self = .unavailable
        case .configuration: self = .usage
        case .refused: self = .refused
        }
    }
}

/// Ends the process with `status` after one line on stderr, `modelcast-device: <reason>`,
/// whose control and invisible characters are escaped: a server's text never reaches the
/// terminal raw, and the reason stays one line.
func fail(_ status: ExitStatus, _ reason: String) -> Never {
    FileHandle.standardError.write(Data(("modelcast-device: " + escapedLine(reason) + "\n").utf8))
    exit(status.rawValue)
}

/// Ends the process with the status and the description of `error`.
func fail(_ error: Error) -> Never {
    fail(ExitStatus(error), (error as? LocalizedError)?.errorDescription ?? String(describing: error))
}

/// `text` with every control, format, separator (but the space) and unassigned character
/// written as `\u{…}`.
func escapedLine(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned:
            out += "\\u{" + String(scalar.value, radix: 16) + "}"
        case .spaceSeparator where scalar != " ":
            out += "\\u{" + String(scalar.value, radix: 16) + "}"
        default:
            out.unicodeScalars.append(scalar)
        }
    }
    return out
}
