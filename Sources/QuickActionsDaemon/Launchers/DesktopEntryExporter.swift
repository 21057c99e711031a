import FoundationEssentials
import Glibc
import Logging
import QuickActions
import QuickActionsProtocol
import SystemCalls

/// Keeps the per-user copy of the app's desktop entry, with one `[Desktop Action …]` per
/// displayed quick action, in qactd's exports folder (`ExportFolders`). The shell around
/// the pure `DesktopEntryExport`: it finds the app's entry, reads and writes files, never
/// touches a file that it did not write, and follows the app's entry: `appEntryFolders` are
/// the folders whose changes call for `refresh`.
struct DesktopEntryExporter: Sendable {
    let environment: [String: String]
    let qactlPath: String?
    /// nil when neither `XDG_DATA_HOME` nor `HOME` is set: there is no folder to export to.
    let folders: ExportFolders?
    private var lastPublication: LauncherPublication?
    /// The folders to watch for the app's entry (and the names in each that matter), as last
    /// looked up; empty without `DesktopFile=`.
    private(set) var appEntryFolders: [String: Set<String>] = [:]
    private(set) var status: DesktopEntryExportStatus?
    /// The pinned launchers as last written (path → bytes), so an unchanged set costs no I/O.
    private var writtenPins: [String: [UInt8]]?
    /// The favorites' faces; nil without a data folder.
    private var faceFiles: FaceFiles?
    /// The face of each favorite shown, by contact identifier, for the last publication; the
    /// quicklist shows them too (`DesktopEntryWriter.onFacesChange`).
    private(set) var faces: [String: FaceFile] = [:]

    init(environment: [String: String], qactlPath: String?) {
        self.environment = environment
        self.qactlPath = qactlPath
        folders = ExportFolders(environment: environment)
        faceFiles = folders.map { FaceFiles(dataHome: $0.dataHome) }
    }

    mutating func forgetLastPublication() {
        lastPublication = nil
        writtenPins = nil
    }

    /// The app's first export waits for the app to stop (`ExportRetirement.firstExport`).
    private(set) var firstExportWaiting = false

    /// The apps running in GNOME Shell changed: a first export that waited is tried again, and
    /// the retired copies of apps that stopped go.
    mutating func runningAppsChanged(logger: Logger) {
        if firstExportWaiting { refresh(logger: logger) }
        guard let lastPublication, let folders else { return }
        removeLeftovers(
            in: folders.exports, keeping: lastPublication.configuration.launcherDesktopFileID.map { folders.exports + "/" + $0 },
            socketPath: lastPublication.socketPath, logger: logger)
    }

    /// Whether the entry holds the favorites (`DynamicItemsPlacement`), as the last export had it.
    private(set) var dynamicItemsInEntry = true

    mutating func publish(_ publication: LauncherPublication, dynamicItemsInEntry: Bool, logger: Logger) {
        guard publication != lastPublication || dynamicItemsInEntry != self.dynamicItemsInEntry else { return }
        self.dynamicItemsInEntry = dynamicItemsInEntry
        export(publication, logger: logger)
    }

    /// The app's entry may have changed (a change in `appEntryFolders`): the last publication is
    /// exported again from it, or the export removed while there is none.
    mutating func refresh(logger: Logger) {
        guard let lastPublication else { return }
        export(lastPublication, logger: logger)
    }

    /// The favorites go into the entry, or leave it: the last publication exported again.
    mutating func refreshPlacing(dynamicItemsInEntry: Bool, logger: Logger) {
        self.dynamicItemsInEntry = dynamicItemsInEntry
        refresh(logger: logger)
    }

