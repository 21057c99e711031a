/// One field of an `[Actions]` command template, as written between braces.
public enum CommandTemplateField: String, CaseIterable, Hashable, Sendable {
    case name
    case email
    case identifier
    case title
    case subtitle
    case type
    case file
    /// `email` and `name` percent-encoded (RFC 3986: all but the unreserved characters and `@`),
    /// for building `mailto:` and other URIs.
    case emailURI = "email:uri"
    case nameURI = "name:uri"

    /// `{name}, {email}, …` for error messages and documentation.
    public static var spellings: String {
        allCases.map { "{\($0.rawValue)}" }.joined(separator: ", ")
    }
}

/// Why a template cannot be used; the configuration names its file, line and key around it.
public enum CommandTemplateError: Error, Hashable, Sendable, CustomStringConvertible {
    case empty
    case unknownField(String)
    /// A `{` without its `}`, or a `}` without its `{` (write `{{` and `}}` for the characters).
    case unbalancedBrace(argument: String)
    /// The program is chosen by the configuration alone, never by a contact's field.
    case fieldInProgram(String)

    /// The clause that follows the key's name in the configuration's error.
    public var description: String {
        switch self {
        case .empty:
            return "is an empty command"
        case .unknownField(let field):
            return "names the unknown field \"{\(field)}\"; the fields are \(CommandTemplateField.spellings)"
        case .unbalancedBrace(let argument):
            return "has an unbalanced brace in \"\(argument)\" (write {{ and }} for the characters themselves)"
        case .fieldInProgram(let program):
            return "has a field in its program \"\(program)\": the program must be written out"
        }
    }
}

/// The values a triggered item fills a template with; empty when the item has none (a static
/// item has no contact).
public struct CommandTemplateValues: Hashable, Sendable {
    /// `{name}`: the contact's name.
    public var name: String
    /// `{email}`: the contact's email.
    public var email: String
    /// `{identifier}`: the contact's identifier.
    public var identifier: String
    /// `{title}`: the item's title.
    public var title: String
    /// `{subtitle}`: the item's subtitle.
    public var subtitle: String
    /// `{type}`: the item's type.
    public var type: String
    /// `{file}`: the path of a file holding the contact's card.
    public var file: String

    /// Values for each field; a field not given is empty.
    public init(
        name: String = "", email: String = "", identifier: String = "", title: String = "", subtitle: String = "",
        type: String = "", file: String = ""
    ) {
        self.name = name
        self.email = email
        self.identifier = identifier
        self.title = title
        self.subtitle = subtitle
        self.type = type
        self.file = file
    }

    /// The value `field` expands to (the `:uri` fields percent-encoded).
    public func value(of field: CommandTemplateField) -> String {
        switch field {
        case .name: name
        case .email: email
        case .identifier: identifier
        case .title: title
        case .subtitle: subtitle
        case .type: type
        case .file: file
        case .emailURI: CommandTemplate.percentEncoded(email)
        case .nameURI: CommandTemplate.percentEncoded(name)
        }
    }
}

/// Why a triggered item's values cannot go into its command; nothing runs.
public enum CommandTemplateExpansionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The argument would begin with `-` that came from a field: the program would read it as an option.
    case leadingDash(field: CommandTemplateField, argument: String)
    /// A value holds a NUL, which no argument can carry (it would be cut short there).
    case nul(field: CommandTemplateField)
    /// The argument would be longer than Linux lets one argument be (`MAX_ARG_STRLEN`).
    case tooLong(field: CommandTemplateField, bytes: Int)

    /// The clause that names the field and what is wrong with its value.
    public var description: String {
        switch self {
        case .leadingDash(let field, let argument):
            return "the field {\(field.rawValue)} would begin the argument \"\(argument.prefix(80))\" with \"-\", which the command would read as an option; nothing was run"
        case .nul(let field):
            return "the field {\(field.rawValue)} holds a NUL character, which a command's argument cannot carry; nothing was run"
        case .tooLong(let field, let bytes):
            return "the field {\(field.rawValue)} makes an argument of \(bytes) bytes, longer than the \(CommandTemplate.maximumArgumentBytes) bytes a command's argument may have; nothing was run"
        }
    }
}

/// An `[Actions]` command: arguments already split like `LaunchCommand` (never by a shell),
/// each a sequence of literal text and fields filled in at trigger time. Because fields are
/// filled in *inside* an argument after splitting, a value never becomes two arguments or a
/// shell word, whatever it holds. As with the Desktop Entry specification's field codes, an
/// argument that is exactly one field and expands to nothing is dropped.
public struct CommandTemplate: Hashable, Sendable {
    /// A part of one argument: literal text, or a field filled in at trigger time.
    public enum Piece: Hashable, Sendable {
        case text(String)
        case field(CommandTemplateField)
    }

    /// The longest argument Linux passes to a program (`MAX_ARG_STRLEN`, 32 pages, less the NUL).
    public static let maximumArgumentBytes = 131_071

