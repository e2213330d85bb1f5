import Foundation

/// "Did you mean …?" for a mistyped command, option or key.
package enum Spelling {
    /// The candidate closest to `word` (at most two edits, or one a prefix of the other),
    /// or nil when none is close.
    package static func suggestion(for word: String, among candidates: [String]) -> String? {
        let lowered = word.lowercased()
        let scored = candidates.map { ($0, distance(lowered, $0.lowercased())) }
        if let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= min(2, max(1, word.count / 3)) { return best.0 }
        return candidates.first { $0.hasPrefix(lowered) && lowered.count >= 3 }
    }

    /// Edit distance over characters, counting an insertion, a deletion, a substitution or
    /// a swap of two neighbouring characters as one edit (optimal string alignment): a swap
    /// is the commonest slip of all, and as two edits it put `iso` out of reach of `ios`.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var beforePrevious: [Int] = []
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + [Int](repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], beforePrevious[j - 2] + 1)
                }
            }
            beforePrevious = previous
            previous = current
        }
        return previous[b.count]
    }

    /// `'x' (did you mean 'y'?)`, or `'x'` when nothing is close.
    package static func quoted(_ word: String, among candidates: [String]) -> String {
        guard let close = suggestion(for: word, among: candidates) else { return "'\(word)'" }
        return "'\(word)' (did you mean '\(close)'?)"
    }
}
