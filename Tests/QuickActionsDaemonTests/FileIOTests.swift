import Foundation
import Glibc
import Synchronization
import SystemCalls
import XCTest

@testable import QuickActionsDaemon

/// Signals the writing thread received while `testWritesCutShortBySignalsResumeWhereTheyStopped` ran.
private let interruptions = Atomic<Int>(0)
/// Whether that test's writer is still writing (its signalling thread stops when not).
private let writing = Atomic<Bool>(false)

/// What the pipe's reader got; the writer reads it once the reader has signalled it ended.
private final class Received: @unchecked Sendable {
    var bytes: [UInt8] = []
}

final class FileIOTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "fileio-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Bytes of a varied pattern, from runs of different lengths.
    private func bytes(runs count: Int, scale: Int) -> [UInt8] {
        Array((0..<count).map { index in
            (0..<((index * 37) % 11 == 0 ? 0 : (index * 7919) % scale)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
        }.joined())
    }

    func testAReplacementHoldsExactlyItsBytes() throws {
        let path = folder + "/replaced"
        for count in [0, 1, 2, 64, 323] {
            let text = bytes(runs: count, scale: 9000)
            try FileIO.replaceAtomically(path, with: text, mode: 0o600)
            XCTAssertEqual(try XCTUnwrap(FileManager.default.contents(atPath: path)), Data(text), "\(text.count) bytes")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder), ["replaced"], "no temporary file left")
    }

    /// A pipe read slowly takes the bytes over many writes, and signals (without
    /// `SA_RESTART`) cut writes short: each resumes where the last stopped, and the reader gets
    /// exactly the bytes.
    func testWritesCutShortBySignalsResumeWhereTheyStopped() throws {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in interruptions.add(1, ordering: .relaxed) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        var previous = sigaction()
        XCTAssertEqual(sigaction(SIGUSR2, &action, &previous), 0)
        defer { sigaction(SIGUSR2, &previous, nil) }
        interruptions.store(0, ordering: .relaxed)

        let parts = bytes(runs: 400, scale: 40_000)
        var pipeEnds: [CInt] = [0, 0]
        XCTAssertEqual(pipe(&pipeEnds), 0)
        let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
        let received = Received()
        let readerDone = DispatchSemaphore(value: 0)
        let reader = Thread {
            var chunk = [UInt8](repeating: 0, count: 1000)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                received.bytes += chunk[..<count]
            }
            readerDone.signal()
        }
        reader.start()
        let writer = pthread_self()
        writing.store(true, ordering: .relaxed)
        let killerDone = DispatchSemaphore(value: 0)
        let killer = Thread {
            while writing.load(ordering: .relaxed) {
                pthread_kill(writer, SIGUSR2)
                sched_yield()
            }
            killerDone.signal()
        }
        killer.start()
        let result = Result { () throws(SystemCallError) in try FileIO.writeAll(writeEnd, parts, path: "the pipe") }
        writing.store(false, ordering: .relaxed)
        killerDone.wait()
        close(writeEnd)
        readerDone.wait()
        close(readEnd)
        XCTAssertNoThrow(try result.get())
        XCTAssertGreaterThan(interruptions.load(ordering: .relaxed), 0, "the writes were interrupted")
        XCTAssertEqual(received.bytes.count, parts.count)
        XCTAssertEqual(received.bytes, parts)
    }

    /// A file size limit (`RLIMIT_FSIZE`) makes the write that crosses it short; the next one
    /// fails with `EFBIG`, reported with the file's name, and what was written is the bytes'
    /// beginning.
    func testAWriteStoppedByTheFileSizeLimitFailsNamingTheFile() throws {
        let parts = bytes(runs: 50, scale: 20_000)
        let total = parts.count
        let limit = total / 2 + 7
        let fileSize = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
        var previousLimit = rlimit()
        XCTAssertEqual(getrlimit(fileSize, &previousLimit), 0)
        let previousHandler = signal(SIGXFSZ, SIG_IGN)
        var lowered = previousLimit
        lowered.rlim_cur = rlim_t(limit)
        XCTAssertEqual(setrlimit(fileSize, &lowered), 0)
        let path = folder + "/limited"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        let result = Result { () throws(SystemCallError) in try FileIO.writeAll(descriptor, parts, path: path) }
        close(descriptor)
        setrlimit(fileSize, &previousLimit)
        signal(SIGXFSZ, previousHandler)
        XCTAssertThrowsError(try result.get()) { error in
            XCTAssertEqual((error as? SystemCallError)?.errno, EFBIG)
            XCTAssertEqual((error as? SystemCallError)?.path, path)
        }
        XCTAssertEqual(try XCTUnwrap(FileManager.default.contents(atPath: path)), Data(parts.prefix(limit)))
    }
}
