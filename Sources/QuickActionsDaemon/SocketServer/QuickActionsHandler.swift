import FoundationEssentials
import QuickActions
import QuickActionsProtocol
import Varlink
import VarlinkNIOServer

/// Serves `io.qactd.QuickActions`: the edge between the wire and the core. It decodes each
/// call's parameters into the shared message types, asks `DaemonCore`, and maps the core's
/// domain values and errors to their Varlink replies and stable error names — here and
/// nowhere else. No state lives here.
struct QuickActionsHandler: VarlinkInterfaceHandler {
    let core: DaemonCore
    /// Reload goes through the daemon (it re-reads files and talks to systemd), not the core.
    let reload: @Sendable () async throws(QuickActionsCallError) -> ReloadReply
    /// In a GNOME session, `Status` asks the shell for the extension's state each time, so it
    /// is never answered from the core's published reply, which knows nothing of the shell.
    var shellExtension = ShellExtensionProbe(environment: [:])

    func handle(_ call: VarlinkCall, context: VarlinkCallContext) -> AsyncThrowingStream<VarlinkReply, any Error> {
        guard let method = QuickActionsInterface.Method(rawValue: call.memberName) else {
            return .failing(.methodNotFound(call.method))
        }
        switch method {
        case .connect:
            guard call.more else { return .failing(.expectedMore) }
            let parameters: AppVersionParameters
            do { parameters = try call.decodeBoundedParameters(AppVersionParameters.self) } catch { return .failing(error) }
            let (messages, continuation) = AsyncThrowingStream<AppMessage, any Error>.makeStream(bufferingPolicy: DaemonCore.appBufferingPolicy)
            core.events.yield(.appConnected(appVersion: parameters.appVersion, messages: continuation))
            return Self.relay(messages) { message in try VarlinkReply(encoding: ConnectReply(message), continues: true) }
        case .watch:
            guard call.more else { return .failing(.expectedMore) }
            do { _ = try call.decodeBoundedParameters(NoParameters.self) } catch { return .failing(error) }
            let (listings, continuation) = AsyncStream<QuickActionsListing>.makeStream(bufferingPolicy: WatchBroadcaster.bufferingPolicy)
            core.events.yield(.watchStarted(continuation))
            return Self.relay(listings) { listing in
                try VarlinkReply(encoding: listing, continues: true)
            }
        default:
            return .single { try await self.reply(to: method, call) }
        }
    }

    /// `List` and `Status` from the replies the core published, on the event loop, when
    /// they are current; otherwise nil, and `handle` computes, encodes and publishes them.
    /// A `ResignActive` that would change nothing is answered here too (the core published
    /// its answer), so an app resigning over and over costs no hop to the core.
    func immediateReply(to call: VarlinkCall, context: VarlinkCallContext) -> VarlinkReply? {
        switch QuickActionsInterface.Method(rawValue: call.memberName) {
        case .list?:
            guard let request = PublishedReplies.ListingRequest(parameters: call.parameters) else { return nil }
            return core.replies.listing(for: request).map { VarlinkReply(encodedParameters: $0) }
        case .status?:
            if shellExtension.applies { return nil }
            return core.replies.status().map { VarlinkReply(encodedParameters: $0) }
        case .resignActive?:
            guard let appVersion = Self.plainAppVersion(of: call),
                  let outcome = core.unchangedResignActive(appVersion: appVersion),
                  let parameters = try? core.replies.encoded(unchangedResignActive: outcome)
            else { return nil }
            return VarlinkReply(encodedParameters: parameters)
        default:
            return nil
        }
    }

