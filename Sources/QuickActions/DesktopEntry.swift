/// A desktop entry read as lines, each kept byte for byte, so a copy keeps every key, group,
/// comment and translation of the app's own file.
public struct DesktopEntryDocument: Hashable, Sendable {
    /// One line of the file.
    public enum Line: Hashable, Sendable {
        case groupHeader(name: String, text: String)
        /// `key` includes any `[locale]`; `value` is the raw text after `=`, blanks trimmed.
        case entry(key: String, value: String, text: String)
        /// A comment, a blank line, or anything else, kept as it is.
        case other(text: String)

        /// The line as it was read.
        public var text: String {
            switch self {
            case .groupHeader(_, let text), .entry(_, _, let text), .other(let text): return text
            }
        }
    }

    /// Every line, in the file's order.
    public var lines: [Line]

    /// Why a text is not a desktop entry.
    public enum ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        case noDesktopEntryGroup
        case entryBeforeFirstGroup(line: Int)

        /// One sentence; the line is 1-based.
        public var description: String {
            switch self {
            case .noDesktopEntryGroup: return "its first group is not [Desktop Entry]"
            case .entryBeforeFirstGroup(let line): return "line \(line) is a key before any group"
            }
        }
    }

    /// Reads `text`; throws `ParseError` when it has no `[Desktop Entry]` group first, or a key before any group.
    public init(parsing text: String) throws(ParseError) {
        var lines: [Line] = []
        var sawGroup = false
        var rawLines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if rawLines.last == "" { rawLines.removeLast() }
        for (offset, raw) in rawLines.enumerated() {
            let trimmed = raw.trimmingBlanks()
            if trimmed.hasPrefix("["), trimmed.hasSuffix("]"), trimmed.count >= 2 {
                let name = String(trimmed.dropFirst().dropLast())
                if !sawGroup, name != "Desktop Entry" { throw .noDesktopEntryGroup }
                sawGroup = true
                lines.append(.groupHeader(name: name, text: raw))
            } else if !trimmed.hasPrefix("#"), !trimmed.isEmpty, let equals = raw.firstIndex(of: "=") {
                guard sawGroup else { throw .entryBeforeFirstGroup(line: offset + 1) }
                lines.append(.entry(key: raw[..<equals].trimmingBlanks(), value: raw[raw.index(after: equals)...].trimmingBlanks(), text: raw))
            } else {
                lines.append(.other(text: raw))
            }
        }
        guard sawGroup else { throw .noDesktopEntryGroup }
        self.lines = lines
    }

    /// Every group's name, in file order.
    public var groupNames: [String] {
        lines.compactMap { if case .groupHeader(let name, _) = $0 { return name } else { return nil } }
    }

    /// The raw (still escaped) value of `key` in `group`; the last one wins, as in GLib.
    public func value(of key: String, in group: String = "Desktop Entry") -> String? {
        var current: String?
        var found: String?
        for line in lines {
            switch line {
            case .groupHeader(let name, _): current = name
            case .entry(let entryKey, let value, _) where current == group && entryKey == key: found = value
            default: break
            }
        }
        return found
    }

    /// The app's own action identifiers (`Actions=`, a `;`-separated list).
    public var actionIdentifiers: [String] {
        guard let list = value(of: "Actions") else { return [] }
        return DesktopEntryList.split(list)
    }

    /// The file's text: every line as it was read, each ending in a line feed.
    public var text: String {
        lines.map(\.text).joined(separator: "\n") + "\n"
    }
}

/// The specification's lists: items separated by `;` (escaped as `\;` inside an item), the
/// last one optionally followed by `;`.
public enum DesktopEntryList {
    /// The items of a list value (`a;b\;c;` gives `a` and `b;c`).
    public static func split(_ raw: String) -> [String] {
        var items: [String] = []
        var current = ""
        var escaping = false
        for character in raw {
            if escaping {
                current += character == ";" ? ";" : "\\" + String(character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == ";" {
                items.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        if escaping { current += "\\" }
        if !current.isEmpty { items.append(current) }
        return items.map { $0.trimmingBlanks() }.filter { !$0.isEmpty }
    }
}

/// Desktop-file IDs as the Desktop Entry Specification defines them: a file's path below an
/// `applications` folder with each `/` written as `-`, ending in ".desktop".
public enum DesktopFileID {
    /// The ending of every desktop-file ID.
    public static let suffix = ".desktop"

    /// A name ending in ".desktop" with something before it, no `/`, no control characters,
    /// and not starting with a dot (which would make a hidden file).
    public static func isValid(_ identifier: String) -> Bool {
        guard identifier.hasSuffix(suffix), identifier.count > suffix.count, !identifier.hasPrefix(".") else { return false }
        return !identifier.unicodeScalars.contains { $0 == "/" || $0.isASCIIControl }
    }

    /// Hyphens beyond this are not tried as folder separators (2^n candidates).
    static let maxHyphensTriedAsFolders = 6

    /// The paths below an `applications` folder that may hold `identifier`, most direct first:
    /// `a-b-c.desktop`, then with hyphens read as subfolders (`a/b-c.desktop`, `a-b/c.desktop`,
    /// `a/b/c.desktop`), as the specification's mapping of subfolders to IDs allows.
    public static func relativePaths(of identifier: String) -> [String] {
        let stem = identifier.dropLast(suffix.count)
        let hyphens = stem.indices.filter { stem[$0] == "-" }
        guard !hyphens.isEmpty, hyphens.count <= maxHyphensTriedAsFolders else { return [identifier] }
        var paths: [String] = []
        for mask in 0..<(1 << hyphens.count) {
            var characters = Array(stem)
            for (bit, index) in hyphens.enumerated() where mask & (1 << bit) != 0 {
                characters[stem.distance(from: stem.startIndex, to: index)] = "/"
            }
            let path = String(characters) + suffix
            // A hyphen at either end of a segment would make an empty folder name.
            if !path.contains("//"), !path.hasPrefix("/"), !path.contains("/.") { paths.append(path) }
        }
        return paths
    }
}
