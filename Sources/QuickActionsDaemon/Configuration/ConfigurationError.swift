/// Everything that makes a configuration unusable. Descriptions follow the
/// compiler convention `file:line:` so editors can jump to the offending line.
enum ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    case explicitFileMissing(path: String)
    /// `qactd --app NAME` and no `NAME.conf` in the user's configuration folder.
    case appFileMissing(app: String, path: String)
    case unreadable(path: String, reason: String)
    case notUTF8(path: String)
    case entryOutsideSection(file: String, line: Int, key: String)
    case lineWithoutAssignment(file: String, line: Int, text: String)
    case malformedSectionHeader(file: String, line: Int, text: String)
    case emptyKey(file: String, line: Int)
    /// A value the key does not take (`expectation` continues the sentence after the value),
    /// a command line that does not split, or a comment written after the value.
    case invalidValue(file: String, line: Int, section: String, key: String, value: String, expectation: String)
    case homeDirectoryUnknown

    var description: String {
        switch self {
        case .explicitFileMissing(let path):
            return "The configuration file \"\(path)\" given with --config does not exist."
        case .appFileMissing(let app, let path):
            return "No configuration file \"\(path)\", and no installed app \(app).desktop; write it (see qactd.conf(5)) before starting qactd@\(app)."
        case .unreadable(let path, let reason):
            return "Cannot read the configuration file \"\(path)\": \(reason)"
        case .notUTF8(let path):
            return "The configuration file \"\(path)\" is not valid UTF-8."
        case .entryOutsideSection(let file, let line, let key):
            return "\(file):\(line): the key \"\(key)\" appears before any [Section] header."
        case .lineWithoutAssignment(let file, let line, let text):
            return "\(file):\(line): \"\(text)\" is neither a [Section] header, a Key=Value assignment nor a comment."
        case .malformedSectionHeader(let file, let line, let text):
            return "\(file):\(line): \"\(text)\" is not a valid [Section] header."
        case .emptyKey(let file, let line):
            return "\(file):\(line): the assignment has no key before \"=\"."
        case .invalidValue(let file, let line, let section, let key, let value, let expectation):
            return "\(file):\(line): [\(section)] \(key): \"\(value)\" \(expectation)"
        case .homeDirectoryUnknown:
            return "HOME is not set, so \"~\" and the default folders cannot be resolved."
        }
    }
}

/// A problem that does not stop the daemon (an unknown key is most likely a typo
/// or a key from a newer version), returned as data so the caller decides how to log it.
struct ConfigurationWarning: Equatable, Sendable, CustomStringConvertible {
    let file: String
    let line: Int
    let section: String
    /// The unknown key; nil when the whole section is unknown.
    let key: String?

    var description: String {
        guard let key else { return "\(file):\(line): unknown section [\(section)], ignoring." }
        return "\(file):\(line): [\(section)] unknown key \"\(key)\", ignoring."
    }
}
