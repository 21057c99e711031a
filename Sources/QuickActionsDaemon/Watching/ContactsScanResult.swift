import Contacts

/// What one walk of the contacts directory found.
struct ContactsScanResult: Sendable {
    struct File: Sendable {
        var path: String
        var result: Result<[Contact], ContactFileProblem>
    }

    /// Every contact file, valid or not, in code-point order of path.
    var files: [File] = []
    /// Every folder walked (the start first), so the watcher knows what to watch.
    var directories: [String] = []
    /// Folders that could not be read, or a start folder that is missing.
    var problems: [ContactsScanProblem] = []
}

struct ContactsScanProblem: Hashable, Sendable, CustomStringConvertible {
    enum Kind: Hashable, Sendable {
        case missing
        case notADirectory
        case unreadable(reason: String)
    }

    var path: String
    var kind: Kind

    var description: String {
        switch kind {
        case .missing:
            return "The contacts folder \"\(path)\" does not exist; no contacts are loaded from it."
        case .notADirectory:
            return "The contacts path \"\(path)\" is not a folder; no contacts are loaded from it."
        case .unreadable(let reason):
            return "The contacts folder entry \"\(path)\" cannot be read: \(reason)."
        }
    }
}
