import Glibc
import SystemCalls
// SOCK_STREAM & co.: Glibc's module leaves <bits/socket_type.h> to the module that includes it
// first, which for this target is CSystemd (sd-daemon.h).
import CSystemd

/// How each of the daemon's own threads (each a `MailboxThread`) sleeps: in `poll` on its own
/// descriptors plus this socket pair's reading end, which another thread writes to when it
/// has queued work for it (Glibc offers no `eventfd` to Swift).
/// `sleep(polling:timeoutMilliseconds:)` is that one sleep, for every such thread.
struct WakeUpSocket: Sendable {
    /// The end the sleeping thread polls.
    let receiver: Int32
    private let sender: Int32

    /// Throws when the pair cannot be created: the thread then does not start (see `MailboxThread.start`).
    init() throws(SystemCallError) {
        var pair: [Int32] = [-1, -1]
        let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        try retryingSystemCall("socketpair", { socketpair(AF_UNIX, flags, 0, &pair) })
        receiver = pair[0]
        sender = pair[1]
    }

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

    /// Sleeps in `poll` until one of `descriptors` is ready, another thread calls `wake()`, or
    /// `timeoutMilliseconds` pass (-1: no limit). Fills in each descriptor's `revents`, drains
    /// the wake-ups, and returns `poll`'s result and its errno (0 when it succeeded).
    @discardableResult
    func sleep(polling descriptors: inout [pollfd], timeoutMilliseconds: Int32) -> (ready: Int32, errno: Int32) {
        var all = descriptors
        all.append(pollfd(fd: receiver, events: Int16(POLLIN), revents: 0))
        let ready = poll(&all, nfds_t(all.count), timeoutMilliseconds)
        let error = ready < 0 ? errno : 0
        if ready > 0, let own = all.last, own.revents != 0 { drain() }
        for index in descriptors.indices { descriptors[index].revents = all[index].revents }
        return (ready, error)
    }

    /// `poll`'s timeout for sleeping until `deadline` (rounded up, so the sleeper wakes after it,
    /// not just before); -1 without one.
    static func milliseconds(until deadline: ContinuousClock.Instant?) -> Int32 {
        guard let deadline else { return -1 }
        let remaining = deadline - .now
        guard remaining > .zero else { return 0 }
        let left = remaining.components
        let milliseconds = left.seconds * 1000 + (left.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }

    func close() {
        Glibc.close(receiver)
        Glibc.close(sender)
    }
}