    /// The `appVersion` of a `ResignActive` whose parameters are the everyday ones — none, or
    /// just an `appVersion` string (or null) within its limit — read from the parsed call
    /// without a decoder (the decoder and encoder were two thirds of a repeated call); nil for
    /// anything else, which takes the full path, which names any problem.
    private static func plainAppVersion(of call: VarlinkCall) -> String?? {
        let parameters = call.parameters
        switch (parameters.count, parameters["appVersion"]) {
        case (0, _), (1, .null?):
            return .some(nil)
        case (1, .string(let appVersion)?) where AppVersionParameters(appVersion: appVersion).oversizedParameter == nil:
            return .some(appVersion)
        default:
            return nil
        }
    }

    private func listingReply(_ request: PublishedReplies.ListingRequest) async throws -> VarlinkReply {
        if let cached = core.replies.listing(for: request) { return VarlinkReply(encodedParameters: cached) }
        let (listing, key) = try await core.keyedListing(request)
        let encoded = try EncodedJSONObject(encoding: listing)
        core.replies.store(listing: encoded, for: request, at: key)
        return VarlinkReply(encodedParameters: encoded)
    }

    private func statusReply() async throws -> VarlinkReply {
        if shellExtension.applies {
            var reply = StatusReply(await core.status())
            reply.shellExtension = shellExtension.read()
            return VarlinkReply(encodedParameters: try EncodedJSONObject(encoding: reply))
        }
        if let cached = core.replies.status() { return VarlinkReply(encodedParameters: cached) }
        let snapshot = await core.status()
        let encoded = try EncodedJSONObject(encoding: StatusReply(snapshot))
        core.replies.store(status: encoded, at: snapshot.epoch)
        return VarlinkReply(encodedParameters: encoded)
    }

    /// A `more` call's replies, encoded one by one as the server asks for the next: the
    /// core's stream keeps its own bound (`bufferingPolicy`), and nothing queues in between.
    /// When the connection goes, the server stops iterating, which ends the core's stream.
    private static func relay<Messages: AsyncSequence & Sendable>(
        _ messages: Messages, encode: @escaping @Sendable (Messages.Element) throws -> VarlinkReply
    ) -> AsyncThrowingStream<VarlinkReply, any Error> {
        let iterator = SharedIterator(messages.makeAsyncIterator())
        return AsyncThrowingStream {
            do {
                return try await iterator.next().map(encode)
            } catch let error as QuickActionsCallError {
                throw error.varlinkError
            }
        }
    }

