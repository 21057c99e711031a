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
        let actions = settings.configuration.actions
        // Counted only once it is certain to go somewhere: a refused command changes nothing.
        var next = state
        let resolution: TriggerResolution
        switch next.trigger(
            target, displayLimit: settings.configuration.displayLimit,
            contactLookup: { index.contact(identifier: $0) }, appConnected: appMachine.isAppConnected,
            runsCommand: { actions[$0] != nil }, at: wallClock())
        {
        case .success(let resolved): resolution = resolved
        case .failure(.noSuchShortcut(let message)): throw .noSuchShortcut(message)
        case .failure(.contactRemoved(let identifier)):
            let title = state.dynamicItems.first { $0.contactIdentifier == identifier }?.title ?? identifier
            logger.warning("A quick action for contact '\(identifier)' was chosen, but the contact was removed.")
            notify(.contactRemoved(title))
            throw .contactRemoved(identifier: identifier)
        }
        return try carryOut(resolution, counted: next)
    }

    /// A resolved trigger carried out: its command expanded (or refused, which changes nothing),
    /// then `counted`, the state that counts it, kept and persisted, and the item delivered.
    func carryOut(_ resolution: TriggerResolution, counted next: QuickActionsState) throws(QuickActionsCallError) -> TriggerOutcome {
        let actions = settings.configuration.actions
        var delivered = resolution
        delivered.item = forTheApp(resolution.item)
        // Only a command or a launch uses the values ({file} may mean writing a card's copy).
        let prepared = resolution.delivery == .running ? nil : itemValues(delivered)
        let values = prepared?.values
        var argv: [String] = []
        var admitted: UInt64?
        if resolution.delivery == .command, let template = actions[resolution.item.type], let values {
            /// Nothing runs, and the person is told why.
            func refused(_ reason: String) -> QuickActionsCallError {
                logger.warning("Refused to run the command of '\(resolution.item.type)': \(reason).",
                               metadata: ["QACTD_SHORTCUT_TYPE": .string(resolution.item.type), "QACTD_CONTACT_ID": .string(values.identifier)])
                notify(.refused(delivered.item.title, reason: reason))
                return .commandRefused(reason)
            }
            // A card the command names but that cannot be provided: nothing runs, rather than an
            // argv without it.
            if template.fields.contains(.file), let problem = prepared?.cardProblem {
                throw refused("the contact's card cannot be handed to it (\(problem))")
            }
            switch template.expand(values) {
            case .success(let expanded): argv = expanded
            case .failure(let refusal): throw refused(refusal.description)
            }
            let limit = settings.configuration.maxRunningCommands
            switch runningCommands.handle(.requested(limit: limit)) {
            case .start(let id): admitted = id
            case .refuse(let running, let limit):
                throw refused("\(running) commands of quick actions are still running, as many as [Commands] MaxRunning=\(limit) allows")
            case .none: break
            }
        }
        state = next
        persist()
        // With Recompute=change the set follows the favorites' order by use as it does their edits.
        if resolution.item.contactIdentifier != nil, settings.configuration.favoriteOrder == .usage { scheduleRecomputeIfFollowingContacts() }
        let contactIdentifier = resolution.contact?.identifier ?? ""
        logger.info("Triggered '\(resolution.item.type)'\(contactIdentifier.isEmpty ? "" : " for contact '\(contactIdentifier)'"), delivery \(resolution.delivery.rawValue).",
                    metadata: ["QACTD_SHORTCUT_TYPE": .string(resolution.item.type), "QACTD_CONTACT_ID": .string(contactIdentifier)])
        return TriggerOutcome(resolution: delivered, delivery: deliver(delivered, command: argv, commandID: admitted, values: values))
    }

    /// The values an item's command and the `LaunchCommand` get: the item as the app sees it,
    /// its contact, and the contact's whole card (`ContactCards`); `cardProblem` says why there
    /// is no card when the contact has one that could not be provided.
    func itemValues(_ resolution: TriggerResolution) -> (values: CommandTemplateValues, cardProblem: String?) {
        let item = resolution.item
        var values = CommandTemplateValues(
            identifier: resolution.contact?.identifier ?? item.contactIdentifier ?? "", title: item.title,
            subtitle: item.subtitle ?? "", type: item.type)
        guard let contact = resolution.contact else { return (values, nil) }
        values.name = contact.name
        values.email = contact.email ?? ""
        let source = cardSource(of: contact)
        do {
            values.file = try ContactCards.file(for: contact, from: source, besideSocket: socketPath, instance: instance)
            return (values, nil)
        } catch {
            logger.warning("Could not provide the card of contact '\(contact.identifier)': \(error).",
                           metadata: ["QACTD_CONTACT_ID": .string(contact.identifier)])
            return (values, error.description)
        }
    }

    /// Where the whole card of `contact` is: its vCard file (the file itself when it holds only
    /// this card), its Evolution row, or nothing of its own (a JSON contact).
    func cardSource(of contact: Contact) -> ContactCardSource {
        guard let path = index.filePath(identifier: contact.identifier) else {
            return .unavailable("the contact is not in the index")
        }
        if let (book, uid) = EvolutionCards.bookAndUID(ofPath: path) {
            do {
                // On the actor: a book EDS holds locked is waited for briefly, not the watcher's full second.
                guard let card = try EvolutionBookReader.card(
                    database: evolutionLocation.database(forSource: book), uid: uid, busyTimeoutMilliseconds: 200)
                else {
                    return .unavailable("address book '\(book)' no longer holds it")
                }
                return .text(card)
            } catch {
                return .unavailable("address book '\(book)' cannot be read: \(error)")
            }
        }
        guard ContactFileKind.classify(fileName: ContactFileKind.fileName(ofPath: path)) == .vcard else { return .written }
        guard case .success(let cards)? = index.entry(path: path),
              let position = cards.firstIndex(where: { $0.identifier == contact.identifier })
        else { return .unavailable("'\(path)' does not hold it any more") }
        return cards.count == 1 ? .ownFile(path) : .cardInFile(path: path, position: position)
    }

    /// A failure a person should see: logged by the caller, shown unless `Notifications=off`.
    func notify(_ notice: FailureNotice) {
        guard settings.configuration.notifications != .off else { return }
        feedback.show(DesktopNotifier.Request(notice: notice, desktopFile: settings.configuration.launcherDesktopFile))
    }

    /// A command the core started has ended: logged with its item (and its unit, when it ran in
    /// one); a failure is shown.
    func commandExited(_ exit: CommandExit) {
        var metadata = exit.place.metadata(type: exit.item.type)
        if let contact = exit.item.contactIdentifier { metadata["QACTD_CONTACT_ID"] = .string(contact) }
        switch exit.kind {
        case .action(let id):
            _ = runningCommands.handle(.ended(id: id))
            let said = exit.standardErrorTail.isEmpty ? "" : "; its stderr ended with: \(exit.standardErrorTail.suffix(512))"
            let message = "The command '\(exit.program)' of '\(exit.item.type)' (\(exit.place)) \(exit.ending)\(said.isEmpty ? "." : said)"
            if exit.failed {
                logger.warning("\(message)", metadata: metadata)
                notify(.commandFailed(exit.item.title, exit: exit))
            } else {
                logger.info("\(message)", metadata: metadata)
            }
        case .launch(let connected):
            // An app that connected and later ended with an error is the app's business.
            guard exit.failed, !connected else { return }
            logger.warning("The launch command '\(exit.program)' (\(exit.place)) \(exit.ending) before an app connected.", metadata: metadata)
            notify(.commandFailed(exit.item.title, exit: exit))
        }
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
    func deliver(
        _ resolution: TriggerResolution, command: [String] = [], commandID: UInt64? = nil, values known: CommandTemplateValues? = nil
    ) -> TriggerOutcome.Delivery {
        // What the command or the LaunchCommand finds in its environment; made only for them.
        func launchRequest() -> (LaunchRequest, CommandTemplateValues) {
            let values = known ?? itemValues(resolution).values
            let request = LaunchRequest(
                command: settings.configuration.launchCommand, shortcutType: resolution.item.type,
                contactIdentifier: resolution.item.contactIdentifier, socketPath: socketPath, shortcutTitle: values.title,
                contactName: resolution.contact?.name, contactEmail: resolution.contact?.email,
                contactFile: values.file.isEmpty ? nil : values.file)
            return (request, values)
        }
        if resolution.delivery == .command {
            guard let id = commandID else { return .command(CommandOutcome(program: command.first ?? "", error: "no command was admitted")) }
            let (request, values) = launchRequest()
            let item = CommandItem(type: resolution.item.type, title: values.title, contactIdentifier: resolution.item.contactIdentifier)
            // Without a shell (the argv the template was expanded to), the item's values also in
            // the environment; started directly, its stderr's last few KiB are kept for the log.
            let started = commandStarter.start(
                command, request: request, description: "Quick action “\(item.title)” (\(command[0]))", readingStandardError: true
            ) { [events] place, end in
                events.yield(.commandExited(CommandExit(kind: .action(id: id), place: place, program: command[0], item: item, end: end)))
            }
            switch started {
            case .success(let place):
                logger.info("Started the command '\(command[0])' of '\(item.type)' (\(place)).", metadata: place.metadata(type: item.type))
                return .command(CommandOutcome(program: command[0], place: place))
            case .failure(let error):
                _ = runningCommands.handle(.couldNotStart(id: id))
                logger.warning("Could not start the command '\(command[0])' of '\(item.type)': \(error).",
                               metadata: ["QACTD_SHORTCUT_TYPE": .string(item.type)])
                notify(.commandNotStarted(values.title, program: command[0], error: error, launch: false))
                return .command(CommandOutcome(program: command[0], error: error.description))
            }
        }
        switch appMachine.handle(.actionTriggered) {
        case .deliver(let token, let session):
            let (results, waiting) = AsyncStream<AppDeliveryResult>.makeStream(bufferingPolicy: .bufferingNewest(1))
            waitingTriggers[token] = waiting
            let message = AppMessage.perform(resolution.item, contact: resolution.contact, token: token, stale: resolution.stale)
            deliveredTitles[token] = resolution.item.title
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
            guard !settings.configuration.launchCommand.isEmpty else { return .launch(nil) }
            let (request, values) = launchRequest()
            let outcome = launcher.launch(request)
            if outcome.status == .failed, let error = outcome.spawnError {
                notify(.commandNotStarted(values.title, program: request.command[0], error: error, launch: true))
            }
            return .launch(outcome)
        default:
            return .launch(nil)
        }
    }

    func perform(_ action: AppConnectionStateMachine.Action) {
        switch action {
        case .resumeTrigger(let token, let handled):
            if !handled, let title = deliveredTitles[token] {
                logger.warning("The app did not handle action '\(token)' ('\(title)').")
                notify(.notHandled(title))
            }
            finishTriggers([token], with: .handled(handled))
        case .failTrigger(let token, let failure):
            logger.warning("The app did not answer action '\(token)' (\(failure)).")
            if failure == .notResponding, let title = deliveredTitles[token] {
                notify(.notResponding(title, seconds: responseTimeoutSeconds))
            }
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
            deliveredTitles[token] = nil
            if launcherTokens.remove(token) != nil {
                logger.debug("The app answered the launcher's action '\(token)': \(result).")
            }
            guard let waiting = waitingTriggers.removeValue(forKey: token) else { continue }
            waiting.yield(result)
            waiting.finish()
        }
    }
}
