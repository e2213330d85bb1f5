import ModelCastFormat

extension KeySetError: ExitStatusProviding {
    /// Every key set failure is what a target holds or a command line asked for: refused.
    package var exitStatus: ExitStatus { .refused }
}

extension ManifestValueError: ExitStatusProviding {
    /// A value a rule refuses (a threshold above the number of keys, a key in both roles).
    package var exitStatus: ExitStatus { .refused }
}
