/// When the engine must act without an event: files whose writer is probed again on a backoff,
/// and the periodic retries (a missing root, trees without watches).
extension WatcherEngine {
    /// Tries again to read the files that wait for their writer. Each is probed before the
    /// kernel queue is read: a writer that has just let go queued its `IN_CLOSE_WRITE` before
    /// doing so, so a file found finished is read in one batch with that event, once, and not
    /// now and again when the event is read.
    func probeWaitingWritersIfDue() {
        let now = ContinuousClock.now
        let finished = machine.writerProbesDue(now: now).compactMap { action -> Action? in
            guard let path = action.filePath else { return action }
            let answer = WatcherStateMachine.WriterProbeAnswer(OpenForWritingProbe.isOpenForWriting(path, acquire: probeWriter))
            return machine.probed(action, answer, now: now)
        }
        if !finished.isEmpty { readAndHandleEvents(startingWith: finished) }
    }

    func tickIfDue() {
        guard let nextTick, ContinuousClock.now >= nextTick else { return }
        self.nextTick = nil
        perform(machine.periodicTick())
    }

    func pollTimeoutMilliseconds() -> Int32 {
        if hasCreationsForNextBatch { return 0 }
        return WakeUpSocket.milliseconds(until: [nextTick, machine.nextWriterProbe].compactMap { $0 }.min())
    }

    func scheduleTick() {
        guard !isOff, machine.needsPeriodicWork else {
            nextTick = nil
            tickInterval = nil
            return
        }
        let interval = machine.attached ? timing.degradedRescanInterval : timing.reattachRetryInterval
        if nextTick == nil || tickInterval != interval {
            nextTick = ContinuousClock.now + interval
            tickInterval = interval
        }
    }
}
