import Foundation

/// What a GGUF header says about a model.
package struct GGUFSummary: Sendable, Equatable {
    /// Format version (2 or 3).
    package var version: UInt32
    /// Number of tensors.
    package var tensorCount: UInt64
    /// Number of metadata key/value pairs.
    package var metadataCount: UInt64
    /// `general.architecture`, e.g. "llama" or "clip".
    package var architecture: String?
    /// `general.name`.
    package var name: String?
    /// Quantization, from `general.file_type`, or else the type holding most tensor bytes.
    package var quantization: String?
    /// Sum of tensor element counts.
    package var parameterCount: UInt64
    /// Where tensor data starts.
    package var dataOffset: UInt64
    /// Where the last tensor's data ends (the file may be longer only by padding).
    package var dataEnd: UInt64
    /// Where each tensor's data starts in the file, in order, each once.
    package var tensorStarts: [UInt64] = []
    /// `general.license`, `general.license.name` and `general.license.link`, when the file has
    /// any of them as strings (a value of another type is no licence and is skipped).
    package var licence: DeclaredLicence?
}

/// Reads and validates a GGUF file's header without reading tensor data:
/// magic, version, sane counts, every metadata value and tensor record inside the
/// file, tensor offsets aligned, and the file long enough for every tensor.
package enum GGUFReader {
    static let magic: [UInt8] = Array("GGUF".utf8)
    /// GGML_MAX_DIMS.
    static let maxDimensions: UInt32 = 4
    static let maxKeyLength: UInt64 = 65_535
    static let maxArrayNesting = 3

    /// True when the first four bytes are the GGUF magic.
    static func hasMagic(_ prefix: [UInt8]) -> Bool { prefix.count >= 4 && Array(prefix.prefix(4)) == magic }

    /// Parses the header of the GGUF file at `path`.
    package static func read(path: String) throws -> GGUFSummary {
        let file = try FileDescriptor.openForReading(path)
        let size = UInt64(try file.status().st_size)
        var parse = HeaderParse(path: path, fileSize: size, reader: BufferedReader(file: file, fileSize: size))
        let (version, tensorCount, metadataCount) = try parse.readPreamble()
        var summary = GGUFSummary(
            version: version, tensorCount: tensorCount, metadataCount: metadataCount,
            architecture: nil, name: nil, quantization: nil, parameterCount: 0, dataOffset: 0, dataEnd: 0)
        let metadata = try parse.readMetadata(count: metadataCount)
        (summary.architecture, summary.name) = (metadata.architecture, metadata.name)
        summary.licence = DeclaredLicence(text: metadata.licence, name: metadata.licenceName, url: metadata.licenceLink)
        let tensors = try parse.readTensorRecords(count: tensorCount, alignment: metadata.alignment)
        let layout = try parse.placeTensors(tensors, alignment: metadata.alignment)
        (summary.dataOffset, summary.dataEnd, summary.parameterCount) = (layout.dataOffset, layout.dataEnd, layout.parameterCount)
        // Every start was checked to lie inside the file when the tensors were placed.
        summary.tensorStarts = Set(tensors.map { layout.dataOffset + $0.offset }).sorted()
        if let fileType = metadata.fileType, let name = GGUFTables.fileTypes[fileType] {
            summary.quantization = name
        } else if let dominant = layout.bytesByType.max(by: { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }) {
            summary.quantization = GGUFTables.tensorTypes[dominant.key]?.name
        }
        return summary
    }

    /// One pass over a header, section by section. Every size, offset and count comes from
    /// the file: sums and products are overflow-checked and an overflow is refused naming
    /// the field, never trapped.
    struct HeaderParse {
        let path: String
        let fileSize: UInt64
        var reader: BufferedReader
        /// The longest metadata string value read (a chat template can be long).
        static let maxStringLength: UInt64 = 16 << 20
        /// Set to collect the model's interface as the metadata is read (`readInterface`).
        var interface: GGUFInterfaceFields? = nil

        struct Metadata {
            var architecture: String?; var name: String?; var fileType: UInt32?; var alignment: UInt64 = 32
            var licence: String?; var licenceName: String?; var licenceLink: String?
        }
        struct Tensor { let name: String; let elements: UInt64; let type: UInt32; let offset: UInt64 }
        struct Layout { var dataOffset: UInt64; var dataEnd: UInt64; var parameterCount: UInt64 = 0; var bytesByType: [UInt32: UInt64] = [:] }

        func fail(_ reason: String) -> ModelCastError { .invalidModel(path: path, format: "GGUF", reason: reason) }

        func sum(_ a: UInt64, _ b: UInt64, _ what: @autoclosure () -> String) throws -> UInt64 {
            let (value, overflow) = a.addingReportingOverflow(b)
            guard !overflow else { throw fail(what()) }
            return value
        }

        func product(_ a: UInt64, _ b: UInt64, _ what: @autoclosure () -> String) throws -> UInt64 {
            let (value, overflow) = a.multipliedReportingOverflow(by: b)
            guard !overflow else { throw fail(what()) }
            return value
        }

        /// Magic, version (little-endian 2 or 3) and the two counts, which must fit the file.
        mutating func readPreamble() throws -> (version: UInt32, tensorCount: UInt64, metadataCount: UInt64) {
            let head = try reader.bytes(4, what: "magic", path: path)
            guard head == magic else {
                throw fail("bad magic \(head.map { String(format: "%02x", $0) }.joined()) (expected 47475546, \"GGUF\")")
            }
            let version = try reader.u32("version", path: path)
            if version.byteSwapped >= 1 && version.byteSwapped <= 3 {
                throw fail("big-endian GGUF (version \(version.byteSwapped)) is not supported")
            }
            guard version == 2 || version == 3 else {
                throw fail(version == 1 ? "GGUF version 1 is obsolete (convert it with a current llama.cpp)" : "unsupported GGUF version \(version)")
            }
            let tensorCount = try reader.u64("tensor count", path: path)
            let metadataCount = try reader.u64("metadata count", path: path)
            // Each tensor record takes at least 28 bytes and each key/value at least 13:
            // counts that cannot fit in the file are corrupt, whatever their size.
            let remaining = fileSize - reader.offset
            guard tensorCount <= remaining / 28, tensorCount < 1 << 24 else {
                throw fail("absurd tensor count \(tensorCount) for a \(fileSize)-byte file (truncated or corrupt)")
            }
            guard metadataCount <= remaining / 13, metadataCount < 1 << 24 else {
                throw fail("absurd metadata count \(metadataCount) for a \(fileSize)-byte file (truncated or corrupt)")
            }
            return (version, tensorCount, metadataCount)
        }

        /// Every key/value pair: the few keys modelcast reports are read, the rest skipped
        /// (each checked to lie inside the file).
        mutating func readMetadata(count: UInt64) throws -> Metadata {
            var metadata = Metadata()
            for index in 0..<count {
                // Keys and names only match known keys or appear in messages: escaped for the terminal.
                let key = printable(try reader.string("metadata key \(index)", path: path, limit: maxKeyLength))
                let type = try reader.u32("type of \(key)", path: path)
                switch (key, type) {
                case ("general.architecture", 8): metadata.architecture = try reader.string(key, path: path)
                case ("general.name", 8): metadata.name = try reader.string(key, path: path)
                case ("general.file_type", 4): metadata.fileType = try reader.u32(key, path: path)
                // The limit is skipValue's: a long licence is kept (and cut when shown), not refused.
                case ("general.license", 8): metadata.licence = try reader.string(key, path: path, limit: Self.maxStringLength)
                case ("general.license.name", 8): metadata.licenceName = try reader.string(key, path: path, limit: Self.maxStringLength)
                case ("general.license.link", 8): metadata.licenceLink = try reader.string(key, path: path, limit: Self.maxStringLength)
                case ("general.alignment", 4):
                    let value = try reader.u32(key, path: path)
                    guard value > 0, value & (value - 1) == 0 else { throw fail("general.alignment \(value) is not a power of two") }
                    metadata.alignment = UInt64(value)
                case ("general.alignment", _):
                    throw fail("general.alignment has type \(type), expected uint32")
                default:
                    if interface != nil, try readInterfaceValue(key: key, type: type) { continue }
                    try skipValue(type: type, key: key, depth: 0, reader: &reader, path: path)
                }
            }
            return metadata
        }

        /// The tensor records: name, shape (1…4 dimensions, element count below 2^63), type
        /// and an aligned offset.
        mutating func readTensorRecords(count: UInt64, alignment: UInt64) throws -> [Tensor] {
            var tensors: [Tensor] = []
            tensors.reserveCapacity(Int(count))
            for index in 0..<count {
                let name = printable(try reader.string("tensor \(index) name", path: path, limit: maxKeyLength))
                let dimensions = try reader.u32("dimensions of \(name)", path: path)
                guard dimensions >= 1, dimensions <= maxDimensions else {
                    throw fail("tensor \(name) has \(dimensions) dimensions (1...\(maxDimensions) allowed)")
                }
                // Each extent is ggml's non-negative int64 `ne`; the extents other than zero
                // multiply to less than 2^63 (a zero extent must not hide an overflowing
                // shape: every reader has to represent it), and the element count is their
                // product with the zeros.
                var elements: UInt64 = 1
                var nonzero: UInt64 = 1
                var first: UInt64 = 0
                for axis in 0..<dimensions {
                    let extent = try reader.u64("shape of \(name)", path: path)
                    if axis == 0 { first = extent }
                    guard extent < UInt64(Int64.max) else {
                        throw fail("tensor \(name) shape overflows: dimension \(axis) of \(extent) exceeds 2^63")
                    }
                    if extent != 0 {
                        nonzero = try product(nonzero, extent, "tensor \(name) shape overflows: dimension \(axis) of \(extent) makes the element count exceed 2^64")
                        guard nonzero < UInt64(Int64.max) else {
                            throw fail("tensor \(name) shape overflows: \(nonzero) elements (dimension \(axis) of \(extent)) exceed 2^63")
                        }
                    }
                    elements = extent == 0 ? 0 : elements * extent
                }
                let type = try reader.u32("type of \(name)", path: path)
                let offset = try reader.u64("offset of \(name)", path: path)
                // An unknown type has no known size, so where the tensor ends (and whether the
                // file is whole) could not be checked: refused rather than guessed.
                guard let info = GGUFTables.tensorTypes[type] else {
                    throw fail("tensor \(name) has type \(type), which this modelcast does not know (it knows llama.cpp's types \(GGUFTables.tensorTypes.keys.sorted().map(String.init).joined(separator: ", "))): a newer type needs a newer modelcast")
                }
                // The shape's bytes, zero extents counted as one, fit 63 bits: readers size the
                // shape before they look at the data (numpy refuses it otherwise).
                let shapeBytes = try product(nonzero / UInt64(info.blockSize), UInt64(info.typeSize),
                                             "tensor \(name): size overflows 64 bits (\(nonzero) elements of \(info.name), \(info.typeSize) bytes per \(info.blockSize))")
                guard shapeBytes < UInt64(Int64.max) else {
                    throw fail("tensor \(name) shape overflows: \(nonzero) elements of \(info.name) take \(shapeBytes) bytes, over 2^63")
                }
                if UInt64(info.blockSize) > 1, first % UInt64(info.blockSize) != 0 {
                    throw fail("tensor \(name) row of \(first) elements is not a multiple of its \(info.name) block size \(info.blockSize)")
                }
                guard offset % alignment == 0 else {
                    throw fail("tensor \(name) offset \(offset) is not aligned to \(alignment)")
                }
                tensors.append(Tensor(name: name, elements: elements, type: type, offset: offset))
            }
            return tensors
        }

        /// Where each tensor's data lies once the header ends: every one must end inside the
        /// file. Also sums the parameters and the bytes held by each tensor type.
        func placeTensors(_ tensors: [Tensor], alignment: UInt64) throws -> Layout {
            let headerEnd = reader.offset
            // Tensor data starts at the header's end rounded up to the alignment (at most 2^31).
            let dataOffset = try sum(headerEnd, alignment - 1, "tensor data start overflows: header end \(headerEnd) rounded up to alignment \(alignment) exceeds 2^64")
                / alignment * alignment
            var layout = Layout(dataOffset: dataOffset, dataEnd: dataOffset)
            for tensor in tensors {
                layout.parameterCount = try sum(layout.parameterCount, tensor.elements, "parameter count overflows 64 bits at tensor \(tensor.name) (\(tensor.elements) elements)")
                let start = try sum(dataOffset, tensor.offset, "tensor \(tensor.name): offset \(tensor.offset) overflows: the data start \(dataOffset) plus the offset exceeds 2^64")
                // Every type was checked when the records were read.
                guard let info = GGUFTables.tensorTypes[tensor.type] else { throw fail("tensor \(tensor.name) has unknown type \(tensor.type)") }
                let bytes = try product(tensor.elements / UInt64(info.blockSize), UInt64(info.typeSize),
                                        "tensor \(tensor.name): size overflows 64 bits (\(tensor.elements) elements of \(info.name), \(info.typeSize) bytes per \(info.blockSize))")
                let end = try sum(start, bytes, "tensor \(tensor.name): offset \(tensor.offset) plus size \(bytes) overflows: the data end exceeds 2^64 (data start \(dataOffset))")
                guard end <= fileSize else {
                    throw fail("truncated: tensor \(tensor.name) needs bytes up to \(end), file has \(fileSize)")
                }
                layout.dataEnd = max(layout.dataEnd, end)
                layout.bytesByType[tensor.type] = try sum(layout.bytesByType[tensor.type, default: 0], bytes, "total size of \(info.name) tensors overflows 64 bits at tensor \(tensor.name)")
            }
            if !tensors.isEmpty && dataOffset > fileSize {
                throw fail("truncated: tensor data should start at \(dataOffset), file has \(fileSize) bytes")
            }
            return layout
        }
    }

    /// Fixed sizes of scalar GGUF value types.
    private static func scalarSize(_ type: UInt32) -> UInt64? {
        switch type {
        case 0, 1, 7: return 1
        case 2, 3: return 2
        case 4, 5, 6: return 4
        case 10, 11, 12: return 8
        default: return nil
        }
    }

    static func skipValue(type: UInt32, key: String, depth: Int, reader: inout BufferedReader, path: String) throws {
        if let size = scalarSize(type) {
            try reader.skip(size, what: key, path: path)
            return
        }
        switch type {
        case 8:
            // Read, not skipped: every string must be UTF-8 (a chat template, a token).
            _ = try reader.string(key, path: path, limit: HeaderParse.maxStringLength)
        case 9:
            guard depth < maxArrayNesting else {
                throw ModelCastError.invalidModel(path: path, format: "GGUF", reason: "\(key): arrays nested too deeply")
            }
            let elementType = try reader.u32("element type of \(key)", path: path)
            let count = try reader.u64("element count of \(key)", path: path)
            try skipElements(type: elementType, count: count, key: key, depth: depth, reader: &reader, path: path)
        default:
            throw ModelCastError.invalidModel(path: path, format: "GGUF", reason: "\(key) has unknown value type \(type)")
        }
    }

    /// The `count` elements of an array of `type`, which must fit in what is left of the file.
    static func skipElements(type elementType: UInt32, count: UInt64, key: String, depth: Int, reader: inout BufferedReader, path: String) throws {
        let remaining = reader.fileSize - reader.offset  // offset never passes fileSize
        if let size = scalarSize(elementType) {
            let (bytes, overflow) = count.multipliedReportingOverflow(by: size)
            guard !overflow, bytes <= remaining else {
                throw ModelCastError.invalidModel(path: path, format: "GGUF", reason: "\(key): array of \(count) elements does not fit in the file")
            }
            try reader.skip(bytes, what: key, path: path)
        } else {
            // Strings take at least their 8-byte length; nested arrays at least 12 bytes.
            guard count <= remaining / 8 else {
                throw ModelCastError.invalidModel(path: path, format: "GGUF", reason: "\(key): array of \(count) elements does not fit in the file")
            }
            for _ in 0..<count {
                try skipValue(type: elementType, key: key, depth: depth + 1, reader: &reader, path: path)
            }
        }
    }
}