    private mutating func export(_ publication: LauncherPublication, logger: Logger) {
        var appIcon: String?
        defer { syncPins(publication, appIcon: appIcon, logger: logger) }
        // At start-up, after a reload and whenever DesktopFile= names another app or none: files
        // this daemon wrote under another ID (now, or before it stopped) go, and so do those an
        // older qactd left in the person's own applications folder.
        let configuration = publication.configuration
        let isFirstForThisApp = lastPublication == nil || lastPublication?.configuration.launcherDesktopFileID != configuration.launcherDesktopFileID
        lastPublication = publication
        faces = faceFiles?.sync(publication.faces, appDesktopFileID: configuration.launcherDesktopFileID, logger: logger) ?? [:]
        if isFirstForThisApp, let folders {
            removeLeftovers(
                in: folders.exports, keeping: configuration.launcherDesktopFileID.map { folders.exports + "/" + $0 },
                socketPath: publication.socketPath, logger: logger)
            removeOlderVersionsLaunchers(socketPath: publication.socketPath, pins: Set(publication.pins.map(\.identifier)), logger: logger)
        }
        guard let identifier = configuration.launcherDesktopFileID, let folders else {
            appEntryFolders = [:]
            status = configuration.launcherDesktopFileID == nil
                ? nil
                : DesktopEntryExportStatus(path: "", problem: "neither XDG_DATA_HOME nor HOME is set, so there is no folder to export to")
            return
        }
        let target = folders.exports + "/" + identifier
        appEntryFolders = watchedFolders(configuration.launcherDesktopFile, identifier: identifier, folders: folders)
        var newStatus = DesktopEntryExportStatus(path: target)
        firstExportWaiting = false
        if !folders.exportsAreOnDataDirectories {
            newStatus.notice = folders.notOnDataDirectoriesNotice
            if status?.notice != newStatus.notice { logger.warning("\(folders.notOnDataDirectoriesNotice).", metadata: ["QACTD_PATH": "\(folders.exportsShare)"]) }
        }
        do throws(DesktopEntryExportProblem) {
            let source = try findSource(configuration.launcherDesktopFile, identifier: identifier, refusingPersonal: true)
            newStatus.source = source.path
            appIcon = source.document.value(of: "Icon").map(DesktopEntryEscaping.unescapedValue)
            let text = DesktopEntryExport.compose(
                source: source.document, sourcePath: source.path, socketPath: publication.socketPath, actions: actions(for: publication, in: source.document))
            if access(target, F_OK) != 0,
               ExportRetirement.firstExport(of: identifier, shell: ShellExtensionProbe(environment: environment).shell()) == .wait {
                firstExportWaiting = true
                newStatus.notice = [newStatus.notice, Self.waitingNotice].compactMap { $0 }.joined(separator: "; ")
                if status?.notice != newStatus.notice {
                    logger.notice("Not exporting the quick actions to '\(target)' yet: \(Self.waitingNotice).", metadata: ["QACTD_PATH": "\(target)"])
                }
            } else {
                newStatus.written = try writeIfChanged(Array(text.utf8), to: target, what: "quick actions", logger: logger)
            }
        } catch {
            newStatus.problem = error.description
            if status?.problem != error.description {
                logger.error("Not exporting the quick actions to '\(target)': \(error.description)", metadata: ["QACTD_PATH": "\(target)"])
            }
            // No entry of the app's (uninstalled), or the person's own in front of the export:
            // the export goes too, so no launcher shows an app that is gone or hides theirs. It
            // comes back with the entry.
            if error.removesTheExport, let document = try? read(target), DesktopEntryExport.isGenerated(document) {
                let reason: ExportRetirement.Reason = if case .shadowedByPersonalEntry = error { .personalEntryInFront } else { .appEntryGone }
                dispose(target, document: document, reason: reason, socketPath: publication.socketPath, shell: { .noGnomeShell }, logger: logger)
            }
        }
        if status?.problem != nil, newStatus.problem == nil {
            logger.notice("Exporting the quick actions to '\(target)' works again.", metadata: ["QACTD_PATH": "\(target)"])
        }
        status = newStatus
    }

    /// What `Status` says while the first export waits.
    static let waitingNotice = "the app runs in GNOME Shell, which would move its open windows to a second icon if its entry became"
        + " another file now; the quick actions are exported when it stops"

    /// Every folder the app's entry may appear, change or go in, for `DesktopFile=` `setting`.
    private func watchedFolders(_ setting: String, identifier: String, folders: ExportFolders) -> [String: Set<String>] {
        let candidates = folders.candidates(for: identifier)
        let paths = candidates.personal + (setting.hasPrefix("/") ? [setting] : candidates.data)
        return ExportFolders.watchedFolders(for: paths) { path in
            var info = stat()
            return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
        }
    }

