import Glibc
import Logging

/// Carries out the `DesktopEntryExporter`'s work on a thread of its own (`qactd-export`), so
/// the core hands a publication over and goes on: finding the app's entry, reading it and
/// replacing the exported file (with its fsync) never run on the core's actor or on the
/// socket's event loops. The newest publication wins: publications that come while a write
/// is under way replace one another, so a burst of changes makes few writes. Between
/// publications the thread sleeps on the `AppEntryWatch` too, and exports the last publication
/// again when the app's own entry changes, goes or comes back. The exporter and the watch are
/// the thread's own: no export is made elsewhere. Should the thread fail to start, the next
/// publication tries again; until then the launchers show the last export.
final class DesktopEntryWriter: Sendable {
    /// Counts publications; `waitUntilDone(ticket)` returns once the thread has carried out
    /// that one or a newer one.
    typealias Ticket = UInt64

    private struct Mail: Sendable {
        var pending: (ticket: Ticket, publication: LauncherPublication)?
        var forgetLast = false
        var submitted: Ticket = 0
        var done: Ticket = 0
        var status: DesktopEntryExportStatus?
        var waiters: [(ticket: Ticket, reply: MailboxReply<Void>)] = []
        var onStatusChange: (@Sendable () -> Void)?
        /// The quicklist's readers as its bus thread last said, not yet taken by this thread.
        var quicklistReaders: Set<String>?
        var runningAppsChanged = false
    }

    /// The `qactd-export` thread and its one-slot mailbox.
    private let thread: MailboxThread<Mail>
    private let qactlPath: String?
    private let logger: Logger
    /// Called on the thread after each export with the quicklist's images of the favorites' faces
    /// (by contact identifier): the faces are made here, once, for the desktop entry, the pinned
    /// launchers and the quicklist.
    private let showFaces: @Sendable ([String: [UInt8]]) -> Void
    /// Where desktop entries are looked up (`XDG_DATA_HOME`, `XDG_DATA_DIRS`, `HOME`).
    let environment: [String: String]

    init(environment: [String: String], qactlPath: String?, logger: Logger, showFaces: @escaping @Sendable ([String: [UInt8]]) -> Void) {
        self.environment = environment
        self.qactlPath = qactlPath
        self.logger = logger
        self.showFaces = showFaces
        thread = MailboxThread(named: "qactd-export", for: "the desktop-entry writer", mail: Mail(), logger: logger)
    }

    /// How the export is doing, for `Status`: nil when `DesktopFile=` is empty.
    var status: DesktopEntryExportStatus? {
        thread.withMail { $0.status }
    }

    /// Called on the thread after each export that changed `status`.
    func onStatusChange(_ action: @escaping @Sendable () -> Void) {
        thread.withMail { $0.onStatusChange = action }
    }

    /// Hands `publication` over and returns its ticket at once. The thread starts with the
    /// first publication.
    @discardableResult
    func submit(_ publication: LauncherPublication) -> Ticket {
        let ticket = thread.withMail { mail -> Ticket in
            mail.submitted += 1
            mail.pending = (mail.submitted, publication)
            return mail.submitted
        }
        do {
            try thread.start { [self] in run() }
        } catch {
            logger.error("Could not start the desktop-entry writer's thread (\(error)); the next change of the quick actions tries again.")
        }
        return ticket
    }

    /// The quicklist's bus thread saw its readers change (empty: none, or no bus): with
    /// `DynamicItems=auto` the favorites leave the entry or come back (`DynamicItemsPlacement`).
    /// The apps running in GNOME Shell changed (qactd's extension says so).
    func runningAppsChanged() {
        thread.withMail { $0.runningAppsChanged = true }
        thread.wake()
    }

    func quicklistReaders(_ readers: Set<String>) {
        thread.withMail { $0.quicklistReaders = readers }
        thread.wake()
    }

    /// The next publication is carried out even if it equals the last one (a reload retries).
    func forgetLastPublication() {
        thread.withMail { $0.forgetLast = true }
    }

    /// Returns once the publication of `ticket` (or a newer one) has been carried out, or the
    /// writer has stopped.
    func waitUntilDone(_ ticket: Ticket) async {
        _ = await thread.ask { mail, reply in
            if mail.done >= ticket { return () }
            mail.waiters.append((ticket, reply))
            return nil
        }
    }

    /// Carries out what is still pending, then ends the thread (at shutdown).
    func stop() async {
        await thread.stop()
    }

