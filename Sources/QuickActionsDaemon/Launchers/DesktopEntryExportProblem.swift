/// Why the desktop entry is not exported, named with its file.
enum DesktopEntryExportProblem: Error, Equatable, CustomStringConvertible {
    case sourceMissing(String, searched: [String])
    case shadowedByPersonalEntry(String)
    case foreignFile(String)
    case notADesktopEntry(String, String)
    case unreadable(String, String)
    case unwritable(String, String)

    /// The app's entry is gone or hidden behind the person's own: the export goes with it.
    var removesTheExport: Bool {
        switch self {
        case .sourceMissing, .shadowedByPersonalEntry: true
        default: false
        }
    }

    var description: String {
        switch self {
        case .sourceMissing(let name, let searched):
            return "the app's desktop entry '\(name)' was not found (looked at \(searched.joined(separator: ", ")))"
        case .shadowedByPersonalEntry(let path):
            return "'\(path)' is your own entry for this app, which launchers read before qactd's exports, so nothing is exported"
                + " and your entry is left alone; to see the quick actions, move it out of that folder or delete it (qactd exports again at once)"
        case .foreignFile(let path):
            return "'\(path)' was not written by qactd, so it is left alone; move it away and reload to export"
        case .notADesktopEntry(let path, let reason):
            return "'\(path)' is not a desktop entry: \(reason)"
        case .unreadable(let path, let reason):
            return "cannot read '\(path)': \(reason)"
        case .unwritable(let path, let reason):
            return "cannot write '\(path)': \(reason)"
        }
    }
}
