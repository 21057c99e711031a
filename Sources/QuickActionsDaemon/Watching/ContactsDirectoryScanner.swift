#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Contacts
import Dispatch
import Synchronization
import SystemCalls

/// Reads the contacts directory (SPEC §3): a vdir tree of root → optional collection
/// folders (any depth) → contact files. Hidden entries and symbolic links below the
/// root are never followed, so the walk cannot loop or escape the tree; the root itself
/// may be a link because the user chose it. No problem with one file or folder stops the walk.
struct ContactsDirectoryScanner: Sendable {
    var root: String
    var maxFileBytes: Int
    var options: ContactParsingOptions
    /// Told how far a long scan is (SPEC: long work shows progress), at most once a second and
    /// only once a scan has run for a second: the files found while the tree is listed, then
    /// the files read of that total.
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

    /// Reads and parses `paths` on every CPU (see `read(_: [ListedFile])`).
    func read(_ paths: [String]) -> [ContactsScanResult.File] {
        read(paths.map { ListedFile(path: $0, folder: AT_FDCWD, nameOffset: 0) })
    }

    /// Reads and parses `files` on every CPU, each result in its path's place, so the caller
    /// sees them in the same order (and duplicates resolve the same way) as one thread would.
    /// Each reader takes the next chunk of paths until none is left, so all of them stay busy to
    /// the end even when one is slowed down (by other work on the machine, or bigger files),
    /// and keeps one read buffer for all its files. `progress` is told how many files are read
    /// so far, every `progressStep` files or so, from one reader only (never from two threads at
    /// once), and at the end. A file deleted or moved away since it was listed is left out: it
    /// is not a contact file any more, and its IN_DELETE or IN_MOVED_FROM follows.
    private func read(_ files: [ListedFile], progress: ((Int) -> Void)? = nil) -> [ContactsScanResult.File] {
        defer { progress?(files.count) }
        let chunk = 64
        let chunks = (files.count + chunk - 1) / chunk
        let workers = min(chunks, Self.readerThreads)
        guard workers > 1 else {
            var buffer = FileReadBuffer()
            return files.compactMap { file in readUnlessVanished(file, buffer: &buffer).map { .init(path: file.path, result: $0) } }
        }
        let nextChunk = Counter()
        let filesRead = Counter()
        // Called by reader 0 only: never from two threads at once.
        let tellProgress = UncheckedSendable(progress)
        let slotsRead = [ContactsScanResult.File?](unsafeUninitializedCapacity: files.count) { buffer, initializedCount in
            // Each chunk is taken by one reader only: the slots it initializes are its own.
            let slots = UncheckedSendable(buffer.baseAddress!)
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                var readBuffer = FileReadBuffer()
                var told = 0
                while case let chunkIndex = nextChunk.add(1), chunkIndex < chunks {
                    let indices = chunkIndex * chunk..<min(files.count, (chunkIndex + 1) * chunk)
                    for index in indices {
                        let result = readUnlessVanished(files[index], buffer: &readBuffer)
                        (slots.value + index).initialize(to: result.map { .init(path: files[index].path, result: $0) })
                    }
                    let read = filesRead.add(indices.count) + indices.count
                    if worker == 0 && read - told >= Self.progressStep {
                        tellProgress.value?(read)
                        told = read
                    }
                }
            }
            initializedCount = files.count
        }
        return slotsRead.compactMap { $0 }
    }

    /// One reader per CPU the process may run on, at most 8: reading and parsing are
    /// CPU-bound once the files are cached, and more threads only compete.
    private static let readerThreads: Int = min(8, max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))

    /// Reads and parses ONE file; standalone so the watcher can call it per event.
    func read(path: String) -> Result<[Contact], ContactFileProblem> {
        var buffer = FileReadBuffer()
        return read(ListedFile(path: path, folder: AT_FDCWD, nameOffset: 0), buffer: &buffer)
    }

    private func read(_ file: ListedFile, buffer: inout FileReadBuffer) -> Result<[Contact], ContactFileProblem> {
        readUnlessVanished(file, buffer: &buffer) ?? .failure(.unreadable(reason: errnoText(ENOENT)))
    }

    /// nil: the file is gone (see `LeasedRead.vanished`).
    private func readUnlessVanished(_ file: ListedFile, buffer: inout FileReadBuffer) -> Result<[Contact], ContactFileProblem>? {
        switch read(path: file.path, underLease: nil, buffer: &buffer, at: file) {
        case .read(let result): result
        case .vanished: nil
        case .writerOpen: .failure(.unreadable(reason: "it is open for writing"))  // not reached without a lease
        }
    }

    /// What a read under a lease found.
    enum LeasedRead {
        /// Some process has the file open for writing: nothing was read.
        case writerOpen
        /// The file was deleted or moved away after it was listed: it is no contact file any
        /// more (its IN_DELETE/IN_MOVED_FROM follows), not an unreadable one.
        case vanished
        case read(Result<[Contact], ContactFileProblem>)
    }

    /// Reads one file, with `underLease` holding a read lease on it for the whole read (see
    /// `OpenForWritingProbe`), so a writer can neither be there nor open it meanwhile; where
    /// leases are unavailable the file is read as it is.
    func read(path: String, underLease acquireLease: WriterProbe?) -> LeasedRead {
        var buffer = FileReadBuffer()
        return read(path: path, underLease: acquireLease, buffer: &buffer, at: nil)
    }

    /// `at` opens the file by its name relative to its folder's descriptor rather than by path.
    private func read(path: String, underLease acquireLease: WriterProbe?, buffer: inout FileReadBuffer, at file: ListedFile?) -> LeasedRead {
        let fileName = ContactFileKind.fileName(ofPath: path)
        guard let kind = ContactFileKind.classify(fileName: fileName) else {
            return .read(.failure(.notAContactFile(fileName: fileName)))
        }
        // O_NONBLOCK: a FIFO named like a contact file must not hang the daemon in open().
        let descriptor = path.withCString { path in
            retryingOnInterrupt {
                openat(file?.folder ?? AT_FDCWD, path + (file?.nameOffset ?? 0), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
            }
        }
        guard descriptor >= 0 else {
            let error = errno
            if error == ENOENT { return .vanished }
            if error == ELOOP {
                return .read(.failure(.unreadable(reason: "it is a symbolic link, and links are not followed")))
            }
            return .read(.failure(.unreadable(reason: errnoText(error))))
        }
        // Closing the descriptor also releases the lease.
        defer { close(descriptor) }

        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            return .read(.failure(.unreadable(reason: errnoText(errno))))
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            return .read(.failure(.unreadable(reason: "it is not a regular file")))
        }
        if let acquireLease, acquireLease(descriptor) == true {
            return .writerOpen
        }
        let size = Int(info.st_size)
        guard size <= maxFileBytes else {
            return .read(.failure(.tooLarge(size: size, limit: maxFileBytes)))
        }

        switch readAll(descriptor, expectedSize: size, into: &buffer) {
        case .success(let count):
            return .read(buffer.bytes.withUnsafeBufferPointer { bytes in
                kind.contacts(inFileNamed: fileName, contentsOf: UnsafeBufferPointer(rebasing: bytes[..<count]), options: options)
            })
        case .failure(let problem):
            return .read(.failure(problem))
        }
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
        // tmpfs): no `lstat` per file, which would be a third of the floor's system calls.
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

    // MARK: - System calls

    /// Reads to end of file into `buffer`, but never more than the limit: the file may grow
    /// after `fstat`. Returns how many bytes were read. Each read asks for what the file has
    /// left by `fstat` (one byte more, to meet the end in the same read), so a small file
    /// costs two reads; past that the request grows as the file does.
    private func readAll(_ descriptor: Int32, expectedSize: Int, into buffer: inout FileReadBuffer) -> Result<Int, ContactFileProblem> {
        var requested = min(expectedSize, maxFileBytes) + 1
        var filled = 0
        while true {
            if filled == requested {
                requested += min(max(4096, filled), maxFileBytes + 1)
            }
            buffer.reserve(requested)
            let count = buffer.bytes.withUnsafeMutableBytes { bytes in
                retryingOnInterrupt { Glibc.read(descriptor, bytes.baseAddress! + filled, requested - filled) }
            }
            if count < 0 {
                return .failure(.unreadable(reason: errnoText(errno)))
            }
            if count == 0 {
                return .success(filled)
            }
            filled += count
            // A regular file's read comes back short only at its end: when that end is where
            // `fstat` put it, the read that would return 0 is saved.
            if filled < requested && filled == expectedSize {
                return .success(filled)
            }
            if filled > maxFileBytes {
                return .failure(.tooLarge(size: filled, limit: maxFileBytes))
            }
        }
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

    private static let progressStep = 4096

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

/// How far one scan of the contacts folder is.
struct ContactsScanProgress: Hashable, Sendable, CustomStringConvertible {
    var tree: String
    var filesFound: Int
    var filesRead: Int
    /// Whether `filesFound` is the total.
    var listingDone: Bool

    var description: String {
        listingDone
            ? "Reading contacts in '\(tree)': \(filesRead) of \(filesFound) files read"
            : "Listing contacts in '\(tree)': \(filesFound) files found so far"
    }
}

/// Passes progress on at most once an interval, the first time an interval after the scan began.
private final class ProgressReporter {
    let tree: String
    private let interval: Duration
    private let report: @Sendable (ContactsScanProgress) -> Void
    private var nextReport: ContinuousClock.Instant
    private(set) var reported = false

    init(tree: String, interval: Duration, report: @escaping @Sendable (ContactsScanProgress) -> Void) {
        self.tree = tree
        self.interval = interval
        self.report = report
        nextReport = .now + interval
    }

    func tell(_ progress: ContactsScanProgress) {
        let now = ContinuousClock.now
        guard now >= nextReport else { return }
        nextReport = now + interval
        reported = true
        report(progress)
    }
}

/// A contact file the walk found.
struct ListedFile {
    var path: String
    /// A descriptor of its folder, open from the listing to the read, so that opening the file
    /// looks up one name rather than every folder of its path; `AT_FDCWD` to open `path` itself.
    var folder: Int32
    /// Where the file's name starts in `path` (its UTF-8 bytes); 0 with `AT_FDCWD`.
    var nameOffset: Int
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

/// A read buffer kept from file to file by one reader: reading a file allocates nothing.
struct FileReadBuffer {
    fileprivate var bytes: [UInt8] = []

    /// Makes room for `count` bytes, keeping what the buffer holds; grows by doubling, so a
    /// reader that goes through many files reallocates a few times in all.
    fileprivate mutating func reserve(_ count: Int) {
        if bytes.count < count {
            bytes.append(contentsOf: repeatElement(0, count: max(count, bytes.count * 2) - bytes.count))
        }
    }
}

/// A count that concurrent readers add to: the chunks taken, the files read.
private final class Counter: Sendable {
    private let count = Atomic<Int>(0)

    /// Adds `amount`; returns the count before.
    func add(_ amount: Int) -> Int {
        count.add(amount, ordering: .relaxed).oldValue
    }
}

/// A value handed to concurrent workers that each touch only their own part of it (or of
/// which one worker only makes use).
private struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// What one walk of the contacts directory found.
struct ContactsScanResult: Sendable {
    struct File: Sendable {
        var path: String
        var result: Result<[Contact], ContactFileProblem>

        init(path: String, result: Result<[Contact], ContactFileProblem>) {
            self.path = path
            self.result = result
        }
    }

    /// Every contact file, valid or not, in code-point order of path.
    var files: [File] = []
    /// Every folder walked (the start first), so the watcher knows what to watch.
    var directories: [String] = []
    /// Folders that could not be read, or a start folder that is missing.
    var problems: [ContactsScanProblem] = []

    init() {}
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
