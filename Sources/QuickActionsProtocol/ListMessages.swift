import QuickActions

public struct ListParameters: Codable, Sendable, Equatable {
    public var all: Bool?
    public var limit: Int?
    /// The language of the static titles (`fr`, `fr_CA.UTF-8`, or a `LANGUAGE`-style list);
    /// nil: the daemon's own.
    public var language: String?
    public init(all: Bool? = nil, limit: Int? = nil, language: String? = nil) {
        self.all = all
        self.limit = limit
        self.language = language
    }
}

/// The reply of `List`, and each reply of a `Watch` stream. Each row is the model's own
/// `ListedShortcut` (the IDL's `ListedItem`), so the listing is never copied field by field.
/// `List` (and each `Watch` reply) is the model's listing itself.
public typealias ListReply = QuickActionsListing
