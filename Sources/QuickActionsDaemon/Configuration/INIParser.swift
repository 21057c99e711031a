/// One `Key=Value` assignment with where it came from, so later validation can name the line.
struct INIAssignment: Equatable, Sendable {
    let section: String
    let key: String
    let value: String
    let line: Int
}

/// The systemd unit-file dialect: `[Section]`, `Key=Value` with whitespace around `=`
/// ignored, and `#` / `;` full-line comments.
enum INIParser {
    static func parse(_ text: String, file: String) throws(ConfigurationError) -> [INIAssignment] {
        var assignments: [INIAssignment] = []
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
            assignments.append(INIAssignment(section: section, key: key, value: value, line: lineNumber))
        }
        return assignments
    }

    /// Section headers with no assignments still deserve an unknown-section warning,
    /// so the headers are reported separately.
    static func sectionHeaders(_ text: String) -> [(name: String, line: Int)] {
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
        var headers: [(name: String, line: Int)] = []
        for (index, rawLine) in lines.enumerated() {
            var line = rawLine.trimmingBlanks()
            if index == 0, line.hasPrefix("\u{FEFF}") { line = String(line.dropFirst()) }
            if line.hasPrefix("["), line.hasSuffix("]"), line.count > 2 {
                headers.append((line.dropFirst().dropLast().trimmingBlanks(), index + 1))
            }
        }
        return headers
    }
}

extension StringProtocol {
    /// Without the blanks at either end: tabs and Unicode space separators, what
    /// Foundation's `.whitespaces` means (line ends never reach here: lines are split on them).
    func trimmingBlanks() -> String {
        func isBlank(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator
        }
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isBlank($0) }),
              let last = scalars.lastIndex(where: { !isBlank($0) })
        else { return "" }
        var trimmed = String.UnicodeScalarView()
        trimmed.append(contentsOf: scalars[first...last])
        return String(trimmed)
    }
}
