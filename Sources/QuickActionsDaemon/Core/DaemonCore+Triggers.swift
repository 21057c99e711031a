import Contacts
import Logging
import QuickActions
import QuickActionsProtocol

extension DaemonCore {
    // MARK: Triggers

    /// Resolves a trigger (`QuickActionsState.trigger` counts it and decides between the
    /// connected app and a cold launch) and carries out its delivery. A `running` delivery
    /// is answered later by the app: the outcome carries a stream the caller waits on
    /// *outside* the actor, so a slow app never holds up other calls.
    func trigger(_ target: TriggerTarget) throws(QuickActionsCallError) -> TriggerOutcome {
        let index = self.index
        let resolution: TriggerResolution
        switch state.trigger(
            target, displayLimit: settings.configuration.displayLimit,
            contactLookup: { index.contact(identifier: $0) }, appConnected: appMachine.isAppConnected)
        {
        case .success(let resolved): resolution = resolved
        case .failure(.noSuchShortcut(let message)): throw .noSuchShortcut(message)
        case .failure(.contactRemoved(let identifier)): throw .contactRemoved(identifier: identifier)
        }
        persist()
        let contactIdentifier = resolution.contact?.identifier ?? ""
        logger.info("Triggered '\(resolution.item.type)'\(contactIdentifier.isEmpty ? "" : " for contact '\(contactIdentifier)'"), delivery \(resolution.delivery.rawValue).",
                    metadata: ["QACTD_SHORTCUT_TYPE": .string(resolution.item.type), "QACTD_CONTACT_ID": .string(contactIdentifier)])
        var delivered = resolution
        delivered.item = forTheApp(resolution.item)
        return TriggerOutcome(resolution: delivered, delivery: deliver(delivered))
    }

    /// An item as the app and the caller see it: a static item's title and subtitle in the
    /// daemon's language, as `List` shows them (iOS hands the app `localizedTitle`). The state
    /// keeps the keys — the pending launch item too — so a later language applies on delivery.
    /// Only the static items' titles are keys: a favorite's title is a name, never looked up.
    func forTheApp(_ item: ShortcutItem) -> ShortcutItem {
        guard state.staticItems.contains(item) else { return item }
        return settings.localization.localizing(item, for: settings.language)
    }

    /// A launcher's menu item was chosen (a click in the quicklist): the same path as `Trigger`,
    /// to the connected app or as the pending launch item with the `LaunchCommand` started.
    /// Nobody waits on the bus for the app's answer; it is logged when it comes.
    func triggerFromLauncher(_ target: TriggerTarget) {
        let outcome: TriggerOutcome
        do {
            outcome = try trigger(target)
        } catch {
            logger.warning("A quick action chosen in a launcher could not be triggered: \(error.description)")
            return
        }
        // Nobody waits for the app's answer here; `finishTriggers` logs it.
        guard case .running(let token, _) = outcome.delivery else { return }
        launcherTokens.insert(token)
    }

    /// The app's `Complete(token, handled)`.
    func complete(token: String, handled: Bool) throws(QuickActionsCallError) {
        let action = appMachine.handle(.completed(token: token, handled: handled))
        if case .rejectCompletion(let token) = action { throw .noSuchAction(token: token) }
        perform(action)
    }

    /// To the connected app (asking the machine again, within the same actor turn as the
    /// resolution), or as the pending launch item with the `LaunchCommand` started.
    func deliver(_ resolution: TriggerResolution) -> TriggerOutcome.Delivery {
        switch appMachine.handle(.actionTriggered) {
        case .deliver(let token, let session):
            let (results, waiting) = AsyncStream<AppDeliveryResult>.makeStream(bufferingPolicy: .bufferingNewest(1))
            waitingTriggers[token] = waiting
            let message = AppMessage.perform(resolution.item, contact: resolution.contact, token: token, stale: resolution.stale)
            switch appStreams[session]?.yield(message) {
            case .enqueued?:
                responseTimers[token] = EventLoopExecution.schedule(in: settings.configuration.responseTimeout) { [events] in
                    events.yield(.responseTimedOut(token: token))
                }
            case .terminated?:
                // The connection closed and its end has not reached us yet: the app is gone,
                // which fails this token (and any other in flight) with AppDisconnected.
                appStreamEnded(session)
            case .dropped?, nil:
                logger.warning("The app (\(session)) is not reading its actions; failing '\(token)'.")
                perform(appMachine.handle(.deliveryRefused(token: token)))
            @unknown default:
                perform(appMachine.handle(.deliveryRefused(token: token)))
            }
            return .running(token: token, results: results)
        case .launch:
            let command = settings.configuration.launchCommand
            guard !command.isEmpty else { return .launch(nil) }
            return .launch(launcher.launch(LaunchRequest(
                command: command, shortcutType: resolution.item.type,
                contactIdentifier: resolution.item.contactIdentifier, socketPath: socketPath)))
        default:
            return .launch(nil)
        }
    }

    func responseTimedOut(token: String) {
        perform(appMachine.handle(.responseTimedOut(token: token)))
    }

    func perform(_ action: AppConnectionStateMachine.Action) {
        switch action {
        case .resumeTrigger(let token, let handled):
            finishTriggers([token], with: .handled(handled))
        case .failTrigger(let token, let failure):
            logger.warning("The app did not answer action '\(token)' (\(failure)).")
            finishTriggers([token], with: failure == .notResponding ? .notResponding : .appDisconnected)
        case .releaseApp(let session, let abandoned):
            appStreams[session] = nil
            logger.info("The app disconnected (\(session))\(abandoned.isEmpty ? "" : "; \(abandoned.count) actions in flight fail").")
            finishTriggers(abandoned, with: .appDisconnected)
        case .acceptApp, .deliver, .launch, .rejectCompletion, .none:
            break
        }
    }

    func finishTriggers(_ tokens: [String], with result: AppDeliveryResult) {
        for token in tokens {
            responseTimers.removeValue(forKey: token)?.cancel()
            if launcherTokens.remove(token) != nil {
                logger.debug("The app answered the launcher's action '\(token)': \(result).")
            }
            guard let waiting = waitingTriggers.removeValue(forKey: token) else { continue }
            waiting.yield(result)
            waiting.finish()
        }
    }
}
