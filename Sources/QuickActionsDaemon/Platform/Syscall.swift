import CLinux
import Glibc
import SystemCalls

/// Small file helpers built on `retryingSystemCall`, shared by the configuration
/// loader and the state store.
enum FileIO {
    /// Reads a whole file, or returns nil when it does not exist (so "absent" is data, not an error).
    static func readFileIfPresent(_ path: String) throws(SystemCallError) -> [UInt8]? {
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
        }
    }

    /// Writes every byte, looping over short writes (a pipe or a nearly full disk may take fewer).
    static func writeAll(_ descriptor: CInt, _ bytes: [UInt8], path: String?) throws(SystemCallError) {
        var offset = 0
        while offset < bytes.count {
            let written = try retryingSystemCall("write", path: path) {
                bytes.withUnsafeBytes { write(descriptor, $0.baseAddress.map { $0 + offset }, $0.count - offset) }
            }
            offset += written
        }
    }

    /// Replaces `path` whole: a temporary file in the same folder (`O_EXCL`), written and
    /// synced, then renamed over it, so a reader sees the old file or the new one, never a part.
    /// With `replacing: false` the rename fails with `EEXIST` if a file appeared at `path` meanwhile.
    static func replaceAtomically(_ path: String, with bytes: [UInt8], mode: mode_t, replacing: Bool = true) throws(SystemCallError) {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        let temporaryPath = String(path[..<slash]) + ".\(path[slash...]).tmp-\(getpid())-\(UInt32.random(in: .min ... .max))"
        let descriptor = try retryingSystemCall("open", path: temporaryPath) {
            open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        }
        do throws(SystemCallError) {
            try writeAll(descriptor, bytes, path: temporaryPath)
            try retryingSystemCall("fsync", path: temporaryPath) { fsync(descriptor) }
            // close(2) must not be retried on EINTR on Linux: the descriptor is gone either way.
            let closeResult = close(descriptor)
            if closeResult != 0 { throw SystemCallError(call: "close", path: temporaryPath, errno: errno) }
            try retryingSystemCall("rename", path: temporaryPath) {
                replacing ? rename(temporaryPath, path) : CLinux_renameNoReplace(temporaryPath, path)
            }
        } catch {
            close(descriptor)
            unlink(temporaryPath)
            throw error
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
