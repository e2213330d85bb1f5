import XCTest
@testable import ModelCastCore
@_spi(ModelCastTooling) import ModelCastFormat

/// The words of every zip problem, pinned: `ZipInspectorTests` asserts on the typed
/// cases, and verify's log, its JSON report and the golden files show `message`.
final class ZipProblemTests: XCTestCase {
    func testEveryCaseRendersItsMessage() {
        let locatedOverrun = ZipProblem.extraFieldOverrun(entry: "a.bin", index: 0, header: .local(offset: 40), id: 0x0001, length: 16, remaining: 8)
        let table: [(problem: ZipProblem, message: String)] = [
            // End records and the central directory as a whole
            (.trailingBytes(count: 4, endRecordOffset: 120), "4 bytes follow the end of central directory record and its comment at offset 120"),
            (.endRecordDisk(.classic, disk: 1), "end of central directory: disk number 1 (multi-disk archives are not supported)"),
            (.endRecordDisk(.zip64, disk: 3), "zip64 end of central directory: disk number 3 (multi-disk archives are not supported)"),
            (.directoryDisk(.classic, disk: 2), "end of central directory: central directory starts on disk 2 (multi-disk archive)"),
            (.directoryDisk(.zip64, disk: 2), "zip64 end of central directory: central directory starts on disk 2 (multi-disk archive)"),
            (.locatorRecordDisk(1), "zip64 end of central directory locator: record on disk 1 (multi-disk archive)"),
            (.locatorDiskCount(2), "zip64 end of central directory locator: 2 disks (multi-disk archive)"),
            (.zip64RecordLength(offset: 300, declared: 50, locatorOffset: 356),
             "zip64 end of central directory record at offset 300 declares 50 more bytes, so it does not end at its locator (offset 356)"),
            (.endRecordsDisagree(.entriesOnDisk, classic: 3, zip64: 4), "end of central directory says entries on this disk 3, but the zip64 record says 4"),
            (.endRecordsDisagree(.totalEntries, classic: 3, zip64: 4), "end of central directory says total entries 3, but the zip64 record says 4"),
            (.endRecordsDisagree(.directorySize, classic: 92, zip64: 93), "end of central directory says central directory size 92, but the zip64 record says 93"),
            (.endRecordsDisagree(.directoryOffset, classic: 70, zip64: 71), "end of central directory says central directory offset 70, but the zip64 record says 71"),
            (.entriesOnDiskMismatch(onDisk: 2, total: 3), "end of central directory: 2 entries on this disk but 3 in total (multi-disk archive)"),
            (.directoryGap(offset: 99, size: 51, end: 150, recordsStart: 151),
             "central directory (offset 99, size 51) ends at 150, but the end of central directory records start at 151 (1 unexplained bytes; prepended data would shift every offset)"),
            (.entryCountMismatch(declared: 5, found: 3), "end of central directory says 5 entries, but the central directory holds 3"),
            (.missingCentralHeader(offset: 200, signature: 0x0403_4b50, remaining: 40),
             "central directory: no central directory header at offset 200 (0x04034b50); 40 bytes left unread"),
            (.missingCentralHeader(offset: 200, signature: nil, remaining: 3),
             "central directory: no central directory header at offset 200 (only 3 bytes); 3 bytes left unread"),
            (.centralHeaderOverrun(offset: 200, length: 90, remaining: 60), "central directory: header at offset 200 declares 90 bytes, but only 60 remain"),
            (.compressionRatio(total: 4_000_000_000, ratio: 1000, archiveSize: 150),
             "total uncompressed size 4000000000 bytes is more than 1000 times the archive size 150 bytes (a possible zip bomb)"),

            // One entry's records
            (.zip64ValuesMissing(entry: "later.txt", index: 2, header: .central, fields: [.localHeaderOffset]),
             #"entry "later.txt": local header offset marked 0xFFFFFFFF but missing from the zip64 extra field"#),
            (.zip64ValuesMissing(entry: "a", index: 0, header: .central, fields: [.uncompressedSize, .compressedSize, .localHeaderOffset, .diskNumber]),
             #"entry "a": uncompressed size, compressed size, local header offset, disk number marked 0xFFFFFFFF but missing from the zip64 extra field"#),
            (.zip64ValuesMissing(entry: "big.bin", index: 0, header: .local(offset: 0), fields: [.uncompressedSize, .compressedSize]),
             #"entry "big.bin": local header at offset 0: uncompressed size, compressed size marked 0xFFFFFFFF but missing from the zip64 extra field"#),
            (.extraFieldOverrun(entry: "a.bin", index: 0, header: .central, id: 0x0001, length: 16, remaining: 8),
             #"entry "a.bin": extra field 0x0001 declares 16 bytes, but only 8 remain"#),
            (locatedOverrun, #"entry "a.bin": local header at offset 40: extra field 0x0001 declares 16 bytes, but only 8 remain"#),
            (.unicodePathField(entry: "M/ok", index: 0, header: .central, name: "../../evil"),
             #"entry "M/ok": an Info-ZIP Unicode Path extra field (0x7075) names it "../../evil"; unzip and bsdtar extract to that name, which is not the one checked (modelcast never writes this field)"#),
            (.unicodePathField(entry: "M/ok", index: 0, header: .local(offset: 0), name: "/tmp/evil"),
             #"entry "M/ok": local header at offset 0 (local header): an Info-ZIP Unicode Path extra field (0x7075) names it "/tmp/evil"; unzip and bsdtar extract to that name, which is not the one checked (modelcast never writes this field)"#),
            (.valueOutOfRange(entry: "a.bin", index: 0, field: .compressedSize, value: 9_223_372_036_854_775_808),
             #"entry "a.bin": compressed size 9223372036854775808 is out of range"#),
            (.emptyName(entry: "", index: 2), #"entry #3 "": empty name"#),
            (.invalidUTF8Name(entry: "a\u{FFFD}", index: 0, bytes: [0x61, 0xFF]), "entry \"a\u{FFFD}\": name is not valid UTF-8 (61ff)"),
            (.nonASCIINameWithoutUTF8Flag(entry: "Caf\u{00E9}", index: 0),
             "entry \"Caf\u{00E9}\": non-ASCII name without the UTF-8 flag (general purpose bit 11), which unzip tools decode differently"),
            (.controlCharacter(entry: "bell\u{1B}[31m.txt", index: 0, scalar: "\u{1B}"), #"entry "bell\u{1B}[31m.txt": control character U+001B in name"#),
            (.absolutePath(entry: "/etc/passwd", index: 0), #"entry "/etc/passwd": absolute path (leading "/")"#),
            (.windowsDrivePrefix(entry: "C:evil", index: 0, drive: "C"), #"entry "C:evil": Windows drive prefix ("C:")"#),
            (.backslashInName(entry: #"a\b.txt"#, index: 0), #"entry "a\b.txt": backslash in name (a path separator on Windows)"#),
            (.pathEscapes(entry: "../evil.txt", index: 0), #"entry "../evil.txt": path escapes the archive ("..")"#),
            (.symbolicLink(entry: "Model/weights.bin", index: 0, mode: 0o120777), #"entry "Model/weights.bin": symbolic link (mode 0o120777)"#),
            (.specialFile(entry: "Model/pipe", index: 1, mode: 0o010644), #"entry "Model/pipe": not a regular file or directory (FIFO, mode 0o10644)"#),
            (.unsupportedVersion(entry: "M/a", index: 0, needed: 104),
             #"entry "M/a": needs zip version 10.4 to extract (above 6.3, the newest the zip specification defines; readers refuse it)"#),
            (.entryDisk(entry: "b.bin", index: 1, disk: 2), #"entry "b.bin": starts on disk 2 (multi-disk archive)"#),
            (.encrypted(entry: "secret.bin", index: 1), #"entry "secret.bin": encrypted (general purpose flag bit 0)"#),
            (.unsupportedMethod(entry: "a.bin", index: 0, method: 12), #"entry "a.bin": compression method 12 (bzip2) is neither store (0) nor deflate (8)"#),
            (.storedSizesDiffer(entry: "a.bin", index: 0, compressed: 100, uncompressed: 99),
             #"entry "a.bin": stored (method 0) but compressed size 100 differs from uncompressed size 99"#),

            // Local headers and data descriptors against the central directory
            (.localHeaderTruncated(entry: "a.bin", index: 0, offset: 500), #"entry "a.bin": local header at offset 500 is cut short by the end of the archive"#),
            (.localHeaderMissing(entry: "b.bin", index: 1, offset: 135, signature: 0x0403_4b51), #"entry "b.bin": no local file header at offset 135 (signature 0x04034b51)"#),
            (.localHeaderNameDiffers(entry: "b.bin", index: 1, offset: 0, localName: "a.bin", truncated: false), #"entry "b.bin": local header at offset 0 names "a.bin" instead"#),
            (.localHeaderNameDiffers(entry: "b.bin", index: 1, offset: 0, localName: "a.b", truncated: true), #"entry "b.bin": local header at offset 0 names "a.b…" instead"#),
            (.localHeaderDiffers(entry: "a.bin", index: 0, offset: 0, field: .method, local: 8, central: 0, fromZip64: false),
             #"entry "a.bin": local header at offset 0 says compression method 8, the central directory says 0"#),
            (.localHeaderDiffers(entry: "a.bin", index: 0, offset: 0, field: .flags, local: 0x0800, central: 0, fromZip64: false),
             #"entry "a.bin": local header at offset 0 says general purpose flags 0x0800, the central directory says 0x0000"#),
            (.localHeaderDiffers(entry: "a.bin", index: 0, offset: 0, field: .crc32, local: 0x1234_5678, central: 0x3610_a686, fromZip64: false),
             #"entry "a.bin": local header at offset 0 says CRC-32 0x12345678, the central directory says 0x3610a686"#),
            (.localHeaderDiffers(entry: "b.bin", index: 1, offset: 135, field: .compressedSize, local: 100, central: 5000, fromZip64: false),
             #"entry "b.bin": local header at offset 135 says compressed size 100, the central directory says 5000"#),
            (.localHeaderDiffers(entry: "big.bin", index: 0, offset: 0, field: .uncompressedSize, local: 1000, central: 1001, fromZip64: true),
             #"entry "big.bin": local header at offset 0 says uncompressed size 1000 (zip64 extra field), the central directory says 1001"#),
            (.descriptorTruncated(entry: "M/a.bin", index: 1, offset: 400, available: 8),
             #"entry "M/a.bin": data descriptor at offset 400 is cut short: 8 bytes before the next local header or the central directory"#),
            (.descriptorDiffers(entry: "M/a.bin", index: 1, offset: 400, field: .crc32, descriptor: 0x1234_5679, central: 0x1234_5678),
             #"entry "M/a.bin": data descriptor at offset 400 says CRC-32 0x12345679, the central directory says 0x12345678"#),
            (.descriptorDiffers(entry: "M/a.bin", index: 1, offset: 400, field: .compressedSize, descriptor: 301, central: 300),
             #"entry "M/a.bin": data descriptor at offset 400 says compressed size 301, the central directory says 300"#),
            (.descriptorDiffers(entry: "M/a.bin", index: 1, offset: 400, field: .uncompressedSize, descriptor: 299, central: 300),
             #"entry "M/a.bin": data descriptor at offset 400 says uncompressed size 299, the central directory says 300"#),

            // The entries' layout in the file, and their names together
            (.localHeaderBeyondDirectory(entry: "b.bin", index: 1, offset: 257, directoryStart: 250),
             #"entry "b.bin": local header offset 257 is beyond the central directory start 250"#),
            (.bytesBeforeFirstHeader(offset: 45, entry: "M/a"), #"45 bytes before the first local header ("M/a") that no entry accounts for"#),
            (.unaccountedBytes(entry: "M/a", index: 0, dataEnd: 50, next: 95, nextEntry: "M/b"),
             #"entry "M/a": 45 bytes between its data (ending at 50) and the local header of "M/b" at 95 that no entry accounts for (a local entry the central directory does not list?)"#),
            (.unaccountedBytes(entry: "M/b", index: 1, dataEnd: 150, next: 160, nextEntry: nil),
             #"entry "M/b": 10 bytes between its data (ending at 150) and the central directory at 160 that no entry accounts for (a local entry the central directory does not list?)"#),
            (.dataPastDirectory(entry: "b.bin", index: 1, dataEnd: 5170, directoryStart: 270), #"entry "b.bin": data ends at 5170, past the central directory start 270"#),
            (.dataOverlapsNextHeader(entry: "a.bin", index: 0, dataEnd: 135, nextEntry: "b.bin", nextOffset: 0),
             #"entry "a.bin": data ends at 135, overlapping the local header of "b.bin" at 0"#),
            (.duplicateName(entry: "a.txt", index: 1, firstIndex: 0), #"entry "a.txt": duplicate name (same as entry #1)"#),
            (.foldedNameCollision(entry: "foo.bin", index: 1, other: "Foo.bin"),
             #"entry "foo.bin": collides with "Foo.bin" after Unicode NFC normalisation and lowercasing (they would overwrite each other on a case-insensitive file system)"#),
        ]
        for row in table {
            XCTAssertEqual(row.problem.message, row.message)
        }
        // Every case has a row (the enum has 45).
        let cases = Set(table.map { Mirror(reflecting: $0.problem).children.first?.label ?? "" })
        XCTAssertEqual(cases.count, 45, "\(cases.sorted())")
    }
}