    /// One entry per argument; the first is the program, which holds no field.
    public let arguments: [[Piece]]

    /// Parses `{field}` in each argument (`{{` and `}}` for the braces themselves); throws `CommandTemplateError`
    /// for no program, a field in the program, an unknown field or an unbalanced brace.
    public init(arguments: [String]) throws(CommandTemplateError) {
        guard let program = arguments.first, !program.isEmpty else { throw .empty }
        var parsed: [[Piece]] = []
        for argument in arguments {
            parsed.append(try Self.pieces(of: argument))
        }
        if parsed[0].contains(where: { if case .field = $0 { true } else { false } }) {
            throw .fieldInProgram(program)
        }
        self.arguments = parsed
    }

    /// Each argument as a template writes it: fields in braces, braces of the text doubled.
    public var writtenArguments: [String] {
        arguments.map { pieces in
            pieces.map { piece in
                switch piece {
                case .text(let text): Self.literal(text)
                case .field(let field): "{\(field.rawValue)}"
                }
            }.joined()
        }
    }

    /// The command as a line of `[Actions]` could write it (an argument with a blank or a quote
    /// in double quotes), for people to read.
    public var text: String {
        writtenArguments.map { argument in
            guard argument.isEmpty || argument.contains(where: { " \t\"'\\".contains($0) }) else { return argument }
            var quoted = "\""
            for character in argument {
                if "\"\\$`".contains(character) { quoted.append("\\") }
                quoted.append(character)
            }
            return quoted + "\""
        }.joined(separator: " ")
    }

    /// The fields the template uses, in order of first use.
    public var fields: [CommandTemplateField] {
        var seen: [CommandTemplateField] = []
        for argument in arguments {
            for case .field(let field) in argument where !seen.contains(field) { seen.append(field) }
        }
        return seen
    }

    /// The argv to run, or why the values cannot go into it.
    public func expand(_ values: CommandTemplateValues) -> Result<[String], CommandTemplateExpansionError> {
        var argv: [String] = []
        for pieces in arguments {
            var argument = ""
            // Which piece put the first character into the argument.
            var firstFrom: Piece?
            var longest: CommandTemplateField?
            for piece in pieces {
                let text: String
                switch piece {
                case .text(let literal): text = literal
                case .field(let field):
                    text = values.value(of: field)
                    if text.utf8.contains(0) { return .failure(.nul(field: field)) }
                    if longest.map({ values.value(of: $0).utf8.count < text.utf8.count }) ?? true { longest = field }
                }
                if argument.isEmpty, !text.isEmpty { firstFrom = piece }
                argument += text
            }
            if argument.isEmpty, pieces.count == 1, case .field = pieces[0] { continue }
            if argument.hasPrefix("-"), case .field(let field)? = firstFrom {
                return .failure(.leadingDash(field: field, argument: argument))
            }
            if argument.utf8.count > Self.maximumArgumentBytes, let longest {
                return .failure(.tooLong(field: longest, bytes: argument.utf8.count))
            }
            argv.append(argument)
        }
        return .success(argv)
    }

    static func pieces(of argument: String) throws(CommandTemplateError) -> [Piece] {
        var pieces: [Piece] = []
        var text = ""
        var characters = argument.makeIterator()
        var pending: Character?
        func next() -> Character? {
            if let character = pending {
                pending = nil
                return character
            }
            return characters.next()
        }
        while let character = next() {
            switch character {
            case "{":
                guard let following = next() else { throw .unbalancedBrace(argument: argument) }
                if following == "{" {
                    text.append("{")
                    continue
                }
                pending = following
                var name = ""
                var closed = false
                while let inner = next() {
                    if inner == "}" { closed = true; break }
                    if inner == "{" { throw .unbalancedBrace(argument: argument) }
                    name.append(inner)
                }
                guard closed else { throw .unbalancedBrace(argument: argument) }
                guard let field = CommandTemplateField(rawValue: name) else { throw .unknownField(name) }
                if !text.isEmpty { pieces.append(.text(text)) }
                text = ""
                pieces.append(.field(field))
            case "}":
                guard next() == "}" else { throw .unbalancedBrace(argument: argument) }
                text.append("}")
            default:
                text.append(character)
            }
        }
        if !text.isEmpty || pieces.isEmpty { pieces.append(.text(text)) }
        return pieces
    }

    /// `text` as it must be written in a template to stand for itself: `{{` and `}}` for braces.
    public static func literal(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "{" || character == "}" { escaped.append(character) }
            escaped.append(character)
        }
        return escaped
    }

    /// RFC 3986 percent-encoding of UTF-8: every byte but the unreserved characters and `@`.
    public static func percentEncoded(_ text: String) -> String {
        var encoded = ""
        let hex = Array("0123456789ABCDEF")
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "@"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                encoded.append("%")
                encoded.append(hex[Int(byte >> 4)])
                encoded.append(hex[Int(byte & 0x0f)])
            }
        }
        return encoded
    }
}
