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