    // MARK: The actions

    /// One action per displayed row that goes into the desktop entry: static rows always,
    /// favorites while `dynamicItemsInEntry`, in `List` order.
    func actions(for publication: LauncherPublication, in source: DesktopEntryDocument) -> [DesktopQuickAction] {
        let includeDynamic = dynamicItemsInEntry
        // The app's own action identifiers, listed or only given a group, are never reused.
        let actionGroupPrefix = "Desktop Action "
        var taken = Set(source.actionIdentifiers + source.groupNames.compactMap {
            $0.hasPrefix(actionGroupPrefix) ? String($0.dropFirst(actionGroupPrefix.count)) : nil
        })
        let appIcon = source.value(of: "Icon").map(DesktopEntryEscaping.unescapedValue)
        let languages = publication.localization.tables.keys.sorted()
        var actions: [DesktopQuickAction] = []
        for (row, untranslated) in zip(publication.displayed.items, publication.untranslated.items) {
            guard row.source == .static || includeDynamic else { continue }
            let item = row.item
            // A control character other than a newline, tab or return has no escape in a desktop
            // entry, so such an item could not be named exactly in its command: it is left out.
            guard ([item.type] + [item.contactIdentifier].compactMap { $0 }).allSatisfy(DesktopEntryEscaping.isRepresentable) else { continue }
            let identifier = DesktopActionIdentifier.unique(
                DesktopActionIdentifier.make(type: item.type, contactIdentifier: item.contactIdentifier), avoiding: taken)
            taken.insert(identifier)
            var localizedNames: [DesktopQuickAction.LocalizedName] = []
            if row.source == .static {
                var seenLocales: Set<String> = []
                for language in languages {
                    guard let locale = DesktopEntryLocale.locale(forLanguage: language), seenLocales.insert(locale).inserted else { continue }
                    localizedNames.append(DesktopQuickAction.LocalizedName(
                        locale: locale,
                        name: publication.localization.string(for: untranslated.item.title, preference: LanguagePreference(languages: [language]))))
                }
            }
            actions.append(DesktopQuickAction(
                identifier: identifier, name: item.title, localizedNames: localizedNames,
                icon: face(of: item) ?? FreedesktopIconName.icon(for: item.icon, fallback: appIcon),
                command: command(triggering: item, socketPath: publication.socketPath)))
        }
        return actions
    }

    /// A favorite's face file (`FavoriteFaces=yes`); nil for any other item.
    private func face(of item: ShortcutItem) -> String? {
        item.contactIdentifier.flatMap { faces[$0]?.path }
    }

    /// `qactl trigger --socket=… --type=… [--contact=…]`: one argument each, in the `--name=value`
    /// form so that a value starting with `-` is never read as an option.
    func command(triggering item: ShortcutItem, socketPath: String) -> [String] {
        var command = [qactlPath ?? "qactl", "trigger", "--socket=\(socketPath)", "--type=\(item.type)"]
        if let contact = item.contactIdentifier { command.append("--contact=\(contact)") }
        return command
    }

    /// The app's own entry for `DesktopFile=` (a path or an ID) and where it was found, as a
    /// launcher finds it; nil when there is none or it cannot be read. An entry of the person's
    /// own where the copy would go is the app's too (it only keeps the copy from being written).
    func appEntryLocation(_ setting: String) -> AppEntry? {
        let identifier = setting.split(separator: "/").last.map(String.init) ?? setting
        return try? findSource(setting, identifier: identifier, refusingPersonal: false)
    }

    // MARK: Pinned launchers

