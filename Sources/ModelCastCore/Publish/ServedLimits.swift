import Foundation
import ModelCastFormat

/// Invariant 13 for size and nesting: publish never makes live a manifest that devices and
/// verify refuse to read (`ManifestLimits`: 4 MiB, 64 levels), nor writes a history record
/// modelcast itself could not read back (`TargetLayout.recordLimit`, the same depth).
/// A 5 MiB `meta` value, one nested 100 deep, or a few aliases in a config file that
/// expand to megabytes all end here, before anything is written.
enum ServedLimits {
    /// Refuses the exact bytes a commit would store: `manifest` at `manifestKey` (signed,
    /// as served) and the history `record` that explains it. The checks cost a count and
    /// one depth scan; only a refusal reads the bytes again, to say where the bulk is.
    static func check(manifest: Data, record: Data, manifestKey: String) throws {
        let source = "\(manifestKey) (to publish)"
        try check(manifest, source: source, isRecord: false, maxBytes: ManifestLimits.maxBytes, readers: "devices and verify read")
        try check(record, source: source, isRecord: true, maxBytes: TargetLayout.recordLimit, readers: "modelcast reads back")
    }

    private static func check(_ data: Data, source: String, isRecord: Bool, maxBytes: Int, readers: String) throws {
        if data.count > maxBytes {
            let bulk = JSONShape(data).bulk.map { " (\($0.path) takes \($0.bytes) of them)" } ?? ""
            throw ModelCastError.invalidManifest(source: source, reason: (isRecord ? "its history record would be " : "") + "\(data.count) bytes\(bulk), more than the \(maxBytes) that \(readers) (\(maxBytes >> 20) MiB); nothing was written: publish smaller meta values")
        }
        // try?: refused just below, naming where it nests too deep.
        if (try? checkJSONDepth(data, limit: ManifestLimits.maxDepth)) == nil {
            let deepest = JSONShape(data).firstTooDeep(ManifestLimits.maxDepth) ?? "(document)"
            throw ModelCastError.invalidManifest(source: source, reason: (isRecord ? "its history record would nest" : "it nests") + " arrays and objects more than \(ManifestLimits.maxDepth) levels deep, at \(deepest), deeper than \(readers); nothing was written: flatten that meta value")
        }
    }
}

/// Where a JSON document's bytes and depth go, read once: which member holds most of its
/// bytes (followed down while one member holds most of its parent's), and where it first
/// nests past a depth. For messages only: the document is one modelcast rendered.
private struct JSONShape {
    private struct Bulk {
        var size: Int
        var bytes: Int
        var path: [String]
    }

    private struct Frame {
        var isObject: Bool
        var name = ""
        var index = 0
        var memberStart = 0
        /// The largest member so far (`size`), and the path from this frame down to the value
        /// that holds most of it, with that value's size (`bytes`).
        var largest: Bulk = Bulk(size: 0, bytes: 0, path: [])
        /// The largest value inside the member that just closed, if it was a collection.
        var inner: Bulk?
    }

    private let bytes: [UInt8]

    init(_ data: Data) { bytes = Array(data) }

    /// The member holding the bulk of the document, as a dotted path and its size.
    var bulk: (path: String, bytes: Int)? {
        var root: Bulk?
        walk(limit: nil) { root = $0 }
        guard let root, !root.path.isEmpty else { return nil }
        return (Self.shown(root.path), root.bytes)
    }

    /// The path at which the document first nests deeper than `limit`.
    func firstTooDeep(_ limit: Int) -> String? {
        var found: String?
        walk(limit: limit) { found = Self.shown($0.path) }
        return found
    }

    /// One pass: calls `report` with the deepest path past `limit` (and stops), or, with no
    /// limit, with the root's largest member at the end.
    private func walk(limit: Int?, report: (Bulk) -> Void) {
        var stack: [Frame] = []
        var at = 0
        var expectingKey = false
        func finishMember(at end: Int) {
            guard !stack.isEmpty else { return }
            var frame = stack[stack.count - 1]
            let size = end - frame.memberStart
            let name = frame.isObject ? frame.name : "[\(frame.index)]"
            if size > frame.largest.size {
                // Follow a collection down while one of its members holds most of it.
                if let inner = frame.inner, inner.size * 2 > size {
                    frame.largest = Bulk(size: size, bytes: inner.bytes, path: [name] + inner.path)
                } else {
                    frame.largest = Bulk(size: size, bytes: size, path: [name])
                }
            }
            frame.inner = nil
            stack[stack.count - 1] = frame
        }
        while at < bytes.count {
            let byte = bytes[at]
            switch byte {
            case UInt8(ascii: "\""):
                let start = at + 1
                at += 1
                while at < bytes.count, bytes[at] != UInt8(ascii: "\"") { at += bytes[at] == UInt8(ascii: "\\") ? 2 : 1 }
                if expectingKey, !stack.isEmpty {
                    stack[stack.count - 1].name = String(decoding: bytes[start..<min(at, bytes.count)], as: UTF8.self)
                    expectingKey = false
                }
            case UInt8(ascii: ":"):
                if !stack.isEmpty { stack[stack.count - 1].memberStart = at + 1 }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var frame = Frame(isObject: byte == UInt8(ascii: "{"))
                frame.memberStart = at + 1
                stack.append(frame)
                expectingKey = frame.isObject
                if let limit, stack.count > limit {
                    report(Bulk(size: 0, bytes: 0, path: stack.dropLast().map { $0.isObject ? $0.name : "[\($0.index)]" }))
                    return
                }
            case UInt8(ascii: ","):
                finishMember(at: at)
                if !stack.isEmpty {
                    stack[stack.count - 1].index += 1
                    stack[stack.count - 1].memberStart = at + 1
                    expectingKey = stack[stack.count - 1].isObject
                }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                finishMember(at: at)
                guard let closed = stack.popLast() else { break }
                if stack.isEmpty {
                    if limit == nil { report(closed.largest) }
                } else {
                    stack[stack.count - 1].inner = closed.largest
                }
            default: break
            }
            at += 1
        }
    }

    /// A dotted path, its first components only, each cut short and escaped.
    private static func shown(_ path: [String]) -> String {
        let cut = path.prefix(8).map { escapingControlCharacters($0.count > 40 ? String($0.prefix(40)) + "…" : $0) }
        return cut.joined(separator: ".").replacingOccurrences(of: ".[", with: "[") + (path.count > 8 ? "… (\(path.count) keys)" : "")
    }
}
