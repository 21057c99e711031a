#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
// SOCK_STREAM & co.: Glibc's module leaves <bits/socket_type.h> to the module that includes it
// first, which for this target is CSystemd (sd-daemon.h).
import CSystemd

/// Wakes a thread blocked in `poll` (the watcher's, the session bus's) when another thread has
/// queued work for it: a non-blocking socket pair whose reading end the thread polls beside its
/// own descriptors (Glibc offers no `eventfd` to Swift).
struct WakeUpSocket: Sendable {
    /// The end the sleeping thread polls; -1 when the pair could not be created.
    let receiver: Int32
    private let sender: Int32

    /// Throws when the pair cannot be created; `unavailable` then stands in, and the thread
    /// must poll with a short timeout instead.
    init() throws(SystemCallError) {
        var pair: [Int32] = [-1, -1]
        let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        try retryingSystemCall("socketpair", { socketpair(AF_UNIX, flags, 0, &pair) })
        receiver = pair[0]
        sender = pair[1]
    }

    private init(unavailable: Void) {
        receiver = -1
        sender = -1
    }

    static let unavailable = WakeUpSocket(unavailable: ())

    var isAvailable: Bool { receiver >= 0 }

    func wake() {
        var byte: UInt8 = 1
        // A full socket already holds a wake-up; EAGAIN is fine.
        _ = send(sender, &byte, 1, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
    }

    /// Reads every pending wake-up, so the next `poll` sleeps again.
    func drain() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while bytes.withUnsafeMutableBytes({ recv(receiver, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
    }

    func close() {
        if receiver >= 0 { Glibc.close(receiver) }
        if sender >= 0 { Glibc.close(sender) }
    }
}
