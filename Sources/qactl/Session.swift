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
    let output: Output

    init(_ connection: ConnectionOptions) {
        self.init(connection.settings)
    }

    init(_ connection: ConnectionSettings) {
        socketPath = connection.socketPath
        output = Output(json: connection.json)
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
            output.fail(
                name: "DaemonUnreachable", message: String(describing: error),
                hint: "start it with: systemctl --user start qactd.socket (or run qactd by hand)")
            return ExitCode(69)
        case .remote(let name, let parameters):
            output.fail(name: name, message: Render.remoteError(name: name, parameters: parameters), parameters: .object(parameters))
            return ExitCode(1)
        default:
            output.fail(name: "ProtocolError", message: String(describing: error))
            return ExitCode(1)
        }
    }
}
