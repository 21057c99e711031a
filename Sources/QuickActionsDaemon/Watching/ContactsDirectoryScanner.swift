import Glibc
import Contacts
import Synchronization
import SystemCalls

/// Reads the contacts directory: a vdir tree of root → optional collection
/// folders (any depth) → contact files. Hidden entries and symbolic links below the
/// root are never followed, so the walk cannot loop or escape the tree; the root itself
/// may be a link because the user chose it. No problem with one file or folder stops the walk.
struct ContactsDirectoryScanner: Sendable {
    var root: String
    var maxFileBytes: Int
    var options: ContactParsingOptions
    /// Told how far a long scan is, so that a scan of a large tree is seen to advance rather
    /// than hang: at most once a second and only once a scan has run for a second, the files
    /// found while the tree is listed, then the files read of that total.
    var progress: (@Sendable (ContactsScanProgress) -> Void)?
    var progressInterval: Duration = .seconds(1)
    /// Told when a scan that reported progress is done, so whoever shows it can stop.
    var progressEnded: (@Sendable () -> Void)?

    static let defaultMaxFileBytes = 1_048_576

    init(root: String, maxFileBytes: Int = ContactsDirectoryScanner.defaultMaxFileBytes, options: ContactParsingOptions = .default) {
        self.root = root
        self.maxFileBytes = maxFileBytes
        self.options = options
    }

    /// Walks one folder of the tree and everything below it, calling `enteringDirectory` for
    /// each folder just before it is listed: the watcher adds the folder's watch there, so a
    /// file created after the listing raises an event and one created before it is listed —
    /// nothing falls between.
    func scan(under directory: String, enteringDirectory: (String) -> Void) -> ContactsScanResult {
        var result = ContactsScanResult()
        let start = Self.withoutTrailingSlashes(directory)
        var info = stat()
        // The starting folder may be reached through a link (the configured root often is).
        guard stat(start, &info) == 0 else {
            let error = errno
            result.problems.append(ContactsScanProblem(
                path: start, kind: error == ENOENT ? .missing : .unreadable(reason: errnoText(error))
            ))
            return result
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            result.problems.append(ContactsScanProblem(path: start, kind: .notADirectory))
            return result
        }
        var listing = Listing()
        defer { listing.closeFolders() }
        let reporter = progress.map { ProgressReporter(tree: start, interval: progressInterval, report: $0) }
        defer { if reporter?.reported == true { progressEnded?() } }
        walk(start, followLink: true, enteringDirectory: enteringDirectory, into: &result, listing: &listing, reporter: reporter)
        let contactFiles = listing.filesByPath()
        result.files = read(contactFiles) { filesRead in
            reporter?.tell(ContactsScanProgress(tree: start, filesFound: contactFiles.count, filesRead: filesRead, listingDone: true))
        }
        return result
    }

    // MARK: - Walking

    /// Lists the tree; the contact files found are read afterwards, all at once (`read(_:)`).
    private func walk(
        _ directory: String, followLink: Bool, enteringDirectory: (String) -> Void, into result: inout ContactsScanResult,
        listing: inout Listing, reporter: ProgressReporter?
    ) {
        enteringDirectory(directory)
        let flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (followLink ? 0 : O_NOFOLLOW)
        let descriptor = retryingOnInterrupt { open(directory, flags) }
        guard descriptor >= 0 else {
            let error = errno
            // Deleted between listing and opening: the watcher reports that, not the scan.
            if error != ENOENT {
                result.problems.append(ContactsScanProblem(path: directory, kind: .unreadable(reason: errnoText(error))))
            }
            return
        }
        guard let stream = fdopendir(descriptor) else {
            result.problems.append(ContactsScanProblem(path: directory, kind: .unreadable(reason: errnoText(errno))))
            close(descriptor)
            return
        }
        defer { closedir(stream) }
        result.directories.append(directory)
        let folder = listing.keep(descriptor)

        // The entry's type comes with the listing on most file systems (ext4, btrfs, xfs,
        // tmpfs): no `lstat` per file, only where the file system does not tell (`fileType`).
        var entries: [(order: UInt64, name: String, type: UInt8)] = []
        while let entry = readdir(stream) {
            let name = directoryEntryName(entry)
            // Hidden entries include "." and "..", and vdir tools' own state folders.
            if !name.hasPrefix(".") { entries.append((Self.leadingBytes(of: name), name, entry.pointee.d_type)) }
        }
        // Most names differ in their first eight bytes: compared as one number, they sort
        // without a string comparison.
        entries.sort { $0.order != $1.order ? $0.order < $1.order : Self.precedesByCodePoint($0.name, $1.name) }

        for (_, name, type) in entries {
            let path = directory == "/" ? "/" + name : directory + "/" + name
            switch fileType(path, listedAs: type, into: &result) {
            case S_IFDIR:
                walk(path, followLink: false, enteringDirectory: enteringDirectory, into: &result, listing: &listing, reporter: reporter)
            case S_IFREG where ContactFileKind.classify(fileName: name) != nil:
                listing.files.append(ListedFile(path: path, folder: folder, nameOffset: folder == AT_FDCWD ? 0 : path.utf8.count - name.utf8.count))
                if let reporter {
                    reporter.tell(ContactsScanProgress(tree: reporter.tree, filesFound: listing.files.count, filesRead: 0, listingDone: false))
                }
            default:
                continue  // symbolic links, other names, sockets, devices, entries gone meanwhile
            }
        }
    }

