import Contacts
import QuickActions
import QuickActionsProtocol
import Varlink

/// Human-readable renderings of the daemon's replies.
enum Render {
    static func status(_ status: StatusReply, style: Style) -> String {
        let favorites = "\(status.favorites) favorite\(status.favorites == 1 ? "" : "s")"
        var contacts = "\(status.contacts) (\(favorites)"
        if !status.invalidFiles.isEmpty { contacts += ", \(status.invalidFiles.count) invalid file\(status.invalidFiles.count == 1 ? "" : "s")" }
        if status.duplicates > 0 { contacts += ", \(status.duplicates) duplicate identifier\(status.duplicates == 1 ? "" : "s")" }
        contacts += ")"
        let watchState = status.watch.state == "watching" ? style.green(status.watch.state) : style.yellow(status.watch.state)
        var rows: [(String, String)] = [
            ("contacts", contacts),
            ("quick actions", "\(status.staticItems) static, \(status.dynamicItems) dynamic, generation \(status.generation)"
                + (status.watchers > 0 ? ", \(status.watchers) watcher\(status.watchers == 1 ? "" : "s")" : "")),
            ("app", "\(status.launched ? "launched" : "not launched yet")"
                + (status.appVersion.isEmpty ? "" : ", version \(status.appVersion)")
                + (status.appConnected ? ", connected" : "")),
            ("watch", watchState + (status.watch.message.map { " (\($0))" } ?? "")),
            ("activity", "\(status.eventsHandled) events, \(status.filesParsed) files parsed, \(status.rescans) rescans"),
            ("contacts dir", status.contactsDirectory),
            ("static items", status.staticItemsFile),
            ("config", status.configFile ?? "(built-in defaults)"),
            ("state", status.stateFile),
            ("socket", status.socket),
        ]
        if let scan = status.watch.scan { rows.insert(("scanning", style.yellow(scan.summary)), at: 4) }
        if let pending = status.pendingLaunchItem { rows.insert(("pending", "\(pending.title) (\(pending.type)), for the app's next launch"), at: 3) }
        if let stateError = status.stateError {
            let onDisk = status.savedGeneration.map { "the state file still holds generation \($0)" } ?? "there is no state file yet"
            rows.append(("state error", style.red(stateError)))
            rows.append(("not saved", style.red("generation \(status.generation) is kept in memory only (\(onDisk)); retrying")))
        }
        if let export = status.desktopEntry {
            rows.append(("desktop entry", export.path + (export.written.map { ", written \($0)" } ?? "")))
            if let problem = export.problem { rows.append(("export problem", style.red(problem))) }
            if let notice = export.notice { rows.append(("export notice", style.yellow(notice))) }
        }
        if let quicklist = status.quicklist { rows.append(("quicklist", quicklistSummary(quicklist, style: style))) }
        if let shellExtension = status.shellExtension { rows.append(("gnome extension", shellExtensionSummary(shellExtension, style: style))) }
        if let notifications = status.notifications, notifications.state != NotificationsInfo.State.idle.rawValue {
            let shown = "\(notifications.shown) shown"
            switch NotificationsInfo.State(rawValue: notifications.state) {
            case .on?: rows.append(("notifications", style.green("on") + ": " + shown))
            case .unavailable?: rows.append(("notifications", style.yellow("unavailable") + " (\(notifications.message ?? "?")); failures are logged only"))
            default: rows.append(("notifications", notifications.state))
            }
        }
        if let commands = status.commands {
            let running = "\(commands.running) of at most \(commands.limit) running"
            switch CommandsInfo.Start(rawValue: commands.start) {
            case .unit?: rows.append(("commands", "each in a unit of the user manager (\(commands.manager ?? "?")); " + running))
            case .direct?: rows.append(("commands", "started directly" + (commands.message.map { " (\($0))" } ?? "") + "; " + running))
            default: rows.append(("commands", commands.start + "; " + running))
            }
        }
        if let evolution = status.evolution { rows += evolutionRows(evolution, style: style) }
        if let khard = status.khard { rows += khardRows(khard, style: style) }
        for tree in status.watch.degradedTrees { rows.append(("rescanning", tree)) }
        for wait in status.watch.waitingForWriter { rows.append(("open for writing", "\(wait.path), since \(wait.since)")) }
        let unlistedWaits = status.watch.waitingForWriterCount - status.watch.waitingForWriter.count
        if unlistedWaits > 0 { rows.append(("open for writing", "and \(unlistedWaits) more")) }
        for (key, count) in status.usage.sorted(by: { $0.key < $1.key }) { rows.append(("used", "\(count)× \(key)")) }
        let width = rows.map(\.0.count).max() ?? 0
        // An app's instance is named as its unit is.
        var lines = [style.bold("\(status.app.map { "qactd@\($0)" } ?? "qactd") \(status.version)")]
        lines += rows.map { "  " + style.dim($0.0.padding(to: width)) + "  " + $0.1 }
        if !status.invalidFiles.isEmpty {
            lines.append(style.bold("invalid files"))
            lines += status.invalidFiles.map { "  " + style.red($0.path) + ": " + $0.reason }
        }
        if let choices = status.choices { lines += choicesLines(choices, status: status, style: style) }
        return lines.joined(separator: "\n")
    }

