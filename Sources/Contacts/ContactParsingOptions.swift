/// What the parsers need from the configuration (`[Contacts] FavoriteCategories`) and the
/// source a card comes from.
public struct ContactParsingOptions: Hashable, Sendable {
    /// Lowercased category names that mark a contact as a favorite.
    public var favoriteCategories: Set<String>
    /// Whether `X-FOLKS-FAVOURITE:true` marks a favorite: how GNOME Contacts (through folks)
    /// stars a contact of an Evolution address book. Off for the contacts directory, whose
    /// rules are the vdir tools' own.
    public var folksFavourite: Bool

    /// The categories that mark a favorite unless configured otherwise: `favorite`, `favorites` and `starred`.
    public static let defaultFavoriteCategories: Set<String> = ["favorite", "favorites", "starred"]

    /// Options with these categories (compared lowercased) and whether `X-FOLKS-FAVOURITE:true` marks a favorite.
    public init(favoriteCategories: Set<String> = ContactParsingOptions.defaultFavoriteCategories, folksFavourite: Bool = false) {
        self.favoriteCategories = Set(favoriteCategories.map { $0.lowercased() })
        self.folksFavourite = folksFavourite
    }

    /// The default categories, and `X-FOLKS-FAVOURITE` not read.
    public static let `default` = ContactParsingOptions()
}
