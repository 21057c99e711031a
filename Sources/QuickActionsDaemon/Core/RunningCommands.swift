/// The `[Actions]` commands running now, and the cap on them (`[Commands] MaxRunning=`): which
/// may start, which have ended. Pure: the core asks it and carries out what it answers.
///
/// A command is admitted (`requested` → `start(id)`) or refused past the cap; it leaves the
/// table when it ends or could not start. An end reported twice, or for a command the table
/// does not hold, changes nothing.
struct RunningCommands: Sendable, Equatable {
    enum Event: Sendable, Equatable {
        /// A command is about to start, with the cap in force now.
        case requested(limit: Int)
        case couldNotStart(id: UInt64)
        case ended(id: UInt64)
    }

    enum Action: Sendable, Equatable {
        /// Start it as command `id`.
        case start(id: UInt64)
        /// Run nothing: `running` commands run, as many as `limit` allows.
        case refuse(running: Int, limit: Int)
        /// Nothing to do (it left the table, or an end was already handled).
        case none
    }

    private var running: Set<UInt64> = []
    private var nextID: UInt64 = 1

    var count: Int { running.count }

    mutating func handle(_ event: Event) -> Action {
        switch event {
        case .requested(let limit):
            guard running.count < limit else { return .refuse(running: running.count, limit: limit) }
            let id = nextID
            nextID += 1
            running.insert(id)
            return .start(id: id)
        case .couldNotStart(let id), .ended(let id):
            running.remove(id)
            return .none
        }
    }
}
