#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Logging
import QuickActions
import QuickActionsProtocol
import SystemCalls

/// Keeps the per-user copy of the app's desktop entry, with one `[Desktop Action …]` per
/// displayed quick action, in `$XDG_DATA_HOME/applications`. The shell around
/// the pure `DesktopEntryExport`: it finds the app's entry, reads and writes files, and never
/// touches a file there that it did not write.
struct DesktopEntryExporter: Sendable {
    let environment: [String: String]
    let qactlPath: String?
    private var lastPublication: LauncherPublication?
    private(set) var status: DesktopEntryExportStatus?
    /// The file this daemon wrote, removed when `DesktopFile=` changes or is emptied.
    private var exportedPath: String?
    /// The pinned launchers as last written (path → bytes), so an unchanged set costs no I/O.
    private var writtenPins: [String: [UInt8]]?

    init(environment: [String: String], qactlPath: String?) {
        self.environment = environment
        self.qactlPath = qactlPath
    }

    mutating func forgetLastPublication() {
        lastPublication = nil
        writtenPins = nil
    }

    /// `$XDG_DATA_HOME`, else `~/.local/share` (a relative value is ignored, per the XDG Base Directory spec).
    var dataHome: String? { Self.dataHome(in: environment) }

    static func dataHome(in environment: [String: String]) -> String? {
        if let home = environment["XDG_DATA_HOME"], home.hasPrefix("/") { return home }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return (home == "/" ? "" : home) + "/.local/share"
    }

    /// `$XDG_DATA_DIRS`, else `/usr/local/share:/usr/share`.
    var dataDirectories: [String] {
        let listed = (environment["XDG_DATA_DIRS"] ?? "").split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        return listed.isEmpty ? ["/usr/local/share", "/usr/share"] : listed
    }

    /// Where the launcher of pin `pin` of the app `appDesktopFileID` is written: beside the
    /// app's exported entry. nil when there is no folder or the ID is no valid one.
    static func pinnedLauncherPath(environment: [String: String], appDesktopFileID: String, pin: String) -> String? {
        guard let dataHome = dataHome(in: environment),
              let name = PinnedDesktopEntry.fileName(appDesktopFileID: appDesktopFileID, pin: pin)
        else { return nil }
        return dataHome + "/applications/" + name
    }

    mutating func publish(_ publication: LauncherPublication, logger: Logger) {
        guard publication != lastPublication else { return }
        var appIcon: String?
        defer { syncPins(publication, appIcon: appIcon, logger: logger) }
        // At start-up and after a reload: files this daemon wrote under another ID, or when
        // DesktopFile= was set before the daemon stopped, go.
        let isFirstSinceStartOrReload = lastPublication == nil
        lastPublication = publication
        if isFirstSinceStartOrReload {
            removeLeftovers(
                keeping: publication.configuration.launcherDesktopFileID.flatMap { identifier in dataHome.map { $0 + "/applications/" + identifier } },
                socketPath: publication.socketPath, logger: logger)
        }
        let configuration = publication.configuration
        guard let identifier = configuration.launcherDesktopFileID, let dataHome else {
            if let exportedPath { remove(exportedPath, logger: logger) }
            exportedPath = nil
            status = configuration.launcherDesktopFileID == nil
                ? nil
                : DesktopEntryExportStatus(path: "", problem: "neither XDG_DATA_HOME nor HOME is set, so there is no folder to export to")
            return
        }
        let target = dataHome + "/applications/" + identifier
        if let exportedPath, exportedPath != target { remove(exportedPath, logger: logger) }
        var newStatus = DesktopEntryExportStatus(path: target)
        do throws(DesktopEntryExportProblem) {
            let source = try findSource(configuration.launcherDesktopFile, identifier: identifier, target: target)
            newStatus.source = source.path
            appIcon = source.document.value(of: "Icon").map(DesktopEntryEscaping.unescapedValue)
            let text = DesktopEntryExport.compose(
                source: source.document, sourcePath: source.path, socketPath: publication.socketPath, actions: actions(for: publication, in: source.document))
            newStatus.written = try writeIfChanged(Array(text.utf8), to: target, what: "quick actions", logger: logger)
            exportedPath = target
        } catch {
            newStatus.problem = error.description
            if status?.problem != error.description {
                logger.error("Not exporting the quick actions to '\(target)': \(error.description)", metadata: ["QACTD_PATH": "\(target)"])
            }
        }
        if status?.problem != nil, newStatus.problem == nil {
            logger.notice("Exporting the quick actions to '\(target)' works again.", metadata: ["QACTD_PATH": "\(target)"])
        }
        status = newStatus
    }

