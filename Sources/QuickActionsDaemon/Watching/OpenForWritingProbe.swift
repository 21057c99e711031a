import Glibc
import CLinux
import SystemCalls

/// Tells whether any process has a file open for writing, using a file lease: the kernel
/// refuses a read lease (`F_SETLEASE`, `F_RDLCK`) with `EAGAIN` exactly then, and while the
/// lease is held nobody can open the file for writing (the opener waits until it is
/// released, which closing the descriptor does).
///
/// Why: a contact file must never be parsed half-written. Reading under the lease makes the
/// check and the read one step: no writer can slip in between. And `IN_CREATE` comes both for
/// a file that a writer has just created (and is still writing — it will get
/// `IN_CLOSE_WRITE`) and for a hard link to a finished file (khard and `ln` save this way, and
/// no other event follows): only the second may be read at once.
enum OpenForWritingProbe {
    /// Takes a read lease on an open descriptor (`O_RDONLY`). false: no writer, and the lease
    /// is held until the descriptor is closed; true: some process has the file open for
    /// writing; nil: leases are not available here (a file of another user without
    /// CAP_LEASE, a file system without leases).
    static func acquireReadLease(_ descriptor: Int32) -> Bool? {
        // Should a writer open the file while the lease is held, the kernel signals the
        // holder: SIGURG is ignored by default, where the default SIGIO would end the daemon.
        guard fcntl(descriptor, CLinux_F_SETSIG, SIGURG) == 0 else { return nil }
        if fcntl(descriptor, CLinux_F_SETLEASE, Int32(F_RDLCK)) == 0 { return false }
        return errno == EAGAIN ? true : nil
    }

    /// Whether `path` is open for writing right now (the probe alone, no read).
    static func isOpenForWriting(_ path: String, acquire: WriterProbe = acquireReadLease) -> Bool? {
        guard let descriptor = try? retryingSystemCall("open", path: path, {
            open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        }) else { return nil }
        defer { close(descriptor) }
        return acquire(descriptor)
    }
}

/// `OpenForWritingProbe.acquireReadLease`, injectable: the one place the probe is made, so
/// tests can reproduce a writer that the kernel still counts after its `IN_CLOSE_WRITE`.
typealias WriterProbe = @Sendable (_ descriptor: Int32) -> Bool?
