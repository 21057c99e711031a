import Glibc
import Contacts
import NIOConcurrencyHelpers
import SystemCalls

/// Reading and parsing contact files: all those a walk listed, on every CPU, or one at a time
/// (under a read lease when the watcher asks).
extension ContactsDirectoryScanner {
    /// Reads and parses `files` on every CPU (`ParallelWork.map`), each result in its path's
    /// place, so the caller sees them in the same order (and duplicates resolve the same way) as
    /// one thread would. `progress` is told about how many files are read so far (as far as the
    /// readers have come in the list) every `progressStep` files, under a lock (never from two
    /// threads at once), and at the end. A file deleted or moved away since it was listed is
    /// left out: it is not a contact file any more, and its IN_DELETE or IN_MOVED_FROM follows.
    func read(_ files: [ListedFile], progress: ((Int) -> Void)? = nil) -> [ContactsScanResult.File] {
        defer { progress?(files.count) }
        let told = NIOLockedValueBox(0)
        return ParallelWork.map(count: files.count, chunk: 64) { index -> ContactsScanResult.File? in
            let read = readUnlessVanished(files[index]).map { ContactsScanResult.File(path: files[index].path, result: $0) }
            if let progress, (index + 1) % Self.progressStep == 0 {
                told.withLockedValue { told in
                    guard index + 1 > told else { return }
                    progress(index + 1)
                    told = index + 1
                }
            }
            return read
        }.compactMap { $0 }
    }

    /// Reads and parses one file as a scan does, a file that is not there being unreadable.
    func read(path: String) -> Result<[Contact], ContactFileProblem> {
        readUnlessVanished(ListedFile(path: path)) ?? .failure(.unreadable(reason: errnoText(ENOENT)))
    }

    /// nil: the file is gone (see `LeasedRead.vanished`).
    private func readUnlessVanished(_ file: ListedFile) -> Result<[Contact], ContactFileProblem>? {
        switch read(file, underLease: nil) {
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
    func read(_ file: ListedFile, underLease acquireLease: WriterProbe?) -> LeasedRead {
        let path = file.path
        let fileName = ContactFileKind.fileName(ofPath: path)
        guard let kind = ContactFileKind.classify(fileName: fileName) else {
            return .read(.failure(.notAContactFile(fileName: fileName)))
        }
        // O_NONBLOCK: a FIFO named like a contact file must not hang the daemon in open().
        let descriptor = path.withCString { path in
            retryingOnInterrupt {
                openat(file.folder, path + file.nameOffset, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
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

        var bytes: [UInt8] = []
        switch readAll(descriptor, expectedSize: size, into: &bytes) {
        case .success(let count):
            return .read(bytes.withUnsafeBufferPointer { bytes in
                kind.contacts(inFileNamed: fileName, contentsOf: UnsafeBufferPointer(rebasing: bytes[..<count]), options: options)
            })
        case .failure(let problem):
            return .read(.failure(problem))
        }
    }

    // MARK: - System calls

    /// Reads to end of file into `bytes`, but never more than the limit: the file may grow
    /// after `fstat`. Returns how many bytes were read. Each read asks for what the file has
    /// left by `fstat` (one byte more, to meet the end in the same read), so a small file
    /// costs two reads; past that the request grows as the file does.
    private func readAll(_ descriptor: Int32, expectedSize: Int, into bytes: inout [UInt8]) -> Result<Int, ContactFileProblem> {
        var requested = min(expectedSize, maxFileBytes) + 1
        var filled = 0
        while true {
            if filled == requested {
                requested += min(max(4096, filled), maxFileBytes + 1)
            }
            if bytes.count < requested { bytes.append(contentsOf: repeatElement(0, count: requested - bytes.count)) }
            let count = bytes.withUnsafeMutableBytes { bytes in
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

    private static let progressStep = 4096
}
