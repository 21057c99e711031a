import Dispatch

/// Runs blocking socket work on a dispatch queue, so the caller's task waits without holding a
/// thread of the concurrency pool.
func offload<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}