    // MARK: The actions

    /// One action per displayed row that goes into the desktop entry: static rows always,
    /// favorites unless `DynamicItems=quicklist`, in `List` order.
    func actions(for publication: LauncherPublication, in source: DesktopEntryDocument) -> [DesktopQuickAction] {
        let includeDynamic = publication.configuration.launcherDynamicItems == .desktopEntry
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
                icon: FreedesktopIconName.icon(for: item.icon, fallback: appIcon),
                command: command(triggering: item, socketPath: publication.socketPath)))
        }
        return actions
    }

    /// `qactl trigger --socket=… --type=… [--contact=…]`: one argument each, in the `--name=value`
    /// form so that a value starting with `-` is never read as an option.
    func command(triggering item: ShortcutItem, socketPath: String) -> [String] {
        var command = [qactlPath ?? "qactl", "trigger", "--socket=\(socketPath)", "--type=\(item.type)"]
        if let contact = item.contactIdentifier { command.append("--contact=\(contact)") }
        return command
    }

    /// The app's own entry for `DesktopFile=` (a path or an ID), as a launcher finds it; nil when
    /// there is none or it cannot be read. The notifications take the app's name and icon from it.
    func appEntry(_ setting: String) -> DesktopEntryDocument? {
        let identifier = setting.split(separator: "/").last.map(String.init) ?? setting
        let target = dataHome.map { $0 + "/applications/" + identifier } ?? ""
        return (try? findSource(setting, identifier: identifier, target: target))?.document
    }

    /// The app's own entry and where it was found, as `appEntry`; an entry of the person's own
    /// where the copy would go is the app's too (it only keeps the copy from being written).
    func appEntryLocation(_ setting: String) -> (path: String, document: DesktopEntryDocument)? {
        let identifier = setting.split(separator: "/").last.map(String.init) ?? setting
        let target = dataHome.map { $0 + "/applications/" + identifier } ?? ""
        do throws(DesktopEntryExportProblem) {
            let source = try findSource(setting, identifier: identifier, target: target)
            return (source.path, source.document)
        } catch .foreignFile(let path, isSource: true) {
            return (try? read(path))?.map { (path, $0) }
        } catch {
            return nil
        }
    }

    // MARK: Pinned launchers

    /// One launcher per pin beside the exported entry; every launcher of this daemon's that is
    /// no longer pinned (all of them without `DesktopFile=`) is removed.
    private mutating func syncPins(_ publication: LauncherPublication, appIcon: String?, logger: Logger) {
        guard let dataHome else { return }
        var wanted: [String: [UInt8]] = [:]
        if let appID = publication.configuration.launcherDesktopFileID {
            for pin in publication.pins {
                guard let path = Self.pinnedLauncherPath(environment: environment, appDesktopFileID: appID, pin: pin.identifier) else { continue }
                let text = PinnedDesktopEntry.compose(
                    pin: pin, name: pin.item.title, icon: FreedesktopIconName.icon(for: pin.item.icon, fallback: appIcon),
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
        let folder = dataHome + "/applications"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for name in names.sorted() where name.contains(PinnedDesktopEntry.infix) && name.hasSuffix(DesktopFileID.suffix) {
            let path = folder + "/" + name
            guard wanted[path] == nil, let document = try? read(path), DesktopEntryExport.isGenerated(document),
                  document.value(of: PinnedDesktopEntry.pinnedKey) != nil,
                  document.value(of: DesktopEntryExport.socketKey).map(DesktopEntryEscaping.unescapedValue) == publication.socketPath
            else { continue }
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

    private struct Source {
        var path: String
        var document: DesktopEntryDocument
    }

    /// The app's own entry: a path as given, or the ID looked up in `$XDG_DATA_HOME/applications`,
    /// then each `$XDG_DATA_DIRS/*/applications`, skipping the copy this daemon wrote.
    private func findSource(_ setting: String, identifier: String, target: String) throws(DesktopEntryExportProblem) -> Source {
        if setting.hasPrefix("/") {
            guard let source = try readSource(setting, target: target) else { throw .sourceMissing(setting, searched: [setting]) }
            return source
        }
        var searched: [String] = []
        for directory in [dataHome].compactMap({ $0 }) + dataDirectories {
            for relative in DesktopFileID.relativePaths(of: identifier) {
                let path = directory + "/applications/" + relative
                searched.append(path)
                if let source = try readSource(path, target: target) { return source }
            }
        }
        throw .sourceMissing(identifier, searched: searched)
    }

    /// nil when the file does not exist, or is this daemon's own copy (look further).
    private func readSource(_ path: String, target: String) throws(DesktopEntryExportProblem) -> Source? {
        guard let document = try read(path) else { return nil }
        if path == target {
            if DesktopEntryExport.isGenerated(document) { return nil }
            throw .foreignFile(path, isSource: true)
        }
        return Source(path: path, document: document)
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
        do {
            let existing = try FileIO.readFileIfPresent(target)
            if let existing {
                let document = String(validating: existing, as: UTF8.self).flatMap { try? DesktopEntryDocument(parsing: $0) }
                guard let document, DesktopEntryExport.isGenerated(document) else { throw DesktopEntryExportProblem.foreignFile(target, isSource: false) }
                if existing == bytes { return modificationDate(target) ?? Date() }
            }
            let folder = String(target[..<(target.lastIndex(of: "/") ?? target.startIndex)])
            try makeDirectories(folder, mode: 0o755)
            // Where there was no file, a file someone else writes meanwhile is not replaced either.
            try FileIO.replaceAtomically(target, with: [bytes], mode: 0o644, replacing: existing != nil)
        } catch let error as AtomicReplaceError where error.error.errno == EEXIST {
            throw .foreignFile(target, isSource: false)
        } catch let error as AtomicReplaceError {
            throw .unwritable(target, error.description)
        } catch let error as DesktopEntryExportProblem {
            throw error
        } catch let error as SystemCallError {
            throw .unwritable(target, error.description)
        } catch {
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
        var exporter = DesktopEntryExporter(environment: environment, qactlPath: nil)
        exporter.removeLeftovers(keeping: nil, socketPath: socketPath, includingPins: true, logger: logger)
    }

    /// The files in `$XDG_DATA_HOME/applications` that a daemon on this socket wrote, except `keeping`
    /// (and except the pinned launchers, unless `includingPins`).
    private mutating func removeLeftovers(keeping: String?, socketPath: String, includingPins: Bool = false, logger: Logger) {
        guard let dataHome else { return }
        let folder = dataHome + "/applications"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names.sorted() where name.hasSuffix(DesktopFileID.suffix) {
            let path = folder + "/" + name
            // Pinned launchers are `syncPins`'s: they outlive a change of the exported entry.
            guard path != keeping, let document = try? read(path), DesktopEntryExport.isGenerated(document),
                  includingPins || document.value(of: PinnedDesktopEntry.pinnedKey) == nil,
                  document.value(of: DesktopEntryExport.socketKey).map(DesktopEntryEscaping.unescapedValue) == socketPath
            else { continue }
            remove(path, logger: logger)
            if exportedPath == path { exportedPath = nil }
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

/// Why the desktop entry is not exported, named with its file.
enum DesktopEntryExportProblem: Error, Equatable, CustomStringConvertible {
    case sourceMissing(String, searched: [String])
    case foreignFile(String, isSource: Bool)
    case notADesktopEntry(String, String)
    case unreadable(String, String)
    case unwritable(String, String)

    var description: String {
        switch self {
        case .sourceMissing(let name, let searched):
            return "the app's desktop entry '\(name)' was not found (looked at \(searched.joined(separator: ", ")))"
        case .foreignFile(let path, let isSource):
            return "'\(path)' was not written by qactd, so it is left alone"
                + (isSource
                    ? "; it is the app's own entry, which the export would replace: move it to another data folder (such as /usr/local/share/applications) or set DesktopFile= to its new path"
                    : "; move it away and reload to export")
        case .notADesktopEntry(let path, let reason):
            return "'\(path)' is not a desktop entry: \(reason)"
        case .unreadable(let path, let reason):
            return "cannot read '\(path)': \(reason)"
        case .unwritable(let path, let reason):
            return "cannot write '\(path)': \(reason)"
        }
    }
}
