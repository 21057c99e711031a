/// Text put between the tags of XML or of a notification's Pango markup, escaped once for both:
/// `&`, `<` and `>` as their entities (quotes need none outside an attribute).
public enum MarkupEscaping {
    /// `text` with `&`, `<` and `>` written as entities.
    public static func text(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