    /// What the defaults chose and why, then the one line of configuration that changes each.
    static func choicesLines(_ choices: ChoicesInfo, status: StatusReply, style: Style) -> [String] {
        var rows: [(String, String)] = []
        switch (choices.desktopFile, choices.app) {
        case ("auto", let app?):
            let why: String
            switch ChoicesInfo.ChosenBy(rawValue: choices.chosenBy ?? "") {
            case .defaultApplication?: why = "the default for mailto: in [Default Applications] of \(choices.mimeappsList ?? "?")"
            case .addedAssociation?: why = "the first for mailto: in [Added Associations] of \(choices.mimeappsList ?? "?")"
            case .mimeType?: why = "no mimeapps.list names one; its entry's MimeType= lists mailto:"
            case nil: why = "DesktopFile=auto"
            }
            rows.append(("app", "\(app) (\(why))"))
            if let entry = choices.appEntry { rows.append(("app entry", entry)) }
        case ("auto", nil): rows.append(("app", style.yellow("none") + " (DesktopFile=auto found no mail app)"))
        case ("none", _): rows.append(("app", "none (DesktopFile=none: nothing exported)"))
        default: rows.append(("app", "\(choices.app ?? choices.desktopFile) (DesktopFile=)"))
        }
        if let problem = choices.problem { rows.append(("app problem", style.yellow(problem))) }
        switch ChoicesInfo.FavoriteActionFrom(rawValue: choices.favoriteActionFrom) {
        case .appExec?: rows.append(("favorite", "runs \(choices.favoriteAction ?? "?") (the app's own Exec, a new mail)"))
        case .configuration?: rows.append(("favorite", "runs \(choices.favoriteAction ?? "?") ([Actions])"))
        default: rows.append(("favorite", "goes to the app over the socket (no [Actions] command)"))
        }
        let following = choices.followingContacts ? "follows the contacts" : "on the app's ResignActive"
        switch choices.recompute {
        case "auto":
            rows.append(("recompute", "auto: " + (choices.followingContacts ? "follows the contacts until an app speaks the socket" : "an app spoke the socket, so on its ResignActive")))
        default: rows.append(("recompute", "\(choices.recompute): \(following)"))
        }
        let folder = status.contactsDirectory.isEmpty ? "no folder" : "the folder \(status.contactsDirectory)"
        let books = choices.evolution == "all" ? "every Evolution address book" : choices.evolution == "none" ? "no Evolution address book" : "the address books \(choices.evolution)"
        let khardBooks = status.khard?.books.filter { $0.state != "skipped" }.map(\.name) ?? []
        let khard = khardBooks.isEmpty ? "" : ", khard's address books \(khardBooks.joined(separator: ", "))"
        rows.append(("sources", "\(folder)\(khard) and \(books)"))
        // The person's own file, which a system-wide default (under an etc/qactd/) gives way to.
        let ownFile = status.configFile.flatMap { $0.contains("/etc/qactd/") ? nil : $0 }
        let file = ownFile ?? "~/.config/qactd/\(status.app ?? "qactd").conf"
        let changes: [(String, String)] = [
            ("another app", "[Launcher] DesktopFile=org.example.App.desktop"),
            ("another command", "[Actions] FavoriteAction=xdg-email mailto:{email:uri}"),
            ("recompute", "[Shortcuts] Recompute=resign-active"),
            ("address books", "[Contacts] Evolution=none"),
        ]
        let width = max(rows.map(\.0.count).max() ?? 0, changes.map(\.0.count).max() ?? 0)
        var lines = [style.bold("chosen")]
        lines += rows.map { "  " + style.dim($0.0.padding(to: width)) + "  " + $0.1 }
        lines.append(style.bold("to change, one line in \(file)"))
        lines += changes.map { "  " + style.dim($0.0.padding(to: width)) + "  " + $0.1 }
        return lines
    }

