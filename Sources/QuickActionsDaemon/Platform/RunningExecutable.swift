import Glibc

/// Where the running `qactd` is installed, read once from `/proc/self/exe`: the system-wide
/// configuration lies under its prefix (`PREFIX/bin/qactd` → `PREFIX/etc/qactd`), and the
/// exported desktop entry runs the `qactl` beside it.
enum RunningExecutable {
    /// The executable's absolute path; nil where `/proc` is not mounted.
    static let path: String? = {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

    /// The folder holding it (`PREFIX/bin`).
    static var folder: String? {
        path.map { parent(of: $0) }
    }

    /// The installation prefix (`PREFIX`, "" for `/`), the folder above `bin`.
    static var prefix: String? {
        folder.map { parent(of: $0) }
    }

    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return String(path[..<slash])
    }
}
