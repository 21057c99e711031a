/// The `[Actions]` commands running now, and the cap on them (`[Commands] MaxRunning=`): which
/// may start, which have ended. Pure: the core asks it and carries out what it answers.
///
/// A command is admitted (`requested` → `start(id)`) or refused past the cap; once started it
/// has a place (a pid or a unit); it leaves the table when it ends or could not start. An end
/// reported twice, or for a command the table does not hold, changes nothing.
struct RunningCommands: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        var program: String
        var type: String
        /// Where it runs, once started.
        var place: CommandPlace?
    }

    enum Event: Sendable, Equatable {
        /// A command is about to start, with the cap in force now.
        case requested(program: String, type: String, limit: Int)
        case started(id: UInt64, CommandPlace)
        case couldNotStart(id: UInt64)
        case ended(id: UInt64)
    }

    enum Action: Sendable, Equatable {
        /// Start it as command `id`.
        case start(id: UInt64)
        /// Run nothing: `running` commands run, as many as `limit` allows.
        case refuse(running: Int, limit: Int)
        /// It left the table (it ran as `entry`).
        case forget(Entry)
        /// Nothing to do (an end already handled, a start for an unknown command).
        case none
    }

    private(set) var entries: [UInt64: Entry] = [:]
    private var nextID: UInt64 = 1

    var count: Int { entries.count }

    mutating func handle(_ event: Event) -> Action {
        switch event {
        case .requested(let program, let type, let limit):
            guard entries.count < limit else { return .refuse(running: entries.count, limit: limit) }
            let id = nextID
            nextID += 1
            entries[id] = Entry(program: program, type: type)
            return .start(id: id)
        case .started(let id, let place):
            guard entries[id] != nil else { return .none }
            entries[id]?.place = place
            return .none
        case .couldNotStart(let id), .ended(let id):
            guard let entry = entries.removeValue(forKey: id) else { return .none }
            return .forget(entry)
        }
    }
}
