import ArgumentParser
import QuickActionsProtocol
import Varlink

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One call to the daemon: the only place qactl touches the Varlink client, and
/// the place where client errors become exit statuses (1 remote error, 69 unreachable).
struct Session {
    let socketPath: String
    /// The instance the socket belongs to; nil when `--socket` or `$QACTD_SOCKET` named it.
    let instance: InstanceName?
    let output: Output

    init(_ connection: ConnectionOptions) throws {
        try self.init(connection.settings)
    }

    /// An app name from `$QACTD_APP` that is not one is a usage error (64), like a bad `--app`.
    init(_ connection: ConnectionSettings) throws {
        output = Output(json: connection.json)
        do {
            (socketPath, instance) = try connection.target()
        } catch {
            output.fail(name: "InvalidAppName", message: "QACTD_APP: \(error)")
            throw ExitCode(64)
        }
    }

    func call<Parameters: Encodable, Reply: Decodable>(
        _ method: QuickActionsInterface.Method, _ parameters: Parameters
    ) throws -> Reply {
        do {
            let client = try VarlinkClient(unixSocketPath: socketPath)
            return try client.call(method.qualifiedName, encoding: parameters, decoding: Reply.self)
        } catch let error as VarlinkClientError {
            throw report(error)
        }
    }

    func report(_ error: VarlinkClientError) -> ExitCode {
        switch error {
        case .daemonUnreachable:
            let app = instance?.app
            output.fail(
                name: "DaemonUnreachable", message: (app.map { "app \($0.name): " } ?? "") + String(describing: error),
                hint: app.map { "start it with: systemctl --user start \($0.socketUnit) (or run qactd --app \($0.name) by hand)" }
                    ?? "start it with: systemctl --user start qactd.socket (or run qactd by hand)")
            return ExitCode(69)
        case .remote(let name, let parameters):
            let app = instance?.app.map { "app \($0.name): " } ?? ""
            output.fail(name: name, message: app + Render.remoteError(name: name, parameters: parameters), parameters: .object(parameters))
            return ExitCode(1)
        default:
            output.fail(name: "ProtocolError", message: String(describing: error))
            return ExitCode(1)
        }
    }
}
