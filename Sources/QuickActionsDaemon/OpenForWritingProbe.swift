#if canImport(Glibc)
import Glibc
#endif

/// Tells whether any process has a file open for writing, using a file lease: the kernel
/// refuses a read lease (`F_SETLEASE`, `F_RDLCK`) with `EAGAIN` exactly then.
///
/// Why: `IN_CREATE` comes both for a file that a writer has just created (and is still
/// writing — it will get `IN_CLOSE_WRITE`) and for a hard link to a finished file (khard
/// and `ln` save this way, and no other event follows). Only the second may be read at once.
enum OpenForWritingProbe {
    // Linux-specific fcntl commands that Glibc does not export to Swift (<linux/fcntl.h>).
    private static let setLease: Int32 = 1024  // F_SETLEASE
    private static let setSignal: Int32 = 10  // F_SETSIG

    /// True or false when the kernel could tell; nil when leases are not available here
    /// (a file of another user without CAP_LEASE, a file system without leases).
    static func isOpenForWriting(_ path: String) -> Bool? {
        guard let descriptor = try? retryingSystemCall("open", path: path, {
            open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        }) else { return nil }
        defer { close(descriptor) }
        // Should a writer open the file in the instant the lease is held, the kernel signals
        // the holder: SIGURG is ignored by default, where the default SIGIO would end the daemon.
        guard fcntl(descriptor, setSignal, SIGURG) == 0 else { return nil }
        if fcntl(descriptor, setLease, Int32(F_RDLCK)) == 0 {
            _ = fcntl(descriptor, setLease, Int32(F_UNLCK))
            return false
        }
        return errno == EAGAIN ? true : nil
    }
}
