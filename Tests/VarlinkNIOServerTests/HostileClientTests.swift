import Foundation
import Glibc
import NIOCore
import TestSupport
import Varlink
import XCTest

@testable import VarlinkNIOServer

/// Each attack the server must survive while a well-behaved client keeps
/// being answered: it gets a Varlink error or a closed connection, never a crash, a stall of
/// others or memory without bound. Each test prints the well-behaved client's latency
/// (p50/p99 of `GetInfo` round trips on its own connection) during the attack.
final class HostileClientTests: XCTestCase {
    private var fixture = ServerFixture()

    override func setUp() {
        fixture = ServerFixture()
    }

    override func tearDown() async throws {
        await fixture.tearDown()
    }

    // MARK: Oversized and never-ending messages

    func testAnOversizedMessageErrorReachesASenderThatIsStillSending() async throws {
        _ = try await fixture.start { $0.maxMessageBytes = 1024 }
        let connection = try RawConnection(path: fixture.socketPath)
        let message = [UInt8](repeating: UInt8(ascii: " "), count: 1 << 20)
        let (sent, replies) = try await offloaded {
            // Blocking writes of 1 MiB: the server reads, discards and only then closes, so the
            // write completes instead of failing with EPIPE, and the reply is there to read.
            let sent = connection.sendAll(message)
            return (sent, [connection.readFrame(), connection.readFrame()])
        }
        XCTAssertEqual(sent, message.count, "the sender was cut off before it could read why")
        XCTAssertEqual(
            replies,
            [.frame(.object(["error": "org.example.test.MessageTooLarge", "parameters": ["maxBytes": .int(1024)]])), .closed])
    }

