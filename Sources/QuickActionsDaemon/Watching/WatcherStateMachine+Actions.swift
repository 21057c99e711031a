/// Why a tree of the contacts directory is walked; the raw value is how the log says it.
enum TreeScanReason: String, Hashable, Sendable {
    /// A folder was created or moved into the tree.
    case appeared = "a new folder"
    /// The root is (re)attached: at start, or after it was deleted or moved away.
    case attach = "attaching"
    /// The kernel dropped events (`IN_Q_OVERFLOW`): only a full walk can tell what changed.
    case overflow = "the inotify queue overflowed"
    /// A tree without inotify watches (the watch limit was hit) is re-read on a timer.
    case periodic = "no inotify watch"
    /// The configuration was reloaded (maybe with other favorite categories or size limit).
    case reload

    /// Rescans replace what the index holds for the tree; they are what `Status.rescans` counts.
    var isRescan: Bool {
        switch self {
        case .overflow, .periodic, .reload: true
        case .appeared, .attach: false
        }
    }
}

extension WatcherStateMachine {
    enum Action: Hashable, Sendable {
        /// Read and parse the file (its writer closed it, or it was renamed into place).
        case readFile(String)
        /// A file was created: read it only if no one is writing it (a hard link, as khard
        /// and `ln` make); a file being written is read at its `IN_CLOSE_WRITE`.
        case readFileIfComplete(String)
        case forgetFile(String)
        case forgetTree(String)
        /// Walk the tree, adding a watch to each folder *before* listing it, and read every file.
        case scanTree(String, TreeScanReason)
        case removeWatches([Int32])
        /// Watch the root's parent so the root's re-creation is noticed at once.
        case watchParent(String)

        /// The path this action reads or forgets, for actions about one file.
        var filePath: String? {
            switch self {
            case .readFile(let path), .readFileIfComplete(let path), .forgetFile(let path): path
            default: nil
            }
        }
    }

    /// What the writer probe (`OpenForWritingProbe`, a read lease) said of a file that an
    /// action is about to read.
    enum WriterProbeAnswer: Hashable, Sendable {
        case noWriter
        case writerOpen
        /// Leases are not available for this file (another user's file, a file system without them).
        case unknown

        init(_ isOpenForWriting: Bool?) {
            switch isOpenForWriting {
            case true?: self = .writerOpen
            case false?: self = .noWriter
            case nil: self = .unknown
            }
        }
    }
}
