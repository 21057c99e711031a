/// Why a command line does not split, worded to follow `[Section] Key: "value"` in an error.
enum CommandLineSplitError: String, Error, Equatable, Sendable {
    case unterminatedQuote = "has an unterminated quote."
    case danglingBackslash = "ends with a backslash that escapes nothing."
}

/// Splits a command line into argv the way a POSIX shell tokenises words, without
/// any expansion: the command is executed directly, never handed to a shell, so
/// nothing from a triggered item can be interpreted as shell syntax.
enum CommandLineSplitter {
    static func split(_ line: String) throws(CommandLineSplitError) -> [String] {
        var arguments: [String] = []
        var current = ""
        var inWord = false
        var iterator = Array(line).makeIterator()
        while let character = iterator.next() {
            switch character {
            case " ", "\t", "\n":
                if inWord {
                    arguments.append(current)
                    current = ""
                    inWord = false
                }
            case "'":
                inWord = true
                var closed = false
                while let quoted = iterator.next() {
                    if quoted == "'" { closed = true; break }
                    current.append(quoted)
                }
                if !closed { throw .unterminatedQuote }
            case "\"":
                inWord = true
                var closed = false
                while let quoted = iterator.next() {
                    if quoted == "\"" { closed = true; break }
                    if quoted == "\\" {
                        guard let escaped = iterator.next() else { throw .unterminatedQuote }
                        // Inside double quotes a shell keeps the backslash unless it escapes one of these.
                        if escaped == "\"" || escaped == "\\" || escaped == "$" || escaped == "`" {
                            current.append(escaped)
                        } else if escaped != "\n" {
                            current.append("\\")
                            current.append(escaped)
                        }
                        continue
                    }
                    current.append(quoted)
                }
                if !closed { throw .unterminatedQuote }
            case "\\":
                guard let escaped = iterator.next() else { throw .danglingBackslash }
                inWord = true
                current.append(escaped)
            default:
                inWord = true
                current.append(character)
            }
        }
        if inWord { arguments.append(current) }
        return arguments
    }
}
