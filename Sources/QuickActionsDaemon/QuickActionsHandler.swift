import QuickActionsProtocol
import Varlink
import VarlinkNIOServer

/// Serves `io.qactd.QuickActions`: decodes each call's parameters into the
/// shared message types, asks the core, and maps daemon errors to their
/// stable Varlink names. No state lives here.
struct QuickActionsHandler: VarlinkInterfaceHandler {
    let core: DaemonCore
    /// Reload goes through the daemon (it re-reads files and talks to systemd), not the core.
    let reload: @Sendable () async throws(QuickActionsCallError) -> ReloadReply

    func handle(_ call: VarlinkCall, context: VarlinkCallContext) -> AsyncThrowingStream<VarlinkReply, any Error> {
        guard let method = QuickActionsInterface.Method(rawValue: call.memberName) else {
            return .failing(.methodNotFound(call.method))
        }
        switch method {
        case .connect:
            return stream(call, AppVersionParameters.self, bufferingPolicy: AppDeliveryRuntime.appBufferingPolicy) { core, parameters, replies in
                await core.connectApp(appVersion: parameters.appVersion, replies: replies)
            }
        case .watch:
            return stream(call, NoParameters.self, bufferingPolicy: WatchBroadcaster.bufferingPolicy) { core, _, replies in
                await core.watch(replies: replies)
            }
        default:
            return .single { try await self.reply(to: method, call) }
        }
    }

    /// A `more` call whose replies the core pushes for as long as the caller stays: the
    /// stream is handed to the core, which keeps its continuation.
    private func stream<Parameters: Decodable & Sendable>(
        _ call: VarlinkCall, _ type: Parameters.Type,
        bufferingPolicy: AsyncThrowingStream<VarlinkReply, any Error>.Continuation.BufferingPolicy,
        register: @escaping @Sendable (DaemonCore, Parameters, AsyncThrowingStream<VarlinkReply, any Error>.Continuation) async -> Void
    ) -> AsyncThrowingStream<VarlinkReply, any Error> {
        guard call.more else { return .failing(.expectedMore) }
        let parameters: Parameters
        do { parameters = try call.decodeParameters(type) } catch { return .failing(error) }
        let (replies, continuation) = AsyncThrowingStream<VarlinkReply, any Error>.makeStream(bufferingPolicy: bufferingPolicy)
        let core = self.core
        Task { await register(core, parameters, continuation) }
        return replies
    }

    private func reply(to method: QuickActionsInterface.Method, _ call: VarlinkCall) async throws -> VarlinkReply {
        do {
            switch method {
            case .status:
                _ = try call.decodeParameters(NoParameters.self)
                return try VarlinkReply(encoding: await core.status())
            case .list:
                let parameters = try call.decodeParameters(ListParameters.self)
                return try VarlinkReply(encoding: try await core.list(parameters))
            case .resignActive:
                let parameters = try call.decodeParameters(AppVersionParameters.self)
                return try VarlinkReply(encoding: await core.resignActive(appVersion: parameters.appVersion))
            case .becomeActive:
                let parameters = try call.decodeParameters(AppVersionParameters.self)
                await core.recordLifecycleMessage(appVersion: parameters.appVersion)
                return VarlinkReply()
            case .enterBackground:
                _ = try call.decodeParameters(NoParameters.self)
                await core.recordLifecycleMessage(appVersion: nil)
                return VarlinkReply()
            case .trigger:
                let parameters = try call.decodeParameters(TriggerParameters.self)
                return try VarlinkReply(encoding: try await waitForDelivery(try await core.trigger(parameters)))
            case .complete:
                let parameters = try call.decodeParameters(CompleteParameters.self)
                try await core.complete(parameters)
                return VarlinkReply()
            case .reload:
                _ = try call.decodeParameters(NoParameters.self)
                return try VarlinkReply(encoding: try await reload())
            case .getContact:
                let parameters = try call.decodeParameters(GetContactParameters.self)
                return try VarlinkReply(encoding: GetContactReply(contact: try await core.contact(identifier: parameters.identifier)))
            case .connect, .watch:
                throw VarlinkError.expectedMore
            }
        } catch let error as QuickActionsCallError {
            throw error.varlinkError
        }
    }

    /// Waits, outside the core actor, for the app to answer a `running` delivery.
    private func waitForDelivery(_ decision: TriggerDecision) async throws -> TriggerReply {
        switch decision {
        case .replied(let reply):
            return reply
        case .awaitingApp(var reply, let results):
            for await result in results {
                switch result {
                case .handled(let handled):
                    reply.handled = handled
                    return reply
                case .notResponding:
                    throw QuickActionsCallError.appNotResponding(timeoutSeconds: await core.responseTimeoutSeconds)
                case .appDisconnected:
                    throw QuickActionsCallError.appDisconnected(token: reply.token ?? "")
                }
            }
            // The caller hung up while waiting; the core forgets the token at its timeout.
            throw CancellationError()
        }
    }
}

extension QuickActionsCallError {
    /// The stable wire form: one Varlink error name per case, with its parameters.
    var varlinkError: VarlinkError {
        typealias Name = QuickActionsInterface.ErrorName
        switch self {
        case .noSuchShortcut(let message):
            return VarlinkError(name: Name.noSuchShortcut.qualifiedName, parameters: ["message": .string(message)])
        case .contactRemoved(let identifier):
            return VarlinkError(
                name: Name.contactRemoved.qualifiedName,
                parameters: ["contactIdentifier": .string(identifier), "message": .string(description)])
        case .contactNotFound(let identifier):
            return VarlinkError(name: Name.contactNotFound.qualifiedName, parameters: ["identifier": .string(identifier)])
        case .invalidConfiguration(let message):
            return VarlinkError(name: Name.invalidConfiguration.qualifiedName, parameters: ["message": .string(message)])
        case .invalidParameter(let name):
            return .invalidParameter(name)
        case .appNotResponding(let seconds):
            return VarlinkError(name: Name.appNotResponding.qualifiedName, parameters: ["timeoutSeconds": .int(Int64(seconds))])
        case .appDisconnected(let token):
            return VarlinkError(name: Name.appDisconnected.qualifiedName, parameters: ["token": .string(token)])
        case .appReplaced:
            return VarlinkError(name: Name.appReplaced.qualifiedName, parameters: ["message": .string(description)])
        case .noSuchAction(let token):
            return VarlinkError(name: Name.noSuchAction.qualifiedName, parameters: ["token": .string(token)])
        }
    }
}