    /// One row per Evolution address book, with its name, kind and account (`evolution
    /// system-address-book (local): read, 12 contacts, 3 favorites`, `evolution "Contacts"
    /// 3f2a… (carddav, account ada@example.org): read, …`), its problem in red; a
    /// book not read says why (`skipped: …`); or why none is read at all.
    static func evolutionRows(_ evolution: EvolutionSourcesInfo, style: Style) -> [(String, String)] {
        var rows: [(String, String)] = []
        if let problem = evolution.problem { rows.append(("evolution", style.yellow(problem))) }
        for book in evolution.books {
            let kind = [book.kind, book.account.map { "account \($0)" }].compactMap { $0 }.joined(separator: ", ")
            let label = (book.name.map { "\"\($0)\" " } ?? "") + book.uid + (kind.isEmpty ? "" : " (\(kind))")
            if let skipped = book.skipped {
                rows.append(("evolution", label + ": " + style.yellow("skipped: \(skipped)")))
                continue
            }
            var text = "\(label): read, \(book.contacts) contact\(book.contacts == 1 ? "" : "s"), \(book.favorites) favorite\(book.favorites == 1 ? "" : "s")"
            if book.invalidCards > 0 { text += ", \(book.invalidCards) invalid card\(book.invalidCards == 1 ? "" : "s")" }
            if book.indexing == true { text += style.yellow(" (indexing the other contacts)") }
            if let problem = book.problem { text += " — " + style.red(problem) }
            rows.append(("evolution", text))
        }
        return rows
    }

    /// One row per khard address book (`khard  family: /home/u/.contacts/family, watching`),
    /// its problem in red, and why khard's configuration cannot be read, naming the file.
    static func khardRows(_ khard: KhardSourcesInfo, style: Style) -> [(String, String)] {
        var rows: [(String, String)] = []
        if let problem = khard.problem { rows.append(("khard", style.red(problem))) }
        for book in khard.books {
            var text = "\(book.name): \(book.folder), \(book.state)"
            if let problem = book.problem { text += " — " + (book.state == "skipped" ? style.yellow(problem) : style.red(problem)) }
            rows.append(("khard", text))
        }
        return rows
    }

    /// `active`, or the state as the shell says it, why, and the command that turns it on
    /// (`disabled: the dash shows the favorites as at login; turn it on: gnome-extensions enable …`).
    static func shellExtensionSummary(_ extensionInfo: ShellExtensionInfo, style: Style) -> String {
        let state = ShellExtensionInfo.State(rawValue: extensionInfo.state)
        var text = state == .active ? style.green(extensionInfo.state) : style.yellow(String(extensionInfo.state.map { $0 == "-" ? " " : $0 }))
        if let message = extensionInfo.message { text += " (\(message))" }
        if state != .active { text += ": the dash and the app grid show the favorites as the shell read them at login" }
        if let enable = extensionInfo.enable { text += "; turn it on: " + style.bold(enable) }
        return text
    }

    /// `on: 2 items at :1.42 /io/qactd/QuickActions/menu`, or the state and why.
    static func quicklistSummary(_ quicklist: QuicklistInfo, style: Style) -> String {
        switch QuicklistInfo.State(rawValue: quicklist.state) {
        case .on?:
            return style.green("on") + ": \(quicklist.items) item\(quicklist.items == 1 ? "" : "s") at \(quicklist.busName ?? "?") \(quicklist.objectPath ?? "")"
                + (quicklist.applicationURI.map { " for \($0)" } ?? "")
                + (quicklist.readers.map { ", shown by " + $0.joined(separator: ", ") } ?? ", shown by no dock or shell extension now")
        case .waiting?:
            return style.yellow("waiting") + (quicklist.message.map { " (\($0))" } ?? "")
        case .off?, nil:
            return quicklist.state + (quicklist.message.map { " (\($0))" } ?? "")
        }
    }

