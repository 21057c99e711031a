/// What the index answers: its paths, contacts and favorites, and the files it skipped and the
/// duplicates it ignored, each with a sentence to log.
extension ContactIndex {
    /// A file that contributes no contacts, and why.
    public struct InvalidFile: Hashable, Sendable, CustomStringConvertible {
        /// The file's path, as the index was given it.
        public var path: String
        /// Why the file contributes no contacts.
        public var reason: ContactFileProblem

        /// The file at `path` and its problem.
        public init(path: String, reason: ContactFileProblem) {
            self.path = path
            self.reason = reason
        }

        /// The sentence to log: the quoted path and the problem.
        public var description: String { "Skipped contact file \"\(path)\": \(reason.description)" }
    }

    /// A contact identifier two files define: the index keeps one file's contact and ignores the other's.
    public struct Duplicate: Hashable, Sendable, CustomStringConvertible {
        /// The identifier both files define.
        public var identifier: String
        /// The file whose contact the index keeps.
        public var keptPath: String
        /// The file whose contact is ignored.
        public var ignoredPath: String

        /// The duplicate `identifier`, kept from `keptPath` and ignored in `ignoredPath`.
        public init(identifier: String, keptPath: String, ignoredPath: String) {
            self.identifier = identifier
            self.keptPath = keptPath
            self.ignoredPath = ignoredPath
        }

        /// The sentence to log, naming the identifier and both paths, ending "ignoring the duplicate."
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

    /// How many distinct contacts are favorites.
    public var favoriteCount: Int { sortedFavorites.count }

    /// Favorites in display order: by name, case- and accent-insensitive, ties broken by identifier.
    public var favorites: [Contact] { sortedFavorites }

    /// The contact the index keeps for `identifier`, or nil when no file defines it.
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

    /// The files that contribute no contacts, each with its problem, in the code-point order of their paths.
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
