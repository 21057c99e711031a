/// The live contacts of the contacts directory, keyed by the file each came from.
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

    /// What one file contributed, and the file's name: an element of its folder's set,
    /// hashed and compared by the name's bytes. One pointer (8 bytes in the set's table);
    /// the common one-card file is its `PackedContact` alone, which holds the name.
    private struct FileSlot: PackedTextKey, Sendable {
        enum Storage: Sendable {
            case one(PackedContact)
            /// Several cards or none, or a problem; also a lookup by name (`probe`).
            case other(OtherFile)
        }

        let storage: Storage

        static func probe(_ name: String) -> FileSlot {
            FileSlot(storage: .other(OtherFile(name: name, contacts: [], problem: nil)))
        }

        func withKeyBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
            switch storage {
            case .one(let contact): return contact.withFileNameBytes(body)
            case .other(let file): return ContactIndex.withBytes(of: file.name, body)
            }
        }

        var name: String {
            switch storage {
            case .one(let contact): return contact.fileName
            case .other(let file): return file.name
            }
        }

        var contacts: [PackedContact] {
            switch storage {
            case .one(let contact): return [contact]
            case .other(let file): return file.contacts
            }
        }

        var problem: ContactFileProblem? {
            if case .other(let file) = storage { return file.problem }
            return nil
        }

    }

    private final class OtherFile: Sendable {
        let name: String
        let contacts: [PackedContact]
        let problem: ContactFileProblem?

        init(name: String, contacts: [PackedContact], problem: ContactFileProblem?) {
            self.name = name
            self.contacts = contacts
            self.problem = problem
        }
    }

    /// The files directly in one folder: the folder's path is stored once, not once per file.
    private struct Folder: Sendable {
        /// The path up to and including its last "/" ("" for a path without one), so
        /// `key + name` is exactly the path that was applied.
        var key: String
        var files: Set<FileSlot> = []
    }

    /// Every card that defines one identifier, in code-point order of their paths (a path
    /// appears once per card carrying the identifier); the first is the winner. An element
    /// of `claims`, hashed and compared by the identifier's bytes: one pointer, and nearly
    /// every identifier has one card, which needs no array. Any card of the identifier
    /// (`.one(card)`) or `probe` finds it.
    private struct ClaimSlot: PackedTextKey, Sendable {
        enum Storage: Sendable {
            case one(PackedContact)
            case several([PackedContact])
            case probe(IdentifierProbe)
        }

        let storage: Storage

        static func one(_ contact: PackedContact) -> ClaimSlot { ClaimSlot(storage: .one(contact)) }
        static func probe(_ identifier: String) -> ClaimSlot { ClaimSlot(storage: .probe(IdentifierProbe(identifier))) }

        var claimants: [PackedContact] {
            switch storage {
            case .one(let contact): return [contact]
            case .several(let contacts): return contacts
            case .probe: return []
            }
        }

        var winner: PackedContact? {
            switch storage {
            case .one(let contact): return contact
            case .several(let contacts): return contacts.first
            case .probe: return nil
            }
        }

        func withKeyBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
            switch storage {
            case .one(let contact): return contact.withIdentifierBytes(body)
            case .several(let contacts): return contacts[0].withIdentifierBytes(body)
            case .probe(let probe): return ContactIndex.withBytes(of: probe.identifier, body)
            }
        }

    }

    private final class IdentifierProbe: Sendable {
        let identifier: String
        init(_ identifier: String) { self.identifier = identifier }
    }

    fileprivate static func textEqual(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        if left.elementsEqual(right) { return true }
        if left.allSatisfy({ $0 < 0x80 }) && right.allSatisfy({ $0 < 0x80 }) { return false }
        return String(decoding: left, as: UTF8.self) == String(decoding: right, as: UTF8.self)
    }

    fileprivate static func hashText(_ text: UnsafeBufferPointer<UInt8>, into hasher: inout Hasher) {
        hasher.combine(String(decoding: text, as: UTF8.self))
    }

    private static func withBytes<R>(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var text = text
        return text.withUTF8(body)
    }

    /// Folders by number; a folder left empty is freed and its number reused.
    private var folders: [Folder] = []
    private var freeFolders: [UInt32] = []
    private var folderNumbers: [String: UInt32] = [:]
    private var claims: Set<ClaimSlot> = []
    private var invalidPaths: Set<String> = []
    private var duplicatedIdentifiers: Set<String> = []
    /// Favorites among the winners, kept sorted so reading them costs nothing: their sort keys,
    /// and the contacts in the same order as an array of their own, which `favorites` hands out
    /// as it is: every recompute reads all of them, so they are shared, not copied contact by contact.
    private var favoriteKeys: [FavoriteSortKey] = []
    private var sortedFavorites: [Contact] = []

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
            for file in folders[Int(number)].files {
                remove(path: key + file.name)
            }
        }
    }

    /// Applies many files at once: the start-up scan, a rescan after an overflow, an address
    /// book's contacts indexed after its favorites. Ends in the same state as applying them one
    /// by one in order, but in one pass (paths sorted once, so every card's claim is appended
    /// and favorites are sorted once) instead of one incremental update per file. Into an index
    /// that is not empty, a file whose card names an identifier already claimed by a path that
    /// does not come before it (its claim is not appended), or whose path is already there,
    /// takes the incremental way.
    public mutating func apply(files: [(path: String, result: Result<[Contact], ContactFileProblem>)]) {
        guard !files.isEmpty else { return }
        let wasEmpty = folders.count == freeFolders.count
        var order = Array(files.indices)
        let alreadySorted = zip(order, order.dropFirst()).allSatisfy { precedesByCodePoint(files[$0].path, files[$1].path) }
        if !alreadySorted {
            // Stable, so the last of several results for one path comes last and is kept.
            order.sort { left, right in
                let (leftPath, rightPath) = (files[left].path, files[right].path)
                if hasSameUTF8(leftPath, rightPath) { return left < right }
                return precedesByCodePoint(leftPath, rightPath)
            }
        }
        claims.reserveCapacity(files.count)
        var newFavorites: [(key: FavoriteSortKey, contact: Contact)] = []
        var current: (key: String, number: UInt32)?
        for (position, fileIndex) in order.enumerated() {
            let path = files[fileIndex].path
            if position + 1 < order.count && hasSameUTF8(files[order[position + 1]].path, path) { continue }
            let (key, name) = Self.split(path)
            let number: UInt32
            if let current, current.key == key {
                number = current.number
            } else {
                number = folderNumber(for: key)
                current = (key, number)
                // One folder for the whole batch (an address book, a flat folder of cards): its
                // table is made at its size once rather than grown step by step.
                if position == 0, folders[Int(number)].files.isEmpty, Self.split(files[order[order.count - 1]].path).key == key {
                    folders[Int(number)].files.reserveCapacity(order.count)
                }
            }
            let file = Self.slot(for: files[fileIndex].result, fileName: name, folder: number)
            if !wasEmpty, file.contacts.contains(where: { contact in
                guard let claim = claims.firstIndex(of: .one(contact)), let last = claims[claim].claimants.last else { return false }
                return !precedesByCodePoint(self.path(of: last), path)
            }) {
                mergeFavorites(&newFavorites)
                replace(path: path, with: files[fileIndex].result)
                continue
            }
            let (inserted, existing) = folders[Int(number)].files.insert(file)
            if !inserted {
                // A path canonically equivalent to one already added (other bytes, so not
                // next to it in the order) is the same entry, as for `apply(path:result:)`:
                // the one later in the batch wins; if that is this one, it replaces the other
                // the incremental way, with the favorites so far in place.
                let existingPath = key + existing.name
                let existingIndex = Self.lastIndex(of: existingPath, in: order, of: files)
                if let existingIndex, existingIndex > fileIndex { continue }
                mergeFavorites(&newFavorites)
                replace(path: path, with: files[fileIndex].result)
                continue
            }
            if file.problem != nil { invalidPaths.insert(path) }
            for contact in file.contacts {
                // Paths come in code-point order, so a later card never precedes an earlier claim.
                let (inserted, existing) = claims.insert(.one(contact))
                if inserted {
                    if contact.favorite {
                        let favorite = contact.contact
                        newFavorites.append((FavoriteSortKey(favorite), favorite))
                    }
                } else {
                    claims.update(with: ClaimSlot(storage: .several(existing.claimants + [contact])))
                    noteDuplicate(contact.identifier)
                }
            }
        }
        mergeFavorites(&newFavorites)
    }

    /// Where the files sorted in `order` give the exact bytes of `path` last, as an index into `files`.
    private static func lastIndex(
        of path: String, in order: [Int], of files: [(path: String, result: Result<[Contact], ContactFileProblem>)]
    ) -> Int? {
        var low = 0
        var high = order.count
        while low < high {
            let middle = low + (high - low) / 2
            if precedesByCodePoint(path, files[order[middle]].path) {
                high = middle
            } else {
                low = middle + 1
            }
        }
        guard low > 0, hasSameUTF8(files[order[low - 1]].path, path) else { return nil }
        return order[low - 1]
    }

    private mutating func mergeFavorites(_ newFavorites: inout [(key: FavoriteSortKey, contact: Contact)]) {
        guard !newFavorites.isEmpty else { return }
        let merged = (zip(favoriteKeys, sortedFavorites).map { (key: $0, contact: $1) } + newFavorites).sorted { $0.key < $1.key }
        favoriteKeys = merged.map(\.key)
        sortedFavorites = merged.map(\.contact)
        newFavorites = []
        favoritesChanged()
    }

    private mutating func replace(path: String, with newResult: Result<[Contact], ContactFileProblem>?) {
        let (key, name) = Self.split(path)
        let existingNumber = folderNumbers[key]
        guard let number = existingNumber ?? (newResult == nil ? nil : folderNumber(for: key)) else { return }
        let newFile = newResult.map { Self.slot(for: $0, fileName: name, folder: number) }
        let probe = newFile ?? .probe(name)
        let oldFile = folders[Int(number)].files.firstIndex(of: probe).map { folders[Int(number)].files[$0] }
        let oldContacts = oldFile?.contacts ?? []
        let newContacts = newFile?.contacts ?? []
        let affected = Self.distinctIdentifiers(oldContacts + newContacts)

        for contact in affected {
            if let winner = winner(of: contact), winner.favorite {
                removeFavorite(winner.contact)
            }
        }
        for contact in oldContacts {
            unclaim(contact)
        }

        if let newFile {
            folders[Int(number)].files.update(with: newFile)
        } else if oldFile != nil {
            folders[Int(number)].files.remove(probe)
            if folders[Int(number)].files.isEmpty { freeFolder(number) }
        }
        if newFile?.problem != nil {
            invalidPaths.insert(path)
        } else if oldFile?.problem != nil {
            invalidPaths.remove(path)
        }

        for contact in newContacts {
            claim(contact)
        }
        for contact in affected {
            if let winner = winner(of: contact), winner.favorite {
                insertFavorite(winner.contact)
            }
        }
    }

    /// The card that wins `contact`'s identifier, if any card claims it.
    private func winner(of contact: PackedContact) -> PackedContact? {
        claims.firstIndex(of: .one(contact)).flatMap { claims[$0].winner }
    }

    private static func slot(for result: Result<[Contact], ContactFileProblem>, fileName: String, folder: UInt32) -> FileSlot {
        switch result {
        case .success(let contacts) where contacts.count == 1:
            return FileSlot(storage: .one(PackedContact.make(contacts[0], fileName: fileName, folder: folder)))
        case .success(let contacts):
            let packed = contacts.map { PackedContact.make($0, fileName: fileName, folder: folder) }
            return FileSlot(storage: .other(OtherFile(name: fileName, contacts: packed, problem: nil)))
        case .failure(let problem):
            return FileSlot(storage: .other(OtherFile(name: fileName, contacts: [], problem: problem)))
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

    private func path(of contact: PackedContact) -> String {
        folders[Int(contact.folder)].key + contact.fileName
    }

    private mutating func noteDuplicate(_ identifier: String) {
        duplicateCount += 1
        duplicatedIdentifiers.insert(identifier)
    }

    private mutating func claim(_ contact: PackedContact) {
        let (inserted, existing) = claims.insert(.one(contact))
        if inserted { return }
        var claimants = existing.claimants
        let newPath = path(of: contact)
        let position = claimants.firstIndex { precedesByCodePoint(newPath, path(of: $0)) } ?? claimants.endIndex
        claimants.insert(contact, at: position)
        claims.update(with: ClaimSlot(storage: .several(claimants)))
        noteDuplicate(contact.identifier)
    }

    private mutating func unclaim(_ contact: PackedContact) {
        guard let slot = claims.firstIndex(of: .one(contact)) else { return }
        var claimants = claims[slot].claimants
        guard let position = claimants.firstIndex(where: { $0 === contact }) else { return }
        claimants.remove(at: position)
        if claimants.isEmpty {
            claims.remove(at: slot)
            return
        }
        duplicateCount -= 1
        if claimants.count == 1 {
            duplicatedIdentifiers.remove(contact.identifier)
            claims.update(with: .one(claimants[0]))
        } else {
            claims.update(with: ClaimSlot(storage: .several(claimants)))
        }
    }

    private mutating func insertFavorite(_ contact: Contact) {
        let key = FavoriteSortKey(contact)
        let position = favoritePosition(of: key)
        favoriteKeys.insert(key, at: position)
        sortedFavorites.insert(contact, at: position)
        favoritesChanged()
    }

    private mutating func favoritesChanged() {
        favoritesVersion = FavoritesVersion(origin: favoritesVersion.origin, changes: favoritesVersion.changes &+ 1)
    }

    private mutating func removeFavorite(_ contact: Contact) {
        let key = FavoriteSortKey(contact)
        let position = favoritePosition(of: key)
        if position < favoriteKeys.endIndex, favoriteKeys[position] == key {
            favoriteKeys.remove(at: position)
            sortedFavorites.remove(at: position)
            favoritesChanged()
        }
    }

    /// Binary search: the first position whose key is not less than `key`.
    private func favoritePosition(of key: FavoriteSortKey) -> Int {
        var low = favoriteKeys.startIndex
        var high = favoriteKeys.endIndex
        while low < high {
            let middle = low + (high - low) / 2
            if favoriteKeys[middle] < key {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }

    /// One card per identifier; a file holds one card or a few, so no set is built for them.
    private static func distinctIdentifiers(_ contacts: [PackedContact]) -> [PackedContact] {
        guard contacts.count > 1 else { return contacts }
        guard contacts.count > 16 else {
            var unique: [PackedContact] = []
            for contact in contacts where !unique.contains(where: { ClaimSlot.one($0) == ClaimSlot.one(contact) }) {
                unique.append(contact)
            }
            return unique
        }
        var seen: Set<ClaimSlot> = []
        return contacts.filter { seen.insert(.one($0)).inserted }
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
        folders.flatMap { folder in folder.files.map { folder.key + $0.name } }.sorted(by: precedesByCodePoint)
    }

    /// Distinct contacts (duplicates count once).
    public var contactCount: Int { claims.count }

    public var favoriteCount: Int { sortedFavorites.count }

    /// Favorites in display order: by name, case- and accent-insensitive, ties broken by identifier.
    public var favorites: [Contact] { sortedFavorites }

    public func contact(identifier: String) -> Contact? {
        claims.firstIndex(of: .probe(identifier)).flatMap { claims[$0].winner }?.contact
    }

    /// The path of the file whose card defines `identifier` (the one that wins it), if any.
    public func filePath(identifier: String) -> String? {
        claims.firstIndex(of: .probe(identifier)).flatMap { claims[$0].winner }.map(path(of:))
    }

    private func file(path: String) -> FileSlot? {
        let (key, name) = Self.split(path)
        guard let number = folderNumbers[key] else { return nil }
        let files = folders[Int(number)].files
        return files.firstIndex(of: .probe(name)).map { files[$0] }
    }

    /// What the index knows about one file: its contacts, its problem, or nil when unknown.
    public func entry(path: String) -> Result<[Contact], ContactFileProblem>? {
        guard let file = file(path: path) else { return nil }
        if let problem = file.problem { return .failure(problem) }
        return .success(file.contacts.map(\.contact))
    }

    public var invalidFiles: [InvalidFile] {
        invalidPaths.sorted(by: precedesByCodePoint).compactMap { path in
            guard let problem = file(path: path)?.problem else { return nil }
            return InvalidFile(path: path, reason: problem)
        }
    }

    /// Every ignored definition of an identifier, by identifier then path.
    public var duplicates: [Duplicate] {
        duplicatedIdentifiers.sorted(by: precedesByCodePoint).flatMap { identifier -> [Duplicate] in
            guard let slot = claims.firstIndex(of: .probe(identifier)) else { return [] }
            let claimants = claims[slot].claimants
            guard let kept = claimants.first else { return [] }
            let keptPath = path(of: kept)
            return claimants.dropFirst().map { Duplicate(identifier: identifier, keptPath: keptPath, ignoredPath: path(of: $0)) }
        }
    }
}

/// A set element found by one packed text (a file name, an identifier), which compares and
/// hashes as `String`s do (canonical equivalence), as when the index's tables were keyed
/// by `String`; equal bytes, or two ASCII texts, are decided without making strings.
private protocol PackedTextKey: Hashable {
    func withKeyBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R
}

extension PackedTextKey {
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.withKeyBytes { left in rhs.withKeyBytes { right in ContactIndex.textEqual(left, right) } }
    }

    func hash(into hasher: inout Hasher) {
        withKeyBytes { ContactIndex.hashText($0, into: &hasher) }
    }
}