    /// One launcher per pin beside the exported entry; every launcher of this daemon's that is
    /// no longer pinned (all of them without `DesktopFile=`) is removed.
    private mutating func syncPins(_ publication: LauncherPublication, appIcon: String?, logger: Logger) {
        guard let folders else { return }
        var wanted: [String: [UInt8]] = [:]
        if let appID = publication.configuration.launcherDesktopFileID {
            for pin in publication.pins {
                guard let path = folders.pinnedLauncher(appDesktopFileID: appID, pin: pin.identifier) else { continue }
                let text = PinnedDesktopEntry.compose(
                    pin: pin, name: pin.item.title, icon: face(of: pin.item) ?? FreedesktopIconName.icon(for: pin.item.icon, fallback: appIcon),
                    command: command(pinned: pin.identifier, socketPath: publication.socketPath), socketPath: publication.socketPath)
                wanted[path] = Array(text.utf8)
            }
        }
        guard wanted != writtenPins else { return }
        var written: [String: [UInt8]] = [:]
        for (path, bytes) in wanted.sorted(by: { $0.key < $1.key }) {
            do throws(DesktopEntryExportProblem) {
                _ = try writeIfChanged(bytes, to: path, what: "pinned quick action", logger: logger)
                written[path] = bytes
            } catch {
                logger.error("Not writing the pinned quick action '\(path)': \(error.description)", metadata: ["QACTD_PATH": "\(path)"])
            }
        }
        for (path, document) in launchers(in: folders.exports, socketPath: publication.socketPath)
        where wanted[path] == nil && document.value(of: PinnedDesktopEntry.pinnedKey) != nil {
            remove(path, logger: logger)
        }
        // A write that failed is tried again with the next publication.
        writtenPins = written.count == wanted.count ? wanted : nil
    }

    /// `qactl trigger --socket=… --pinned=…`: the daemon resolves the pin when it is chosen, so
    /// a disabled pin triggers nothing, and the launcher's command never changes.
    func command(pinned identifier: String, socketPath: String) -> [String] {
        [qactlPath ?? "qactl", "trigger", "--socket=\(socketPath)", "--pinned=\(identifier)"]
    }

    // MARK: Files

    typealias AppEntry = (path: String, document: DesktopEntryDocument)

    /// The app's own entry: a path as given, or the ID looked up in `$XDG_DATA_HOME/applications`,
    /// then each `$XDG_DATA_DIRS/*/applications` but qactd's exports, skipping any copy a qactd
    /// wrote. With `refusingPersonal`, an entry of the person's own under that ID in
    /// `$XDG_DATA_HOME/applications` is a problem: launchers read it before every data folder,
    /// so an export would never be seen, and it is theirs, never to be replaced.
    private func findSource(_ setting: String, identifier: String, refusingPersonal: Bool) throws(DesktopEntryExportProblem) -> AppEntry {
        guard let folders else { throw .sourceMissing(identifier, searched: []) }
        let candidates = folders.candidates(for: identifier)
        for path in candidates.personal {
            guard let source = try readSource(path) else { continue }
            if refusingPersonal { throw .shadowedByPersonalEntry(path) }
            return source
        }
        if setting.hasPrefix("/") {
            guard let source = try readSource(setting) else { throw .sourceMissing(setting, searched: [setting]) }
            return source
        }
        for path in candidates.data {
            if let source = try readSource(path) { return source }
        }
        throw .sourceMissing(identifier, searched: candidates.personal + candidates.data)
    }

    /// nil when the file does not exist, or is a copy some qactd wrote (look further).
    private func readSource(_ path: String) throws(DesktopEntryExportProblem) -> AppEntry? {
        guard let document = try read(path), !DesktopEntryExport.isGenerated(document) else { return nil }
        return (path, document)
    }

    private func read(_ path: String) throws(DesktopEntryExportProblem) -> DesktopEntryDocument? {
        let bytes: [UInt8]
        do {
            guard let read = try FileIO.readFileIfPresent(path) else { return nil }
            bytes = read
        } catch {
            if error.errno == ENOTDIR || error.errno == EISDIR { return nil }
            throw .unreadable(path, error.description)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notADesktopEntry(path, "it is not UTF-8") }
        do {
            return try DesktopEntryDocument(parsing: text)
        } catch {
            throw .notADesktopEntry(path, error.description)
        }
    }

