import Foundation

/// An entry's extra field area (in its central or its local header): the fields it holds,
/// the zip64 values among them, and the device rule on a second name.
struct ZipExtraFields {
    private let area: [UInt8]
    /// Where the walk of fields stops: the area's end, or a field that overruns it.
    private let end: Int

    /// Walks `extra`, reporting a field longer than what remains of the area (the walk
    /// stops there). Fewer than 4 trailing bytes cannot hold a field header; some writers pad.
    init(_ extra: [UInt8], entry: String, index: Int, header: ZipProblem.Header, problems: inout [ZipProblem]) {
        let fields = ZipFields(extra)
        var position = 0
        while position + 4 <= fields.count {
            let id = fields.u16(position), length = Int(fields.u16(position + 2))
            guard position + 4 + length <= fields.count else {
                problems.append(.extraFieldOverrun(entry: entry, index: index, header: header, id: id, length: length, remaining: fields.count - position - 4))
                break
            }
            position += 4 + length
        }
        area = extra
        end = position
    }

    /// Each field's id and body, in order, up to where the walk stopped.
    private func forEach(_ body: (_ id: UInt16, _ field: Range<Int>) -> Bool) {
        let fields = ZipFields(area)
        var position = 0
        while position < end {
            let length = Int(fields.u16(position + 2))
            guard body(fields.u16(position), (position + 4)..<(position + 4 + length)) else { return }
            position += 4 + length
        }
    }

    /// The body of the first zip64 extended information extra field (0x0001), if any.
    var zip64: ZipFields? {
        var found: ZipFields?
        forEach { id, field in
            if id == 0x0001 { found = ZipFields(Array(area[field])) }
            return found == nil
        }
        return found
    }

    /// An Info-ZIP Unicode Path extra field (0x7075) carries a second name that unzip and
    /// bsdtar extract to instead of the header's: the name rules check one name per entry,
    /// so an entry with another name hidden in its extra field is refused (modelcast never
    /// writes one).
    func unicodePathProblems(entry: String, index: Int, header: ZipProblem.Header) -> [ZipProblem] {
        var problems: [ZipProblem] = []
        forEach { id, field in
            if id == 0x7075 {
                // Version (1 byte), CRC-32 of the header's name (4), then the UTF-8 name.
                let name = field.count > 5 ? String(decoding: area[field].dropFirst(5), as: UTF8.self) : ""
                problems.append(.unicodePathField(entry: entry, index: index, header: header, name: name))
            }
            return true
        }
        return problems
    }
}
