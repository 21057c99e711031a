import Logging
import ServiceLifecycle
import UnixSignals

// The daemon's long-lived parts as services of a `ServiceGroup` (see `Daemon.start`). The
// group starts them together and, on a graceful shutdown, stops them one at a time in
// reverse order, each only after the one before has returned.

/// A part started during start-up (the socket, the watcher, the core's state): it runs until
/// the graceful shutdown, then `stop` ends it.
struct StartedPart: Service {
    let stop: @Sendable () async -> Void

    func run() async {
        // Returns on the graceful shutdown, throws when cancelled: the part is stopped either way.
        try? await gracefulShutdown()
        await stop()
    }
}

/// Tells systemd: READY=1 with the status line when the daemon runs (start-up is over before
/// the group starts), STOPPING=1 as the first step of a graceful shutdown.
struct ReadinessReporter: Service {
    let core: DaemonCore
    let notifier: any ServiceManagerNotifier
    let logger: Logger
    /// Work kept out of start-up's way, begun once READY=1 is sent.
    var whenReady: @Sendable () async -> Void = {}

    func run() async {
        let statusLine = await core.statusLine()
        notifier.notify(.ready, .status(statusLine))
        logger.notice("Started: \(statusLine).")
        await whenReady()
        try? await gracefulShutdown()
        notifier.notify(.stopping)
        logger.notice("Stopping.")
    }
}

/// Reloads on each SIGHUP until the graceful shutdown; a reload under way then finishes first.
struct ReloadOnHangup: Service {
    let hangups: UnixSignalsSequence
    let reload: @Sendable () async -> Void

    func run() async {
        // Not `hangups.cancelOnGracefulShutdown()`: that merges two sequences through a task of
        // its own on Swift's default executor, which would keep an idle daemon waking (see
        // `EventLoopExecution`). Cancelling ends the wait for the next signal; a reload under way
        // observes no cancellation and finishes first.
        await cancelWhenGracefulShutdown {
            for await _ in hangups {
                await reload()
            }
        }
    }
}

/// Pings WATCHDOG=1 every `interval` (half of `WatchdogSec=`), but only after `isHealthy` has
/// answered true: the daemon asks its core actor and a socket event loop, so a wedged daemon
/// stops pinging and systemd restarts it.
struct WatchdogPinger: Service {
    let interval: Duration
    let notifier: any ServiceManagerNotifier
    /// An event loop's timer (`EventLoopExecution.sleep`); tests drive a clock of their own.
    var sleep: @Sendable (Duration) async throws -> Void = { try await EventLoopExecution.sleep(for: $0) }
    let isHealthy: @Sendable () async -> Bool

    func run() async {
        await cancelWhenGracefulShutdown {
            while true {
                do {
                    try await sleep(interval)
                } catch {
                    return  // cancelled: the daemon is stopping
                }
                if await isHealthy() { notifier.notify(.watchdog) }
            }
        }
    }
}
