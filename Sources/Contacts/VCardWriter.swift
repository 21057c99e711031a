/// A vCard 4.0 of what a `Contact` holds (UID, FN, EMAIL), for a program that wants a contact's
/// card when the contact did not come from a vCard file. Values are escaped as RFC 6350 says
/// (`\\`, `,`, `;`, line breaks), so whatever a field holds stays inside its property.
public enum VCardWriter {
    /// The vCard 4.0 text of `contact`: `UID`, `FN` and each email, lines ending in CRLF.
    public static func card(of contact: Contact) -> String {
        var lines = ["BEGIN:VCARD", "VERSION:4.0", "UID:" + escaped(contact.identifier), "FN:" + escaped(contact.name)]
        let emails = contact.emails.isEmpty ? contact.email.map { [$0] } ?? [] : contact.emails
        for email in emails {
            lines.append((email == contact.email && emails.count > 1 ? "EMAIL;PREF=1:" : "EMAIL:") + escaped(email))
        }
        lines.append("END:VCARD")
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    static func escaped(_ value: String) -> String {
        var text = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": text += "\\\\"
            case ",": text += "\\,"
            case ";": text += "\\;"
            case "\n": text += "\\n"
            case "\r": break
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text
    }
}