    func testAMessageThatNeverEndsGetsTheErrorWhileOthersAreServed() async throws {
        _ = try await fixture.start { $0.maxMessageBytes = 64 * 1024 }
        let baseline = try await latency(of: fixture.socketPath)
        let connection = try RawConnection(path: fixture.socketPath)
        let attack = Task.detached {
            // Sends until the server shuts the connection down; at most 64 MiB.
            let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 64 * 1024)
            var total = 0
            while total < 64 << 20, connection.sendAll(chunk) == chunk.count { total += chunk.count }
            return connection.readFrame()
        }
        let during = try await latency(of: fixture.socketPath)
        let reply = await attack.value
        XCTAssertEqual(reply, .frame(.object(["error": "org.example.test.MessageTooLarge", "parameters": ["maxBytes": .int(65536)]])))
        report("never-ending message", baseline: baseline, during: during)
    }

    // MARK: Idle and half-sent connections

    func testAnIdleConnectionIsClosedButAStreamBeingServedIsNot() async throws {
        let server = try await fixture.start { $0.idleTimeout = .milliseconds(300) }
        let silent = try RawConnection(path: fixture.socketPath)
        let afterCall = try RawConnection(path: fixture.socketPath)
        let streaming = try RawConnection(path: fixture.socketPath)
        let results = try await offloaded {
            afterCall.send(#"{"method":"org.varlink.service.GetInfo"}"#)
            streaming.send(#"{"method":"org.example.test.Connect","more":true}"#)
            return [afterCall.readFrame(), streaming.readFrame(), silent.readFrame(), afterCall.readFrame()]
        }
        guard case .frame(let info) = results[0] else { return XCTFail("no reply: \(results)") }
        XCTAssertEqual(info["parameters"]?["product"], "testd")
        XCTAssertEqual(results[1], .frame(.object(["parameters": ["pendingItem": .null], "continues": .bool(true)])))
        XCTAssertEqual(results[2], .closed, "a connection that never sent a call is closed when idle")
        XCTAssertEqual(results[3], .closed, "a connection whose call was answered is closed when idle")
        // The stream outlived several idle deadlines: it is being served, not idle.
        let onlyTheStreamLeft = await waitUntil { server.connectionCount == 1 }
        XCTAssertTrue(onlyTheStreamLeft, "\(server.connectionCount) connections")
        XCTAssertEqual(fixture.probe.terminatedStreams.load(ordering: .relaxed), 0)
        streaming.setReceiveTimeout(milliseconds: 100)
        let stillOpen = try await offloaded { streaming.readFrame() }
        XCTAssertEqual(stillOpen, .timedOut)
    }

    func testIdleConnectionsAtTheLimitMakeRoomForANewClient() async throws {
        // No idle deadline: only eviction keeps the server reachable.
        let server = try await fixture.start {
            $0.maxConnections = 64
            $0.idleTimeout = nil
        }
        let path = fixture.socketPath
        let baseline = try await latency(of: path, connections: 1)
        // A client that holds its connection between calls, idle longer than any of the 63
        // silent connections that come after it: they go first all the same.
        let regular = try RawConnection(path: path)
        let firstCall = try await offloaded { regular.getInfo() }
        XCTAssertTrue(firstCall)
        let silent = try (0..<63).map { _ in try RawConnection(path: path) }
        let allAdmitted = await waitUntil { server.connectionCount == 64 }
        XCTAssertTrue(allAdmitted)
        let newcomer = try RawConnection(path: path)
        let (newcomerServed, regularServed, silentClosed) = try await offloaded {
            (newcomer.getInfo(), regular.getInfo(),
             silent.filter { connection in
                 connection.setReceiveTimeout(milliseconds: 20)
                 return connection.readFrame() == .closed
             }.count)
        }
        XCTAssertTrue(newcomerServed, "a new client is let in at the limit")
        XCTAssertTrue(regularServed, "a connection that made calls stays while silent ones can go")
        // Which one is the oldest depends on the order the event loops admitted them in.
        XCTAssertEqual(silentClosed, 1, "one silent connection made room")
        // Each round trip of the well-behaved client opens a connection and evicts an idle one.
        let during = try await latency(of: path, connections: 100)
        XCTAssertLessThanOrEqual(server.connectionCount, 64)
        report("63 silent connections at MaxConnections=64 (a new connection per call)", baseline: baseline, during: during)
    }

    func testHalfMessagesAtTheLimitMakeRoomForANewClient() async throws {
        // Half messages with a deadline far off: eviction, not the deadline, lets the client in.
        let server = try await fixture.start {
            $0.maxConnections = 32
            $0.partialMessageTimeout = .seconds(60)
        }
        let trickling = try (0..<32).map { _ in try RawConnection(path: fixture.socketPath) }
        for connection in trickling { connection.send(#"{"method":"org.varlink.service.Get"#, terminated: false) }
        let allAdmitted = await waitUntil { server.connectionCount == 32 }
        XCTAssertTrue(allAdmitted)
        let during = try await latency(of: fixture.socketPath, connections: 50)
        XCTAssertEqual(during.count, 50, "every call of the well-behaved client was answered")
        report("32 half messages at MaxConnections=32", baseline: nil, during: during)
    }

    func testAHalfMessageIsDroppedAtItsDeadlineEvenWhileTrickling() async throws {
        _ = try await fixture.start {
            $0.partialMessageTimeout = .milliseconds(400)
            $0.idleTimeout = nil
        }
        let connection = try RawConnection(path: fixture.socketPath)
        let started = ContinuousClock.now
        let outcome = try await offloaded {
            connection.setReceiveTimeout(milliseconds: 50)
            // One byte every 50 ms never completes a message: the deadline counts from its first byte.
            for byte in Array(#"{"method":"org.varlink.service.GetInfo","parameters":{"#.utf8) {
                connection.sendBytes([byte])
                if connection.readFrame() == .closed { return RawConnection.ReadResult.closed }
            }
            return .timedOut
        }
        XCTAssertEqual(outcome, .closed)
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(2))
    }

    // MARK: Peers that never read

    func testAPeerPipeliningWithoutReadingIsHeldBackWithBoundedMemory() async throws {
        let server = try await fixture.start()
        let baseline = try await latency(of: fixture.socketPath)
        let rssBefore = residentSetBytes()
        let connection = try RawConnection(path: fixture.socketPath)
        let call = Array(#"{"method":"org.example.test.List","parameters":{"limit":3}}"#.utf8) + [0]
        let sent = try await offloaded {
            // Non-blocking: once the server stops reading, the kernel's buffers fill and sends
            // fail. A full buffer is waited on until it has room again; one that stays full for
            // a whole second means the server holds the peer back.
            var sent = 0
            while sent < 100_000 {
                if connection.sendWithoutBlocking(call) {
                    sent += 1
                } else if !connection.waitUntilWritable(milliseconds: 1000) {
                    break
                }
            }
            return sent
        }
        XCTAssertLessThan(sent, 100_000, "the server must stop reading from a peer that never reads its replies")
        let during = try await latency(of: fixture.socketPath)
        let growth = residentSetBytes() - rssBefore
        XCTAssertLessThan(growth, 64 << 20, "memory grew by \(growth) bytes for one peer")
        // The held-back peer keeps its connection (it has a call in progress); the measuring client's is gone.
        let onlyThePeerLeft = await waitUntil { server.connectionCount == 1 }
        XCTAssertTrue(onlyThePeerLeft, "\(server.connectionCount) connections")
        report("pipelining without reading (\(sent) calls accepted of 100000, RSS +\(growth / 1024) KiB)", baseline: baseline, during: during)
    }

    func testAWatchPeerThatNeverReadsStaysBoundedWhileOthersAreServed() async throws {
        let server = try await fixture.start()
        let baseline = try await latency(of: fixture.socketPath)
        let rssBefore = residentSetBytes()
        let watchers = try (0..<8).map { _ in try RawConnection(path: fixture.socketPath) }
        for watcher in watchers { watcher.send(#"{"method":"org.example.test.Watch","more":true}"#) }
        let probe = fixture.probe
        // Nobody reads, so each socket fills: the event that each stream's connection holds a
        // reply its socket has no room for. From then on its producer must not be asked for more.
        let settled = await waitUntil(timeout: 10) {
            let connections = probe.watchConnections.withLockedValue { $0 }
            guard connections.count == watchers.count, probe.streamedReplies.load(ordering: .relaxed) > 0 else { return false }
            for connection in connections {
                guard let buffered = await server.bufferedReplyBytes(connectionID: connection), buffered > 0 else { return false }
            }
            return true
        }
        XCTAssertTrue(settled, "unread streams must stall")
        // The handler checked, as each reply was asked for, that the one before had left the buffer.
        XCTAssertEqual(probe.repliesAskedWhileBuffered.load(ordering: .relaxed), 0, "the producers are stalled")
        let during = try await latency(of: fixture.socketPath)
        let growth = residentSetBytes() - rssBefore
        // 8 streams of 64 KiB replies: each holds at most the socket's buffers and one reply.
        XCTAssertLessThan(growth, 64 << 20, "memory grew by \(growth) bytes")
        let onlyTheWatchersLeft = await waitUntil { server.connectionCount == 8 }
        XCTAssertTrue(onlyTheWatchersLeft, "\(server.connectionCount) connections")
        report("8 Watch streams never read (RSS +\(growth / 1024) KiB)", baseline: baseline, during: during)
    }

    // MARK: Floods

    func testAConnectDisconnectFloodLeavesNothingBehind() async throws {
        let server = try await fixture.start { $0.maxConnections = 64 }
        let path = fixture.socketPath
        let baseline = try await latency(of: path)
        let rssBefore = residentSetBytes()
        let flood = Task.detached {
            var opened = 0
            for _ in 0..<3000 {
                guard let connection = try? RawConnection(path: path) else { continue }
                opened += 1
                // Every other one leaves a half message behind; each is closed as it goes out of scope.
                if opened % 2 == 0 { connection.send(#"{"method":"org.varlink.service.Get"#, terminated: false) }
            }
            return opened
        }
        let during = try await latency(of: path)
        let opened = await flood.value
        XCTAssertGreaterThan(opened, 2000)
        let drained = await waitUntil { server.connectionCount == 0 }
        XCTAssertTrue(drained, "\(server.connectionCount) connections left behind")
        let growth = residentSetBytes() - rssBefore
        XCTAssertLessThan(growth, 32 << 20)
        report("connect/disconnect flood (\(opened) connections)", baseline: baseline, during: during)
    }

    // MARK: Measuring

    /// Round-trip times of `GetInfo`: `count` calls on one connection, or with `connections`,
    /// each call on a connection of its own. Fails the test when a call is not answered.
    private func latency(of path: String, count: Int = 200, connections: Int? = nil) async throws -> [Duration] {
        try await offloaded {
            let clock = ContinuousClock()
            var samples: [Duration] = []
            let persistent = connections == nil ? try RawConnection(path: path) : nil
            for _ in 0..<(connections ?? count) {
                let started = clock.now
                let connection = try persistent ?? RawConnection(path: path)
                // Patient on a loaded machine: slow is measured, only no answer at all fails.
                connection.setReceiveTimeout(milliseconds: 20_000)
                connection.send(#"{"method":"org.varlink.service.GetInfo"}"#)
                let result = connection.readFrame()
                guard case .frame(let reply) = result, reply["parameters"]?["product"] == "testd" else {
                    throw UnansweredCall(result: "\(result)", answeredBefore: samples.count)
                }
                samples.append(clock.now - started)
            }
            return samples
        }
    }

    private func report(_ attack: String, baseline: [Duration]?, during: [Duration]) {
        print("latency of a well-behaved client: \(baseline.map { "without attack " + latencyPercentiles($0) + "; " } ?? "")during \(attack) \(latencyPercentiles(during))")
    }
}

/// A call of the well-behaved client that got no answer, and what came instead.
struct UnansweredCall: Error {
    var result: String
    var answeredBefore: Int
}

/// The resident set of this process (the server runs in it), from /proc/self/status.
func residentSetBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
    else { return 0 }
    return kilobytes * 1024
}
