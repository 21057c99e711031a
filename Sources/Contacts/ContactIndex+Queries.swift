/// What the index answers: its paths, contacts and favorites, and the files it skipped and the
/// duplicates it ignored, each with a sentence to log.
extension ContactIndex {
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
