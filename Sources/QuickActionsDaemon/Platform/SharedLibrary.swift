import Glibc

/// A C library opened on first use (dlopen(3)) rather than linked, for the libraries a daemon
/// may never need (`SQLiteLibrary`, `ImageLibraries`): one that is not used is never mapped.
/// Opened once by its soname and never closed.
struct SharedLibrary: @unchecked Sendable {  // a handle dlopen gave, never closed
    /// What the loader said when a library or one of its functions was not found.
    struct LoadFailure: Error {
        var message: String
    }

    let soname: String
    private let handle: UnsafeMutableRawPointer

    init(soname: String) throws(LoadFailure) {
        guard let handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL) else { throw Self.failure("cannot open \(soname)") }
        self.soname = soname
        self.handle = handle
    }

    /// The function `name` as `Function`, a C function pointer type of the library's header.
    func function<Function>(_ name: String) throws(LoadFailure) -> Function {
        guard let address = dlsym(handle, name) else { throw Self.failure("\(soname) has no \(name)") }
        return unsafeBitCast(address, to: Function.self)
    }

    private static func failure(_ what: String) -> LoadFailure {
        LoadFailure(message: dlerror().map { what + ": " + String(cString: $0) } ?? what)
    }
}
