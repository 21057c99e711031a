/// What the parsers need from the configuration (`[Contacts] FavoriteCategories`).
public struct ContactParsingOptions: Hashable, Sendable {
    /// Lowercased category names that mark a contact as a favorite.
    public var favoriteCategories: Set<String>

    public static let defaultFavoriteCategories: Set<String> = ["favorite", "favorites", "starred"]

    public init(favoriteCategories: Set<String> = ContactParsingOptions.defaultFavoriteCategories) {
        self.favoriteCategories = Set(favoriteCategories.map { $0.lowercased() })
    }

    public static let `default` = ContactParsingOptions()
}