    /// Temporary file and rename in the same folder (which also bumps the folder's mtime that
    /// KDE's cache checks), only when the bytes differ; a file there that qactd did not write
    /// is left alone. Returns when the file on disk got these bytes.
    private func writeIfChanged(_ bytes: [UInt8], to target: String, what: String, logger: Logger) throws(DesktopEntryExportProblem) -> Date {
        let existing: [UInt8]?
        do throws(SystemCallError) {
            existing = try FileIO.readFileIfPresent(target)
        } catch {
            throw .unwritable(target, error.description)
        }
        if let existing {
            let document = String(validating: existing, as: UTF8.self).flatMap { try? DesktopEntryDocument(parsing: $0) }
            guard let document, DesktopEntryExport.isGenerated(document) else { throw .foreignFile(target) }
            if existing == bytes { return modificationDate(target) ?? Date() }
        }
        do {
            try makeDirectories(String(target[..<(target.lastIndex(of: "/") ?? target.startIndex)]), mode: 0o755)
            // Where there was no file, a file someone else writes meanwhile is not replaced either.
            try FileIO.replaceAtomically(target, with: bytes, mode: 0o644, replacing: existing != nil)
        } catch let error as AtomicReplaceError where error.error.errno == EEXIST {
            throw .foreignFile(target)
        } catch {
            // A SystemCallError or an AtomicReplaceError, each described by the system call's error.
            throw .unwritable(target, "\(error)")
        }
        logger.info("Exported the \(what) to '\(target)'.", metadata: ["QACTD_PATH": "\(target)"])
        return Date()
    }