    private func reply(to method: QuickActionsInterface.Method, _ call: VarlinkCall) async throws -> VarlinkReply {
        do {
            switch method {
            case .status:
                _ = try call.decodeBoundedParameters(NoParameters.self)
                return try await statusReply()
            case .list:
                let parameters = try call.decodeBoundedParameters(ListParameters.self)
                return try await listingReply(.init(all: parameters.all ?? false, limit: parameters.limit, language: parameters.language))
            case .resignActive:
                let parameters = try call.decodeBoundedParameters(AppVersionParameters.self)
                return try VarlinkReply(encoding: await core.resignActive(appVersion: parameters.appVersion))
            case .becomeActive:
                let parameters = try call.decodeBoundedParameters(AppVersionParameters.self)
                await core.recordLifecycleMessage(appVersion: parameters.appVersion)
                return VarlinkReply()
            case .enterBackground:
                _ = try call.decodeBoundedParameters(NoParameters.self)
                await core.recordLifecycleMessage(appVersion: nil)
                return VarlinkReply()
            case .trigger:
                let parameters = try call.decodeBoundedParameters(TriggerParameters.self)
                let outcome = if let pinned = try parameters.pinnedTarget() {
                    try await core.triggerPinned(pinned)
                } else {
                    try await core.trigger(try parameters.target())
                }
                return try VarlinkReply(encoding: try await triggerReply(outcome, position: parameters.position))
            case .complete:
                let parameters = try call.decodeBoundedParameters(CompleteParameters.self)
                try await core.complete(token: parameters.token, handled: parameters.handled)
                return VarlinkReply()
            case .reload:
                _ = try call.decodeBoundedParameters(NoParameters.self)
                return try VarlinkReply(encoding: try await reload())
            case .getContact:
                let parameters = try call.decodeBoundedParameters(GetContactParameters.self)
                return try VarlinkReply(encoding: GetContactReply(contact: try await core.contact(identifier: parameters.identifier)))
            case .pin:
                let parameters = try call.decodeBoundedParameters(PinParameters.self)
                guard parameters.pinned == nil else { throw QuickActionsCallError.invalidParameter(name: "pinned") }
                return try VarlinkReply(encoding: PinReply(pin: try await core.pin(try parameters.target())))
            case .unpin:
                let parameters = try call.decodeBoundedParameters(UnpinParameters.self)
                let removed = try await core.unpin(identifier: parameters.identifier, position: parameters.position, all: parameters.all ?? false)
                return try VarlinkReply(encoding: UnpinReply(removed: removed))
            case .pins:
                _ = try call.decodeBoundedParameters(NoParameters.self)
                return try VarlinkReply(encoding: PinsReply(pins: await core.pins()))
            case .setItems:
                let parameters = try call.decodeBoundedParameters(SetItemsParameters.self)
                try checkImages(parameters.items) { "items[\($0)]" }
                return try VarlinkReply(encoding: AppItemsReply(try await core.changeAppItems(.set(parameters.items))))
            case .pushItem:
                let parameters = try call.decodeBoundedParameters(PushItemParameters.self)
                try checkImages([parameters.item]) { _ in "item" }
                return try VarlinkReply(encoding: AppItemsReply(try await core.changeAppItems(.push(parameters.item))))
            case .removeItems:
                let parameters = try call.decodeBoundedParameters(RemoveItemsParameters.self)
                return try VarlinkReply(encoding: AppItemsReply(try await core.changeAppItems(.remove(types: parameters.types))))
            case .reportItemUsed:
                let parameters = try call.decodeBoundedParameters(ReportItemUsedParameters.self)
                try await core.reportAppItemUsed(type: parameters.type)
                return VarlinkReply()
            case .items:
                _ = try call.decodeBoundedParameters(NoParameters.self)
                return try VarlinkReply(encoding: ItemsReply(items: await core.appItems))
            case .connect, .watch:
                throw VarlinkError.expectedMore
            }
        } catch let error as QuickActionsCallError {
            throw error.varlinkError
        }
    }

    /// The `Trigger` reply; for a `running` delivery it waits, outside the core actor, for
    /// the app's answer.
    /// The image files the items name, looked at before the core checks and keeps them.
    private func checkImages(_ items: [ShortcutItem], field: (Int) -> String) throws(QuickActionsCallError) {
        do throws(AppItemError) {
            try AppItemImages.check(items, field: field)
        } catch {
            throw .appItemRefused(error)
        }
    }

    private func triggerReply(_ outcome: TriggerOutcome, position: Int?) async throws -> TriggerReply {
        let resolution = outcome.resolution
        var reply = TriggerReply(
            item: resolution.item, contact: resolution.contact, delivery: resolution.delivery,
            handled: false, stale: resolution.stale, position: position)
        switch outcome.delivery {
        case .launch(let launched):
            reply.launchStatus = launched?.status ?? .notConfigured
            reply.launchPID = launched?.pid.map(Int.init)
            reply.launchUnit = launched?.unit
            reply.launchError = launched?.error
            return reply
        case .command(let command):
            reply.commandProgram = command.program
            reply.commandPID = command.place?.pid.map(Int.init)
            reply.commandUnit = command.place?.unit
            reply.commandError = command.error
            return reply
        case .running(let token, let results):
            reply.token = token
            for await result in results {
                switch result {
                case .handled(let handled):
                    reply.handled = handled
                    return reply
                case .notResponding:
                    throw QuickActionsCallError.appNotResponding(timeoutSeconds: await core.responseTimeoutSeconds)
                case .appDisconnected:
                    throw QuickActionsCallError.appDisconnected(token: token)
                }
            }
            // The caller hung up while waiting; the core forgets the token at its timeout.
            throw CancellationError()
        }
    }
}

