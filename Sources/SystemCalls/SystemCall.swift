#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call, naming the call, the path it worked on (if any) and the errno.
public struct SystemCallError: Error, Equatable, Sendable, CustomStringConvertible {
    public let call: String
    public let path: String?
    public let errno: CInt

    public init(call: String, path: String? = nil, errno: CInt) {
        self.call = call
        self.path = path
        self.errno = errno
    }

    public var description: String {
        if let path {
            return "\(call)(\"\(path)\") failed: \(errnoText(errno)) (errno \(errno))."
        }
        return "\(call)() failed: \(errnoText(errno)) (errno \(errno))."
    }
}

/// The one way this project makes a system call: a signal arriving mid-call must not
/// surface as a failure, so `EINTR` is retried, and every other failure becomes a
/// `SystemCallError` that says which call failed on which path.
///
/// `body` follows the C convention: `-1` (or any negative value) with `errno` set.
@discardableResult
public func retryingSystemCall<Result: BinaryInteger>(
    _ call: String,
    path: String? = nil,
    _ body: () -> Result
) throws(SystemCallError) -> Result {
    while true {
        let result = body()
        if result >= 0 {
            return result
        }
        let error = currentErrno()
        if error == EINTR {
            continue
        }
        throw SystemCallError(call: call, path: path, errno: error)
    }
}

/// `body` retried while it fails with `EINTR`; its result as it is otherwise (for calls
/// whose failures the caller reads from `errno` itself).
@discardableResult
public func retryingOnInterrupt<Result: BinaryInteger>(_ body: () -> Result) -> Result {
    while true {
        let result = body()
        if result >= 0 || currentErrno() != EINTR { return result }
    }
}

/// strerror(3)'s sentence for an errno value.
public func errnoText(_ error: CInt) -> String {
    guard let text = strerror(error) else { return "error \(error)" }
    return String(cString: text)
}

private func currentErrno() -> CInt {
    #if canImport(Glibc)
    Glibc.errno
    #else
    Darwin.errno
    #endif
}
