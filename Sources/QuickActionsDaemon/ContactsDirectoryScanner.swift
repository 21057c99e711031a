#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Contacts
import Dispatch
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
        var contactFiles: [String] = []
        let reporter = progress.map { ProgressReporter(tree: start, interval: progressInterval, report: $0) }
        walk(start, followLink: true, enteringDirectory: enteringDirectory, into: &result, contactFiles: &contactFiles, reporter: reporter)
        contactFiles.sort(by: Self.precedesByCodePoint)
        guard let reporter else {
            result.files = read(contactFiles)
            return result
        }
        // In batches, so progress can be told between them.
        result.files.reserveCapacity(contactFiles.count)
        var next = 0
        while next < contactFiles.count {
            let end = min(contactFiles.count, next + Self.progressBatch)
            result.files += read(Array(contactFiles[next..<end]))
            next = end
            reporter.tell(ContactsScanProgress(tree: start, filesFound: contactFiles.count, filesRead: next, listingDone: true))
        }
        return result
    }

    private static let progressBatch = 4096

    /// Reads and parses `paths` on every CPU, each result in its path's place, so the caller
    /// sees them in the same order (and duplicates resolve the same way) as one thread would.
    func read(_ paths: [String]) -> [ContactsScanResult.File] {
        let chunk = 64
        let chunks = (paths.count + chunk - 1) / chunk
        let workers = min(chunks, Self.readerThreads)
        guard workers > 1 else { return paths.map { ContactsScanResult.File(path: $0, result: read(path: $0)) } }
        return Array(unsafeUninitializedCapacity: paths.count) { buffer, initializedCount in
            // Each worker takes every `workers`-th chunk: the slots it initializes are its own.
            let slots = UncheckedSendable(buffer.baseAddress!)
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                for chunkIndex in stride(from: worker, to: chunks, by: workers) {
                    for index in chunkIndex * chunk..<min(paths.count, (chunkIndex + 1) * chunk) {
                        (slots.value + index).initialize(to: .init(path: paths[index], result: read(path: paths[index])))
                    }
                }
            }
            initializedCount = paths.count
        }
    }

    /// One reader per CPU the process may run on, at most 8: reading and parsing are
    /// CPU-bound once the files are cached, and more threads only compete.
    private static let readerThreads: Int = min(8, max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))

    /// Reads and parses ONE file; standalone so the watcher can call it per event.
    func read(path: String) -> Result<[Contact], ContactFileProblem> {
        switch read(path: path, underLease: nil) {
        case .read(let result): result
        case .writerOpen: .failure(.unreadable(reason: "it is open for writing"))  // not reached without a lease
        }
    }

    /// What a read under a lease found.
    enum LeasedRead {
        /// Some process has the file open for writing: nothing was read.
        case writerOpen
        case read(Result<[Contact], ContactFileProblem>)
    }

    /// Reads one file, with `underLease` holding a read lease on it for the whole read (see
    /// `OpenForWritingProbe`), so a writer can neither be there nor open it meanwhile; where
    /// leases are unavailable the file is read as it is.
    func read(path: String, underLease acquireLease: WriterProbe?) -> LeasedRead {
        let fileName = ContactFileKind.fileName(ofPath: path)
        guard ContactFileKind.classify(fileName: fileName) != nil else {
            return .read(.failure(.notAContactFile(fileName: fileName)))
        }
        // O_NONBLOCK: a FIFO named like a contact file must not hang the daemon in open().
        let descriptor = retryingOnInterrupt { open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) }
        guard descriptor >= 0 else {
            let error = errno
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

        switch readAll(descriptor, expectedSize: size) {
        case .success(let bytes):
            return .read(ContactFileKind.contacts(inFileAt: path, bytes: bytes, options: options))
        case .failure(let problem):
            return .read(.failure(problem))
        }
    }

    // MARK: - Walking

    /// Lists the tree; the contact files found are read afterwards, all at once (`read(_:)`).
    private func walk(
        _ directory: String, followLink: Bool, enteringDirectory: (String) -> Void, into result: inout ContactsScanResult,
        contactFiles: inout [String], reporter: ProgressReporter?
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

        var names: [String] = []
        while let entry = readdir(stream) {
            let name = directoryEntryName(entry)
            // Hidden entries include "." and "..", and vdir tools' own state folders.
            if !name.hasPrefix(".") { names.append(name) }
        }
        names.sort(by: Self.precedesByCodePoint)

        for name in names {
            let path = directory == "/" ? "/" + name : directory + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else {
                let error = errno
                if error != ENOENT {
                    result.problems.append(ContactsScanProblem(path: path, kind: .unreadable(reason: errnoText(error))))
                }
                continue
            }
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                walk(path, followLink: false, enteringDirectory: enteringDirectory, into: &result, contactFiles: &contactFiles,
                     reporter: reporter)
            case S_IFREG where ContactFileKind.classify(fileName: name) != nil:
                contactFiles.append(path)
                if let reporter {
                    reporter.tell(ContactsScanProgress(tree: reporter.tree, filesFound: contactFiles.count, filesRead: 0, listingDone: false))
                }
            default:
                continue  // symbolic links, other names, sockets, devices
            }
        }
    }

    // MARK: - System calls

    /// Reads to end of file, but never more than the limit: the file may grow after `fstat`.
    /// The buffer is sized by `fstat` (one byte more, to meet the end in the same read), so
    /// a small file costs one allocation and two reads.
    private func readAll(_ descriptor: Int32, expectedSize: Int) -> Result<[UInt8], ContactFileProblem> {
        var bytes = [UInt8](repeating: 0, count: min(expectedSize, maxFileBytes) + 1)
        var filled = 0
        while true {
            if filled == bytes.count {
                bytes.append(contentsOf: repeatElement(0, count: min(max(4096, filled), maxFileBytes + 1)))
            }
            let count = bytes.withUnsafeMutableBytes { buffer in
                retryingOnInterrupt { Glibc.read(descriptor, buffer.baseAddress! + filled, buffer.count - filled) }
            }
            if count < 0 {
                return .failure(.unreadable(reason: errnoText(errno)))
            }
            if count == 0 {
                bytes.removeLast(bytes.count - filled)
                return .success(bytes)
            }
            filled += count
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

    private static func precedesByCodePoint(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
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
        report(progress)
    }
}

/// A value handed to concurrent workers that each touch only their own part of it.
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
