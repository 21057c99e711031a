/// Stable, collision-free action identifiers made of `A-Za-z0-9-` only.
public enum DesktopActionIdentifier {
    static let prefix = "qactd-"
    static let maxReadableLength = 40

    /// `qactd-<type>` or `qactd-<type>-<contact>`, other characters folded to `-`; when that
    /// loses information (non-ASCII, punctuation) or grows long, a hash of the exact type and
    /// contact follows, so two items never share an identifier by folding.
    public static func make(type: String, contactIdentifier: String?) -> String {
        prefix + stem(type: type, contactIdentifier: contactIdentifier)
    }

    /// `make` without its prefix: `<type>` or `<type>-<contact>`, or the folded text and a hash.
    public static func stem(type: String, contactIdentifier: String?) -> String {
        let exact = type + (contactIdentifier.map { "\u{0}" + $0 } ?? "")
        let readable = [type, contactIdentifier].compactMap { $0 }.map(fold).joined(separator: "-")
        let isExact = readable == [type, contactIdentifier].compactMap { $0 }.joined(separator: "-")
            && !type.contains("-") && readable.count <= maxReadableLength
        if isExact { return readable }
        let shortened = String(readable.prefix(maxReadableLength).trimming { $0 == "-" })
        return (shortened.isEmpty ? "" : shortened + "-") + StableHash.hex(exact.utf8)
    }

    /// Adds `-2`, `-3`, … until the identifier is not in `taken`.
    public static func unique(_ identifier: String, avoiding taken: Set<String>) -> String {
        guard taken.contains(identifier) else { return identifier }
        var counter = 2
        while taken.contains("\(identifier)-\(counter)") { counter += 1 }
        return "\(identifier)-\(counter)"
    }

    private static func fold(_ text: String) -> String {
        var folded = ""
        for scalar in text.unicodeScalars {
            let isAlphanumeric = (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z") || (scalar >= "0" && scalar <= "9")
            if isAlphanumeric {
                folded.unicodeScalars.append(scalar)
            } else if !folded.hasSuffix("-") {
                folded += "-"
            }
        }
        return String(folded.trimming { $0 == "-" })
    }
}
