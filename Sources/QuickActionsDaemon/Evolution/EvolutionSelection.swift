/// Which Evolution Data Server address books give contacts (`[Contacts] Evolution=`).
enum EvolutionSelection: Equatable, Sendable, CustomStringConvertible {
    case none
    /// Every address book of this user, as they appear and disappear.
    case all
    /// These address books, by source UID (`system-address-book` is the built-in "Personal").
    case books([String])

    var description: String {
        switch self {
        case .none: return "none"
        case .all: return "all"
        case .books(let uids): return uids.joined(separator: ",")
        }
    }
}

/// What the Evolution watcher needs from the configuration.
struct EvolutionSettings: Equatable, Sendable {
    var selection: EvolutionSelection
    var favoriteCategories: [String]
    var maxCardBytes: Int

    init(selection: EvolutionSelection, favoriteCategories: [String], maxCardBytes: Int) {
        self.selection = selection
        self.favoriteCategories = favoriteCategories
        self.maxCardBytes = maxCardBytes
    }

    init(_ configuration: DaemonConfiguration) {
        self.init(
            selection: configuration.evolution, favoriteCategories: configuration.favoriteCategories,
            maxCardBytes: configuration.maxFileBytes)
    }
}

/// Where Evolution Data Server keeps the local address books and its registry of sources, and
/// how a book's folder is named.
struct EvolutionLocation: Equatable, Sendable {
    /// `$XDG_DATA_HOME`, else `~/.local/share`.
    let dataHome: String
    /// `$XDG_CONFIG_HOME`, else `~/.config`.
    let configHome: String

    init(dataHome: String, configHome: String) {
        self.dataHome = dataHome
        self.configHome = configHome
    }

    init(environment: [String: String]) {
        let home = environment["HOME"] ?? ""
        dataHome = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.local/share"
        configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.config"
    }

    /// EDS's registry: one `<uid>.source` key file per source the user added (the built-in
    /// books have none). Removing an address book removes its file, not always its folder.
    var sourcesFolder: String { configHome + "/evolution/sources" }

    /// Whether the registry still knows the address book `uid`.
    func sourceFile(forSource uid: String) -> String { sourcesFolder + "/" + uid + ".source" }

    var evolutionFolder: String { dataHome + "/evolution" }
    var addressBookFolder: String { evolutionFolder + "/addressbook" }

    /// The folders from the data home down to the address books, and from the config home
    /// down to the sources: watched (those that exist), so books added and removed are seen.
    var chain: [String] {
        [dataHome, evolutionFolder, addressBookFolder, configHome, configHome + "/evolution", sourcesFolder]
    }

    /// The built-in "Personal" book's source UID is `system-address-book`, its folder `system`
    /// (EDS's `e-book-backend-file`); every other book's folder is its source UID.
    static let systemSourceUID = "system-address-book"
    static let systemFolderName = "system"

    static func folderName(forSource uid: String) -> String {
        uid == systemSourceUID ? systemFolderName : uid
    }

    static func sourceUID(forFolder name: String) -> String {
        name == systemFolderName ? systemSourceUID : name
    }

    /// Folders of the address-book folder that are not books.
    static func isBookFolderName(_ name: String) -> Bool {
        !name.hasPrefix(".") && name != "trash"
    }

    func bookFolder(forSource uid: String) -> String { addressBookFolder + "/" + Self.folderName(forSource: uid) }

    func database(forSource uid: String) -> String { bookFolder(forSource: uid) + "/" + Self.databaseName }

    static let databaseName = "contacts.db"
    static let journalName = "contacts.db-journal"
}
