import QuickActions
import QuickActionsProtocol

/// `[Launcher] DesktopFile=auto`: the person's mail app, the default application for
/// `mailto:` URIs as the freedesktop MIME Applications specification chooses it from the
/// `mimeapps.list` files (the pure `MimeAppsChoice`), and the favorites' default command: that
/// app's own `Exec` with a `mailto:` URI. Read at start-up, at each reload, and again whenever the
/// files it is chosen from change (`DefaultMailAppWatcher`).
enum DefaultMailApp {
    /// Resolves `DesktopFile=auto` and, when `[Actions]` has no command for the favorites, gives
    /// them the app's own `Exec` (also for a named app whose entry handles `mailto:`).
    /// An app's instance (`qactd --app NAME`) serves the app its own file names: `auto` is the
    /// plain daemon's, or two instances would both export the mail app's entry.
    static func resolve(_ configuration: inout DaemonConfiguration, environment: [String: String], instance: InstanceName = .plain) {
        let entries = DesktopEntryExporter(environment: environment, qactlPath: nil)
        var entry: DesktopEntryExporter.AppEntry?
        switch configuration.launcherDesktopFileSetting {
        case .auto where instance.app != nil:
            configuration.defaultApp = DefaultAppChoice(
                problem: "DesktopFile=auto is the plain qactd's mail app; an app's instance serves the app its DesktopFile= names")
        case .none, .named:
            guard case .named(let setting) = configuration.launcherDesktopFileSetting,
                  let found = entries.appEntryLocation(setting), declaresMailto(found.document)
            else { break }
            entry = found
        case .auto:
            var choice = DefaultAppChoice()
            let lists = MimeAppsList.locations(environment: environment).compactMap(readList)
            choice.choice = MimeAppsChoice.choose(
                DefaultAppChoice.mimeType, lists: lists,
                isInstalled: { id in entries.appEntryLocation(id).map { !isHidden($0.document) } ?? false },
                declaring: { declaringEntries(in: entries) })
            if let chosen = choice.choice, let found = entries.appEntryLocation(chosen.desktopFileID) {
                configuration.launcherDesktopFile = chosen.desktopFileID
                choice.entryPath = found.path
                entry = found
            } else {
                choice.problem = "no installed application is the default for \(DefaultAppChoice.mimeType) in any"
                    + " mimeapps.list, nor declares it in its desktop entry"
            }
            configuration.defaultApp = choice
        }
        if let entry, configuration.actions[configuration.favoriteType] == nil {
            do throws(DesktopEntryExec.Problem) {
                configuration.actions[configuration.favoriteType] = try mailtoCommand(entry)
                configuration.favoriteActionSource = .appExec(entryPath: entry.path)
            } catch {
                configuration.defaultApp?.problem = "\(entry.path): \(error), so a favorite has no command"
            }
        }
        configuration.applyDefaultsDerivedFromOtherKeys()
    }

    /// Whether the choice is the daemon's to follow as the person changes it: `DesktopFile=auto`
    /// on the plain instance (an app's instance serves the app it names).
    static func isFollowed(_ configuration: DaemonConfiguration, instance: InstanceName) -> Bool {
        configuration.launcherDesktopFileSetting == .auto && instance.app == nil
    }

    /// The app's own `Exec` (a copy of qactd's keeps it as it is) with `mailto:{email:uri}`
    /// where it takes a URL.
    private static func mailtoCommand(_ entry: DesktopEntryExporter.AppEntry) throws(DesktopEntryExec.Problem) -> CommandTemplate {
        let value = { (key: String) in entry.document.value(of: key).map(DesktopEntryEscaping.unescapedValue) }
        let arguments = try DesktopEntryExec.mailtoTemplate(
            exec: DesktopEntryEscaping.unescapedValue(entry.document.value(of: "Exec") ?? ""), icon: value("Icon"), name: value("Name"), location: entry.path)
        // Cannot fail: the program is the app's text, every brace of it doubled.
        guard let template = try? CommandTemplate(arguments: arguments) else { throw .empty }
        return template
    }

    private static func readList(_ path: String) -> MimeAppsList? {
        guard let bytes = try? FileIO.readFileIfPresent(path), let text = String(validating: bytes, as: UTF8.self) else { return nil }
        return MimeAppsList(path: path, text: text)
    }

    private static func isHidden(_ document: DesktopEntryDocument) -> Bool {
        document.value(of: "Hidden")?.lowercased() == "true"
    }

    private static func declaresMailto(_ document: DesktopEntryDocument) -> Bool {
        DesktopEntryList.split(document.value(of: "MimeType") ?? "").contains { $0.lowercased() == DefaultAppChoice.mimeType }
    }

    /// The IDs of the entries directly in the applications folders that list `mailto:` in
    /// `MimeType=`, most preferred folder first, each ID once (the first folder's entry is the one
    /// a launcher runs); qactd's own copies are not the app's.
    private static func declaringEntries(in entries: DesktopEntryExporter) -> [String] {
        var seen: Set<String> = []
        var declaring: [String] = []
        for folder in XDGFolders.applications(environment: entries.environment) {
            for name in DesktopEntryExporter.desktopFileNames(in: folder) where seen.insert(name).inserted {
                guard let found = entries.appEntryLocation(name), found.path == folder + "/" + name,
                      !isHidden(found.document), declaresMailto(found.document)
                else { continue }
                declaring.append(name)
            }
        }
        return declaring
    }
}
