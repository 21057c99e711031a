import Foundation

/// A Varlink peer that sends `Watch` with `more` and then reads nothing until told to.
final class RawWatchSocket {
    private let descriptor: Int32
    private var pending = [UInt8]()

    init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8) + [0])
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw NSError(domain: "connect", code: Int(errno)) }
        // A small receive buffer so the daemon's side fills up after a few sets.
        var size: Int32 = 4096
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        let call = Array(#"{"method":"io.qactd.QuickActions.Watch","more":true}"#.utf8) + [0]
        guard send(descriptor, call, call.count, 0) == call.count else { throw NSError(domain: "send", code: Int(errno)) }
    }

    deinit { close(descriptor) }

    /// Reads replies until one has `generation`, returning every generation seen.
    func readGenerations(until last: Int) throws -> [Int] {
        var generations: [Int] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while generations.last != last {
            let count = recv(descriptor, &chunk, chunk.count, 0)
            guard count > 0 else { throw NSError(domain: "recv", code: Int(errno)) }
            pending += chunk[..<count]
            while let end = pending.firstIndex(of: 0) {
                let message = try JSONSerialization.jsonObject(with: Data(pending[..<end])) as? [String: Any]
                pending.removeSubrange(...end)
                if let generation = (message?["parameters"] as? [String: Any])?["generation"] as? Int {
                    generations.append(generation)
                }
            }
        }
        return generations
    }
}
