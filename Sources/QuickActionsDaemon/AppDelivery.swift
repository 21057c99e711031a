import Contacts
import QuickActions
import QuickActionsProtocol
import Varlink

/// How a delivered action ended, as the waiting `Trigger` learns it.
enum AppDeliveryResult: Sendable, Equatable {
    case handled(Bool)
    case notResponding
    case appDisconnected
}

/// What `DaemonCore.trigger` decided. A `running` delivery is answered later by the
/// app, so the core hands back a stream to wait on *outside* the actor: a slow app
/// must never hold up other clients' calls.
enum TriggerDecision: Sendable {
    case replied(TriggerReply)
    case awaitingApp(TriggerReply, results: AsyncStream<AppDeliveryResult>)
}

/// The I/O half of app delivery, kept by `DaemonCore`: the pure state machine decides,
/// this holds the streams its decisions are carried out on.
struct AppDeliveryRuntime {
    typealias Replies = AsyncThrowingStream<VarlinkReply, any Error>.Continuation

    /// Replies queued for an app that does not read its `Connect` stream; beyond this a
    /// trigger fails with `AppNotResponding` at once instead of queueing without bound.
    static let maxQueuedRepliesPerApp = 16
    static let appBufferingPolicy = Replies.BufferingPolicy.bufferingOldest(maxQueuedRepliesPerApp)

    var machine: AppConnectionStateMachine
    var appStreams: [AppSessionID: Replies] = [:]
    var waitingTriggers: [String: AsyncStream<AppDeliveryResult>.Continuation] = [:]
    /// One per waiting trigger, cancelled when it ends some other way, so a high trigger rate
    /// with a long `ResponseTimeoutSec` leaves no sleeping tasks behind.
    var responseTimers: [String: Task<Void, Never>] = [:]
    var watchers = WatchBroadcaster()
    let launcher: LaunchCommandRunner

    init(logger: Logger) {
        // A prefix per daemon run, so tokens of a previous run never match.
        machine = AppConnectionStateMachine(tokenPrefix: String(UInt32.random(in: .min ... .max), radix: 16))
        launcher = LaunchCommandRunner(logger: logger)
    }
}

extension DaemonCore {
    var appConnected: Bool { app.machine.isAppConnected }

    // MARK: Connect

    /// An app process called `Connect`: it becomes the one app (a previous one is
    /// replaced), counts as launched, and its first reply carries the pending launch
    /// item, which is thereby consumed.
    func connectApp(appVersion: String?, replies: AppDeliveryRuntime.Replies) {
        guard case .acceptApp(let session, let replaced, let abandoned) = app.machine.handle(.appConnected) else { return }
        app.launcher.noteAppConnected()
        if let replaced, let previous = app.appStreams.removeValue(forKey: replaced) {
            logger.log(.notice, "A new app process connected (\(session)); ending \(replaced).")
            previous.finish(throwing: QuickActionsCallError.appReplaced.varlinkError)
        }
        finishTriggers(abandoned, with: .appDisconnected)

        state.recordLifecycleMessage(appVersion: appVersion)
        let pending = state.takePendingLaunchItem()
        persist()
        app.appStreams[session] = replies
        replies.onTermination = { _ in Task { await self.appStreamEnded(session) } }
        let first = ConnectReply(
            pendingItem: pending, contact: pending.flatMap(contact(for:)), stale: pending.map(state.isStale))
        logger.log(.info, "The app connected (\(session))\(pending.map { ", handing it the pending item '\($0.type)'" } ?? "").")
        let yielded = (try? VarlinkReply(encoding: first, continues: true)).map { replies.yield($0) }
        if case .terminated? = yielded {
            // The peer left before the stream was registered: no termination handler will
            // run, and the item it was to be handed still waits for an app.
            if let pending {
                state.restorePendingLaunchItem(pending)
                persist()
            }
            appStreamEnded(session)
        }
    }

    /// The app's `Connect` stream ended (connection closed, or replaced by a newer app).
    func appStreamEnded(_ session: AppSessionID) {
        perform(app.machine.handle(.appDisconnected(session)))
    }

    // MARK: Delivery

