import ArgumentParser
import QuickActionsProtocol
import SystemCalls
import Varlink

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

struct AppsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "List the daemons with a socket in $XDG_RUNTIME_DIR/qactd: the plain one and one per app.",
        discussion: """
            Asks each over its socket for its desktop entry and how many quick actions it has, \
            waiting at most --timeout for each; a daemon that does not answer in time (or a \
            socket nobody listens on) is listed as not answering. Asking a socket-activated \
            instance starts its daemon, as any client does.
            """)
    @Flag(name: .long, help: "Print machine-readable JSON instead of aligned text.")
    var json = false
    @Option(name: .long, help: ArgumentHelp("How long to wait for each daemon, in seconds.", valueName: "seconds"))
    var timeout: Double = 3

    func validate() throws {
        guard timeout > 0, timeout <= 600 else { throw ValidationError("--timeout must be more than 0 and at most 600 seconds, not \(timeout).") }
    }

    func run() throws {
        let output = Output(json: json)
        let folder = ConnectionSettings.runtimeFolder
        let milliseconds = max(1, Int((timeout * 1000).rounded()))
        let apps = Self.sockets(in: folder).map { Self.ask($0.instance, at: $0.path, timeoutMilliseconds: milliseconds) }
        output.emit(AppsReport(folder: folder, apps: apps)) { Render.apps(apps, folder: folder, style: $0) }
    }

    /// Every socket in the runtime folder whose name is an instance's (`qactd.sock`, `NAME.sock`),
    /// the plain one first, then by app name. A missing folder holds none.
    static func sockets(in folder: String) -> [(instance: InstanceName, path: String)] {
        guard let names = try? directoryEntryNames(folder) else { return [] }
        var found: [(instance: InstanceName, path: String)] = []
        for name in names {
            guard let instance = InstanceName(socketFileName: name) else { continue }
            let path = folder + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { continue }
            found.append((instance, path))
        }
        return found.sorted { $0.instance < $1.instance }
    }

    /// One `Status` call, bounded by the timeout.
    static func ask(_ instance: InstanceName, at path: String, timeoutMilliseconds: Int) -> AppsReport.App {
        var app = AppsReport.App(
            app: instance.app?.name, unit: instance.app?.serviceUnit ?? "qactd.service", socket: path, answering: false)
        do {
            let client = try VarlinkClient(unixSocketPath: path, timeoutMilliseconds: timeoutMilliseconds)
            let status = try client.call(
                QuickActionsInterface.Method.status.qualifiedName, encoding: NoParameters(), decoding: StatusReply.self)
            app.answering = true
            app.staticItems = status.staticItems
            app.dynamicItems = status.dynamicItems
            app.items = status.staticItems + status.dynamicItems
            app.desktopEntry = status.desktopEntry?.path
            app.desktopEntryProblem = status.desktopEntry?.problem
        } catch {
            app.problem = String(describing: error)
        }
        return app
    }
}

/// `qactl apps --json`.
struct AppsReport: Encodable {
    struct App: Encodable {
        /// nil for the plain instance.
        var app: String?
        var unit: String
        var socket: String
        var answering: Bool
        /// Why it did not answer.
        var problem: String?
        /// Static and dynamic quick actions, displayed or not.
        var items: Int?
        var staticItems: Int?
        var dynamicItems: Int?
        /// The exported desktop entry; nil when the instance exports none (`DesktopFile=` empty).
        var desktopEntry: String?
        var desktopEntryProblem: String?
    }

    var folder: String
    var apps: [App]
}
