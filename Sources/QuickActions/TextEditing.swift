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
    /// Every occurrence of `target` replaced, matched as UTF-8 bytes rather than as characters:
    /// a `%` is doubled even where a combining mark follows it (a desktop entry's reader sees
    /// bytes), and without the standard library's search in `_StringProcessing`, whose code
    /// start-up would otherwise page in.
    func replacingAll(_ target: String, with replacement: String) -> String {
        let pattern = Array(target.utf8)
        guard let first = pattern.first else { return self }
        var result: [UInt8] = []
        var text = utf8[...]
        while let found = text.firstIndex(of: first) {
            result += text[..<found]
            let rest = text[found...]
            if rest.starts(with: pattern) {
                result += replacement.utf8
                text = rest.dropFirst(pattern.count)
            } else {
                result.append(first)
                text = rest.dropFirst()
            }
        }
        result += text
        return String(decoding: result, as: UTF8.self)
    }
}