    /// The type of a listed entry (`S_IFDIR`, `S_IFREG`, …), from the listing when it tells,
    /// else from `lstat`; nil when the entry is gone (or cannot be examined, noted in `result`).
    private func fileType(_ path: String, listedAs type: UInt8, into result: inout ContactsScanResult) -> mode_t? {
        switch Int(type) {
        case Int(DT_DIR): return S_IFDIR
        case Int(DT_REG): return S_IFREG
        case Int(DT_UNKNOWN): break
        default: return nil  // a link, a FIFO, a socket, a device: never a contact nor a folder to walk
        }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let error = errno
            if error != ENOENT {
                result.problems.append(ContactsScanProblem(path: path, kind: .unreadable(reason: errnoText(error))))
            }
            return nil
        }
        return info.st_mode & S_IFMT
    }

    private static func withoutTrailingSlashes(_ path: String) -> String {
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        return trimmed
    }

    /// UTF-8's byte order is code-point order: compared with `memcmp` where both strings'
    /// bytes lie in one piece (always, for the native strings made here).
    fileprivate static func precedesByCodePoint(_ lhs: String, _ rhs: String) -> Bool {
        let compared = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right -> Bool in
                let common = min(left.count, right.count)
                let order = common == 0 ? 0 : memcmp(left.baseAddress!, right.baseAddress!, common)
                return order != 0 ? order < 0 : left.count < right.count
            }
        }
        return (compared ?? nil) ?? lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }

    /// Folder descriptors held open during a scan, at most: a vdir tree has a few collections,
    /// and a tree of thousands of folders must not use up the descriptors the socket's
    /// connections need (`MaxConnections`); the folders past these are read by path.
    fileprivate static let keptFolderLimit = 64

    /// The first eight bytes of `name`'s UTF-8 (zeros past its end) as one number whose order
    /// is theirs: names whose numbers differ are in the same order as the numbers.
    private static func leadingBytes(of name: String) -> UInt64 {
        var order: UInt64 = 0
        var shift: UInt64 = 56
        for byte in name.utf8.prefix(8) {
            order |= UInt64(byte) << shift
            shift &-= 8
        }
        return order
    }
}

/// A contact file the walk found.
struct ListedFile {
    var path: String
    /// A descriptor of its folder, open from the listing to the read, so that opening the file
    /// looks up one name rather than every folder of its path; `AT_FDCWD` to open `path` itself.
    var folder: Int32 = AT_FDCWD
    /// Where the file's name starts in `path` (its UTF-8 bytes); 0 with `AT_FDCWD`.
    var nameOffset = 0
}

/// What the walk lists: the contact files, and the folder descriptors they are opened by.
private struct Listing {
    var files: [ListedFile] = []
    private var folders: [Int32] = []

    /// A descriptor of a listed folder kept for the reads (the listing's own closes with it), or
    /// `AT_FDCWD` past `keptFolderLimit` folders, where files are opened by path instead.
    mutating func keep(_ descriptor: Int32) -> Int32 {
        guard folders.count < ContactsDirectoryScanner.keptFolderLimit else { return AT_FDCWD }
        let kept = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard kept >= 0 else { return AT_FDCWD }
        folders.append(kept)
        return kept
    }

    func closeFolders() {
        for folder in folders { close(folder) }
    }

    /// The files in code-point order of path; the walk's order usually is that already.
    func filesByPath() -> [ListedFile] {
        let precedes = { (lhs: ListedFile, rhs: ListedFile) in ContactsDirectoryScanner.precedesByCodePoint(lhs.path, rhs.path) }
        if zip(files, files.dropFirst()).allSatisfy({ !precedes($1, $0) }) { return files }
        return files.sorted(by: precedes)
    }
}