    /// One row per instance: `(plain)` for `qactd.service`; a daemon that did not answer shows why.
    static func apps(_ apps: [AppsReport.App], folder: String, style: Style) -> String {
        if apps.isEmpty { return style.dim("no qactd socket in \(folder)") }
        var table = Table(header: ["APP", "STATE", "ITEMS", "DESKTOP ENTRY"])
        for app in apps {
            let name = app.app ?? "(plain)"
            if app.answering {
                let entry = app.desktopEntry.map { $0 + (app.desktopEntryProblem.map { " (\($0))" } ?? "") } ?? "-"
                table.rows.append([name, "serving", app.items.map(String.init) ?? "-", entry])
            } else {
                table.rows.append([name, "not answering", "-", app.problem ?? ""])
            }
        }
        return table.render(style: style) { row, column, text in
            guard column == 1 else { return text }
            return apps[row].answering ? style.green(text) : style.red(text)
        }
    }

    /// `showDisplayedColumn` (`--all`, `watch`) also shows each item's usage score at `now`
    /// (seconds since 1970).
    static func list(_ reply: ListReply, showDisplayedColumn: Bool, now: Int64, style: Style) -> String {
        if reply.items.isEmpty { return style.dim("no quick actions (generation \(reply.generation))") }
        var header = ["#", "SOURCE", "TYPE", "TITLE", "SUBTITLE", "ICON"]
        if showDisplayedColumn { header.insert("SHOWN", at: 1); header.append("SCORE") }
        var table = Table(header: header)
        for listed in reply.items {
            var row = [
                String(listed.position), listed.source.rawValue, listed.item.type, listed.item.title,
                listed.item.subtitle ?? "", listed.item.icon?.configurationValue ?? "",
            ]
            if showDisplayedColumn {
                row.insert(listed.displayed ? "yes" : "no", at: 1)
                row.append(listed.usage.map { hundredths($0.score(at: now)) } ?? "0.00")
            }
            table.rows.append(row)
        }
        let body = table.render(style: style) { row, _, text in
            reply.items[row].displayed ? text : style.dim(text)
        }
        let footer = reply.launched ? "" : "\n" + style.dim("(the app has not launched yet: only static items are shown)")
        return body + footer
    }

