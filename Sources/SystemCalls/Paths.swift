#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `mkdir -p`: creates `directory` and every missing folder above it with `mode`, leaving
/// existing ones as they are. A folder created meanwhile by someone else is fine.
public func makeDirectories(_ directory: String, mode: mode_t) throws(SystemCallError) {
    var missing: [String] = []
    var folder = directory
    while folder.count > 1 {
        var info = stat()
        if stat(folder, &info) == 0 { break }
        missing.append(folder)
        guard let slash = folder.lastIndex(of: "/") else { break }
        folder = slash == folder.startIndex ? "/" : String(folder[..<slash])
    }
    for folder in missing.reversed() {
        do {
            try retryingSystemCall("mkdir", path: folder) { mkdir(folder, mode) }
        } catch where error.errno == EEXIST {
            continue
        }
    }
}

/// The address of a Unix socket at `path`, for bind(2) and connect(2).
public struct UnixSocketAddress {
    private var address = sockaddr_un()

    /// The longest path that fits `sun_path` with its NUL (107 bytes on Linux).
    public static let maxPathBytes = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// nil for an empty path, one with a NUL byte, or one longer than `maxPathBytes`.
    public init?(path: String) {
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count <= Self.maxPathBytes, !bytes.contains(0) else { return nil }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
    }

    /// Calls `body` with the address as bind(2) and connect(2) take it.
    public func withSocketAddress<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        withUnsafePointer(to: address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }
}

/// The name of an entry `readdir` returned. Read through a pointer, never by copying
/// `d_name`: the kernel packs entries by their real length, so the full 256-byte field of
/// the last entry in its buffer may reach into an unmapped page, and copying it then crashes.
public func directoryEntryName(_ entry: UnsafePointer<dirent>) -> String {
    let name = UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \.d_name)!
    return String(cString: name.assumingMemoryBound(to: CChar.self))
}

/// The names in `folder` but `.` and `..`, in the order readdir(3) gives them. The one directory
/// listing of the daemon and the client: FoundationEssentials' `FileManager` would do, but its
/// code is paged in by whoever calls it, and start-up lists folders.
public func directoryEntryNames(_ folder: String) throws(SystemCallError) -> [String] {
    guard let directory = opendir(folder) else { throw SystemCallError(call: "opendir", path: folder, errno: errno) }
    defer { closedir(directory) }
    var names: [String] = []
    while true {
        errno = 0
        guard let entry = readdir(directory) else {
            if errno != 0 { throw SystemCallError(call: "readdir", path: folder, errno: errno) }
            return names
        }
        let name = directoryEntryName(entry)
        if name != "." && name != ".." { names.append(name) }
    }
}

/// The folder `path` names a file in: what comes before its last `/` (trailing ones aside), `/`
/// for a file at the root, `.` for a bare name.
public func parentFolder(of path: String) -> String {
    var path = Substring(path)
    while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
    guard let slash = path.lastIndex(of: "/") else { return "." }
    let folder = path[..<slash]
    return folder.isEmpty ? "/" : String(folder)
}
