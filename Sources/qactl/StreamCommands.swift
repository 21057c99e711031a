import ArgumentParser
import Contacts
import QuickActions
import QuickActionsProtocol
import Varlink

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Follow the quick-action set: print it now, then again on every change.",
        discussion: """
            Prints every item (displayed or not) with its generation, then waits and prints \
            the set again each time it changes (a resign-active that changed favorites, the \
            app's first launch, a reload of the static items). With --json each set is one \
            JSON object on a line of its own. A watcher that falls behind skips to the \
            latest set. Stop it with Ctrl-C.
            """)
    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        let session = try Session(connection)
        do {
            let client = try VarlinkClient(unixSocketPath: session.socketPath)
            var replies = try client.callMore(QuickActionsInterface.Method.watch.qualifiedName)
            while let next = try replies.next() {
                let listing: ListReply
                do { listing = try next.decode(ListReply.self) } catch {
                    throw VarlinkClientError.protocolError("a Watch reply does not match its declaration: \(error)")
                }
                session.output.emit(listing) { style in
                    style.bold("generation \(listing.generation)") + (listing.launched ? "" : " (not launched yet)") + "\n"
                        + Render.list(listing, showDisplayedColumn: true, now: Int64(time(nil)), style: style)
                }
                fflush(nil)
            }
        } catch let error as VarlinkClientError {
            throw session.report(error)
        }
    }
}

