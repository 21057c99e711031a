import Glibc
import Logging
import SystemCalls

/// The inotify watch the `qactd-export` thread keeps on the folders the app's own entry may
/// be in (`DesktopEntryExporter.appEntryFolders`), so that the export follows the app: an
/// upgrade that rewrites the entry, an uninstall that removes it, a reinstall, the person's
/// own entry put in front of it or taken away. The thread polls `descriptor` in its
/// `WakeUpSocket.sleep`, beside its wake-ups; nothing else reads it.
struct AppEntryWatch: Sendable {
    /// -1 when inotify could not be had (logged once): the export then follows the app only
    /// at each publication and reload.
    private(set) var descriptor: Int32 = -1
    /// Each watch's folder and the names in it that matter.
    private var watches: [Int32: (folder: String, names: Set<String>)] = [:]
    private var failedFolders: Set<String> = []

    /// Not `IN_MODIFY`: an entry is read once its writer closed it. Folders only, and never
    /// through a link, so a watch is the folder the lookup reads.
    static let mask: InotifyEventMask = [
        .closeWrite, .movedFrom, .movedTo, .create, .delete, .deleteSelf, .moveSelf, .onlyDirectory, .excludeUnlinked,
    ]

    init(logger: Logger) {
        descriptor = (try? Inotify.open(
            logger: logger, failure: "Cannot watch the app's desktop entry, the export follows it only when the quick actions change:").get()) ?? -1
    }

    func close() {
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
    }

    /// Watches exactly `folders` (adding what is new, dropping what is no longer wanted).
    /// Returns whether a folder is watched that was not before.
    @discardableResult
    mutating func follow(_ folders: [String: Set<String>], logger: Logger) -> Bool {
        guard descriptor >= 0 else { return false }
        var kept: [Int32: (folder: String, names: Set<String>)] = [:]
        for (folder, names) in folders.sorted(by: { $0.key < $1.key }) {
            let watch = inotify_add_watch(descriptor, folder, Self.mask.rawValue)
            guard watch >= 0 else {
                if failedFolders.insert(folder).inserted {
                    logger.warning("Cannot watch '\(folder)' for the app's desktop entry: \(errnoText(errno)), ignoring.", metadata: ["QACTD_PATH": "\(folder)"])
                }
                continue
            }
            failedFolders.remove(folder)
            // Two paths to one folder (a link) give one watch: it answers for both.
            kept[watch, default: (folder, [])].names.formUnion(names)
        }
        for watch in watches.keys where kept[watch] == nil {
            _ = inotify_rm_watch(descriptor, watch)
        }
        let added = kept.contains { watch, entry in watches[watch]?.folder != entry.folder }
        watches = kept
        return added
    }

    /// Reads what is queued; true when it may have changed the app's entry: a name that matters
    /// came, changed or went, a watched folder went, or events were lost.
    mutating func readChanges(logger: Logger) -> Bool {
        var changed = false
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        for event in Inotify.readQueued(from: descriptor, buffer: &buffer, source: "the app's desktop entry", logger: logger) where matters(event) {
            changed = true
        }
        return changed
    }

    private mutating func matters(_ event: InotifyEvent) -> Bool {
        if event.mask.contains(.queueOverflow) { return true }
        guard let watch = watches[event.watchDescriptor] else { return false }
        if !event.mask.isDisjoint(with: [.deleteSelf, .moveSelf, .ignored, .unmount]) {
            if event.mask.contains(.ignored) { watches[event.watchDescriptor] = nil }
            return true
        }
        guard let name = event.name, watch.names.contains(name) else { return false }
        // A file just created is read once its writer closes it (`IN_CLOSE_WRITE`); a folder or
        // a link has no such close.
        if event.mask == .create {
            var info = stat()
            let path = watch.folder + "/" + name
            return lstat(path, &info) != 0 || (info.st_mode & S_IFMT) != S_IFREG
        }
        return true
    }
}
