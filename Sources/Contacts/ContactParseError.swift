/// Why the bytes of one contact file could not be turned into contacts.
/// Descriptions are sentences about the file's content; the caller adds the path.
public enum ContactParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A NUL byte: the file is not text.
    case binaryData(byteOffset: Int)
    /// The file holds no `BEGIN:VCARD` at all (for example, it is empty).
    case noVCard
    /// A non-blank line outside any card that is not `BEGIN:VCARD`.
    case expectedBegin(line: Int, text: String)
    case endWithoutBegin(line: Int)
    case missingEnd(beginLine: Int)
    /// A line inside a card that is not `NAME[;PARAMS]:VALUE`.
    case malformedProperty(line: Int, text: String)
    case badQuotedPrintable(line: Int, property: String)
    /// JSON contact files.
    case invalidJSON(detail: String)
    case jsonNotAnObject
    case jsonWrongType(key: String, expected: String)

    /// One sentence about the file's content (the line when there is one), without its path.
    public var description: String {
        switch self {
        case .binaryData(let offset):
            return "The file holds binary data (a NUL byte at byte offset \(offset)), not text."
        case .noVCard:
            return "The file contains no vCard: there is no \"BEGIN:VCARD\" line."
        case .expectedBegin(let line, let text):
            return "Line \(line): expected \"BEGIN:VCARD\" but found \"\(Self.excerpt(text))\"."
        case .endWithoutBegin(let line):
            return "Line \(line): \"END:VCARD\" without a matching \"BEGIN:VCARD\"."
        case .missingEnd(let beginLine):
            return "The vCard that begins on line \(beginLine) has no \"END:VCARD\"."
        case .malformedProperty(let line, let text):
            return "Line \(line): \"\(Self.excerpt(text))\" is not a vCard property (it has no \":\")."
        case .badQuotedPrintable(let line, let property):
            return "Line \(line): the quoted-printable value of \"\(property)\" has an invalid \"=\" escape."
        case .invalidJSON(let detail):
            return "The file is not valid JSON: \(detail)"
        case .jsonNotAnObject:
            return "The file does not hold a JSON object."
        case .jsonWrongType(let key, let expected):
            return "The value of key \"\(key)\" is not \(expected)."
        }
    }

    private static func excerpt(_ text: String) -> String {
        text.count > 60 ? String(text.prefix(60)) + "…" : text
    }
}
