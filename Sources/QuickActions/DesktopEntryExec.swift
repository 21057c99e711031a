/// The `Exec` key of the Desktop Entry Specification: a command line (once the value's own
/// escapes are read) split into arguments by its quoting rules, and its field codes filled in as a
/// launcher fills them. The one reader of `Exec` lines: the daemon runs an app's own `Exec` with a
/// `mailto:` URI through it, and the tests read the `Exec` lines qactd writes with it.
public enum DesktopEntryExec {
    /// Why an `Exec` value gives no command.
    public enum Problem: Error, Hashable, Sendable, CustomStringConvertible {
        case empty
        case unterminatedQuote
        /// The command takes no URL (`%u` or `%U`), so it has no place for a `mailto:` URI.
        case takesNoURL(String)

        /// One sentence naming the problem.
        public var description: String {
            switch self {
            case .empty: return "its Exec is empty"
            case .unterminatedQuote: return "its Exec has an unterminated quote"
            case .takesNoURL(let exec): return "its Exec \"\(exec)\" takes no URL (no %u or %U)"
            }
        }
    }

    /// The arguments of `command` (an `Exec` value with its string escapes already read, see
    /// `DesktopEntryEscaping.unescapedValue`): split at blanks outside double quotes; inside
    /// them `\"`, `` \` ``, `\$` and `\\` stand for the character. Field codes are left as written.
    public static func split(_ command: String) throws(Problem) -> [String] {
        var arguments: [String] = []
        var current = ""
        var inQuotes = false
        var hasArgument = false
        var characters = Array(command)[...]
        while let character = characters.popFirst() {
            if inQuotes {
                if character == "\\", let next = characters.first, "\"`$\\".contains(next) {
                    current.append(characters.removeFirst())
                } else if character == "\"" {
                    inQuotes = false
                } else {
                    current.append(character)
                }
            } else if character == "\"" {
                inQuotes = true
                hasArgument = true
            } else if character == " " || character == "\t" {
                if hasArgument { arguments.append(current) }
                current = ""
                hasArgument = false
            } else {
                current.append(character)
                hasArgument = true
            }
        }
        if inQuotes { throw .unterminatedQuote }
        if hasArgument { arguments.append(current) }
        return arguments
    }

    /// The arguments with `%%` read as `%` and every other field code left as written: what an
    /// `Exec` line that qactd wrote (which doubles every `%` of its arguments) runs.
    public static func literalArguments(_ command: String) throws(Problem) -> [String] {
        try split(command).map { argument in
            var text = ""
            var characters = argument.makeIterator()
            while let character = characters.next() {
                text.append(character)
                if character == "%", let code = characters.next(), code != "%" { text.append(code) }
            }
            return text
        }
    }

    /// What a launcher fills the field codes with.
    public struct Fields: Hashable, Sendable {
        /// `%u` takes the first, `%U` all (each an argument of its own).
        public var urls: [String]
        /// `Icon=`: `%i` becomes `--icon` and it.
        public var icon: String?
        /// The translated `Name=`, for `%c`.
        public var name: String?
        /// The entry's path, for `%k`.
        public var location: String?

        /// Fields with each value; nil or empty ones fill nothing.
        public init(urls: [String] = [], icon: String? = nil, name: String? = nil, location: String? = nil) {
            self.urls = urls
            self.icon = icon
            self.name = name
            self.location = location
        }
    }

    /// `arguments` with their field codes filled in. `literal` maps the text written in the entry
    /// (a template escapes its braces there), never what a field put in. `%f` and `%F` get nothing
    /// (a URL is given, not a file), and an argument that was only a field code and is empty is
    /// dropped, as are the deprecated codes; `%%` is `%`.
    public static func expand(
        _ arguments: [String], _ fields: Fields, literal: (String) -> String = { $0 }
    ) -> [String] {
        var expanded: [String] = []
        for argument in arguments {
            switch argument {
            case "%U": expanded += fields.urls; continue
            case "%F", "%f", "%D", "%N", "%d", "%n", "%v", "%m": continue
            case "%i":
                if let icon = fields.icon, !icon.isEmpty { expanded += ["--icon", literal(icon)] }
                continue
            default: break
            }
            var result = ""
            var text = ""
            var characters = argument.makeIterator()
            while let character = characters.next() {
                guard character == "%", let code = characters.next() else {
                    text.append(character)
                    continue
                }
                let value: String
                switch code {
                case "%": text.append("%"); continue
                case "u", "U": value = fields.urls.first ?? ""
                case "c": value = fields.name.map(literal) ?? ""
                case "k": value = fields.location.map(literal) ?? ""
                case "i": value = fields.icon.map(literal) ?? ""
                default: value = ""
                }
                result += literal(text) + value
                text = ""
            }
            result += literal(text)
            let wasOneCode = argument.count == 2 && argument.hasPrefix("%") && argument != "%%"
            if wasOneCode, result.isEmpty { continue }
            expanded.append(result)
        }
        return expanded
    }

    /// Whether the command takes URLs (`%u` or `%U`) somewhere.
    public static func takesURLs(_ arguments: [String]) -> Bool {
        arguments.contains { argument in
            var characters = argument.makeIterator()
            while let character = characters.next() {
                guard character == "%", let code = characters.next() else { continue }
                if code == "u" || code == "U" { return true }
            }
            return false
        }
    }

    /// The `[Actions]` command that opens a new mail through an app's own `Exec`: the app's
    /// command line with `mailto:{email:uri}` where it takes a URL, its own text kept as text (a
    /// brace in it is no field). The program is the app's, so no contact's field can choose it.
    public static func mailtoTemplate(
        exec: String, icon: String?, name: String?, location: String?
    ) throws(Problem) -> [String] {
        let arguments = try split(exec)
        guard !arguments.isEmpty else { throw .empty }
        guard takesURLs(arguments) else { throw .takesNoURL(exec) }
        return expand(
            arguments, Fields(urls: ["mailto:{email:uri}"], icon: icon, name: name, location: location),
            literal: CommandTemplate.literal)
    }
}
