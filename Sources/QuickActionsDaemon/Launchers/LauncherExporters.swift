import Glibc
import Logging
import SystemCalls

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
