public struct MessageErrorParameters: Codable, Sendable, Equatable {
    public var message: String
    public init(message: String) { self.message = message }
}

public struct ContactRemovedErrorParameters: Codable, Sendable, Equatable {
    public var contactIdentifier: String
    public var message: String
    public init(contactIdentifier: String, message: String) {
        self.contactIdentifier = contactIdentifier
        self.message = message
    }
}

public struct PinDisabledErrorParameters: Codable, Sendable, Equatable {
    public var identifier: String
    public var message: String
    public init(identifier: String, message: String) {
        self.identifier = identifier
        self.message = message
    }
}

public struct ContactNotFoundErrorParameters: Codable, Sendable, Equatable {
    public var identifier: String
    public init(identifier: String) { self.identifier = identifier }
}

public struct AppNotRespondingErrorParameters: Codable, Sendable, Equatable {
    public var timeoutSeconds: Int
    public init(timeoutSeconds: Int) { self.timeoutSeconds = timeoutSeconds }
}

public struct TokenErrorParameters: Codable, Sendable, Equatable {
    public var token: String
    public init(token: String) { self.token = token }
}