/// Sequential little-endian reads over a file through a 1 MiB window.
/// Invariant: `offset <= fileSize`; every read and skip is checked against what is
/// left before it moves `offset`, so the sums below cannot overflow.
struct BufferedReader {
    let file: FileDescriptor
    let fileSize: UInt64
    private(set) var offset: UInt64 = 0
    private var window: [UInt8] = []
    private var windowStart: UInt64 = 0
    static let windowSize = 1 << 20
    /// When set, every byte read or skipped is fed to it (a value's digest): skips then read.
    var tap: SHA256Hasher?

    init(file: FileDescriptor, fileSize: UInt64) {
        self.file = file
        self.fileSize = fileSize
    }

    private func truncated(_ what: String, path: String) -> ModelCastError {
        .invalidModel(path: path, format: "GGUF", reason: "truncated: file ends (\(fileSize) bytes) inside \(what) at byte \(offset)")
    }

    mutating func bytes(_ count: Int, what: String, path: String) throws -> [UInt8] {
        guard UInt64(count) <= fileSize - offset else { throw truncated(what, path: path) }
        let windowEnd = windowStart + UInt64(window.count)
        if offset < windowStart || offset + UInt64(count) > windowEnd {
            window = try file.read(at: Int64(offset), count: max(count, Self.windowSize))
            windowStart = offset
        }
        let start = Int(offset - windowStart)
        offset += UInt64(count)
        tap?.update(window[start..<(start + count)])
        return Array(window[start..<(start + count)])
    }

