/// The address books khard's configuration file names (`$XDG_CONFIG_HOME/khard/khard.conf`),
/// read from its text: configobj syntax, `[addressbooks]` holding one `[[name]]` subsection per
/// book with its `path = …`. Pure: the text and the environment in, the books out; the
/// `KhardEngine` reads the file and follows it.
struct KhardConfiguration: Equatable, Sendable {
    struct AddressBook: Equatable, Sendable {
        var name: String
        /// As khard expands it: environment variables, then a leading `~`, made absolute and
        /// without `.`, `..` or a trailing `/`; nil when it is still relative after that.
        var folder: String?
        /// The `path` value as written.
        var written: String
        var line: Int
    }

    /// Why the file cannot be read as khard reads it, and on which line (1-based).
    struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        var line: Int
        var message: String
        var description: String { "line \(line): \(message)" }
    }

    var addressBooks: [AddressBook] = []

    static func parse(_ text: String, environment: [String: String]) throws(ParseError) -> KhardConfiguration {
        var configuration = KhardConfiguration()
        // The section each depth is in now: ["addressbooks", "family"] inside `[[family]]`.
        var sections: [String] = []
        var paths: [String: (value: String, line: Int)] = [:]
        var books: [(name: String, line: Int)] = []
        var seenSections: Set<[String]> = []
        // "\r\n" is one Character, so each line end is named.
        var lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
        if let first = lines.first, first.hasPrefix("\u{FEFF}") { lines[0] = first.dropFirst() }
        for (offset, raw) in lines.enumerated() {
            let number = offset + 1
            let line = raw.trimmingBlanks()
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                let (depth, name) = try section(line, number)
                guard depth <= sections.count + 1 else {
                    throw ParseError(line: number, message: "section \"\(name)\" is nested too deeply (no section \(String(repeating: "[", count: depth - 1))…\(String(repeating: "]", count: depth - 1)) above it)")
                }
                sections = Array(sections.prefix(depth - 1)) + [name]
                guard seenSections.insert(sections).inserted else {
                    throw ParseError(line: number, message: "section \"\(name)\" appears twice")
                }
                if sections.count == 2, sections[0] == "addressbooks" { books.append((name, number)) }
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw ParseError(line: number, message: "expected [section] or key = value")
            }
            let key = try unquoted(line[..<equals].trimmingBlanks(), number, allowComment: false)
            guard !key.isEmpty else { throw ParseError(line: number, message: "a value without a key") }
            let value = try unquoted(line[line.index(after: equals)...].trimmingBlanks(), number, allowComment: true)
            if sections.count == 2, sections[0] == "addressbooks", key == "path" {
                paths[sections[1]] = (value, number)
            }
        }
        for book in books {
            guard let path = paths[book.name] else {
                throw ParseError(line: book.line, message: "address book \"\(book.name)\" has no path")
            }
            configuration.addressBooks.append(AddressBook(
                name: book.name, folder: expanded(path.value, environment: environment), written: path.value, line: path.line))
        }
        return configuration
    }

    /// `[name]` is depth 1, `[[name]]` depth 2, …; the name may be quoted, a comment may follow.
    private static func section(_ line: String, _ number: Int) throws(ParseError) -> (depth: Int, name: String) {
        let depth = line.prefix { $0 == "[" }.count
        var rest = line.dropFirst(depth)
        let closing = String(repeating: "]", count: depth)
        guard let end = rest.firstRange(of: closing) else {
            throw ParseError(line: number, message: "a section header without its closing \(closing)")
        }
        let after = rest[end.upperBound...].trimmingBlanks()
        guard after.isEmpty || after.hasPrefix("#") else {
            throw ParseError(line: number, message: "the brackets of a section header do not match")
        }
        rest = rest[..<end.lowerBound]
        let name = try unquoted(rest.trimmingBlanks(), number, allowComment: false)
        guard !name.isEmpty, !name.contains("["), !name.contains("]") else {
            throw ParseError(line: number, message: "the brackets of a section header do not match")
        }
        return (depth, name)
    }

    /// A value as configobj reads it: in single or double quotes (taken as written, no escapes),
    /// else up to an inline `#` comment, blanks trimmed.
    private static func unquoted(_ text: String, _ number: Int, allowComment: Bool) throws(ParseError) -> String {
        guard let quote = text.first, quote == "\"" || quote == "'" else {
            guard allowComment, let hash = text.firstIndex(of: "#") else { return text }
            return text[..<hash].trimmingBlanks()
        }
        if text.hasPrefix(String(repeating: quote, count: 3)) {
            throw ParseError(line: number, message: "multi-line values are not supported")
        }
        let inside = text.dropFirst()
        guard let close = inside.firstIndex(of: quote) else {
            throw ParseError(line: number, message: "a quoted value without its closing \(quote)")
        }
        let after = inside[inside.index(after: close)...].trimmingBlanks()
        guard after.isEmpty || (allowComment && after.hasPrefix("#")) else {
            throw ParseError(line: number, message: "text after a quoted value")
        }
        return String(inside[..<close])
    }

    /// khard's `expanduser(expandvars(path))`: `$NAME` and `${NAME}` replaced by the variable's
    /// value (left as written when it is not set), then a leading `~` or `~/` by `$HOME`. The
    /// result is made lexically normal; nil when it is not absolute (khard would take it from
    /// the folder it was started in, which a daemon has none of).
    static func expanded(_ path: String, environment: [String: String]) -> String? {
        var text = expandedVariables(path, environment: environment)
        if text == "~" || text.hasPrefix("~/"), let home = environment["HOME"], !home.isEmpty {
            text = home + text.dropFirst()
        }
        guard text.hasPrefix("/") else { return nil }
        var components: [Substring] = []
        for component in text.split(separator: "/") where component != "." {
            if component == ".." { _ = components.popLast() } else { components.append(component) }
        }
        return "/" + components.joined(separator: "/")
    }

    private static func expandedVariables(_ text: String, environment: [String: String]) -> String {
        var result = ""
        var rest = Substring(text)
        while let dollar = rest.firstIndex(of: "$") {
            result += rest[..<dollar]
            let after = rest[rest.index(after: dollar)...]
            let isNameCharacter = { (character: Character) in character.isASCII && (character.isLetter || character.isNumber || character == "_") }
            if after.hasPrefix("{"), let close = after.firstIndex(of: "}") {
                let name = after[after.index(after: after.startIndex)..<close]
                if !name.isEmpty, name.allSatisfy(isNameCharacter), let value = environment[String(name)] {
                    result += value
                } else {
                    result += rest[dollar...close]
                }
                rest = after[after.index(after: close)...]
                continue
            }
            let name = after.prefix(while: isNameCharacter)
            if !name.isEmpty, let value = environment[String(name)] {
                result += value
            } else {
                result += "$" + name
            }
            rest = after[name.endIndex...]
        }
        return result + rest
    }
}
