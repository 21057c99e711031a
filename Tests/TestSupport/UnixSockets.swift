import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A Unix stream socket bound at `path`, listening with a backlog of `backlog` unless it is nil,
/// and never accepting: what a stale socket file (nil) or a socket whose server never answers
/// looks like to a client. The caller closes the descriptor.
public func boundUnixSocket(at path: String, backlog: Int32? = nil) throws -> Int32 {
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard bound == 0, backlog.map({ listen(descriptor, $0) == 0 }) ?? true else {
        let code = errno
        close(descriptor)
        throw POSIXError(.init(rawValue: code) ?? .EIO)
    }
    return descriptor
}
