/// One `Key=Value` assignment with where it came from, so later validation can name the line.
struct INIAssignment: Equatable, Sendable {
    let section: String
    let key: String
    let value: String
    let line: Int
}

/// The systemd unit-file dialect: `[Section]`, `Key=Value` with whitespace around `=`
/// ignored, and `#` / `;` full-line comments. As in systemd, a comment cannot follow a value;
/// unlike systemd, a value that looks as if one did (a blank, then `#` or `;`) is refused
/// rather than taken whole, since `Evolution=all   # GNOME Contacts` taken whole would name
/// address books nobody has, and in a command it would pass the comment's words as arguments.
enum INIParser {
    static func parse(_ text: String, file: String) throws(ConfigurationError) -> [INIAssignment] {
        try parseWithSections(text, file: file).assignments
    }

    /// The assignments, and every section header with its line: a header with no assignments
    /// still deserves an unknown-section warning.
    static func parseWithSections(_ text: String, file: String) throws(ConfigurationError)
        -> (assignments: [INIAssignment], sectionHeaders: [(name: String, line: Int)]) {
        var assignments: [INIAssignment] = []
        var sectionHeaders: [(name: String, line: Int)] = []
        var section: String?
        // Split on every line-end convention; keep empty lines so line numbers stay right.
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
        for (index, rawLine) in lines.enumerated() {
            let lineNumber = index + 1
            var line = rawLine.trimmingBlanks()
            if lineNumber == 1, line.hasPrefix("\u{FEFF}") {
                line = String(line.dropFirst()).trimmingBlanks()
            }
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") {
                continue
            }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), line.count > 2 else {
                    throw .malformedSectionHeader(file: file, line: lineNumber, text: line)
                }
                let name = line.dropFirst().dropLast().trimmingBlanks()
                guard !name.isEmpty, !name.contains("["), !name.contains("]") else {
                    throw .malformedSectionHeader(file: file, line: lineNumber, text: line)
                }
                section = name
                sectionHeaders.append((name, lineNumber))
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw .lineWithoutAssignment(file: file, line: lineNumber, text: line)
            }
            let key = line[..<equals].trimmingBlanks()
            let value = line[line.index(after: equals)...].trimmingBlanks()
            guard !key.isEmpty else {
                throw .emptyKey(file: file, line: lineNumber)
            }
            guard let section else {
                throw .entryOutsideSection(file: file, line: lineNumber, key: key)
            }
            if let comment = trailingComment(in: value) {
                throw .invalidValue(
                    file: file, line: lineNumber, section: section, key: key, value: value,
                    expectation: "ends in what looks like a comment (\"\(comment)\"): qactd.conf takes comments only on"
                        + " lines of their own; move it to a line above \(key)=.")
            }
            assignments.append(INIAssignment(section: section, key: key, value: value, line: lineNumber))
        }
        return (assignments, sectionHeaders)
    }

    /// The part of `value` from the first `#` or `;` that follows a blank, which reads as a
    /// comment after the value; nil when there is none.
    static func trailingComment(in value: String) -> String? {
        var previousWasBlank = false
        for index in value.unicodeScalars.indices {
            let scalar = value.unicodeScalars[index]
            if previousWasBlank, scalar == "#" || scalar == ";" {
                return String(value.unicodeScalars[index...])
            }
            previousWasBlank = scalar.isBlank
        }
        return nil
    }
}

extension StringProtocol {
    /// Without the blanks at either end: tabs and Unicode space separators, what
    /// Foundation's `.whitespaces` means (line ends never reach here: lines are split on them).
    func trimmingBlanks() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.isBlank }),
              let last = scalars.lastIndex(where: { !$0.isBlank })
        else { return "" }
        var trimmed = String.UnicodeScalarView()
        trimmed.append(contentsOf: scalars[first...last])
        return String(trimmed)
    }
}

extension Unicode.Scalar {
    /// A tab or a Unicode space separator.
    fileprivate var isBlank: Bool {
        self == "\t" || properties.generalCategory == .spaceSeparator
    }
}
