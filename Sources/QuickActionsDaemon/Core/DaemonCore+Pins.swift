import Contacts
import Logging
import QuickActions
import QuickActionsProtocol

extension DaemonCore {
    // MARK: Pins

    /// Pins the item `target` names (as `Trigger` names it) as a launcher of its own. The pin
    /// is persisted with the state; the desktop-entry writer writes its launcher.
    func pin(_ target: TriggerTarget) throws(QuickActionsCallError) -> PinnedItemInfo {
        guard settings.configuration.launcherDesktopFileID != nil else {
            throw .pinningUnavailable("Nothing can be pinned: [Launcher] DesktopFile= is empty, so there is no app to pin for.")
        }
        let item: ShortcutItem
        switch state.select(target, displayLimit: settings.configuration.displayLimit) {
        case .success(let listed): item = listed.item
        case .failure(let error): throw .noSuchShortcut(error.description)
        }
        if let identifier = item.contactIdentifier, index.contact(identifier: identifier) == nil {
            throw .contactRemoved(identifier: identifier)
        }
        let identifier = PinnedItem.identifier(for: item)
        try handlePins(.pin(item))
        guard let pinned = state.pinBoard.pin(identifier: identifier) else { throw .noSuchPin(identifier) }
        return info(pinned)
    }

    /// Removes one pin (by identifier, or by its 1-based position in `pins()`), or all of them;
    /// their launchers go with the next publication. Returns the identifiers removed.
    func unpin(identifier: String?, position: Int?, all: Bool) throws(QuickActionsCallError) -> [String] {
        let event: PinBoard.Event
        switch (identifier, position, all) {
        case (nil, nil, true): event = .unpinAll
        case (let identifier?, nil, false): event = .unpin(identifier: identifier)
        case (nil, let position?, false):
            let pins = state.pinBoard.pins
            guard position >= 1, position <= pins.count else { throw .noSuchPin(String(position)) }
            event = .unpin(identifier: pins[position - 1].identifier)
        case (nil, nil, false): throw .invalidParameter(name: "identifier")
        default: throw .invalidParameter(name: "all")
        }
        return try handlePins(event).compactMap { if case .remove(let identifier) = $0 { identifier } else { nil } }
    }

    func pins() -> [PinnedItemInfo] {
        state.pinBoard.pins.map(info)
    }

    /// A pinned launcher was chosen: the item behind the pin as it is now, delivered as a
    /// trigger is. A pin whose item is gone triggers nothing: the person is told why.
    func triggerPinned(_ identifier: String) throws(QuickActionsCallError) -> TriggerOutcome {
        refreshPins()
        guard let pin = state.pinBoard.pin(identifier: identifier) else { throw .noSuchPin(identifier) }
        let index = self.index
        guard pin.state == .enabled,
              let resolved = state.resolvedPins(
                contactLookup: { index.contact(identifier: $0) }, configuration: settings.dynamicItemConfiguration)[identifier]
        else {
            let title = shown(pin.item).title
            logger.warning("The pinned quick action '\(identifier)' was chosen, but it is disabled: \(pin.disabledMessage)",
                           metadata: ["QACTD_PIN": .string(identifier)])
            notify(FailureNotice(chosen: title, problem: pin.disabledMessage))
            throw .pinDisabled(identifier: identifier, message: pin.disabledMessage)
        }
        let actions = settings.configuration.actions
        var next = state
        let resolution = next.triggerPinned(
            resolved.item, contact: resolved.contact, appConnected: appMachine.isAppConnected, runsCommand: { actions[$0] != nil },
            at: wallClock())
        return try carryOut(resolution, counted: next)
    }

    /// Brings every pin in step with the contacts and static items: a renamed contact renames
    /// it, a removed one disables it, one that comes back enables it again. Called after each
    /// change of the index and of the settings; pins are few, so each is looked up.
    func refreshPins() {
        guard pinsFollowContacts, !state.pinBoard.pins.isEmpty else { return }
        let index = self.index
        let resolved = state.resolvedPins(
            contactLookup: { index.contact(identifier: $0) }, configuration: settings.dynamicItemConfiguration)
        _ = try? handlePins(.itemsResolved(resolved.mapValues(\.item)))
    }

    /// Start-up holds the pins as restored until every contact source was read once; then
    /// they follow the index.
    func followContactsWithPins(_ following: Bool) {
        pinsFollowContacts = following
        refreshPins()
    }

    /// Started without a state (none yet, or moved aside as corrupt): the pins the launchers in
    /// the exports folder say they are become the board's, so no pin the person made is lost
    /// with the state. Called before the first publication, which would otherwise remove them.
    func adoptPins(_ found: [PinnedItem]) {
        guard settings.configuration.launcherDesktopFileID != nil, !found.isEmpty else { return }
        let adopted = (try? handlePins(.adopt(found))) ?? []
        guard !adopted.isEmpty else { return }
        logger.notice("Started without a state: took back \(adopted.count) pinned quick actions from their launchers.")
    }

    /// Removing the app (`DesktopFile=` emptied) removes its pins: they launch nothing any more.
    func dropPinsWithoutApp() {
        guard settings.configuration.launcherDesktopFileID == nil, !state.pinBoard.pins.isEmpty else { return }
        logger.notice("[Launcher] DesktopFile= is empty: removing the \(state.pinBoard.pins.count) pinned quick actions.")
        _ = try? handlePins(.unpinAll)
    }

    /// One transition of the pin board; what changed is logged, persisted and published.
    @discardableResult
    private func handlePins(_ event: PinBoard.Event) throws(QuickActionsCallError) -> [PinBoard.Action] {
        var board = state.pinBoard
        let actions: [PinBoard.Action]
        switch board.handle(event) {
        case .success(let done): actions = done
        case .failure(.noSuchPin(let identifier)): throw .noSuchPin(identifier)
        }
        guard !actions.isEmpty else { return [] }
        state.pinBoard = board
        for action in actions {
            switch action {
            case .write(let pin):
                logger.info("Pinned quick action '\(pin.identifier)' (\(pin.item.title)) is \(pin.state.rawValue).",
                            metadata: ["QACTD_PIN": .string(pin.identifier)])
            case .remove(let identifier):
                logger.info("Unpinned quick action '\(identifier)'.", metadata: ["QACTD_PIN": .string(identifier)])
            }
        }
        persist()
        return actions
    }

    /// A pin as `Pins` shows it: a static title in the daemon's language, and its launcher's path.
    func info(_ pin: PinnedItem) -> PinnedItemInfo {
        let desktopFile = settings.configuration.launcherDesktopFileID.flatMap { app in
            ExportFolders(environment: launchers.desktopEntry.environment)?.pinnedLauncher(appDesktopFileID: app, pin: pin.identifier)
        }
        return PinnedItemInfo(
            identifier: pin.identifier, item: shown(pin.item), state: pin.state,
            message: pin.state == .disabled ? pin.disabledMessage : nil, desktopFile: desktopFile)
    }

    /// The pins as their launchers show them (titles translated), for the desktop-entry writer.
    func publishedPins() -> [PinnedItem] {
        state.pinBoard.pins.map { PinnedItem(identifier: $0.identifier, item: shown($0.item), state: $0.state) }
    }

    /// A pinned item as the person reads it: a static item's title (a localization key, kept
    /// so a later language applies) translated, even once the app no longer offers the item.
    func shown(_ item: ShortcutItem) -> ShortcutItem {
        item.contactIdentifier == nil ? settings.localization.localizing(item, for: settings.language) : item
    }
}
