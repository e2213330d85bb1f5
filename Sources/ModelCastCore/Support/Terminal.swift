import Foundation

/// Passphrases for secret keys: from an environment variable (CI) or typed at the
/// terminal with echo off. They are never printed or logged.
package enum Passphrase {
    /// The environment variable a CI job sets to unlock an encrypted secret key.
    package static let environmentVariable = "MODELCAST_SIGNING_PASSPHRASE"

    /// The passphrase from the environment, or typed at the terminal (`prompt` on it),
    /// or nil when there is neither.
    package static func obtain(prompt: String, environment: [String: String]) throws -> String? {
        if let value = environment[environmentVariable], !value.isEmpty { return value }
        return try readFromTerminal(prompt: prompt)
    }

    /// Reads one line from /dev/tty with echo off; nil when there is no terminal.
    package static func readFromTerminal(prompt: String) throws -> String? {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var original = termios()
        guard tcgetattr(fd, &original) == 0 else { return nil }
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        _ = tcsetattr(fd, TCSAFLUSH, &silent)
        defer {
            _ = tcsetattr(fd, TCSAFLUSH, &original)
            _ = write(fd, "\n", 1)
        }
        _ = prompt.withCString { write(fd, $0, strlen($0)) }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1, byte != UInt8(ascii: "\n") { bytes.append(byte) }
        defer { for index in bytes.indices { bytes[index] = 0 } }
        return String(decoding: bytes, as: UTF8.self)
    }
}
