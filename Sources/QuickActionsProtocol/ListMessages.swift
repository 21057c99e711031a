import QuickActions

/// `List`: which items, how many, and in which language.
public struct ListParameters: Codable, Sendable, Equatable {
    /// Every item, each marked displayed or not; nil or false: the displayed ones only.
    public var all: Bool?
    /// A display limit in place of the configured one; nil: the configured one.
    public var limit: Int?
    /// The language of the static titles (`fr`, `fr_CA.UTF-8`, or a `LANGUAGE`-style list);
    /// nil: the daemon's own.
    public var language: String?
    /// Parameters; nil for each leaves the daemon's default.
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