    mutating func skip(_ count: UInt64, what: String, path: String) throws {
        guard count <= fileSize - offset else { throw truncated(what, path: path) }
        guard tap != nil else { offset += count; return }
        var left = count
        while left > 0 {
            let chunk = Int(min(left, UInt64(Self.windowSize)))
            _ = try bytes(chunk, what: what, path: path)
            left -= UInt64(chunk)
        }
    }

    mutating func u32(_ what: String, path: String) throws -> UInt32 {
        let b = try bytes(4, what: what, path: path)
        return UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
    }

    mutating func u64(_ what: String, path: String) throws -> UInt64 {
        let b = try bytes(8, what: what, path: path)
        var value: UInt64 = 0
        for i in (0..<8).reversed() { value = value << 8 | UInt64(b[i]) }
        return value
    }

    mutating func string(_ what: String, path: String, limit: UInt64 = 1 << 20) throws -> String {
        let length = try u64("length of \(what)", path: path)
        guard length <= limit else {
            throw ModelCastError.invalidModel(path: path, format: "GGUF", reason: "\(what): string length \(length) exceeds \(limit)")
        }
        guard length <= fileSize - offset else { throw truncated(what, path: path) }
        let raw = try bytes(Int(length), what: what, path: path)
        // GGUF strings are UTF-8; anything else is refused, not repaired with U+FFFD.
        guard let text = String(validating: raw, as: UTF8.self) else {
            throw ModelCastError.invalidModel(path: path, format: "GGUF", reason: "\(what) is not valid UTF-8")
        }
        return text
    }
}