struct AppCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app",
        abstract: "Act as the app: connect, show each quick action delivered to it, answer handled.",
        discussion: """
            A stand-in for the contacts app, for demos and tests. It calls Connect (which \
            marks the app launched), shows the item it was launched with, if any (the Linux \
            twin of scene(_:willConnectTo:options:)), then shows every action the daemon \
            delivers (windowScene(_:performActionFor:completionHandler:)) the way Apple's \
            sample app shows an alert, and answers each with Complete(token, handled). \
            Use it as the LaunchCommand (the daemon sets QACTD_SOCKET for it) to see a cold \
            launch, or run it in a terminal of its own to see warm deliveries. A newer app \
            process takes over: this one then exits with status 1 (AppReplaced).
            """)
    @OptionGroup var connection: ConnectionOptions
    @Option(name: .customLong("app-version"), help: ArgumentHelp("The version this app reports on Connect and ResignActive.", valueName: "version"))
    var appVersion: String?
    @Flag(name: .customLong("not-handled"), help: "Answer every action with handled: false.")
    var notHandled = false
    @Flag(name: .customLong("no-answer"), help: "Never answer actions, to see the daemon's AppNotResponding.")
    var noAnswer = false
    @Option(name: .customLong("answer-delay"), help: ArgumentHelp(
        "Wait this many milliseconds before answering each action, to play a slow app.", valueName: "ms"))
    var answerDelay: Int?
    @Option(name: .customLong("resign-after"), help: ArgumentHelp(
        "After N actions (the launch item counts), send ResignActive and EnterBackground and exit.", valueName: "n"))
    var resignAfter: Int?

    func validate() throws {
        if let resignAfter, resignAfter < 1 { throw ValidationError("--resign-after must be 1 or more, not \(resignAfter).") }
        if notHandled && noAnswer { throw ValidationError("Give --not-handled or --no-answer, not both.") }
        if let answerDelay, answerDelay < 0 { throw ValidationError("--answer-delay must be 0 or more, not \(answerDelay).") }
    }

    /// What `qactl app --json` prints, one object per line.
    struct Event: Encodable {
        /// `connected`, `launchItem`, `action`, `resignActive`.
        var event: String
        var item: ShortcutItem?
        var contact: Contact?
        var token: String?
        var stale: Bool?
        var handled: Bool?
        var resignActive: ResignActiveReply?
    }

    func run() throws {
        let session = try Session(connection)
        do {
            let client = try VarlinkClient(unixSocketPath: session.socketPath)
            var replies = try client.callMore(
                QuickActionsInterface.Method.connect.qualifiedName, parameters: try JSONValue(encoding: AppVersionParameters(appVersion: appVersion)))
            var actions = 0
            var isFirst = true
            while let next = try replies.next() {
                let reply: ConnectReply
                do { reply = try next.decode(ConnectReply.self) } catch {
                    throw VarlinkClientError.protocolError("a Connect reply does not match its declaration: \(error)")
                }
                if isFirst {
                    isFirst = false
                    emit(session, Event(event: "connected")) { _ in "connected to \(session.socketPath); waiting for quick actions (Ctrl-C quits)" }
                    if let item = reply.pendingItem {
                        actions += 1
                        emit(session, Event(event: "launchItem", item: item, contact: reply.contact, stale: reply.stale)) { style in
                            Self.alert(heading: "Launched with quick action", item: item, contact: reply.contact, stale: reply.stale, style: style)
                        }
                    }
                } else if let item = reply.action, let token = reply.token {
                    actions += 1
                    let handled = !notHandled
                    emit(session, Event(event: "action", item: item, contact: reply.contact, token: token, stale: reply.stale, handled: noAnswer ? nil : handled)) { style in
                        Self.alert(heading: "Quick action", item: item, contact: reply.contact, stale: reply.stale, style: style)
                            + (noAnswer ? "\n  (not answering)" : "\n  answered handled: \(handled)")
                    }
                    if !noAnswer {
                        if let answerDelay { usleep(useconds_t(min(answerDelay, 3_600_000)) * 1000) }
                        try complete(token: token, handled: handled, session: session)
                    }
                }
                if let resignAfter, actions >= resignAfter {
                    try resign(session)
                    return
                }
            }
        } catch let error as VarlinkClientError {
            throw session.report(error)
        }
    }

    /// The Connect connection is busy with its stream: answer on a connection of its own.
    private func complete(token: String, handled: Bool, session: Session) throws {
        let parameters = try JSONValue(encoding: CompleteParameters(token: token, handled: handled))
        let answer = try VarlinkClient(unixSocketPath: session.socketPath)
        do {
            _ = try answer.call(QuickActionsInterface.Method.complete.qualifiedName, parameters: parameters)
        } catch {
            guard case .remote(let name, _) = error, name == QuickActionsInterface.ErrorName.noSuchAction.qualifiedName else { throw error }
            // Answered too late (the trigger timed out): the app keeps running, as an iOS app
            // whose completion handler ran late would.
            writeToStandardError("qactl: the daemon no longer waits for action '\(token)' (it timed out), ignoring.\n")
        }
    }

    private func resign(_ session: Session) throws {
        let lifecycle = try VarlinkClient(unixSocketPath: session.socketPath)
        let reply = try lifecycle.call(
            QuickActionsInterface.Method.resignActive.qualifiedName, parameters: AppVersionParameters(appVersion: appVersion),
            replying: ResignActiveReply.self)
        _ = try lifecycle.call(QuickActionsInterface.Method.enterBackground.qualifiedName)
        emit(session, Event(event: "resignActive", resignActive: reply)) { style in
            "resigned active: " + Render.resignActive(reply, style: style) + "; entered the background"
        }
    }

    private func emit(_ session: Session, _ event: Event, human: (Style) -> String) {
        session.output.emit(event, human: human)
        // Output often goes to a pipe or file (a demo's log, a test): show each event as it happens.
        fflush(nil)
    }

    /// The alert Apple's sample shows when it handles a quick action.
    static func alert(heading: String, item: ShortcutItem, contact: Contact?, stale: Bool?, style: Style) -> String {
        var lines = ["┌ \(style.bold(heading))", "│ title     \(item.title)"]
        if let subtitle = item.subtitle { lines.append("│ subtitle  \(subtitle)") }
        lines.append("│ type      \(item.type)")
        if let contact {
            lines.append("│ contact   \(contact.name) [\(contact.identifier)]" + (contact.email.map { " <\($0)>" } ?? ""))
        }
        if stale == true { lines.append("│ " + style.yellow("stale: made for another app version")) }
        lines.append("└")
        return lines.joined(separator: "\n")
    }
}
