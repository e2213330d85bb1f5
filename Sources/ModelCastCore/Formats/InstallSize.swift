extension ModelDescription {
    /// The bytes a unit made of `files` takes installed on a device: a directory's files
    /// (what its zip's entries unpack to, or a `--no-zip` tree's files), a plain file as it
    /// is. Publish writes it as `storage.install_size` (raised, never lowered, by a stated
    /// size) and `inspect` shows it; both from here, from sizes the descriptions already
    /// summed, so neither reads a byte for it.
    package static func installSize(of files: [ModelDescription]) -> Int64 {
        files.reduce(Int64(0)) { $0 + $1.totalSize }
    }
}
