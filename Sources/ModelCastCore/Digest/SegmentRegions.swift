import Foundation
internal import CSegmentCut

/// How one stretch of a file is cut into segments (scheme `modelcast-segments-1`,
/// `docs/segment-index.md`). A file's regions tile it from 0 to its size, in order; the
/// cuts are a pure function of the bytes and the regions, which the file's own
/// structure gives (a GGUF's header and tensors, a zip's entries, a Core ML weight
/// file's blobs: `SegmentPlan`).
package enum SegmentRegion: Sendable, Equatable {
    /// Slices of `slice` bytes counted from the region's start (the last may be shorter):
    /// a tensor's data, so a slice keeps its bytes when the header before it grows.
    case slices(start: Int64, end: Int64, slice: Int64)
    /// Content-defined cuts: a metadata edit moves only the boundaries near it.
    case contentDefined(start: Int64, end: Int64, cut: ContentDefinedCut)

    package var start: Int64 {
        switch self {
        case .slices(let start, _, _), .contentDefined(let start, _, _): return start
        }
    }

    package var end: Int64 {
        switch self {
        case .slices(_, let end, _), .contentDefined(_, let end, _): return end
        }
    }
}

/// The parameters of content-defined cutting. A gear hash rolls over the segment's
/// bytes from its start (`h = (h << 1) &+ gear[byte]`, 64-bit, wrapping); the segment
/// ends after the first byte at which it is at least `minimum` long and the hash's low
/// `maskBits` bits are all zero, or when it reaches `maximum`, or at the region's end.
package struct ContentDefinedCut: Sendable, Equatable {
    package let minimum: Int64
    package let maskBits: Int
    package let maximum: Int64

    /// For metadata (a GGUF's header, tokenizer and chat template): 16 KiB to 128 KiB,
    /// about 48 KiB on average, so a small edit costs a device little.
    package static let metadata = ContentDefinedCut(minimum: 16 << 10, maskBits: 15, maximum: 128 << 10)
    /// For bytes of no known structure: 256 KiB to 4 MiB, about 1.25 MiB on average, so
    /// the index of a large file stays small.
    package static let bulk = ContentDefinedCut(minimum: 256 << 10, maskBits: 20, maximum: 4 << 20)

    package var mask: UInt64 { (1 << UInt64(maskBits)) - 1 }

    /// The bytes a hash depends on: each step shifts it left by one, so a byte 64 or more
    /// steps back has left its 64 bits.
    static let window = 64

    /// The index of the first byte in `from ..< to` of `bytes` after which the hash of
    /// the 64 bytes ending there passes the mask (a cut, once the segment is long enough);
    /// nil when none does. The 64 bytes before `from` must be in `bytes` (`from >= 64`) and
    /// in the segment. `vector: false` tests one byte at a time (what the vector path must
    /// agree with; tests compare them).
    func firstCandidate(in bytes: UnsafeRawBufferPointer, from: Int, to: Int, vector: Bool = true) -> Int? {
        precondition(from >= Self.window && to <= bytes.count)
        guard from < to, let base = bytes.baseAddress else { return nil }
        let index = Self.gear.withUnsafeBufferPointer { gear in
            modelcast_gear_first_cut(base.assumingMemoryBound(to: UInt8.self), from, to, mask, gear.baseAddress, vector ? 1 : 0)
        }
        return index < to ? index : nil
    }

    /// The hash after byte `index` of `bytes` of a segment at least 64 bytes long by then:
    /// the 64 bytes ending there decide it.
    static func windowHash(_ bytes: UnsafeRawBufferPointer, endingAt index: Int) -> UInt64 {
        gear.withUnsafeBufferPointer { gear in
            var hash: UInt64 = 0
            for position in (index - window + 1)...index { hash = (hash << 1) &+ gear[Int(bytes[position])] }
            return hash
        }
    }

    /// True when `firstCandidate` tests 64 positions at a time on this CPU.
    static var vectorScanAvailable: Bool { modelcast_gear_vector_available() != 0 }

    /// The 256 gear values: SplitMix64 from the seed 0x6d6f64656c636173 ("modelcas"),
    /// the first value for byte 0, the next for byte 1, and so on.
    package static let gear: [UInt64] = {
        var state: UInt64 = 0x6d6f_6465_6c63_6173
        return (0..<256).map { _ in
            state &+= 0x9e37_79b9_7f4a_7c15
            var z = state
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return z ^ (z >> 31)
        }
    }()
}

/// The cutting scheme's name and constants, written in every index it produces.
package enum SegmentScheme {
    package static let name = "modelcast-segments-1"
    /// The largest tensor slice (1 MiB).
    package static let tensorSlice: Int64 = 1 << 20
    /// A stretch of a zip or weight file cut by content from this many bytes (16 MiB) on is
    /// cut with the bulk parameters, below it with the metadata ones: a large entry of no
    /// known structure keeps a small index, a small one costs a device little to fetch.
    package static let largeStretch: Int64 = 16 << 20
}
