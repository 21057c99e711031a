/// The parameters of an error that carries only a sentence (`NoSuchShortcut`, `AppReplaced`, `CommandRefused`,
/// `PinningUnavailable`, `InvalidConfiguration`).
public struct MessageErrorParameters: Codable, Sendable, Equatable {
    /// What went wrong, as a sentence a person can read.
    public var message: String
    /// Parameters carrying `message`.
    public init(message: String) { self.message = message }
}

/// The parameters of `ContactRemoved`: the favorite's contact is no longer in the index.
public struct ContactRemovedErrorParameters: Codable, Sendable, Equatable {
    /// The identifier of the removed contact.
    public var contactIdentifier: String
    /// What went wrong, as a sentence a person can read.
    public var message: String
    /// Parameters naming the contact and the sentence.
    public init(contactIdentifier: String, message: String) {
        self.contactIdentifier = contactIdentifier
        self.message = message
    }
}

/// The parameters of `PinDisabled`: the pinned item is gone.
public struct PinDisabledErrorParameters: Codable, Sendable, Equatable {
    /// The pin's identifier.
    public var identifier: String
    /// What choosing the pin's launcher says.
    public var message: String
    /// Parameters naming the pin and the sentence.
    public init(identifier: String, message: String) {
        self.identifier = identifier
        self.message = message
    }
}

/// The parameters of `ContactNotFound`.
public struct ContactNotFoundErrorParameters: Codable, Sendable, Equatable {
    /// The identifier no contact has.
    public var identifier: String
    /// Parameters naming the identifier.
    public init(identifier: String) { self.identifier = identifier }
}

/// The parameters of `AppNotResponding`: the app did not answer an action in time.
public struct AppNotRespondingErrorParameters: Codable, Sendable, Equatable {
    /// How long the daemon waited, in seconds.
    public var timeoutSeconds: Int
    /// Parameters with the wait in seconds.
    public init(timeoutSeconds: Int) { self.timeoutSeconds = timeoutSeconds }
}

/// The parameters of an error about an action's token (`AppDisconnected`, `NoSuchAction`).
public struct TokenErrorParameters: Codable, Sendable, Equatable {
    /// The token of the action concerned.
    public var token: String
    /// Parameters naming the token.
    public init(token: String) { self.token = token }
}
