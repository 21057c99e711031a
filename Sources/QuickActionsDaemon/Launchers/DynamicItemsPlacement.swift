/// Where `DynamicItems=auto` puts the favorites: in the live quicklist alone while a reader of it
/// is on the session bus (qactd's GNOME Shell extension, Dash to Dock, Plank), so each shows
/// once; in the desktop entry otherwise, as every launcher reads it. A value the
/// `qactd-export` thread keeps and asks before each export; no I/O.
///
/// Two delays keep the entry steady where launchers read it once, at login (GNOME Shell keeps
/// the actions it read): the first export waits a moment for the quicklist's first answer, so an
/// entry with the favorites is not written just before a dock says it is there; and a reader
/// that leaves (a session ending, a dock restarting) puts them back in the entry only after
/// `hold`, so a session's end does not leave the next login an entry with them.
struct DynamicItemsPlacement: Equatable, Sendable {
    enum State: Equatable, Sendable {
        /// No answer yet from the quicklist; after `deadline` the entry holds them.
        case waitingForReaders(deadline: ContinuousClock.Instant)
        /// These readers show the quicklist: the entry leaves the favorites out.
        case read(by: Set<String>)
        /// The last reader left; the entry takes them back at `deadline` unless one comes.
        case readerLeft(deadline: ContinuousClock.Instant)
        /// No reader: the entry holds them.
        case unread
    }

    /// How long the first export waits for the quicklist's first answer.
    static let firstAnswerWait: Duration = .seconds(1)
    /// How long a reader may be gone before the entry takes the favorites back.
    static let hold: Duration = .seconds(3)

    private(set) var state: State

    init(now: ContinuousClock.Instant = .now) {
        state = .waitingForReaders(deadline: now + Self.firstAnswerWait)
    }

    /// The quicklist's readers as the bus thread now sees them (empty: none, or no bus).
    mutating func readers(_ readers: Set<String>, now: ContinuousClock.Instant = .now) {
        if !readers.isEmpty {
            state = .read(by: readers)
            return
        }
        switch state {
        case .read: state = .readerLeft(deadline: now + Self.hold)
        case .waitingForReaders: state = .unread
        case .readerLeft, .unread: break
        }
    }

    /// Time passed: a deadline that is over decides.
    mutating func tick(now: ContinuousClock.Instant = .now) {
        switch state {
        case .waitingForReaders(let deadline), .readerLeft(let deadline):
            if deadline <= now { state = .unread }
        case .read, .unread: break
        }
    }

    /// The next deadline, for the thread's sleep; nil: none.
    var deadline: ContinuousClock.Instant? {
        switch state {
        case .waitingForReaders(let deadline), .readerLeft(let deadline): return deadline
        case .read, .unread: return nil
        }
    }

    /// Whether the first export must wait: no answer from the quicklist yet.
    var isUndecided: Bool {
        if case .waitingForReaders = state { return true }
        return false
    }

    /// Whether the desktop entry holds the favorites under `setting` (before any answer, as
    /// without a reader: only a thread stopping exports then).
    func entryHoldsDynamicItems(_ setting: LauncherDynamicItems) -> Bool {
        switch setting {
        case .desktopEntry: return true
        case .quicklist: return false
        case .auto:
            switch state {
            case .waitingForReaders, .unread: return true
            case .read, .readerLeft: return false
            }
        }
    }
}
