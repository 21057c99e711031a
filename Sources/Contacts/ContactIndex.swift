/// The live contacts of the contacts directory, keyed by the file each came from
/// (SPEC §2.4, §3).
///
/// Built for incremental updates from inotify: replacing or removing one file costs
/// work proportional to that file's contacts (plus a logarithmic search in the
/// favorites), never a pass over the whole index. Duplicate identifiers across files
/// are resolved deterministically: the path first in code-point order wins, the
/// others are reported, and when the winner goes the next one takes over.
public struct ContactIndex: Sendable {
    public struct InvalidFile: Hashable, Sendable, CustomStringConvertible {
        public var path: String
        public var reason: ContactFileProblem

        public init(path: String, reason: ContactFileProblem) {
            self.path = path
            self.reason = reason
        }

        public var description: String { "Skipped contact file \"\(path)\": \(reason.description)" }
    }

    public struct Duplicate: Hashable, Sendable, CustomStringConvertible {
        public var identifier: String
        public var keptPath: String
        public var ignoredPath: String

        public init(identifier: String, keptPath: String, ignoredPath: String) {
            self.identifier = identifier
            self.keptPath = keptPath
            self.ignoredPath = ignoredPath
        }

        public var description: String {
            "The contact identifier \"\(identifier)\" in \"\(ignoredPath)\" is already used in \"\(keptPath)\"; ignoring the duplicate."
        }
    }

    private enum FileEntry: Sendable {
        case contacts([Contact])
        case invalid(ContactFileProblem)

        var contacts: [Contact] {
            if case .contacts(let contacts) = self { return contacts }
            return []
        }
    }

    private var entries: [String: FileEntry] = [:]
    /// Folder → paths of the files directly in it, so a folder removal touches only its own files.
    private var pathsByFolder: [String: Set<String>] = [:]
    /// Identifier → every path that defines it, in code-point order; a path appears once
    /// per card carrying the identifier. The first path is the winner.
    private var claims: [String: [String]] = [:]
    private var invalidPaths: Set<String> = []
    private var duplicatedIdentifiers: Set<String> = []
    /// Favorites among the winners, kept sorted so reading them costs nothing.
    private var sortedFavorites: [(key: FavoriteSortKey, contact: Contact)] = []

    public private(set) var duplicateCount = 0

    /// Names one state of `favorites`: it changes whenever the favorites may have changed, so
    /// whoever derives something from them (the dynamic set) can skip the work when it has
    /// not. `origin` is drawn once per index, so versions of two different indexes never match.
    public struct FavoritesVersion: Hashable, Sendable {
        let origin: UInt64
        let changes: UInt64
    }

    public private(set) var favoritesVersion = FavoritesVersion(origin: .random(in: .min ... .max), changes: 0)

    public init() {}

    // MARK: Updates

    /// Replaces everything the file at `path` contributed with `result`.
    public mutating func apply(path: String, result: Result<[Contact], ContactFileProblem>) {
        switch result {
        case .success(let contacts): replace(path: path, with: .contacts(contacts))
        case .failure(let problem): replace(path: path, with: .invalid(problem))
        }
    }

    /// Forgets the file at `path` (deleted or moved out).
    public mutating func remove(path: String) {
        replace(path: path, with: nil)
    }

    /// Forgets every file in the folder `directoryPrefix` and below it (the folder was
    /// deleted or moved out). `"/a/b"` covers `"/a/b/x.vcf"` and `"/a/b/c/y.vcf"`, not `"/a/bc/z.vcf"`.
    public mutating func removeAll(under directoryPrefix: String) {
        var folder = directoryPrefix
        while folder.count > 1 && folder.hasSuffix("/") { folder.removeLast() }
        let nestedPrefix = folder == "/" ? "/" : folder + "/"
        let affectedFolders = pathsByFolder.keys.filter { candidate in
            candidate == folder || candidate.utf8.starts(with: nestedPrefix.utf8)
        }
        for affectedFolder in affectedFolders {
            for path in pathsByFolder[affectedFolder] ?? [] {
                remove(path: path)
            }
        }
    }

    private mutating func replace(path: String, with newEntry: FileEntry?) {
        let oldEntry = entries[path]
        let oldContacts = oldEntry?.contacts ?? []
        let newContacts = newEntry?.contacts ?? []
        let affectedIdentifiers = Self.distinct(oldContacts.map(\.identifier) + newContacts.map(\.identifier))

        for identifier in affectedIdentifiers {
            if let winner = winner(for: identifier), winner.favorite {
                removeFavorite(winner)
            }
        }
        for contact in oldContacts {
            unclaim(contact.identifier, path: path)
        }

        let folder = Self.folder(of: path)
        if let newEntry {
            entries[path] = newEntry
            pathsByFolder[folder, default: []].insert(path)
        } else {
            entries[path] = nil
            pathsByFolder[folder]?.remove(path)
            if pathsByFolder[folder]?.isEmpty == true { pathsByFolder[folder] = nil }
        }
        if case .invalid = newEntry {
            invalidPaths.insert(path)
        } else {
            invalidPaths.remove(path)
        }

        for contact in newContacts {
            claim(contact.identifier, path: path)
        }
        for identifier in affectedIdentifiers {
            if let winner = winner(for: identifier), winner.favorite {
                insertFavorite(winner)
            }
        }
    }