    private func modificationDate(_ path: String) -> Date? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec) + TimeInterval(info.st_mtim.tv_nsec) / 1e9)
    }

    /// An app whose configuration was removed takes its launchers with it: the exported entry and
    /// the pinned ones, found by the socket they name (the app's default one), rather than leaving
    /// icons that run a daemon which will not start. Its state, pins included, stays, so the
    /// launchers come back with the configuration.
    static func removeLaunchers(ofAppWithoutConfiguration instance: InstanceName, environment: [String: String], logger: Logger) {
        let socketPath = InstancePaths.socketPath(
            of: instance,
            runtimeFolder: InstancePaths.runtimeFolder(xdgRuntimeDirectory: environment["XDG_RUNTIME_DIR"], userID: getuid()))
        let exporter = DesktopEntryExporter(environment: environment, qactlPath: nil)
        guard let folders = exporter.folders else { return }
        for folder in [folders.exports, folders.personal] {
            exporter.removeLeftovers(in: folder, keeping: nil, socketPath: socketPath, includingPins: true, logger: logger)
        }
    }

    /// The launchers an older qactd on this socket wrote in the person's own applications folder,
    /// where they shadowed the app's entry and outlived the package: its exported entry goes
    /// (the exports folder has the current one), and so does each pinned launcher whose pin is in
    /// `pins` (written anew in the exports folder). One whose pin is unknown is kept and reported:
    /// nothing proves it stale.
    private func removeOlderVersionsLaunchers(socketPath: String, pins: Set<String>, logger: Logger) {
        guard let folders else { return }
        for (path, document) in launchers(in: folders.personal, socketPath: socketPath) {
            if let pin = document.value(of: PinnedDesktopEntry.pinnedKey), !pins.contains(pin) {
                logger.warning(
                    "Keeping '\(path)', a pinned quick action an older qactd wrote: its pin '\(pin)' is not in the state, so nothing proves it stale; remove it by hand if it is, ignoring.",
                    metadata: ["QACTD_PATH": "\(path)"])
            } else {
                remove(path, logger: logger)
            }
        }
    }

    /// The files in `folder` that a daemon on this socket wrote, except `keeping` (and except the
    /// pinned launchers, unless `includingPins`). An app's copy in the exports folder goes as
    /// `ExportRetirement` decides; the person's own folder only had older versions' files, which
    /// no shell resolves in place of anything, and those go.
    private func removeLeftovers(in folder: String, keeping: String?, socketPath: String, includingPins: Bool = false, logger: Logger) {
        // Asked once, and only when a copy may be retired: bus round trips.
        var asked: ExportRetirement.Shell?
        let shell = {
            if let asked { return asked }
            let answer = ShellExtensionProbe(environment: environment).shell()
            asked = answer
            return answer
        }
        for (path, document) in launchers(in: folder, socketPath: socketPath) {
            // Pinned launchers are `syncPins`'s: they outlive a change of the exported entry.
            let pinned = document.value(of: PinnedDesktopEntry.pinnedKey) != nil
            guard path != keeping, includingPins || !pinned else { continue }
            if pinned || folder != folders?.exports {
                remove(path, logger: logger)
            } else {
                dispose(
                    path, document: document, reason: DesktopEntryExport.isRetired(document) ? .alreadyRetired : .noLongerExported,
                    socketPath: socketPath, shell: shell, logger: logger)
            }
        }
    }

    /// Deletes, retires or keeps the app's copy at `path` (named by its desktop ID) as
    /// `ExportRetirement` decides for `reason`. A copy whose app's entry cannot be read any more
    /// is deleted: there is nothing to retire it to, and the ID resolves to no file of the app's
    /// either way.
    private func dispose(
        _ path: String, document: DesktopEntryDocument, reason: ExportRetirement.Reason, socketPath: String,
        shell: () -> ExportRetirement.Shell, logger: Logger
    ) {
        let desktopFileID = String(path[path.index(after: path.lastIndex(of: "/") ?? path.startIndex)...])
        switch ExportRetirement.disposal(of: desktopFileID, reason, shell: ExportRetirement.asksTheShell(reason) ? shell() : .noGnomeShell) {
        case .keep:
            return
        case .delete:
            remove(path, logger: logger)
        case .retire:
            guard let sourcePath = document.value(of: DesktopEntryExport.sourceKey).map(DesktopEntryEscaping.unescapedValue),
                  let source = try? readSource(sourcePath)
            else {
                remove(path, logger: logger)
                return
            }
            let text = DesktopEntryExport.composeRetired(source: source.document, sourcePath: source.path, socketPath: socketPath)
            do throws(DesktopEntryExportProblem) {
                _ = try writeIfChanged(Array(text.utf8), to: path, what: "retired copy of the app's entry (kept while GNOME Shell may hold it)", logger: logger)
            } catch {
                logger.warning("Could not retire the exported quick actions '\(path)': \(error.description)", metadata: ["QACTD_PATH": "\(path)"])
            }
        }
    }

    /// The desktop entries in `folder` that a daemon on `socketPath` wrote, by name.
    private func launchers(in folder: String, socketPath: String) -> [AppEntry] {
        Self.desktopFileNames(in: folder).compactMap { name in
            let path = folder + "/" + name
            guard let document = try? read(path), DesktopEntryExport.isGenerated(document),
                  document.value(of: DesktopEntryExport.socketKey).map(DesktopEntryEscaping.unescapedValue) == socketPath
            else { return nil }
            return (path, document)
        }
    }

    /// The names of the desktop entries in `folder`, sorted; none when it cannot be listed.
    static func desktopFileNames(in folder: String) -> [String] {
        ((try? directoryEntryNames(folder)) ?? []).filter { $0.hasSuffix(DesktopFileID.suffix) }.sorted()
    }

    /// The pinned launchers in the exports folder that a daemon on `socketPath` wrote for the app
    /// `appDesktopFileID`, as the pins they say they are (`PinnedDesktopEntry.pin(from:)`): a
    /// daemon that starts without a state adopts them rather than removing them.
    static func pinnedLaunchers(environment: [String: String], appDesktopFileID: String, socketPath: String) -> [PinnedItem] {
        let exporter = DesktopEntryExporter(environment: environment, qactlPath: nil)
        guard let folders = exporter.folders else { return [] }
        return exporter.launchers(in: folders.exports, socketPath: socketPath).compactMap { path, document in
            guard let pin = PinnedDesktopEntry.pin(from: document),
                  path == folders.pinnedLauncher(appDesktopFileID: appDesktopFileID, pin: pin.identifier)
            else { return nil }
            return pin
        }
    }

    /// Removes a file this daemon wrote; one it did not write (or no longer wrote) stays.
    private func remove(_ path: String, logger: Logger) {
        guard let document = try? read(path), DesktopEntryExport.isGenerated(document) else { return }
        if unlink(path) == 0 {
            logger.info("Removed the exported quick actions '\(path)'.", metadata: ["QACTD_PATH": "\(path)"])
        } else {
            logger.warning("Could not remove the exported quick actions '\(path)': \(errnoText(errno))", metadata: ["QACTD_PATH": "\(path)"])
        }
    }
}
