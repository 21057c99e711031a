import SystemCalls
import Varlink

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// Where a command's result goes: one JSON object per line with `--json`,
/// aligned text otherwise (coloured only on a terminal, and never with NO_COLOR).
struct Output {
    let json: Bool
    let style: Style

    init(json: Bool) {
        self.json = json
        let colour = isatty(STDOUT_FILENO) == 1 && environment("NO_COLOR").map(\.isEmpty) ?? true
            && environment("TERM") != "dumb"
        style = Style(colour: colour)
    }

    func emit<Value: Encodable>(_ value: Value, human: (Style) -> String) {
        if json {
            printJSON(value)
        } else {
            let text = human(style)
            if !text.isEmpty { print(text) }
        }
    }

    func printJSON<Value: Encodable>(_ value: Value) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if let data = try? encoder.encode(value) {
            print(String(decoding: data, as: UTF8.self))
        }
    }

    /// Reports a failure: the Varlink error name goes to stdout as JSON with
    /// `--json` (so scripts can branch on it); the message always goes to stderr.
    func fail(name: String, message: String, parameters: JSONValue? = nil, hint: String? = nil) {
        if json {
            printJSON(FailureReport(error: name, message: message, parameters: parameters, hint: hint))
        }
        var text = "qactl: \(message)\n"
        if let hint { text += "hint: \(hint)\n" }
        writeToStandardError(text)
    }
}

struct FailureReport: Encodable {
    var error: String
    var message: String
    var parameters: JSONValue?
    var hint: String?
}

struct Style {
    let colour: Bool

    func bold(_ text: String) -> String { wrap(text, "1") }
    func dim(_ text: String) -> String { wrap(text, "2") }
    func green(_ text: String) -> String { wrap(text, "32") }
    func yellow(_ text: String) -> String { wrap(text, "33") }
    func red(_ text: String) -> String { wrap(text, "31") }

    private func wrap(_ text: String, _ code: String) -> String {
        colour && !text.isEmpty ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}

/// Aligns columns by character count; escape sequences are added after
/// padding so colour never skews the alignment.
struct Table {
    var header: [String]
    var rows: [[String]] = []

    func render(style: Style, decorate: (Int, Int, String) -> String = { _, _, text in text }) -> String {
        var widths = header.map(\.count)
        for row in rows {
            for (column, cell) in row.enumerated() where column < widths.count {
                widths[column] = max(widths[column], cell.count)
            }
        }
        func line(_ cells: [String], row: Int?) -> String {
            var parts: [String] = []
            for (column, cell) in cells.enumerated() {
                let isLast = column == cells.count - 1
                let padded = isLast ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
                parts.append(row.map { decorate($0, column, padded) } ?? style.bold(padded))
            }
            var text = parts.joined(separator: "  ")
            while text.hasSuffix(" ") { text.removeLast() }
            return text
        }
        var lines = [line(header, row: nil)]
        for (index, row) in rows.enumerated() { lines.append(line(row, row: index)) }
        return lines.joined(separator: "\n")
    }
}

/// `stderr` is a C global Swift 6 will not touch from concurrent code; the descriptor is safe.
func writeToStandardError(_ text: String) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = retryingOnInterrupt { bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) } }
        if written <= 0 { return }
        bytes = bytes.dropFirst(written)
    }
}