    private mutating func claim(_ identifier: String, path: String) {
        var paths = claims[identifier] ?? []
        let position = paths.firstIndex { precedesByCodePoint(path, $0) } ?? paths.endIndex
        paths.insert(path, at: position)
        if paths.count > 1 {
            duplicateCount += 1
            duplicatedIdentifiers.insert(identifier)
        }
        claims[identifier] = paths
    }

    private mutating func unclaim(_ identifier: String, path: String) {
        guard var paths = claims[identifier], let position = paths.firstIndex(of: path) else { return }
        paths.remove(at: position)
        if !paths.isEmpty { duplicateCount -= 1 }
        if paths.count <= 1 { duplicatedIdentifiers.remove(identifier) }
        claims[identifier] = paths.isEmpty ? nil : paths
    }

    private func winner(for identifier: String) -> Contact? {
        guard let path = claims[identifier]?.first else { return nil }
        return entries[path]?.contacts.first { $0.identifier == identifier }
    }

    private mutating func insertFavorite(_ contact: Contact) {
        let key = FavoriteSortKey(contact)
        sortedFavorites.insert((key, contact), at: favoritePosition(of: key))
        favoritesChanged()
    }

    private mutating func favoritesChanged() {
        favoritesVersion = FavoritesVersion(origin: favoritesVersion.origin, changes: favoritesVersion.changes &+ 1)
    }

    private mutating func removeFavorite(_ contact: Contact) {
        let key = FavoriteSortKey(contact)
        let position = favoritePosition(of: key)
        if position < sortedFavorites.endIndex, sortedFavorites[position].key == key {
            sortedFavorites.remove(at: position)
            favoritesChanged()
        }
    }

    /// Binary search: the first position whose key is not less than `key`.
    private func favoritePosition(of key: FavoriteSortKey) -> Int {
        var low = sortedFavorites.startIndex
        var high = sortedFavorites.endIndex
        while low < high {
            let middle = low + (high - low) / 2
            if sortedFavorites[middle].key < key {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }

    /// Each identifier once; a file holds one card or a few, so no set is built for them.
    private static func distinct(_ identifiers: [String]) -> [String] {
        guard identifiers.count > 1 else { return identifiers }
        guard identifiers.count > 16 else {
            var unique: [String] = []
            for identifier in identifiers where !unique.contains(identifier) { unique.append(identifier) }
            return unique
        }
        return Array(Set(identifiers))
    }

    private static func folder(of path: String) -> String {
        guard let slash = ContactFileKind.lastIndex(of: "/", in: path) else { return "" }
        return slash == path.utf8.startIndex ? "/" : String(decoding: path.utf8[..<slash], as: UTF8.self)
    }

    // MARK: Queries

    /// Every path the index holds an entry for (valid or not), in code-point order.
    public var paths: [String] {
        entries.keys.sorted(by: precedesByCodePoint)
    }

    /// Distinct contacts (duplicates count once).
    public var contactCount: Int { claims.count }

    public var favoriteCount: Int { sortedFavorites.count }

    /// Favorites in display order: by name, case- and accent-insensitive, ties broken by identifier.
    public var favorites: [Contact] { sortedFavorites.map(\.contact) }

    public func contact(identifier: String) -> Contact? {
        winner(for: identifier)
    }

    /// What the index knows about one file: its contacts, its problem, or nil when unknown.
    public func entry(path: String) -> Result<[Contact], ContactFileProblem>? {
        switch entries[path] {
        case .contacts(let contacts): return .success(contacts)
        case .invalid(let problem): return .failure(problem)
        case nil: return nil
        }
    }

    public var invalidFiles: [InvalidFile] {
        invalidPaths.sorted(by: precedesByCodePoint).compactMap { path in
            guard case .invalid(let problem) = entries[path] else { return nil }
            return InvalidFile(path: path, reason: problem)
        }
    }

    /// Every ignored definition of an identifier, by identifier then path.
    public var duplicates: [Duplicate] {
        duplicatedIdentifiers.sorted(by: precedesByCodePoint).flatMap { identifier -> [Duplicate] in
            guard let paths = claims[identifier], let kept = paths.first else { return [] }
            return paths.dropFirst().map { Duplicate(identifier: identifier, keptPath: kept, ignoredPath: $0) }
        }
    }
}
