// Text edits FoundationEssentials does not have.

extension StringProtocol {
    /// Without the characters at either end for which `isTrimmed` holds.
    func trimming(while isTrimmed: (Character) -> Bool) -> SubSequence {
        guard let first = firstIndex(where: { !isTrimmed($0) }), let last = lastIndex(where: { !isTrimmed($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }

    /// Without the spaces and tabs at either end: the blanks around a key or a value of a
    /// desktop entry or `mimeapps.list`.
    func trimmingBlanks() -> String {
        String(trimming { $0 == " " || $0 == "\t" })
    }
}

extension String {
    /// Every occurrence of `target` replaced.
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var result = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
