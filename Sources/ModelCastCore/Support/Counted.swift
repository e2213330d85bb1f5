/// "1 file", "2 files", "0 checks": a count with its noun, pluralised, for every line a
/// person reads (JSON carries the number alone).
package func counted(_ count: Int, _ noun: String, plural: String? = nil) -> String {
    "\(count) \(count == 1 ? noun : plural ?? noun + "s")"
}
