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

    /// What one file contributed. Every case holds one pointer, so an entry costs 8 bytes
    /// in its dictionary; the common one-card file has no array.
    private enum FileEntry: Sendable {
        case one(PackedContact)
        case several([PackedContact])
        case invalid(InvalidEntry)

        var contacts: [PackedContact] {
            switch self {
            case .one(let contact): return [contact]
            case .several(let contacts): return contacts
            case .invalid: return []
            }
        }
    }

    private final class InvalidEntry: Sendable {
        let problem: ContactFileProblem
        init(_ problem: ContactFileProblem) { self.problem = problem }
    }

    /// The files directly in one folder, keyed by file name: the folder's path is stored
    /// once, not once per file, and short names (≤ 15 UTF-8 bytes) need no allocation.
    private struct Folder: Sendable {
        /// The path up to and including its last "/" ("" for a path without one), so
        /// `key + name` is exactly the path that was applied.
        var key: String
        var files: [String: FileEntry] = [:]
    }

    /// One card that defines an identifier: the card itself and the folder of its file.
    private struct Claimant: Sendable {
        var folder: UInt32
        var contact: PackedContact
    }

    /// Every card that defines one identifier, in code-point order of their paths (a path
    /// appears once per card carrying the identifier); the first is the winner. Nearly
    /// every identifier has one card, which needs no array.
    private enum Claim: Sendable {
        case one(Claimant)
        case several([Claimant])

        var winner: Claimant {
            switch self {
            case .one(let claimant): return claimant
            case .several(let claimants): return claimants[0]
            }
        }

        var claimants: [Claimant] {
            switch self {
            case .one(let claimant): return [claimant]
            case .several(let claimants): return claimants
            }
        }
    }

    /// Folders by number; a folder left empty is freed and its number reused.
    private var folders: [Folder] = []
    private var freeFolders: [UInt32] = []
    private var folderNumbers: [String: UInt32] = [:]
    private var claims: [String: Claim] = [:]
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
        replace(path: path, with: result)
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
        let affectedFolders = folderNumbers.filter { key, _ in
            key == folder || key.utf8.starts(with: nestedPrefix.utf8)
        }
        for (key, number) in affectedFolders {
            for name in folders[Int(number)].files.keys {
                remove(path: key + name)
            }
        }
    }

    /// Applies many files at once: the start-up scan, a rescan after an overflow. Ends in
    /// the same state as applying them one by one in order; into an empty index it builds
    /// everything in one pass (paths sorted once, so every card's claim is appended and
    /// favorites are sorted once) instead of one incremental update per file.
    public mutating func apply(files: [(path: String, result: Result<[Contact], ContactFileProblem>)]) {
        guard folders.count == freeFolders.count, !files.isEmpty else {
            for file in files { apply(path: file.path, result: file.result) }
            return
        }
        var order = Array(files.indices)
        let alreadySorted = zip(order, order.dropFirst()).allSatisfy { precedesByCodePoint(files[$0].path, files[$1].path) }
        if !alreadySorted {
            // Stable, so the last of several results for one path comes last and is kept.
            order.sort { left, right in
                let (leftPath, rightPath) = (files[left].path, files[right].path)
                if leftPath == rightPath { return left < right }
                return precedesByCodePoint(leftPath, rightPath)
            }
        }
        claims.reserveCapacity(files.count)
        var newFavorites: [(key: FavoriteSortKey, contact: Contact)] = []
        var current: (key: String, number: UInt32)?
        for (position, fileIndex) in order.enumerated() {
            let path = files[fileIndex].path
            if position + 1 < order.count && files[order[position + 1]].path == path { continue }
            let (key, name) = Self.split(path)
            let number: UInt32
            if let current, current.key == key {
                number = current.number
            } else {
                number = folderNumber(for: key)
                current = (key, number)
            }
            let entry = Self.entry(for: files[fileIndex].result, fileName: name)
            folders[Int(number)].files[name] = entry
            if case .invalid = entry { invalidPaths.insert(path) }
            for contact in entry.contacts {
                // Paths come in code-point order, so a later card never precedes an earlier claim.
                let claimant = Claimant(folder: number, contact: contact)
                switch claims[contact.identifier] {
                case nil:
                    claims[contact.identifier] = .one(claimant)
                    if contact.favorite {
                        let favorite = contact.contact
                        newFavorites.append((FavoriteSortKey(favorite), favorite))
                    }
                case .one(let first):
                    claims[contact.identifier] = .several([first, claimant])
                    noteDuplicate(contact.identifier)
                case .several(var claimants):
                    claims[contact.identifier] = nil
                    claimants.append(claimant)
                    claims[contact.identifier] = .several(claimants)
                    noteDuplicate(contact.identifier)
                }
            }
        }
        if !newFavorites.isEmpty {
            sortedFavorites = newFavorites.sorted { $0.key < $1.key }
            favoritesChanged()
        }
    }

    private mutating func replace(path: String, with newResult: Result<[Contact], ContactFileProblem>?) {
        let (key, name) = Self.split(path)
        let existingNumber = folderNumbers[key]
        guard let number = existingNumber ?? (newResult == nil ? nil : folderNumber(for: key)) else { return }
        let oldEntry = folders[Int(number)].files[name]
        let newEntry = newResult.map { Self.entry(for: $0, fileName: name) }
        let oldContacts = oldEntry?.contacts ?? []
        let newContacts = newEntry?.contacts ?? []
        let affectedIdentifiers = Self.distinct(oldContacts.map(\.identifier) + newContacts.map(\.identifier))

        for identifier in affectedIdentifiers {
            if let winner = claims[identifier]?.winner.contact, winner.favorite {
                removeFavorite(winner.contact)
            }
        }
        for contact in oldContacts {
            unclaim(contact)
        }

        folders[Int(number)].files[name] = newEntry
        if newEntry == nil && folders[Int(number)].files.isEmpty { freeFolder(number) }
        if case .invalid = newEntry {
            invalidPaths.insert(path)
        } else if case .invalid = oldEntry {
            invalidPaths.remove(path)
        }

        for contact in newContacts {
            claim(Claimant(folder: number, contact: contact))
        }
        for identifier in affectedIdentifiers {
            if let winner = claims[identifier]?.winner.contact, winner.favorite {
                insertFavorite(winner.contact)
            }
        }
    }

    private static func entry(for result: Result<[Contact], ContactFileProblem>, fileName: String) -> FileEntry {
        switch result {
        case .success(let contacts) where contacts.count == 1:
            return .one(PackedContact.make(contacts[0], fileName: fileName))
        case .success(let contacts):
            return .several(contacts.map { PackedContact.make($0, fileName: fileName) })
        case .failure(let problem):
            return .invalid(InvalidEntry(problem))
        }
    }

    private mutating func folderNumber(for key: String) -> UInt32 {
        if let number = folderNumbers[key] { return number }
        let number: UInt32
        if let free = freeFolders.popLast() {
            number = free
            folders[Int(number)] = Folder(key: key)
        } else {
            number = UInt32(folders.count)
            folders.append(Folder(key: key))
        }
        folderNumbers[key] = number
        return number
    }

    private mutating func freeFolder(_ number: UInt32) {
        folderNumbers[folders[Int(number)].key] = nil
        folders[Int(number)] = Folder(key: "")
        freeFolders.append(number)
    }

    private func path(of claimant: Claimant) -> String {
        folders[Int(claimant.folder)].key + claimant.contact.fileName
    }

    private mutating func noteDuplicate(_ identifier: String) {
        duplicateCount += 1
        duplicatedIdentifiers.insert(identifier)
    }

    private mutating func claim(_ claimant: Claimant) {
        let identifier = claimant.contact.identifier
        guard let existing = claims[identifier] else {
            claims[identifier] = .one(claimant)
            return
        }
        var claimants = existing.claimants
        let newPath = path(of: claimant)
        let position = claimants.firstIndex { precedesByCodePoint(newPath, path(of: $0)) } ?? claimants.endIndex
        claimants.insert(claimant, at: position)
        claims[identifier] = .several(claimants)
        noteDuplicate(identifier)
    }

    private mutating func unclaim(_ contact: PackedContact) {
        let identifier = contact.identifier
        guard let existing = claims[identifier] else { return }
        var claimants = existing.claimants
        guard let position = claimants.firstIndex(where: { $0.contact === contact }) else { return }
        claims[identifier] = nil
        claimants.remove(at: position)
        if claimants.isEmpty { return }
        duplicateCount -= 1
        if claimants.count == 1 {
            duplicatedIdentifiers.remove(identifier)
            claims[identifier] = .one(claimants[0])
        } else {
            claims[identifier] = .several(claimants)
        }
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

    /// The folder key (up to and including the last "/") and the file name.
    private static func split(_ path: String) -> (key: String, name: String) {
        guard let slash = ContactFileKind.lastIndex(of: "/", in: path) else { return ("", path) }
        let afterSlash = path.utf8.index(after: slash)
        return (String(decoding: path.utf8[..<afterSlash], as: UTF8.self),
                String(decoding: path.utf8[afterSlash...], as: UTF8.self))
    }

    // MARK: Queries

    /// Every path the index holds an entry for (valid or not), in code-point order.
    public var paths: [String] {
        folders.flatMap { folder in folder.files.keys.map { folder.key + $0 } }.sorted(by: precedesByCodePoint)
    }

    /// Distinct contacts (duplicates count once).
    public var contactCount: Int { claims.count }

    public var favoriteCount: Int { sortedFavorites.count }

    /// Favorites in display order: by name, case- and accent-insensitive, ties broken by identifier.
    public var favorites: [Contact] { sortedFavorites.map(\.contact) }

    public func contact(identifier: String) -> Contact? {
        claims[identifier]?.winner.contact.contact
    }

    private func fileEntry(path: String) -> FileEntry? {
        let (key, name) = Self.split(path)
        guard let number = folderNumbers[key] else { return nil }
        return folders[Int(number)].files[name]
    }

    /// What the index knows about one file: its contacts, its problem, or nil when unknown.
    public func entry(path: String) -> Result<[Contact], ContactFileProblem>? {
        switch fileEntry(path: path) {
        case .invalid(let invalid): return .failure(invalid.problem)
        case let entry?: return .success(entry.contacts.map(\.contact))
        case nil: return nil
        }
    }

    public var invalidFiles: [InvalidFile] {
        invalidPaths.sorted(by: precedesByCodePoint).compactMap { path in
            guard case .invalid(let invalid) = fileEntry(path: path) else { return nil }
            return InvalidFile(path: path, reason: invalid.problem)
        }
    }

    /// Every ignored definition of an identifier, by identifier then path.
    public var duplicates: [Duplicate] {
        duplicatedIdentifiers.sorted(by: precedesByCodePoint).flatMap { identifier -> [Duplicate] in
            guard let claimants = claims[identifier]?.claimants, let kept = claimants.first else { return [] }
            let keptPath = path(of: kept)
            return claimants.dropFirst().map { Duplicate(identifier: identifier, keptPath: keptPath, ignoredPath: path(of: $0)) }
        }
    }
}
