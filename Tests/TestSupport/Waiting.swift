import Foundation

// Tests wait for an event, never for a fixed time: each helper polls until its condition
// holds, and the timeout only bounds a failing test.

/// Polls `condition` every `interval` (5 ms unless a poll is costly) until it holds or
/// `timeout` seconds pass; returns whether it held. Blocks the calling thread: for synchronous
/// tests.
@discardableResult
public func waitUntil(
    timeout: TimeInterval = 10, every interval: Duration = .milliseconds(5), _ condition: () -> Bool
) -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
    let pause = useconds_t(interval / .microseconds(1))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(pause)
    }
    return condition()
}

/// The same for async tests: suspends between polls instead of blocking, so the tasks that
/// are to make the condition true keep their threads. (In async code this overload is the one
/// chosen for a synchronous condition too.)
@discardableResult
public func waitUntil(timeout: TimeInterval = 10, _ condition: () -> Bool) async -> Bool {
    await waitUntil(timeout: timeout) { () async -> Bool in condition() }
}

/// For a condition that must itself await.
@discardableResult
public func waitUntil(timeout: TimeInterval = 10, _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return await condition()
}