    /// Carries out a resolved trigger: to the connected app, or as the pending launch item.
    /// `QuickActionsState.trigger` already chose between the two with the same
    /// `appConnected` this asks the machine again, within the same actor turn.
    func deliver(_ resolution: TriggerResolution, reply: TriggerReply) -> TriggerDecision {
        var reply = reply
        switch app.machine.handle(.actionTriggered) {
        case .deliver(let token, let session):
            reply.token = token
            let (results, waiting) = AsyncStream<AppDeliveryResult>.makeStream(bufferingPolicy: .bufferingNewest(1))
            app.waitingTriggers[token] = waiting
            let action = ConnectReply(action: resolution.item, contact: resolution.contact, token: token, stale: resolution.stale)
            let yielded = (try? VarlinkReply(encoding: action, continues: true)).flatMap { app.appStreams[session]?.yield($0) }
            switch yielded {
            case .enqueued?:
                let timeout = settings.configuration.responseTimeout
                app.responseTimers[token] = Task {
                    try? await Task.sleep(for: timeout)
                    guard !Task.isCancelled else { return }
                    self.responseTimedOut(token: token)
                }
            case .terminated?:
                // The connection closed and its end has not reached us yet: the app is gone,
                // which fails this token (and any other in flight) with AppDisconnected.
                appStreamEnded(session)
            case .dropped?, nil:
                logger.log(.warning, "The app (\(session)) is not reading its actions; failing '\(token)'.")
                perform(app.machine.handle(.deliveryRefused(token: token)))
            @unknown default:
                perform(app.machine.handle(.deliveryRefused(token: token)))
            }
            return .awaitingApp(reply, results: results)
        case .launch:
            let launch = settings.configuration.launchCommand
            guard !launch.isEmpty else {
                reply.launchStatus = .notConfigured
                return .replied(reply)
            }
            let outcome = app.launcher.launch(LaunchRequest(
                command: launch, shortcutType: resolution.item.type,
                contactIdentifier: resolution.item.contactIdentifier, socketPath: socketPath))
            reply.launchStatus = outcome.status
            reply.launchPID = outcome.pid.map(Int.init)
            reply.launchError = outcome.error
            return .replied(reply)
        default:
            return .replied(reply)
        }
    }

    /// The app's `Complete(token, handled)`.
    func complete(_ parameters: CompleteParameters) throws(QuickActionsCallError) {
        let action = app.machine.handle(.completed(token: parameters.token, handled: parameters.handled))
        if case .rejectCompletion(let token) = action { throw .noSuchAction(token: token) }
        perform(action)
    }

    func responseTimedOut(token: String) {
        perform(app.machine.handle(.responseTimedOut(token: token)))
    }

    var responseTimeoutSeconds: Int {
        let components = settings.configuration.responseTimeout.components
        return Int(components.seconds) + (components.attoseconds > 0 ? 1 : 0)
    }

    private func perform(_ action: AppConnectionStateMachine.Action) {
        switch action {
        case .resumeTrigger(let token, let handled):
            finishTriggers([token], with: .handled(handled))
        case .failTrigger(let token, let failure):
            logger.log(.warning, "The app did not answer action '\(token)' (\(failure)).")
            finishTriggers([token], with: failure == .notResponding ? .notResponding : .appDisconnected)
        case .releaseApp(let session, let abandoned):
            app.appStreams[session] = nil
            logger.log(.info, "The app disconnected (\(session))\(abandoned.isEmpty ? "" : "; \(abandoned.count) actions in flight fail").")
            finishTriggers(abandoned, with: .appDisconnected)
        case .acceptApp, .deliver, .launch, .rejectCompletion, .none:
            break
        }
    }

    private func finishTriggers(_ tokens: [String], with result: AppDeliveryResult) {
        for token in tokens {
            app.responseTimers.removeValue(forKey: token)?.cancel()
            guard let waiting = app.waitingTriggers.removeValue(forKey: token) else { continue }
            waiting.yield(result)
            waiting.finish()
        }
    }

    private func contact(for item: ShortcutItem) -> Contact? {
        item.contactIdentifier.flatMap { index.contact(identifier: $0) }
    }

    // MARK: Watch

    /// A `Watch` call: the current set now, then one reply per change.
    func watch(replies: AppDeliveryRuntime.Replies) {
        guard let watcher = app.watchers.add(replies, current: currentListing(all: true)) else { return }
        replies.onTermination = { _ in Task { await self.watcherEnded(watcher) } }
    }

    func watcherEnded(_ watcher: UInt64) {
        app.watchers.remove(watcher)
    }

    var watcherCount: Int { app.watchers.count }

    /// Called after every state change (from `persist`), so no change can miss its watchers.
    func announceListingIfChanged() {
        guard app.watchers.count > 0 else { return }
        app.watchers.announce(currentListing(all: true))
    }
}
