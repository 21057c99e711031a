import NIOConcurrencyHelpers
import NIOCore
import Varlink

/// The framed replies of large parameters a service encoded once and hands to many callers
/// (a `List` or `Watch` listing of 1,000 items is ~290 KB): framed once into a buffer that every
/// connection then writes as it is. Framing it per caller would allocate and copy the whole
/// text for every caller, which is most of the server's own work when many clients ask at once.
///
/// Parameters are known by their storage, not compared: the service hands out the very same
/// array while its listing is unchanged, and each entry keeps its array alive, so an address
/// seen here cannot be reused by another array meanwhile. Only the two latest are kept (the
/// current listing as a `List` reply and as a `Watch` reply), so an old listing's text is not
/// held after a change.
final class SharedReplyFrames: Sendable {
    /// Below this, copying costs less than looking up.
    static let minimumShared = 16 * 1024
    static let capacity = 2

    private struct Entry {
        let parameters: [UInt8]
        let continues: Bool
        let frame: ByteBuffer
    }

    private let entries = NIOLockedValueBox<[Entry]>([])

    /// The reply's frame in one buffer, the same buffer for every caller of the same encoded parameters.
    func frame(of reply: VarlinkReply, allocator: ByteBufferAllocator) throws -> ByteBuffer {
        guard let parameters = reply.encodedParameters?.bytes, parameters.count >= Self.minimumShared, reply.error == nil else {
            return try allocator.frame(of: reply)
        }
        let found = entries.withLockedValue { entries in
            entries.first { $0.continues == reply.continues && Self.sameStorage($0.parameters, parameters) }?.frame
        }
        if let found { return found }
        let frame = try allocator.frame(of: reply)
        entries.withLockedValue { entries in
            if entries.count >= Self.capacity { entries.removeFirst() }
            entries.append(Entry(parameters: parameters, continues: reply.continues, frame: frame))
        }
        return frame
    }

    private static func sameStorage(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress } }
    }
}
