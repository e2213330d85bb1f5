import Foundation
internal import CLibZ

/// One deflated zip entry's data: raw deflate (RFC 1951) through zlib at its default level
/// (6), a 32 KiB window, memory level 8, default strategy, output handed on in 64 KiB
/// pieces. These are the settings of every deflated entry modelcast has published (libarchive
/// used them), so the same zlib gives the same bytes.
///
/// A new stream for each entry, never `deflateReset`: zlib zeroes the window bytes past
/// the data only in a fresh stream, and its match search may look at them at the end of
/// the input; a reused stream could see the previous entry's bytes there.
final class Deflater {
    /// The output piece size (libarchive's zip writer buffer).
    static let outputSize = 64 * 1024

    private let stream: UnsafeMutablePointer<z_stream>
    private let output: UnsafeMutableRawBufferPointer
    private let displayPath: String

    /// `level` is zlib's; every zip modelcast writes uses the default (a value zlib refuses
    /// is how tests reach the failure path).
    init(displayPath: String, level: Int32 = Z_DEFAULT_COMPRESSION) throws {
        self.displayPath = displayPath
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        output = .allocate(byteCount: Self.outputSize, alignment: 16)
        let status = modelcast_deflate_init_raw(stream, level)
        // Every property is set, so a throw from here runs `deinit`, which frees both buffers
        // (and deflateEnd ignores a stream that never started): freeing them here too was a
        // double free.
        guard status == Z_OK else {
            throw ModelCastError.archive(path: displayPath, message: "zlib deflateInit2 failed (status \(status))")
        }
        resetOutput()
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        output.deallocate()
    }

    private func resetOutput() {
        stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(Self.outputSize)
    }

    /// Compresses `input`, handing `emit` each output piece that fills; returns how many bytes it emitted.
    func compress(_ input: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws -> Void) throws -> Int64 {
        guard let base = input.baseAddress, !input.isEmpty else { return 0 }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        var emitted: Int64 = 0
        repeat {
            let status = deflate(stream, Z_NO_FLUSH)
            guard status != Z_STREAM_ERROR else { throw failure("deflate", status) }
            if stream.pointee.avail_out == 0 {
                try emit(UnsafeRawBufferPointer(output))
                emitted += Int64(Self.outputSize)
                resetOutput()
            }
        } while stream.pointee.avail_in != 0
        return emitted
    }

    /// Ends the stream, handing `emit` the rest of the output; returns how many bytes it emitted.
    func finish(emit: (UnsafeRawBufferPointer) throws -> Void) throws -> Int64 {
        var emitted: Int64 = 0
        while true {
            let status = deflate(stream, Z_FINISH)
            guard status != Z_STREAM_ERROR else { throw failure("deflate (finish)", status) }
            let produced = Self.outputSize - Int(stream.pointee.avail_out)
            if produced > 0 { try emit(UnsafeRawBufferPointer(rebasing: output[0..<produced])) }
            emitted += Int64(produced)
            let full = stream.pointee.avail_out == 0
            resetOutput()
            if !full { break }
        }
        return emitted
    }

    private func failure(_ what: String, _ status: Int32) -> ModelCastError {
        let detail = stream.pointee.msg.map { String(cString: $0) } ?? "status \(status)"
        return .archive(path: displayPath, message: "zlib \(what): \(detail)")
    }
}
