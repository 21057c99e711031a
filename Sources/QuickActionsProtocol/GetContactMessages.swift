import Contacts

public struct GetContactParameters: Codable, Sendable, Equatable {
    public var identifier: String
    public init(identifier: String) { self.identifier = identifier }
}

public struct GetContactReply: Codable, Sendable, Equatable {
    public var contact: Contact
    public init(contact: Contact) { self.contact = contact }
}
