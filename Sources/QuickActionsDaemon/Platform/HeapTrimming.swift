import CLinux

/// Hands the heap's free pages back to the kernel after a large batch of contacts.
enum HeapTrimming {
    /// A large batch (the start-up scan, a rescan after an overflow) was read, parsed and queued
    /// in buffers that are freed only when the watcher (or the start sequence) lets go of the
    /// batch, after the core applied it; trimmed before that, the heap would keep their pages
    /// for good. So the trim runs a moment later, on an event loop's timer, and again in case
    /// the holder was slow (a loaded machine); each costs milliseconds and changes no state.
    static func releaseFreeMemorySoon() {
        for delay in [200, 1000, 5000] {
            _ = EventLoopExecution.schedule(in: .milliseconds(delay)) { _ = CLinux_releaseFreeHeapMemory() }
        }
    }
}
