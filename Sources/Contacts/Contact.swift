/// One contact as read from the contacts directory: what a favorite's quick action needs.
public struct Contact: Hashable, Sendable, Codable {
    /// vCard `UID`, else the file name without its extension (`#2`, `#3`, … for
    /// later cards of a several-card file). Contacts are identified by this, never by name.
    public var identifier: String
    /// The name shown for the contact (vCard `FN`, or what the parser falls back to without one).
    public var name: String
    /// The preferred email (`PREF=1` / `TYPE=PREF`), else the first.
    public var email: String?
    /// Every email of the card, in the card's order.
    public var emails: [String]
    /// Whether the contact is a favorite (a favorite category, or a favorite mark its source uses).
    public var favorite: Bool

    /// A contact with the given fields.
    public init(identifier: String, name: String, email: String? = nil, emails: [String] = [], favorite: Bool = false) {
        self.identifier = identifier
        self.name = name
        self.email = email
        self.emails = emails
        self.favorite = favorite
    }
}
