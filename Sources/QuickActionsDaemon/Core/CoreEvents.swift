import QuickActions
import ServiceLifecycle

/// What reaches the core from outside a call — a timer that fired, a stream that ended, a
/// click in a launcher — queued on `DaemonCore.events` from whatever thread saw it, and carried
/// into the actor one at a time, in order, by `runEvents`: no task per timer or stream.
enum CoreEvent: Sendable {
    /// The app did not answer the action `token` within `ResponseTimeoutSec`.
    case responseTimedOut(token: String)
    /// `Recompute=change`: the settle delay of `round` passed.
    case settleElapsed(round: UInt64)
    /// A `Connect` call: its messages go to `messages` from now on.
    case appConnected(appVersion: String?, messages: AppMessages)
    /// The app's `Connect` stream ended (connection closed, or replaced by a newer app).
    case appStreamEnded(AppSessionID)
    /// A `Watch` call: the current set now, then one listing per change.
    case watchStarted(WatchBroadcaster.Listings)
    case watcherEnded(UInt64)
    /// A quicklist item was clicked in a dock.
    case chosenInLauncher(TriggerTarget)
    /// An `[Actions]` command or the `LaunchCommand` ended.
    case commandExited(CommandExit)
}

extension DaemonCore {
    /// Carries the queued events into the actor until the task is cancelled (the daemon stops)
    /// or `events` is finished. `CoreEventService` runs it as a service of the daemon's group.
    func runEvents() async {
        for await event in eventQueue {
            handle(event)
        }
    }

    private func handle(_ event: CoreEvent) {
        switch event {
        case .responseTimedOut(let token): perform(appMachine.handle(.responseTimedOut(token: token)))
        case .settleElapsed(let round): settleElapsed(round: round)
        case .appConnected(let appVersion, let messages): connectApp(appVersion: appVersion, messages: messages)
        case .appStreamEnded(let session): appStreamEnded(session)
        case .watchStarted(let listings): watch(listings)
        case .watcherEnded(let watcher): watchers.remove(watcher)
        case .chosenInLauncher(let target): triggerFromLauncher(target)
        case .commandExited(let exit): commandExited(exit)
        }
    }
}

/// The core's event queue as a service: it runs until the graceful shutdown.
struct CoreEventService: Service {
    let core: DaemonCore

    func run() async {
        await cancelWhenGracefulShutdown {
            await core.runEvents()
        }
    }
}
