/// Why a file in the contacts directory contributes no contacts. Such a file is skipped, not
/// fatal (one bad card must not hide the others), and counted and listed in status so the
/// user can find it. Descriptions are full sentences without the path,
/// which the index and the status output pair them with.
public enum ContactFileProblem: Error, Hashable, Sendable, CustomStringConvertible {
    case parse(ContactParseError)
    case tooLarge(size: Int, limit: Int)
    case binary
    /// `reason` is the operating system's text for the failure (for example the errno message).
    case unreadable(reason: String)
    /// The name is not one the contacts directory holds contacts under (see `ContactFileKind`).
    case notAContactFile(fileName: String)

    /// Binary data is its own reason in status, whichever layer noticed it.
    public init(_ error: ContactParseError) {
        if case .binaryData = error {
            self = .binary
        } else {
            self = .parse(error)
        }
    }

    /// One full sentence about the file's content, without its path.
    public var description: String {
        switch self {
        case .parse(let error):
            return "It cannot be parsed. \(error.description)"
        case .tooLarge(let size, let limit):
            return "It is \(size) bytes, larger than the limit of \(limit) bytes."
        case .binary:
            return "It holds binary data (NUL bytes), not text."
        case .unreadable(let reason):
            return "It cannot be read: \(reason)."
        case .notAContactFile(let fileName):
            return "\"\(fileName)\" is not a contact file name (expected \"*.vcf\" or \"*.json\")."
        }
    }
}
