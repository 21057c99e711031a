/// The live contacts of the contacts directory, keyed by the file each came from.
///
/// Built for incremental updates from inotify: replacing or removing one file costs
/// work proportional to that file's contacts (plus a logarithmic search in the
/// favorites), never a pass over the whole index. Duplicate identifiers across files
/// are resolved deterministically: the path first in code-point order wins, the
/// others are reported, and when the winner goes the next one takes over.
public struct ContactIndex: Sendable {
    /// Folders by number; a folder left empty is freed and its number reused.
    private(set) var folders: [Folder] = []
    private var freeFolders: [UInt32] = []
    private(set) var folderNumbers: [String: UInt32] = [:]
    private(set) var claims: Set<ClaimSlot> = []
    private(set) var invalidPaths: Set<String> = []
    private(set) var duplicatedIdentifiers: Set<String> = []
    /// Favorites among the winners, kept sorted so reading them costs nothing: their sort keys,
    /// and the contacts in the same order as an array of their own, which `favorites` hands out
    /// as it is: every recompute reads all of them, so they are shared, not copied contact by contact.
    private var favoriteKeys: [FavoriteSortKey] = []
    private(set) var sortedFavorites: [Contact] = []

    /// How many contacts the index ignored because another file already defines their identifier.
    public private(set) var duplicateCount = 0

    /// Names one state of `favorites`: it changes whenever the favorites may have changed, so
    /// whoever derives something from them (the dynamic set) can skip the work when it has
    /// not. `origin` is drawn once per index, so versions of two different indexes never match.
    public struct FavoritesVersion: Hashable, Sendable {
        let origin: UInt64
        let changes: UInt64
    }

    /// The current state of `favorites`, to compare with the one a derived value was made from.
    public private(set) var favoritesVersion = FavoritesVersion(origin: .random(in: .min ... .max), changes: 0)

    /// An empty index.
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
        let after = firstPosition(in: order.indices) { precedesByCodePoint(path, files[order[$0]].path) }
        guard after > 0, hasSameUTF8(files[order[after - 1]].path, path) else { return nil }
        return order[after - 1]
    }

    /// Binary search: the first position in `positions` at which `isPast` holds, for a condition
    /// that, once it holds, holds to the end.
    private static func firstPosition(in positions: Range<Int>, where isPast: (Int) -> Bool) -> Int {
        var low = positions.lowerBound
        var high = positions.upperBound
        while low < high {
            let middle = low + (high - low) / 2
            if isPast(middle) {
                high = middle
            } else {
                low = middle + 1
            }
        }
        return low
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

    func path(of contact: PackedContact) -> String {
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

    /// The first position whose key is not less than `key`.
    private func favoritePosition(of key: FavoriteSortKey) -> Int {
        Self.firstPosition(in: favoriteKeys.indices) { !(favoriteKeys[$0] < key) }
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
    static func split(_ path: String) -> (key: String, name: String) {
        guard let slash = ContactFileKind.lastIndex(of: "/", in: path) else { return ("", path) }
        let afterSlash = path.utf8.index(after: slash)
        return (String(decoding: path.utf8[..<afterSlash], as: UTF8.self),
                String(decoding: path.utf8[afterSlash...], as: UTF8.self))
    }
}
