/// vCard 2.1, 3.0 and 4.0 (RFC 2426, RFC 6350) → contacts: the format address books and
/// vdirsyncer leave in the contacts directory.
///
/// Only what a contact's identity, name, emails and favorite flag need is decoded, so a
/// malformed value in a property nobody reads (a photo, a note) does not cost the contact.
public enum VCardParser {
    /// The contacts of every card in a vCard file's bytes, in the file's order; `fileStem` (the name without its
    /// extension) stands in for a missing `UID`. Throws `ContactParseError` naming the line when the file is not
    /// vCard.
    public static func parse(
        _ bytes: [UInt8], fileStem: String, options: ContactParsingOptions = .default
    ) throws(ContactParseError) -> [Contact] {
        try bytes.withUnsafeBufferPointer { (buffer) throws(ContactParseError) -> [Contact] in
            try parse(contentsOf: buffer, fileStem: fileStem, options: options)
        }
    }

    /// The same, from bytes the caller keeps (the scanner's read buffer, reused from file to
    /// file). A file of ASCII text (most are) is parsed where it lies, in one pass: lines are
    /// byte ranges, joined into a scratch buffer only when folded, and only the properties a
    /// contact keeps become strings. Anything else is first decoded (`TextDecoding`), and a
    /// line that is not ASCII goes the general way (`CardCollector.take(_:)`), so both give
    /// what `referenceParse` gives, which tests and the fuzz target check.
    public static func parse(
        contentsOf bytes: UnsafeBufferPointer<UInt8>, fileStem: String, options: ContactParsingOptions = .default
    ) throws(ContactParseError) -> [Contact] {
        switch TextDecoding.scanFile(bytes) {
        case .binary(let nulOffset):
            throw .binaryData(byteOffset: nulOffset)
        case .ascii(let body):
            return try parseText(body, fileStem: fileStem, options: options)
        case .decodingNeeded(let body):
            var text = TextDecoding.decode(body, charset: nil)
            let result = text.withUTF8 { utf8 in
                Result { () throws(ContactParseError) -> [Contact] in try parseText(utf8, fileStem: fileStem, options: options) }
            }
            return try result.get()
        }
    }

    /// The parser as it was first written, line by line on `String`s: kept as the reference
    /// that `parse` must agree with (tests and the fuzz target compare them).
    @_spi(Reference) public static func referenceParse(
        _ bytes: [UInt8], fileStem: String, options: ContactParsingOptions = .default
    ) throws(ContactParseError) -> [Contact] {
        let text = try TextDecoding.decodeFile(bytes)
        let cards = try splitIntoCards(unfold(physicalLines(of: text)))
        return try contacts(from: cards, fileStem: fileStem, options: options)
    }

    static func contacts(
        from cards: [[Property]], fileStem: String, options: ContactParsingOptions
    ) throws(ContactParseError) -> [Contact] {
        var contacts: [Contact] = []
        contacts.reserveCapacity(cards.count)
        for (offset, card) in cards.enumerated() {
            let fallbackIdentifier = offset == 0 ? fileStem : "\(fileStem)#\(offset + 1)"
            contacts.append(try contact(from: card, fallbackIdentifier: fallbackIdentifier, fileStem: fileStem, options: options))
        }
        return contacts
    }

    // MARK: - Contact

    static let favoriteFlagNames: [StaticString] = ["X-FAVORITE", "X-STARRED", "X-DAVDROID-STARRED"]
    private static let favoriteFlagProperties = Set(favoriteFlagNames.map(\.description))
    /// Honored only with `ContactParsingOptions.folksFavourite` (Evolution address books).
    static let folksFavouriteName: StaticString = "X-FOLKS-FAVOURITE"
    private static let trueWords: Set<String> = ["1", "true", "yes"]

    static func contact(
        from card: [Property], fallbackIdentifier: String, fileStem: String, options: ContactParsingOptions
    ) throws(ContactParseError) -> Contact {
        var uid: String?
        var formattedName: String?
        var structuredName: String?
        var pendingStructuredName: String?
        var organization: String?
        var emails: [(address: String, preference: Int?)] = []
        var favorite = false

        for property in card {
            switch property.name {
            case "UID" where uid == nil:
                uid = nonEmpty(trimmed(try property.decodedValue()[...]))
            case "FN" where formattedName == nil:
                formattedName = nonEmpty(collapsedWhitespace(unescaped(try property.decodedValue())))
            case "N" where structuredName == nil:
                // Composed only when needed: the name is FN's whenever there is one (nearly
                // always), and composing it was a good part of parsing an address book's card.
                if let earlier = pendingStructuredName {
                    pendingStructuredName = nil
                    structuredName = nameFromStructuredName(earlier)
                    if structuredName != nil { continue }
                }
                pendingStructuredName = try property.decodedValue()
            case "ORG" where organization == nil:
                let units = unescapedComponents(of: try property.decodedValue(), separatedBy: ";")
                organization = nonEmpty(collapsedWhitespace(units[0]))
            case "EMAIL":
                if let address = nonEmpty(trimmed(unescaped(try property.decodedValue())[...])) {
                    emails.append((address, property.preference))
                }
            case "CATEGORIES":
                let categories = unescapedComponents(of: try property.decodedValue(), separatedBy: ",")
                if categories.contains(where: { options.favoriteCategories.contains(trimmed($0[...]).lowercased()) }) {
                    favorite = true
                }
            case let name where favoriteFlagProperties.contains(name) || (options.folksFavourite && name == "X-FOLKS-FAVOURITE"):
                if trueWords.contains(trimmed(try property.decodedValue()[...]).lowercased()) {
                    favorite = true
                }
            default:
                continue
            }
        }

        var primaryEmail = emails.first?.address
        var bestPreference = Int.max
        for email in emails {
            if let preference = email.preference, preference < bestPreference {
                bestPreference = preference
                primaryEmail = email.address
            }
        }
        if formattedName == nil, structuredName == nil { structuredName = pendingStructuredName.flatMap(nameFromStructuredName) }
        let name = formattedName ?? structuredName ?? organization ?? emails.first?.address ?? fileStem
        return Contact(
            identifier: uid ?? fallbackIdentifier,
            name: name,
            email: primaryEmail,
            emails: emails.map(\.address),
            favorite: favorite
        )
    }

    /// RFC 6350 `N`: family; given; additional; prefixes; suffixes, each possibly a
    /// comma-separated list. Shown as "prefix given family suffix" like a contacts app.
    private static func nameFromStructuredName(_ value: String) -> String? {
        // Without an escape a `,` only separates words within a component, as a space does
        // once whitespace is collapsed: one string, no array of parts (EDS writes `N` for
        // every contact, most of its components empty).
        if !value.utf8.contains(UInt8(ascii: "\\")) {
            let components = value.utf8.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
            var joined: [UInt8] = []
            joined.reserveCapacity(value.utf8.count + 4)
            for index in [3, 1, 0, 4] where index < components.count {
                joined.append(0x20)
                joined.append(contentsOf: components[index].lazy.map { $0 == UInt8(ascii: ",") ? 0x20 : $0 })
            }
            return nonEmpty(collapsedWhitespace(String(decoding: joined, as: UTF8.self)))
        }
        let rawComponents = unescapedComponents(of: value, separatedBy: ";", keepingEscapes: true)
        func component(_ index: Int) -> String {
            guard index < rawComponents.count else { return "" }
            return unescapedComponents(of: rawComponents[index], separatedBy: ",").joined(separator: " ")
        }
        let ordered = [component(3), component(1), component(0), component(4)]
        return nonEmpty(collapsedWhitespace(ordered.joined(separator: " ")))
    }
}
