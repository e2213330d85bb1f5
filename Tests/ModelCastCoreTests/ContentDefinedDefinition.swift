@testable import ModelCastCore

extension ContentDefinedCut {
    /// The segment lengths the definition gives `bytes` (docs/segment-index.md): the plain
    /// byte-at-a-time loop, the hash reset at every cut, that the scans must agree with.
    func definedLengths(_ bytes: some Sequence<UInt8>) -> [Int] {
        var lengths: [Int] = []
        var hash: UInt64 = 0
        var length: Int64 = 0
        for byte in bytes {
            hash = (hash << 1) &+ Self.gear[Int(byte)]
            length += 1
            if length >= maximum || (length >= minimum && hash & mask == 0) {
                lengths.append(Int(length))
                hash = 0
                length = 0
            }
        }
        if length > 0 { lengths.append(Int(length)) }
        return lengths
    }
}