/// An async iterator shared by the closure of `AsyncThrowingStream(unfolding:)`. Safe
/// because the server takes a stream's replies strictly one after another: `next()` is
/// never called again before the previous call returned.
private final class SharedIterator<Base: AsyncIteratorProtocol>: @unchecked Sendable {
    private var base: Base
    init(_ base: Base) { self.base = base }
    func next() async throws -> Base.Element? { try await base.next() }
}

extension TriggerParameters {
    /// The pin a launcher of a pinned item names, alone; nil when the call names no pin.
    func pinnedTarget() throws(QuickActionsCallError) -> String? {
        guard let pinned else { return nil }
        guard position == nil, type == nil, contactIdentifier == nil else { throw .invalidParameter(name: "pinned") }
        return pinned
    }

    /// Exactly one of `position` and `type` (with `contactIdentifier` only beside `type`).
    func target() throws(QuickActionsCallError) -> TriggerTarget {
        switch (position, type) {
        case (let position?, nil):
            guard contactIdentifier == nil else { throw .invalidParameter(name: "contactIdentifier") }
            return .position(position)
        case (nil, let type?): return .type(type, contactIdentifier: contactIdentifier)
        case (.some, .some): throw .invalidParameter(name: "type")
        case (nil, nil): throw .invalidParameter(name: "position")
        }
    }
}

extension AppItemsReply {
    init(_ outcome: AppItemsOutcome) {
        self.init(
            changed: outcome.changed, generation: outcome.generation, count: outcome.count, removed: outcome.removed,
            persisted: outcome.persisted)
    }
}

extension ConnectReply {
    init(_ message: AppMessage) {
        switch message {
        case .connected(let pendingItem, let contact, let stale):
            self.init(pendingItem: pendingItem, contact: contact, stale: stale)
        case .perform(let item, let contact, let token, let stale):
            self.init(action: item, contact: contact, token: token, stale: stale)
        }
    }
}

extension StatusReply {
    init(_ status: StatusSnapshot) {
        let configuration = status.configuration
        var watch = status.watch
        watch.scan = status.scanProgress.map(ScanProgressInfo.init)
        self.init(
            version: QactdVersion.string, configFile: configuration.configFile,
            contactsDirectory: configuration.contactsDirectory, staticItemsFile: configuration.staticItemsPath,
            stateFile: status.stateFile, socket: status.socket, contacts: status.contacts, favorites: status.favorites,
            invalidFiles: status.invalidFiles.map { InvalidFileInfo(path: $0.path, reason: $0.reason.description) },
            duplicates: status.duplicates, generation: status.generation, launched: status.launched,
            appVersion: status.appVersion, appConnected: status.appConnected,
            staticItems: status.staticItems, dynamicItems: status.dynamicItems, watch: watch,
            rescans: status.activity.rescans, eventsHandled: status.activity.eventsHandled,
            filesParsed: status.activity.filesParsed, usage: status.usage, stateError: status.stateError,
            persisted: status.persisted, savedGeneration: status.savedGeneration,
            pendingLaunchItem: status.pendingLaunchItem, watchers: status.watchers,
            desktopEntry: status.launchers.desktopEntry.map {
                DesktopEntryExportInfo(path: $0.path, source: $0.source, written: $0.written?.formatted(.iso8601), problem: $0.problem, notice: $0.notice)
            },
            quicklist: status.launchers.quicklist, notifications: status.notifications, evolution: status.evolution,
            app: status.instance.app?.name, commands: status.commands,
            choices: ChoicesInfo(configuration, followingContacts: status.followsContacts), khard: status.khard)
    }
}

