import Varlink

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
        case .connect, .watch, .complete:
            // The app-delivery half of the interface (Connect/Complete/Watch) is not served yet.
            return .failing(.methodNotImplemented(call.method))
        default:
            return .single { try await self.reply(to: method, call) }
        }
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
                return try VarlinkReply(encoding: try await core.trigger(parameters))
            case .reload:
                _ = try call.decodeParameters(NoParameters.self)
                return try VarlinkReply(encoding: try await reload())
            case .getContact:
                let parameters = try call.decodeParameters(GetContactParameters.self)
                return try VarlinkReply(encoding: GetContactReply(contact: try await core.contact(identifier: parameters.identifier)))
            case .connect, .watch, .complete:
                throw VarlinkError.methodNotImplemented(call.method)
            }
        } catch let error as QuickActionsCallError {
            throw error.varlinkError
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
        }
    }
}
