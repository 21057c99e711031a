import Glibc
import SystemCalls

/// Starts a program the way every command of the daemon is started: `posix_spawnp` with the
/// argv as given (no shell), stdin from /dev/null, signals reset, a session of its own, and
/// no descriptor of the daemon's but stdout and stderr (or the stderr given).
enum ProcessSpawner {
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, CInt) -> CInt

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34+), looked up at run time because
    /// <spawn.h> declares it only under `_GNU_SOURCE`, which the Swift Glibc module is built without.
    /// On an older glibc it is missing and the app inherits the descriptors, as before.
    private static let addCloseFrom: AddCloseFrom? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()

    static func spawn(_ argv: [String], environment: [String], standardError: Int32? = nil) throws(SystemCallError) -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The daemon ignores SIGTERM/SIGINT/SIGHUP (it reads them from a signal source) and
        // ignored signals survive exec: without a reset the app could not be stopped politely.
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signalNumber in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD, SIGQUIT, SIGUSR1, SIGUSR2] {
            sigaddset(&defaults, signalNumber)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        // A session of its own: stopping the daemon's terminal or process group must not take the app with it.
        let setSessionFlag: Int32 = 0x80  // POSIX_SPAWN_SETSID (glibc), hidden behind _GNU_SOURCE
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | setSessionFlag))

        var fileActions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&fileActions)
        defer { posix_spawn_file_actions_destroy(&fileActions) }
        // The daemon's stdin is nothing the app should read; stdout and stderr go where the daemon's go (the journal).
        posix_spawn_file_actions_addopen(&fileActions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        if let standardError { posix_spawn_file_actions_adddup2(&fileActions, standardError, STDERR_FILENO) }
        // SwiftNIO accepts connections and creates its epoll descriptors without close-on-exec:
        // an app that inherited them would hold clients' connections half-open across the
        // daemon's stops and restarts. Everything above stderr is closed in the child.
        if let addCloseFrom = Self.addCloseFrom {
            _ = addCloseFrom(&fileActions, STDERR_FILENO + 1)
        }

        let arguments = argv.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in arguments { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, argv[0], &fileActions, &attributes, arguments, envp)
        // posix_spawn reports its error as the return value, not in errno.
        guard result == 0 else { throw SystemCallError(call: "posix_spawnp", path: argv[0], errno: result) }
        return pid
    }
}
