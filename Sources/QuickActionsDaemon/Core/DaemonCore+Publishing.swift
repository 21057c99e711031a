import Contacts
import Logging
import QuickActions
import QuickActionsProtocol

/// What the launchers and systemd show of the state, handed over after each change by `persist()`.
extension DaemonCore {
    /// Hands what `List` shows (without `all`, in the daemon's language) to every launcher
    /// exporter: called from `persist()`, so every change reaches them, and once at start-up.
    /// Each exporter does nothing when the publication is the one it already has; each works
    /// on a thread of its own, so this returns at once (`launcherExportsDone` waits for them).
    func publishToLaunchers() {
        // Without `DesktopFile=` the exporters use nothing of the rows, so once per settings
        // epoch is enough; otherwise once per listing key (what the rows are composed from).
        let key = settings.configuration.launcherDesktopFileID == nil
            ? PublishedReplies.ListingKey(generation: 0, launched: false, settingsEpoch: settingsEpoch)
            : PublishedReplies.ListingKey(generation: state.generation, launched: state.launched, settingsEpoch: settingsEpoch)
        let pins = publishedPins()
        guard key != launcherPublicationKey || pins != launcherPublishedPins || faceCardChanges != launcherPublishedFaceCardChanges
        else { return }
        launcherPublicationKey = key
        launcherPublishedPins = pins
        launcherPublishedFaceCardChanges = faceCardChanges
        let untranslated = composedListing(all: false, translated: false, usage: false)
        let faces = faceRequests(rows: untranslated.items, pins: pins)
        // By index path: a vCard file, or an Evolution row's.
        launcherFaceCards = Set(faces.compactMap { index.filePath(identifier: $0.identifier) })
        launcherTicket = launchers.publish(
            LauncherPublication(
                displayed: settings.localization.localizing(untranslated, for: settings.language),
                untranslated: untranslated, localization: settings.localization,
                configuration: settings.configuration, socketPath: socketPath, pins: pins,
                faces: faces, faceCardChanges: faceCardChanges))
    }

    /// Each favorite a launcher shows, displayed or pinned, once, with the card that may hold its
    /// photo: the launchers' exporter reads the photos, off this actor.
    func faceRequests(rows: [ListedShortcut], pins: [PinnedItem]) -> [FaceRequest] {
        guard settings.configuration.favoriteFaces == .yes else { return [] }
        var requests: [FaceRequest] = []
        var seen: Set<String> = []
        for item in rows.filter({ $0.source == .dynamic }).map(\.item) + pins.map(\.item) {
            guard let identifier = item.contactIdentifier, seen.insert(identifier).inserted else { continue }
            requests.append(FaceRequest(identifier: identifier, name: item.title, card: index.filePath(identifier: identifier).map(faceCard)))
        }
        return requests
    }

    /// Where the face of the contact at index path `path` reads its card: its vCard file, or its
    /// Evolution row.
    private func faceCard(_ path: String) -> FaceCardSource {
        guard let (book, uid) = EvolutionCards.bookAndUID(ofPath: path) else { return .file(path) }
        return .evolutionRow(
            uid: uid, local: evolutionLocation.database(forSource: book), cache: evolutionLocation.database(forSource: book, in: .cache))
    }

    /// Returns once the desktop entry shows what was last handed over (tests, and shutdown).
    func launcherExportsDone() async {
        await launchers.desktopEntry.waitUntilDone(launcherTicket)
    }

    /// Keeps systemd's `STATUS=` current; sends only when the line changed.
    func publishStatus() {
        let line = statusLine()
        guard line != lastStatusLine else { return }
        lastStatusLine = line
        notifier.notify(.status(line))
    }
}