    /// `2.97`: a score with two decimals, without Foundation's formatting.
    static func hundredths(_ value: Double) -> String {
        let hundredths = Int((max(0, value) * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100)." + (fraction < 10 ? "0" : "") + "\(fraction)"
    }

    static func trigger(_ reply: TriggerReply, style: Style) -> String {
        var lines = ["\(style.bold(reply.item.title)) (\(reply.item.type))"]
        if let contact = reply.contact {
            lines.append("  contact   \(contact.name) [\(contact.identifier)]" + (contact.email.map { " <\($0)>" } ?? ""))
        }
        switch reply.delivery {
        case .running:
            lines.append("  delivery  to the running app, " + (reply.handled ? style.green("handled") : style.yellow("not handled")))
        case .launch:
            lines.append("  delivery  at launch (pending until the app connects)")
            switch reply.launchStatus {
            case .started?:
                let place = reply.launchPID.map { " (pid \($0))" } ?? reply.launchUnit.map { " (unit \($0))" } ?? ""
                lines.append("  launch    started the LaunchCommand" + place)
            case .alreadyRunning?: lines.append("  launch    the app started earlier has not connected yet" + (reply.launchPID.map { " (pid \($0))" } ?? ""))
            case .failed?: lines.append("  launch    " + style.yellow("could not start the LaunchCommand: \(reply.launchError ?? "unknown error")"))
            case .notConfigured?, nil: lines.append("  launch    no LaunchCommand configured; start the app yourself")
            }
        case .command:
            let program = reply.commandProgram ?? "the command"
            if let pid = reply.commandPID {
                lines.append("  delivery  by its command: started '\(program)' (pid \(pid))")
            } else if let unit = reply.commandUnit {
                lines.append("  delivery  by its command: started '\(program)' (unit \(unit))")
            } else {
                lines.append("  delivery  by its command: " + style.yellow("could not start '\(program)': \(reply.commandError ?? "unknown error")"))
            }
        }
        if reply.stale {
            lines.append("  " + style.yellow("stale: the app was updated since this item was made; it is refreshed at the next resign-active"))
        }
        return lines.joined(separator: "\n")
    }

    static func pinned(_ pin: PinnedItemInfo, style: Style) -> String {
        "pinned \(style.bold(pin.item.title)) as \(pin.identifier)" + (pin.desktopFile.map { "\n  launcher  \($0)" } ?? "")
    }

    static func pins(_ pins: [PinnedItemInfo], style: Style) -> String {
        if pins.isEmpty { return style.dim("no pinned quick actions") }
        var table = Table(header: ["#", "PIN", "STATE", "TYPE", "TITLE", "LAUNCHER"])
        for (offset, pin) in pins.enumerated() {
            table.rows.append([
                String(offset + 1), pin.identifier, pin.state.rawValue, pin.item.type, pin.item.title, pin.desktopFile ?? "",
            ])
        }
        return table.render(style: style) { row, _, text in
            pins[row].state == .enabled ? text : style.dim(text)
        }
    }

    static func resignActive(_ reply: ResignActiveReply, style: Style) -> String {
        let items = "\(reply.dynamicCount) dynamic item\(reply.dynamicCount == 1 ? "" : "s")"
        let summary = reply.changed
            ? "updated: \(items), generation \(reply.generation)"
            : "unchanged: \(items), generation \(reply.generation)"
        return reply.persisted
            ? summary
            : summary + "\n" + style.red("not saved: the state file could not be written (see qactl status); the daemon keeps it in memory and retries")
    }

    static func reload(_ reply: ReloadReply, style: Style) -> String {
        "reloaded \(reply.configFile ?? "built-in defaults"): \(reply.staticItems) static item\(reply.staticItems == 1 ? "" : "s")"
    }

    static func contact(_ contact: Contact, style: Style) -> String {
        var lines = [style.bold(contact.name) + (contact.favorite ? " " + style.yellow("★ favorite") : "")]
        lines.append("  identifier  \(contact.identifier)")
        if let email = contact.email { lines.append("  email       \(email)") }
        for other in contact.emails where other != contact.email { lines.append("              \(other)") }
        return lines.joined(separator: "\n")
    }

    static func validation(file: String, _ decoded: StaticItemsFile, languages: [String], style: Style) -> String {
        var lines = ["\(file): " + style.green("valid") + ", \(decoded.items.count) static item\(decoded.items.count == 1 ? "" : "s")"
            + (decoded.appVersion.map { ", app version \($0)" } ?? "")
            + (languages.isEmpty ? "" : ", translated into \(languages.joined(separator: ", "))")]
        var table = Table(header: ["#", "TYPE", "TITLE", "SUBTITLE", "ICON"])
        for (index, item) in decoded.items.enumerated() {
            table.rows.append([String(index), item.type, item.title, item.subtitle ?? "", item.icon?.configurationValue ?? ""])
        }
        if !decoded.items.isEmpty { lines.append(table.render(style: style)) }
        return lines.joined(separator: "\n")
    }

    /// The daemon's own sentence when the error carries one, else the error name and its parameters.
    static func remoteError(name: String, parameters: [String: JSONValue]) -> String {
        if let message = parameters["message"]?.stringValue { return message }
        let shortName = name.split(separator: ".").last.map(String.init) ?? name
        switch shortName {
        case "ContactNotFound":
            if let identifier = parameters["identifier"]?.stringValue { return "No contact with identifier '\(identifier)'." }
        case "AppNotResponding":
            if let seconds = parameters["timeoutSeconds"]?.intValue { return "The app did not answer within \(seconds) s." }
        case "AppDisconnected":
            if let token = parameters["token"]?.stringValue { return "The app disconnected before answering action '\(token)'." }
        case "NoSuchAction":
            if let token = parameters["token"]?.stringValue { return "No action with token '\(token)' waits for an answer." }
        case "NoSuchPin":
            if let identifier = parameters["identifier"]?.stringValue { return "No pin '\(identifier)'; 'qactl pins' lists them." }
        case "InvalidParameter":
            if let parameter = parameters["parameter"]?.stringValue { return "The daemon rejected the parameter '\(parameter)'." }
        default: break
        }
        return VarlinkClientError.remote(name: name, parameters: parameters).description
    }

    static func describe(_ error: any Error) -> String {
        String(describing: error)
    }
}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
