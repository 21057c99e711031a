import CLinux
import Glibc
import Synchronization
import SystemCalls

/// The numbers of this process's temporary files, so two replacements never pick the same name.
private let temporaryFileNumbers = Atomic<Int>(0)

/// A step of `FileIO.replaceAtomically`, named in its errors so a failure says what was being done.
enum AtomicReplaceStep: String, Sendable, Equatable {
    case createTemporaryFile = "create the temporary file", write = "write the temporary file"
    case syncFile = "fsync the temporary file", close = "close the temporary file"
    case rename = "rename the temporary file over", syncFolder = "fsync the folder of"
}

/// A failed `FileIO.replaceAtomically`: the step and the system call's error. Up to `.rename`
/// the old file is untouched and the temporary file removed; at `.syncFolder` the new file is
/// in place but its entry may not survive a crash.
struct AtomicReplaceError: Error, Equatable, Sendable, CustomStringConvertible {
    var step: AtomicReplaceStep
    var error: SystemCallError
    var description: String { error.description }
}

/// Small file helpers built on `retryingSystemCall`, shared by the configuration loader,
/// the state store and the desktop-entry exporter.
enum FileIO {
    /// Reads a whole file, or returns nil when it does not exist (so "absent" is data, not an error).
    /// `atMost`: reading stops one byte past it, so a file larger than that is never read
    /// whole (the caller sees more than `atMost` bytes and refuses it).
    static func readFileIfPresent(_ path: String, atMost limit: Int = .max) throws(SystemCallError) -> [UInt8]? {
        let descriptor: CInt
        do {
            descriptor = try retryingSystemCall("open", path: path) { open(path, O_RDONLY | O_CLOEXEC) }
        } catch {
            if error.errno == ENOENT { return nil }
            throw error
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = try retryingSystemCall("read", path: path) {
                chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > limit { return bytes }
        }
    }

    /// Writes every byte, looping over short writes (a pipe or a nearly full disk may take fewer).
    static func writeAll(_ descriptor: CInt, _ bytes: [UInt8], path: String?) throws(SystemCallError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                retryingOnInterrupt { Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset) }
            }
            if written < 0 { throw SystemCallError(call: "write", path: path, errno: errno) }
            offset += written
        }
    }

    /// Replaces `path` whole with `bytes`: a temporary file in the same folder
    /// (`.NAME.tmp-PID-N`, `O_EXCL`, `mode`), written and synced, then renamed over it, so a
    /// reader sees the old file or the new one, never a part. With `replacing: false` the rename fails with `EEXIST` if a file
    /// appeared at `path` meanwhile. With `syncFolder` the folder is synced after the rename, so
    /// the new entry survives a crash; the file is in place even when that last step fails.
    /// This is the only place the daemon replaces a file: the state file and the exported
    /// desktop entry both come here. `failing` lets tests fail one step in place of its call.
    static func replaceAtomically(
        _ path: String, with bytes: [UInt8], mode: mode_t, replacing: Bool = true, syncFolder: Bool = false,
        failing: AtomicReplaceStep? = nil
    ) throws(AtomicReplaceError) {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        let folder = slash == path.startIndex ? "." : String(path[..<path.index(before: slash)])
        let prefix = String(path[..<slash]) + ".\(path[slash...]).tmp-\(getpid())-"
        var step = AtomicReplaceStep.createTemporaryFile
        var descriptor: CInt = -1
        var temporaryPath = ""
        func fail(_ path: String) throws(SystemCallError) {
            if failing == step { throw SystemCallError(call: "injected", path: path, errno: EIO) }
        }
        do throws(SystemCallError) {
            try fail(folder)
            // A crashed earlier process with the same (reused) pid may have left a file of the
            // same name: O_EXCL refuses it, and the next number is tried.
            while descriptor < 0 {
                let number = temporaryFileNumbers.add(1, ordering: .relaxed).newValue
                let candidate = prefix + String(number)
                do {
                    descriptor = try retryingSystemCall("open", path: candidate) {
                        open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
                    }
                    temporaryPath = candidate
                } catch where error.errno == EEXIST && number % 1000 != 0 {
                    continue
                }
            }
            step = .write
            try fail(temporaryPath)
            try writeAll(descriptor, bytes, path: temporaryPath)
            step = .syncFile
            try fail(temporaryPath)
            try retryingSystemCall("fsync", path: temporaryPath) { fsync(descriptor) }
            step = .close
            // close(2) must not be retried on EINTR on Linux: the descriptor is gone either way.
            let closeResult = close(descriptor)
            descriptor = -1
            if closeResult != 0 { throw SystemCallError(call: "close", path: temporaryPath, errno: errno) }
            step = .rename
            try fail(temporaryPath)
            try retryingSystemCall("rename", path: temporaryPath) {
                replacing ? rename(temporaryPath, path) : CLinux_renameNoReplace(temporaryPath, path)
            }
        } catch {
            if descriptor >= 0 { close(descriptor) }
            // Only a file this call created is removed; an empty path means open never succeeded.
            if !temporaryPath.isEmpty { unlink(temporaryPath) }
            throw AtomicReplaceError(step: step, error: error)
        }
        guard syncFolder else { return }
        step = .syncFolder
        do throws(SystemCallError) {
            try fail(folder)
            let folderDescriptor = try retryingSystemCall("open", path: folder) {
                open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            }
            defer { close(folderDescriptor) }
            try retryingSystemCall("fsync", path: folder) { fsync(folderDescriptor) }
        } catch {
            throw AtomicReplaceError(step: step, error: error)
        }
    }

    static func fileExists(_ path: String) throws(SystemCallError) -> Bool {
        var info = stat()
        do {
            try retryingSystemCall("stat", path: path) { stat(path, &info) }
            return true
        } catch {
            if error.errno == ENOENT || error.errno == ENOTDIR { return false }
            throw error
        }
    }
}
