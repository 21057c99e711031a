import Contacts
import Logging

import Glibc
import SystemCalls

/// Reading what the kernel queued and handling it as one batch of actions.
extension WatcherEngine {
    /// Reads what the kernel has queued (bounded per batch) and handles it as one batch,
    /// so an overflow at the end of a long queue makes the work before it moot.
    func readAndHandleEvents(startingWith first: [Action] = []) {
        var actions = first + creationsForNextBatch + handle(readQueuedEvents())
        creationsForNextBatch = []
        // The state machine decides what becomes of each file seen only through IN_CREATE
        // (`probed`) and whether the queue is read once more (`readsQueueAgain`).
        var drains = 0
        var lastRead: [Action] = []
        while true {
            actions = WatcherStateMachine.coalesce(actions, root: machine.root)
            let finishedCreations: Bool
            (actions, finishedCreations) = probeCreatedFiles(actions)
            guard WatcherStateMachine.readsQueueAgain(afterFinishedCreations: finishedCreations, rereadsSoFar: drains) else {
                if finishedCreations {
                    // Cut short by the bound: the files created in the last read that the probe
                    // found finished have their IN_CLOSE_WRITE queued (if they were written),
                    // and reading them now would parse them twice. They start the next batch.
                    let lastCreations = Set(lastRead.compactMap { action -> String? in
                        if case .readFileIfComplete(let path) = action { return path } else { return nil }
                    })
                    creationsForNextBatch = actions.filter { action in
                        if case .readFileIfComplete(let path) = action { return lastCreations.contains(path) } else { return false }
                    }
                    actions.removeAll { creationsForNextBatch.contains($0) }
                }
                break
            }
            drains += 1
            let more = readQueuedEvents()
            if more.isEmpty { break }
            lastRead = handle(more)
            actions += lastRead
        }
        perform(actions)
    }

    /// Whether the next batch is due now, without waiting for an event: it has files to read.
    var hasCreationsForNextBatch: Bool { !creationsForNextBatch.isEmpty }

    /// Probes each file seen only by `IN_CREATE` (`WatcherStateMachine.probed` decides): one
    /// still being written waits for its writer; a finished one (a hard link, or a file whose
    /// close is already queued) is read. Also says whether any turned out finished.
    private func probeCreatedFiles(_ actions: [Action]) -> (actions: [Action], finishedCreations: Bool) {
        let now = ContinuousClock.now
        var finishedCreations = false
        let probed = actions.compactMap { action -> Action? in
            guard case .readFileIfComplete(let path) = action else { return action }
            let answer = WatcherStateMachine.WriterProbeAnswer(OpenForWritingProbe.isOpenForWriting(path, acquire: probeWriter))
            if answer == .noWriter { finishedCreations = true }
            return machine.probed(action, answer, now: now)
        }
        return (probed, finishedCreations)
    }

    private func handle(_ events: [InotifyEvent]) -> [Action] {
        work.eventsHandled += events.count
        var actions: [Action] = []
        for event in events {
            if logger.logLevel <= .debug {
                logger.debug("inotify: watch \(event.watchDescriptor) \(event.mask) '\(event.name ?? "")'.")
            }
            actions += machine.handle(event)
        }
        return actions
    }

    /// At most 1 MiB of events a round, so a flood leaves the rest queued in the kernel.
    private func readQueuedEvents() -> [InotifyEvent] {
        Inotify.readQueued(from: inotify, buffer: &buffer, limit: 1 << 20, source: "the contacts folder", logger: logger)
    }
}
