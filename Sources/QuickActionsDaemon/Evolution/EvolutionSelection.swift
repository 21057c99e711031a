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
}

extension EvolutionSettings {
    init(_ configuration: DaemonConfiguration) {
        self.init(
            selection: configuration.evolution, favoriteCategories: configuration.favoriteCategories,
            maxCardBytes: configuration.maxFileBytes)
    }
}

/// Which of EDS's two kinds of database a book is kept in, and where.
enum EvolutionBookStore: String, Equatable, Sendable {
    /// A local book (`BackendName=local`, the built-in "Personal" one): EDS's `e-book-backend-file`
    /// keeps it in the data home, in `EBookSqlite`'s tables (`folder_id`, `keys`).
    case local
    /// A book EDS keeps for an online account or a remote server (CardDAV, Google, WebDAV,
    /// the backends built on `EBookMetaBackend`): a copy in the cache home, in `EBookCache`'s tables (`ECacheObjects`,
    /// `ECacheKeys`), which EDS rewrites as it syncs.
    case cache
}

/// Where Evolution Data Server keeps the address books and its registry of sources, and how a
/// book's folder is named.
struct EvolutionLocation: Equatable, Sendable {
    /// `$XDG_DATA_HOME`, else `~/.local/share`.
    let dataHome: String
    /// `$XDG_CONFIG_HOME`, else `~/.config`.
    let configHome: String
    /// `$XDG_CACHE_HOME`, else `~/.cache`.
    let cacheHome: String
}

extension EvolutionLocation {
    /// Without them and without `HOME` there is no folder: the paths then lead nowhere.
    init(environment: [String: String]) {
        dataHome = XDGFolder.dataHome.path(in: environment) ?? ""
        configHome = XDGFolder.configHome.path(in: environment) ?? ""
        cacheHome = XDGFolder.cacheHome.path(in: environment) ?? ""
    }

    /// EDS's registry: one `<uid>.source` key file per source the user added (the built-in
    /// books have none). Removing an address book removes its file, not always its folder.
    var sourcesFolder: String { configHome + "/evolution/sources" }

    /// The registry's file for the source `uid`.
    func sourceFile(forSource uid: String) -> String { sourcesFolder + "/" + uid + ".source" }

    /// The local books' folder.
    var addressBookFolder: String { dataHome + "/evolution/addressbook" }
    /// The folder of the books EDS keeps copies of (online accounts, remote servers).
    var cacheAddressBookFolder: String { cacheHome + "/evolution/addressbook" }

    func addressBookFolder(_ store: EvolutionBookStore) -> String {
        store == .local ? addressBookFolder : cacheAddressBookFolder
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

    func bookFolder(forSource uid: String, in store: EvolutionBookStore = .local) -> String {
        addressBookFolder(store) + "/" + (store == .local ? Self.folderName(forSource: uid) : uid)
    }

    func database(forSource uid: String, in store: EvolutionBookStore = .local) -> String {
        bookFolder(forSource: uid, in: store) + "/" + store.databaseName
    }
}

extension EvolutionBookStore {
    /// The database's file name in the book's folder: `e-book-backend-file` opens `contacts.db`,
    /// `EBookMetaBackend` its `EBookCache` as `cache.db` in the backend's cache folder.
    var databaseName: String {
        switch self {
        case .local: return "contacts.db"
        case .cache: return "cache.db"
        }
    }

    /// The rollback journal beside it: both EDS's databases commit in SQLite's default journal
    /// mode, deleting the journal.
    var journalName: String { databaseName + "-journal" }
}
