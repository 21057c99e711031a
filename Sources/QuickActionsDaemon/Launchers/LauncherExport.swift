import FoundationEssentials
import Glibc
import Logging
import QuickActions
import QuickActionsProtocol
import SystemCalls

/// What the launcher exporters are handed after every change (`DaemonCore.publishToLaunchers`).
struct LauncherPublication: Equatable, Sendable {
    /// Exactly what `List` shows (static items first, then favorites, cut at the display
    /// limit; only static items before the first launch), in the daemon's language.
    var displayed: QuickActionsListing
    /// The same rows before translation: static titles are the keys of `localization`.
    var untranslated: QuickActionsListing
    var localization: Localization
    var configuration: DaemonConfiguration
    /// The socket this daemon serves, which every exported command names explicitly.
    var socketPath: String
    /// The pinned items, each a launcher of its own (static titles translated).
    var pins: [PinnedItem] = []
    /// The favorites shown (displayed or pinned) whose icon is their face; empty with
    /// `FavoriteFaces=no`.
    var faces: [FaceRequest] = []
    /// Counts changes to the cards of `faces`: a new count makes the faces be read again even
    /// when the contacts the index keeps (which have no photo) are the same.
    var faceCardChanges: UInt64 = 0
}

/// How the exports are doing, for `Status`.
struct LauncherExportStatus: Equatable, Sendable {
    /// nil when `DesktopFile=` is empty.
    var desktopEntry: DesktopEntryExportStatus?
    var quicklist: QuicklistInfo
}

struct DesktopEntryExportStatus: Equatable, Sendable {
    /// The per-user entry qactd keeps, in its exports folder.
    var path: String
    /// Where the app's own entry was found, once it was.
    var source: String?
    /// When qactd last wrote (or found unchanged) the file.
    var written: Date?
    /// Why the file is not (or no longer) up to date, while that lasts.
    var problem: String?
    /// Why launchers may not see the file although it is up to date (the exports folder is not
    /// on `XDG_DATA_DIRS`), while that lasts.
    var notice: String?
}

/// Every launcher exporter, fed from the one place in the core that sees every change.
struct LauncherExporters: Sendable {
    /// The per-user desktop entry, written on a thread of its own.
    let desktopEntry: DesktopEntryWriter
    /// The live quicklist on the session bus, served by a thread of its own.
    let quicklist: QuicklistExporter

    /// `environment` gives the XDG data folders and the session bus; `qactlPath` is the absolute
    /// `qactl` the exported commands run (nil: `qactl` found on `PATH` when the launcher runs it).
    init(environment: [String: String], qactlPath: String?, logger: Logger = Logger(label: "qactd")) {
        let quicklist = QuicklistExporter(environment: environment, logger: logger)
        self.quicklist = quicklist
        // The faces are made once, by the desktop-entry writer, and the quicklist shows them too.
        let desktopEntry = DesktopEntryWriter(environment: environment, qactlPath: qactlPath, logger: logger) { quicklist.show(faces: $0) }
        self.desktopEntry = desktopEntry
        // With `DynamicItems=auto` the entry holds the favorites only while nobody reads the quicklist.
        quicklist.onReadersChange { desktopEntry.quicklistReaders($0) }
        // An app stopped (`ExportRetirement`): a first export that waited for it goes ahead, and
        // the retired copies of apps that do not run go.
        quicklist.onRunningAppsChange { desktopEntry.runningAppsChanged() }
    }

    /// Hands the publication to both exporters' threads and returns at once; the desktop
    /// entry's ticket tells when it was carried out (`desktopEntry.waitUntilDone`).
    @discardableResult
    func publish(_ publication: LauncherPublication) -> DesktopEntryWriter.Ticket {
        quicklist.publish(QuicklistExporter.wanted(for: publication))
        return desktopEntry.submit(publication)
    }

    /// Both exporters stop after carrying out what is pending (at shutdown).
    func stop() async {
        await desktopEntry.stop()
        await quicklist.stop()
    }

    /// The next publication is carried out even if it equals the last one (a reload retries).
    func forgetLastPublication() {
        desktopEntry.forgetLastPublication()
    }

    var status: LauncherExportStatus {
        LauncherExportStatus(desktopEntry: desktopEntry.status, quicklist: quicklist.info)
    }

    /// The `qactl` installed beside the running `qactd` (`/proc/self/exe`'s folder), so the
    /// launcher runs the client of the same version; nil, with a notice, when there is none.
    static func qactlBesideDaemon(logger: Logger) -> String? {
        if let folder = RunningExecutable.folder {
            let candidate = folder + "/qactl"
            if access(candidate, X_OK) == 0 { return candidate }
            logger.notice(
                "No qactl beside qactd at '\(candidate)': exported quick actions run 'qactl' from the launcher's PATH.",
                metadata: ["QACTD_PATH": "\(candidate)"])
        }
        return nil
    }
}
