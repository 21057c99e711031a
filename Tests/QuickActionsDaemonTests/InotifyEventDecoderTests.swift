import Glibc
import TestSupport
import XCTest

@testable import QuickActionsDaemon

final class InotifyEventDecoderTests: XCTestCase {
    /// Builds one record the way the kernel lays it out: header, then the name NUL-padded to `length`.
    private func record(_ descriptor: Int32, _ mask: UInt32, cookie: UInt32 = 0, name: String? = nil, length: Int? = nil) -> [UInt8] {
        var bytes: [UInt8] = []
        withUnsafeBytes(of: descriptor) { bytes += $0 }
        withUnsafeBytes(of: mask) { bytes += $0 }
        withUnsafeBytes(of: cookie) { bytes += $0 }
        var nameBytes: [UInt8] = name.map { Array($0.utf8) + [0] } ?? []
        let padded = length ?? (nameBytes.isEmpty ? 0 : (nameBytes.count + 15) / 16 * 16)
        nameBytes += [UInt8](repeating: 0, count: padded - nameBytes.count)
        withUnsafeBytes(of: UInt32(padded)) { bytes += $0 }
        return bytes + nameBytes
    }

    func testSeveralRecordsWithPaddedNamesDecodeInOrder() {
        let bytes = record(3, UInt32(IN_CLOSE_WRITE), name: "ann.vcf")
            + record(1, UInt32(IN_CREATE | IN_ISDIR), name: "a-collection-with-a-long-name")
            + record(4, UInt32(IN_MOVED_FROM), cookie: 77, name: "x.vcf")
        let decoded = InotifyEventDecoder.decode(bytes)
        XCTAssertEqual(decoded.trailingBytes, 0)
        XCTAssertEqual(decoded.events, [
            InotifyEvent(watchDescriptor: 3, mask: .closeWrite, name: "ann.vcf"),
            InotifyEvent(watchDescriptor: 1, mask: [.create, .isDirectory], name: "a-collection-with-a-long-name"),
            InotifyEvent(watchDescriptor: 4, mask: .movedFrom, cookie: 77, name: "x.vcf"),
        ])
    }

    func testEventsAboutTheFolderItselfAndTheOverflowHaveNoName() {
        let bytes = record(2, UInt32(IN_DELETE_SELF)) + record(2, UInt32(IN_IGNORED)) + record(-1, UInt32(IN_Q_OVERFLOW))
        let decoded = InotifyEventDecoder.decode(bytes)
        XCTAssertEqual(decoded.events, [
            InotifyEvent(watchDescriptor: 2, mask: .deleteSelf),
            InotifyEvent(watchDescriptor: 2, mask: .ignored),
            InotifyEvent(watchDescriptor: -1, mask: .queueOverflow),
        ])
    }

    func testATruncatedRecordIsReportedNotInvented() {
        let whole = record(5, UInt32(IN_DELETE), name: "gone.vcf")
        let bytes = whole + Array(record(6, UInt32(IN_CREATE), name: "cut.vcf").prefix(20))
        let decoded = InotifyEventDecoder.decode(bytes)
        XCTAssertEqual(decoded.events, [InotifyEvent(watchDescriptor: 5, mask: .delete, name: "gone.vcf")])
        XCTAssertEqual(decoded.trailingBytes, 20)
        XCTAssertEqual(InotifyEventDecoder.decode(Array(whole.prefix(10))), .init(events: [], trailingBytes: 10))
        XCTAssertEqual(InotifyEventDecoder.decode([]), .init(events: [], trailingBytes: 0))
    }

    func testNamesAreCutAtTheFirstNulAndBadUTF8IsRepaired() {
        let decoded = InotifyEventDecoder.decode(record(1, UInt32(IN_CREATE), name: "é.vcf", length: 32)
            + record(1, UInt32(IN_CREATE), name: "\u{FFFD}", length: 16))
        XCTAssertEqual(decoded.events.map(\.name), ["é.vcf", "\u{FFFD}"])
        var latin1 = record(1, UInt32(IN_CREATE), length: 16)
        latin1.replaceSubrange(16..<19, with: [0x6F, 0xE9, 0x2E])  // "o", Latin-1 "é", "."
        XCTAssertEqual(InotifyEventDecoder.decode(latin1).events.first?.name, "o\u{FFFD}.")
    }

    func testMaskDescriptionNamesTheBits() {
        XCTAssertEqual(InotifyEventMask([.movedTo, .isDirectory]).description, "IN_MOVED_TO|IN_ISDIR")
        XCTAssertEqual(InotifyEventMask(rawValue: UInt32(IN_ACCESS)).description, "0x1")
    }

    /// The real kernel's bytes, not only hand-made ones.
    func testDecodesWhatTheKernelWrites() throws {
        let folder = try makeTemporaryFolder("decoder")
        let inotify = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        XCTAssertGreaterThanOrEqual(inotify, 0)
        defer { close(inotify) }
        let descriptor = inotify_add_watch(inotify, folder, InotifyEventMask.treeFolder.rawValue)
        XCTAssertGreaterThan(descriptor, 0)
        let file = open(folder + "/card.vcf", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        XCTAssertGreaterThanOrEqual(file, 0)
        close(file)
        XCTAssertEqual(rename(folder + "/card.vcf", folder + "/renamed.vcf"), 0)
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
        XCTAssertGreaterThan(count, 0)
        let events = InotifyEventDecoder.decode(Array(buffer[0..<count])).events
        XCTAssertEqual(events.map(\.mask), [.create, .closeWrite, .movedFrom, .movedTo])
        XCTAssertEqual(events.map(\.name), ["card.vcf", "card.vcf", "card.vcf", "renamed.vcf"])
        XCTAssertEqual(Set(events.map(\.watchDescriptor)), [descriptor])
        XCTAssertEqual(events[2].cookie, events[3].cookie)
        XCTAssertNotEqual(events[2].cookie, 0)
    }
}
