import Foundation

extension SegmentPlan {
    /// The file being planned, read by position. A read outside the file, cut short or
    /// failing gives nil: the plan then cuts what it could not read by content, and the
    /// hashing pass that follows reports a file it cannot read.
    package struct Bytes {
        /// The file's size, as the caller knows it: the regions tile 0 to this.
        package let size: Int64
        private let readAt: (_ offset: Int64, _ count: Int) throws -> [UInt8]

        /// `read` gives up to `count` bytes at `offset` (fewer only at the end of the file).
        package init(size: Int64, read: @escaping (_ offset: Int64, _ count: Int) throws -> [UInt8]) {
            self.size = max(size, 0)
            self.readAt = read
        }

        /// Bytes held in memory (tests, hostile tables).
        package init(_ bytes: [UInt8]) {
            self.init(size: Int64(bytes.count)) { offset, count in
                Array(bytes[Int(offset)..<Int(offset) + count])
            }
        }

        /// Exactly `count` bytes at `offset`, or nil when any of them lies outside the file or
        /// cannot be read.
        func read(_ offset: Int64, _ count: Int) -> [UInt8]? {
            guard offset >= 0, count >= 0, offset <= size, Int64(count) <= size - offset else { return nil }
            // A read error only means the plan cannot follow the structure there; the
            // digest of the same file reports it (try? hides nothing the caller would show).
            guard let bytes = try? readAt(offset, count), bytes.count >= count else { return nil }
            return bytes.count == count ? bytes : Array(bytes.prefix(count))
        }
    }
}
