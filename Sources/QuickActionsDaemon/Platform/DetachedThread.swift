import CLinux
import SystemCalls

import Glibc

/// Runs `body` on a detached thread of its own named `name` (as `ps -L` and `top -H` show
/// it). For work that blocks in the kernel for long — `poll` on inotify, `waitpid` on a
/// launched app — and so must not hold one of the few threads Swift's async work runs on.
func startDetachedThread(named name: String, _ body: @escaping @Sendable () -> Void) throws(SystemCallError) {
    let context = Unmanaged.passRetained(ThreadStart(name: name, body: body)).toOpaque()
    var thread = pthread_t()
    let created = pthread_create(&thread, nil, { raw in
        guard let raw else { return nil }
        let start = Unmanaged<ThreadStart>.fromOpaque(raw).takeRetainedValue()
        // Linux keeps 15 bytes of a thread name; a longer one would be refused whole.
        _ = CLinux_setCurrentThreadName(String(start.name.utf8.prefix(15)) ?? "qactd")
        start.body()
        return nil
    }, context)
    guard created == 0 else {
        Unmanaged<ThreadStart>.fromOpaque(context).release()
        throw SystemCallError(call: "pthread_create", errno: created)
    }
    pthread_detach(thread)
}

/// What the new thread needs, passed through `pthread_create`'s context pointer.
private final class ThreadStart: Sendable {
    let name: String
    let body: @Sendable () -> Void

    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }
}
