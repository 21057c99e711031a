import Glibc
import Logging
import SystemCalls

/// The bits of `struct inotify_event.mask` the watcher asks for or must understand.
/// Raw values are the kernel ABI (`<sys/inotify.h>`), so they never change.
struct InotifyEventMask: OptionSet, Hashable, Sendable, CustomStringConvertible {
    let rawValue: UInt32

    static let closeWrite = InotifyEventMask(rawValue: UInt32(IN_CLOSE_WRITE))
    static let movedFrom = InotifyEventMask(rawValue: UInt32(IN_MOVED_FROM))
    static let movedTo = InotifyEventMask(rawValue: UInt32(IN_MOVED_TO))
    static let create = InotifyEventMask(rawValue: UInt32(IN_CREATE))
    static let delete = InotifyEventMask(rawValue: UInt32(IN_DELETE))
    static let deleteSelf = InotifyEventMask(rawValue: UInt32(IN_DELETE_SELF))
    static let moveSelf = InotifyEventMask(rawValue: UInt32(IN_MOVE_SELF))
    static let unmount = InotifyEventMask(rawValue: UInt32(IN_UNMOUNT))
    static let queueOverflow = InotifyEventMask(rawValue: UInt32(IN_Q_OVERFLOW))
    static let ignored = InotifyEventMask(rawValue: UInt32(IN_IGNORED))
    static let isDirectory = InotifyEventMask(rawValue: UInt32(IN_ISDIR))
    static let onlyDirectory = InotifyEventMask(rawValue: UInt32(IN_ONLYDIR))
    static let dontFollow = InotifyEventMask(rawValue: UInt32(IN_DONT_FOLLOW))
    static let excludeUnlinked = InotifyEventMask(rawValue: UInt32(IN_EXCL_UNLINK))

    /// What every folder of the tree is watched for. Not `IN_MODIFY`: a file is read
    /// once its writer closes it, never half-written.
    static let treeFolder: InotifyEventMask = [
        .closeWrite, .movedFrom, .movedTo, .create, .delete, .deleteSelf, .moveSelf, .onlyDirectory, .excludeUnlinked,
    ]
    /// What the root's parent is watched for while the root is missing: only its re-appearance.
    static let rootParent: InotifyEventMask = [.create, .movedTo, .deleteSelf, .moveSelf, .onlyDirectory]

    private static let names: [(InotifyEventMask, String)] = [
        (.closeWrite, "IN_CLOSE_WRITE"), (.movedFrom, "IN_MOVED_FROM"), (.movedTo, "IN_MOVED_TO"), (.create, "IN_CREATE"),
        (.delete, "IN_DELETE"), (.deleteSelf, "IN_DELETE_SELF"), (.moveSelf, "IN_MOVE_SELF"), (.unmount, "IN_UNMOUNT"),
        (.queueOverflow, "IN_Q_OVERFLOW"), (.ignored, "IN_IGNORED"), (.isDirectory, "IN_ISDIR"),
    ]

    var description: String {
        let known = Self.names.filter { contains($0.0) }.map(\.1)
        let rest = rawValue & ~Self.names.reduce(0) { $0 | $1.0.rawValue }
        return (known + (rest == 0 ? [] : ["0x" + String(rest, radix: 16)])).joined(separator: "|")
    }
}

/// One `struct inotify_event`, decoded into a value.
struct InotifyEvent: Hashable, Sendable {
    /// The watch descriptor; -1 for `IN_Q_OVERFLOW`.
    var watchDescriptor: Int32
    var mask: InotifyEventMask
    /// Pairs an `IN_MOVED_FROM` with its `IN_MOVED_TO`.
    var cookie: UInt32 = 0
    /// The entry's name inside the watched folder; nil for events about the folder itself.
    var name: String? = nil
}

/// Turns the bytes `read(2)` returns from an inotify descriptor into events.
/// Each record is `int wd; uint32_t mask, cookie, len; char name[len]`, native
/// byte order, with `name` NUL-terminated and NUL-padded to `len` bytes.
enum InotifyEventDecoder {
    /// Size of the fixed part of `struct inotify_event`.
    static let headerSize = 16

    struct Decoded: Equatable, Sendable {
        var events: [InotifyEvent]
        /// Bytes at the end that do not hold a whole record. The kernel never splits
        /// a record across reads, so anything here means a short or corrupt buffer.
        var trailingBytes: Int
    }

    static func decode(_ bytes: [UInt8]) -> Decoded {
        bytes.withUnsafeBytes { decode($0) }
    }

    static func decode(_ buffer: UnsafeRawBufferPointer) -> Decoded {
        var events: [InotifyEvent] = []
        var offset = 0
        while buffer.count - offset >= headerSize {
            let watchDescriptor = buffer.loadUnaligned(fromByteOffset: offset, as: Int32.self)
            let mask = buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let cookie = buffer.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
            let nameLength = Int(buffer.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let nameStart = offset + headerSize
            guard nameLength <= buffer.count - nameStart else { break }
            var name: String?
            if nameLength > 0 {
                let field = UnsafeRawBufferPointer(rebasing: buffer[nameStart..<(nameStart + nameLength)])
                let end = field.firstIndex(of: 0) ?? field.count
                // Names are bytes to the kernel; invalid UTF-8 is repaired rather than dropped
                // so the file can still be named in a log line.
                name = String(decoding: field[..<end], as: UTF8.self)
            }
            events.append(InotifyEvent(
                watchDescriptor: watchDescriptor, mask: InotifyEventMask(rawValue: mask), cookie: cookie, name: name))
            offset = nameStart + nameLength
        }
        return Decoded(events: events, trailingBytes: buffer.count - offset)
    }
}

/// An inotify descriptor's life, the same for the contacts folder and the address books.
enum Inotify {
    /// A new non-blocking descriptor; the error when there is none (logged with `failure`, which
    /// says what the daemon does without it).
    static func open(logger: Logger, failure: String) -> Result<Int32, SystemCallError> {
        do {
            return .success(try retryingSystemCall("inotify_init1") { inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK)) })
        } catch {
            logger.error("\(failure) \(error)")
            return .failure(error)
        }
    }

    /// What `inotify` has queued, read through `buffer` until the queue is empty or `limit` bytes
    /// were read, and decoded; a failed read is logged naming `source`.
    static func readQueued(
        from inotify: Int32, buffer: inout [UInt8], limit: Int = .max, source: String, logger: Logger
    ) -> [InotifyEvent] {
        var events: [InotifyEvent] = []
        var total = 0
        while inotify >= 0, total < limit {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(inotify, $0.baseAddress, $0.count) }
            if count < 0 {
                let error = errno
                if error == EINTR { continue }
                if error != EAGAIN { logger.error("Reading inotify events for \(source) failed: \(errnoText(error)), ignoring.") }
                break
            }
            if count == 0 { break }
            let decoded = buffer.withUnsafeBytes { InotifyEventDecoder.decode(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            if decoded.trailingBytes != 0 {
                logger.warning("An inotify read ended inside an event (\(decoded.trailingBytes) bytes), ignoring them.")
            }
            events += decoded.events
            total += count
        }
        return events
    }
}