    // MARK: - The thread

    private func run() {
        var exporter = DesktopEntryExporter(environment: environment, qactlPath: qactlPath)
        var watch = AppEntryWatch(logger: logger)
        var placement = DynamicItemsPlacement()
        var setting: LauncherDynamicItems?
        defer { watch.close() }
        var watched: [pollfd] = []
        while true {
            let stopping = thread.isStopping
            if watched.first.map({ $0.revents != 0 }) == true, watch.readChanges(logger: logger) {
                exporter.refresh(logger: logger)
                record(ticket: nil, &exporter, &watch)
            }
            if thread.withMail({ mail in defer { mail.runningAppsChanged = false }; return mail.runningAppsChanged }) {
                exporter.runningAppsChanged(logger: logger)
                record(ticket: nil, &exporter, &watch)
            }
            if let readers = thread.withMail({ mail in defer { mail.quicklistReaders = nil }; return mail.quicklistReaders }) {
                placement.readers(readers)
            }
            placement.tick()
            // The readers came or went (or the wait for them is over): the last publication
            // again, the favorites in the entry or out of it.
            if let setting, placement.entryHoldsDynamicItems(setting) != exporter.dynamicItemsInEntry, !placement.isUndecided {
                exporter.refreshPlacing(dynamicItemsInEntry: placement.entryHoldsDynamicItems(setting), logger: logger)
                record(ticket: nil, &exporter, &watch)
            }
            exportPending(&exporter, &watch, placement: placement, stopping: stopping, setting: &setting)
            if stopping { break }
            watched = watch.descriptor >= 0 ? [pollfd(fd: watch.descriptor, events: Int16(POLLIN), revents: 0)] : []
            thread.sleep(polling: &watched, timeoutMilliseconds: WakeUpSocket.milliseconds(until: placement.deadline))
        }
    }

    /// Exports the newest pending publication, records the outcome and resumes whom it answers.
    /// With `DynamicItems=auto` and no word from the quicklist yet, it waits for one (at most
    /// `DynamicItemsPlacement.firstAnswerWait`), unless the thread is stopping.
    private func exportPending(
        _ exporter: inout DesktopEntryExporter, _ watch: inout AppEntryWatch, placement: DynamicItemsPlacement, stopping: Bool,
        setting: inout LauncherDynamicItems?
    ) {
        guard let (job, forget) = thread.withMail({ mail -> ((ticket: Ticket, publication: LauncherPublication), Bool)? in
            guard let pending = mail.pending,
                  pending.publication.configuration.launcherDynamicItems != .auto || !placement.isUndecided || stopping
            else { return nil }
            mail.pending = nil
            defer { mail.forgetLast = false }
            return (pending, mail.forgetLast)
        }) else { return }
        if forget { exporter.forgetLastPublication() }
        setting = job.publication.configuration.launcherDynamicItems
        exporter.publish(
            job.publication, dynamicItemsInEntry: placement.entryHoldsDynamicItems(job.publication.configuration.launcherDynamicItems),
            logger: logger)
        record(ticket: job.ticket, &exporter, &watch)
    }

    /// After an export: watches the folders the app's entry may now be in, records the outcome
    /// and resumes whom `ticket` (a publication's; nil for a change of the app's entry) answers.
    private func record(ticket: Ticket?, _ exporter: inout DesktopEntryExporter, _ watch: inout AppEntryWatch) {
        // A folder watched only now may have got the entry between the lookup and the watch,
        // which no event would tell: looked up again until the folders stay the same (each
        // round watches a folder nearer the entry, so a few rounds are the most there can be).
        var rounds = 0
        while rounds < 8, watch.follow(exporter.appEntryFolders, logger: logger) {
            exporter.refresh(logger: logger)
            rounds += 1
        }
        let status = exporter.status
        let (ready, changed, onStatusChange) = thread.withMail { mail in
            let changed = mail.status != status
            mail.status = status
            if let ticket { mail.done = max(mail.done, ticket) }
            let ready = mail.waiters.filter { $0.ticket <= mail.done }
            mail.waiters.removeAll { $0.ticket <= mail.done }
            return (ready, changed, mail.onStatusChange)
        }
        if changed { onStatusChange?() }
        // The quicklist wakes its thread only when they changed.
        showFaces(exporter.faces.mapValues(\.quicklistImage))
        for waiter in ready { waiter.reply.answer() }
    }
}
