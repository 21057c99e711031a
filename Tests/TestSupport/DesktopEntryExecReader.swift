import Foundation

/// The `Exec` reading of the Desktop Entry Specification (after value unescaping): quoted
/// arguments with `\"`, `` \` ``, `\$`, `\\` escapes, then `%%` → `%`.
public enum DesktopEntryExecReader {
    public static func split(_ line: String) -> [String] {
        var arguments: [String] = []
        var current = ""
        var inQuotes = false
        var hasArgument = false
        var characters = Array(line)[...]
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
            } else if character == " " {
                if hasArgument { arguments.append(current) }
                current = ""
                hasArgument = false
            } else {
                current.append(character)
                hasArgument = true
            }
        }
        if hasArgument { arguments.append(current) }
        return arguments.map { $0.replacingOccurrences(of: "%%", with: "%") }
    }
}
