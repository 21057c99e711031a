import Contacts

/// `GetContact`: one contact, by identifier.
public struct GetContactParameters: Codable, Sendable, Equatable {
    /// The contact's identifier (its vCard `UID`, else its file name without the extension).
    public var identifier: String
    /// Parameters naming the contact.
    public init(identifier: String) { self.identifier = identifier }
}

/// The reply of `GetContact`.
public struct GetContactReply: Codable, Sendable, Equatable {
    /// The contact as the index keeps it.
    public var contact: Contact
    /// A reply with `contact`.
    public init(contact: Contact) { self.contact = contact }
}
