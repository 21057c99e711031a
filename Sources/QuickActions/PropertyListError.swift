/// Why a property list could not be read. XML problems carry the 1-based line
/// where they were noticed, so a user can find the spot with a text editor; binary
/// problems name the key path of the object at fault, or the trailer byte.
public enum PropertyListError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The input holds no bytes (or only a byte-order mark and white space).
    case empty
    /// The input starts like neither an XML nor a binary (`bplist00`) property list.
    case unrecognizedFormat
    /// Malformed XML property list; `problem` says what was expected and what was found.
    case xml(line: Int, problem: String)
    /// Malformed binary property list; `problem` says where (a key path such as
    /// `UIApplicationShortcutItems[0].UIApplicationShortcutItemTitle`, or a byte of the
    /// trailer) and what is wrong.
    case binary(problem: String)

    /// One sentence naming the line or the key path and what is wrong.
    public var description: String {
        switch self {
        case .empty:
            return "The property list is empty."
        case .unrecognizedFormat:
            return "The file is neither an XML property list (starting with \"<\") nor a binary one (starting with \"bplist00\")."
        case .xml(let line, let problem):
            return "line \(line): \(problem)"
        case .binary(let problem):
            return problem
        }
    }
}
