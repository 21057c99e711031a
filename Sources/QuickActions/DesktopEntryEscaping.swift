/// The escaping rules of the Desktop Entry Specification, in one place, so that no text from a
/// contact or a strings file can add a line, a key, a group or an `Exec` argument.
public enum DesktopEntryEscaping {
    /// A `string` or `localestring` value: `\\`, `\n`, `\t`, `\r`, and `\s` for a space at
    /// either end (readers trim blanks around a value). Other control characters have no
    /// escape and are not allowed in a value, so each becomes a space.
    public static func value(_ text: String) -> String {
        var escaped = ""
        let scalars = Array(text.unicodeScalars)
        for (offset, scalar) in scalars.enumerated() {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\t": escaped += "\\t"
            case "\r": escaped += "\\r"
            case " " where offset == 0 || offset == scalars.count - 1: escaped += "\\s"
            default:
                if scalar.isASCIIControl {
                    escaped += offset == 0 || offset == scalars.count - 1 ? "\\s" : " "
                } else {
                    escaped.unicodeScalars.append(scalar)
                }
            }
        }
        return escaped
    }

    /// Whether `value(_:)` keeps `text` exactly: no control character without an escape.
    public static func isRepresentable(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0.isASCIIControl && !["\n", "\t", "\r"].contains($0) }
    }

    /// A raw value as readers see it: `\s`, `\n`, `\t`, `\r` and `\\` decoded.
    public static func unescapedValue(_ raw: String) -> String {
        var text = ""
        var escaping = false
        for character in raw {
            if escaping {
                switch character {
                case "s": text += " "
                case "n": text += "\n"
                case "t": text += "\t"
                case "r": text += "\r"
                case "\\": text += "\\"
                default: text += "\\" + String(character)
                }
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                text.append(character)
            }
        }
        return escaping ? text + "\\" : text
    }

    /// Characters that the specification reserves in `Exec`: an argument holding one is quoted.
    static let reservedInExec: Set<Unicode.Scalar> = [
        " ", "\t", "\n", "\"", "'", "\\", ">", "<", "~", "|", "&", ";", "$", "*", "?", "#", "(", ")", "`",
    ]

    /// One `Exec` argument: `%` doubled (a field code is never expanded from it); quoted in
    /// double quotes when it is empty or holds a reserved character, with `"`, `` ` ``, `$` and
    /// `\` backslash-escaped inside the quotes. Not yet escaped as a value: see `exec(_:)`.
    public static func execArgument(_ argument: String) -> String {
        let percentDoubled = argument.replacingAll("%", with: "%%")
        let needsQuotes = argument.isEmpty || argument.unicodeScalars.contains { reservedInExec.contains($0) || $0.isASCIIControl }
        guard needsQuotes else { return percentDoubled }
        var quoted = "\""
        for scalar in percentDoubled.unicodeScalars {
            if scalar == "\"" || scalar == "`" || scalar == "$" || scalar == "\\" { quoted += "\\" }
            quoted.unicodeScalars.append(scalar)
        }
        return quoted + "\""
    }

    /// The value of an `Exec` key running exactly `arguments`: each argument quoted by the
    /// `Exec` rules, then the whole line escaped as a string value on top, as the
    /// specification requires (so a backslash in a quoted argument is written four times).
    public static func exec(_ arguments: [String]) -> String {
        value(arguments.map(execArgument).joined(separator: " "))
    }
}

extension Unicode.Scalar {
    /// A control character of ASCII (below the space, or DEL): none may stand in a desktop
    /// entry's value as it is.
    var isASCIIControl: Bool { value < 0x20 || value == 0x7F }
}