extension ChoicesInfo {
    init(_ configuration: DaemonConfiguration, followingContacts: Bool) {
        let desktopFile: String
        switch configuration.launcherDesktopFileSetting {
        case .auto: desktopFile = "auto"
        case .none: desktopFile = "none"
        case .named(let setting): desktopFile = setting
        }
        let chosenBy: ChosenBy?
        switch configuration.defaultApp?.choice?.reason {
        case .defaultApplication?: chosenBy = .defaultApplication
        case .addedAssociation?: chosenBy = .addedAssociation
        case .declaredByEntry?: chosenBy = .mimeType
        case nil: chosenBy = nil
        }
        let from: FavoriteActionFrom
        switch configuration.favoriteActionSource {
        case .configured: from = .configuration
        case .appExec: from = .appExec
        case .none: from = .none
        }
        self.init(
            desktopFile: desktopFile, app: configuration.launcherDesktopFileID, appEntry: configuration.defaultApp?.entryPath,
            chosenBy: chosenBy?.rawValue, mimeappsList: configuration.defaultApp?.choice?.reason.list,
            problem: configuration.defaultApp?.problem,
            favoriteAction: configuration.actions[configuration.favoriteType]?.text, favoriteActionFrom: from.rawValue,
            recompute: configuration.recompute.rawValue, followingContacts: followingContacts,
            evolution: configuration.evolution.description)
    }
}

extension QuickActionsCallError {
    /// The stable wire form: one Varlink error name per case, with its parameters.
    var varlinkError: VarlinkError {
        func named(_ name: QuickActionsInterface.ErrorName, _ parameters: [String: JSONValue]) -> VarlinkError {
            VarlinkError(name: name.qualifiedName, parameters: parameters)
        }
        return switch self {
        case .invalidParameter(let name): .invalidParameter(name)
        case .noSuchShortcut(let message): named(.noSuchShortcut, ["message": .string(message)])
        case .contactRemoved(let identifier): named(.contactRemoved, ["contactIdentifier": .string(identifier), "message": .string(description)])
        case .contactNotFound(let identifier): named(.contactNotFound, ["identifier": .string(identifier)])
        case .invalidConfiguration(let message): named(.invalidConfiguration, ["message": .string(message)])
        case .appNotResponding(let seconds): named(.appNotResponding, ["timeoutSeconds": .int(Int64(seconds))])
        case .appDisconnected(let token): named(.appDisconnected, ["token": .string(token)])
        case .appReplaced: named(.appReplaced, ["message": .string(description)])
        case .noSuchAction(let token): named(.noSuchAction, ["token": .string(token)])
        case .commandRefused: named(.commandRefused, ["message": .string(description)])
        case .noSuchPin(let identifier): named(.noSuchPin, ["identifier": .string(identifier)])
        case .pinDisabled(let identifier, let message): named(.pinDisabled, ["identifier": .string(identifier), "message": .string(message)])
        case .pinningUnavailable(let message): named(.pinningUnavailable, ["message": .string(message)])
        case .appItemRefused(.invalid(let field, let reason)): named(.invalidItem, ["field": .string(field), "message": .string(reason)])
        case .appItemRefused(.tooMany(let count, let maxItems)):
            named(.tooManyItems, ["count": .int(Int64(count)), "maxItems": .int(Int64(maxItems))])
        case .appItemRefused(.noSuchItem(let type)): named(.noSuchItem, ["type": .string(type)])
        }
    }
}

extension VarlinkCall {
    /// Decodes the parameters and refuses a string over its limit (`ParameterLimits`), naming it.
    func decodeBoundedParameters<Parameters: BoundedParameters>(_ type: Parameters.Type) throws(VarlinkError) -> Parameters {
        let parameters = try decodeParameters(type)
        if let oversized = parameters.oversizedParameter { throw .invalidParameter(oversized) }
        return parameters
    }
}

extension ScanProgressInfo {
    init(_ progress: ContactsScanProgress) {
        self.init(tree: progress.tree, phase: progress.listingDone ? .reading : .listing,
                  filesFound: progress.filesFound, filesRead: progress.filesRead)
    }
}
