import Foundation
import Glibc
import NIOCore
import TestSupport
import Varlink
import XCTest

@testable import VarlinkNIOServer

final class VarlinkServerTests: XCTestCase {
    var fixture = ServerFixture()

    override func setUp() {
        fixture = ServerFixture()
    }

    override func tearDown() async throws {
        await fixture.tearDown()
    }

    // MARK: org.varlink.service

    func testGetInfo() async throws {
        _ = try await fixture.start()
        let info = try await fixture.call("org.varlink.service.GetInfo")
        XCTAssertEqual(info["product"], "testd")
        XCTAssertEqual(info["version"], "0.0-test")
        XCTAssertEqual(info["interfaces"], .array(["org.varlink.service", "org.example.test"]))
    }

    func testGetInterfaceDescription() async throws {
        _ = try await fixture.start()
        let reply = try await fixture.call(
            "org.varlink.service.GetInterfaceDescription", .object(["interface": "org.example.test"]))
        XCTAssertEqual(reply["description"]?.stringValue, TestInterface.description)
        do {
            _ = try await fixture.call("org.varlink.service.GetInterfaceDescription", .object(["interface": "org.nope"]))
            XCTFail("expected InterfaceNotFound")
        } catch let error as VarlinkClientError {
            XCTAssertEqual(error, .remote(name: "org.varlink.service.InterfaceNotFound", parameters: ["interface": "org.nope"]))
        }
    }

    func testUnknownMethodAndInterface() async throws {
        _ = try await fixture.start()
        await assertRemoteError(
            "org.example.test.Explode", nil,
            .methodNotFound("org.example.test.Explode"))
        await assertRemoteError("org.example.Ping", nil, .interfaceNotFound("org.example"))
    }

    func testBadParametersNameTheParameter() async throws {
        _ = try await fixture.start()
        await assertRemoteError("org.example.test.List", .object(["limit": "many"]), .invalidParameter("limit"))
        let reply = try await fixture.call("org.example.test.List", .object(["limit": .int(2)]))
        XCTAssertEqual(reply["limit"], .int(2))
    }

    func testHandlerErrorBecomesErrorReply() async throws {
        _ = try await fixture.start()
        await assertRemoteError(
            "org.example.test.GetContact", .object(["identifier": "x"]),
            VarlinkError(name: "org.example.test.ContactNotFound", parameters: ["identifier": "x"]))
    }

    func testContextCarriesPeerCredentials() async throws {
        _ = try await fixture.start()
        let status = try await fixture.call("org.example.test.Status")
        XCTAssertEqual(status["peerUID"], .int(Int64(getuid())))
    }

    // MARK: Framing, ordering, oneway

    func testMalformedJSONGetsAnErrorThenTheConnectionCloses() async throws {
        _ = try await fixture.start()
        let connection = try RawConnection(path: fixture.socketPath)
        let results = try await offloaded {
            connection.send("{this is not json")
            connection.send(#"{"method":"org.varlink.service.GetInfo"}"#)
            return [connection.readFrame(), connection.readFrame()]
        }
        XCTAssertEqual(
            results,
            [.frame(.object(["error": "org.example.test.InvalidMessage", "parameters": ["reason": "the message is not valid JSON"]])), .closed])
    }

    func testPipelinedCallsAreAnsweredInOrder() async throws {
        _ = try await fixture.start()
        let connection = try RawConnection(path: fixture.socketPath)
        let results = try await offloaded {
            // One write holding three calls; the first is slow, the others instant.
            connection.send(
                #"{"method":"org.example.test.Trigger","parameters":{"position":1}}"# + "\0"
                    + #"{"method":"org.varlink.service.GetInfo"}"# + "\0"
                    + #"{"method":"org.example.test.List","parameters":{"limit":7}}"#)
            return [connection.readFrame(), connection.readFrame(), connection.readFrame()]
        }
        XCTAssertEqual(results[0], .frame(.object(["parameters": ["position": .int(1)]])))
        guard case .frame(let info) = results[1] else { return XCTFail("no GetInfo reply") }
        XCTAssertEqual(info["parameters"]?["product"], "testd")
        XCTAssertEqual(results[2], .frame(.object(["parameters": ["limit": .int(7)]])))
    }

    func testOnewayCallsRunButGetNoReply() async throws {
        _ = try await fixture.start()
        let connection = try RawConnection(path: fixture.socketPath)
        let first = try await offloaded {
            connection.send(#"{"method":"org.example.test.BecomeActive","oneway":true}"#)
            connection.send(#"{"method":"org.varlink.service.Nope","oneway":true}"#)
            connection.send(#"{"method":"org.example.test.Status"}"#)
            return connection.readFrame()
        }
        guard case .frame(let reply) = first else { return XCTFail("no reply: \(first)") }
        XCTAssertNil(reply["error"])
        XCTAssertEqual(reply["parameters"]?["onewayCalls"], .int(1))
    }

    func testHalfClosedPeerStillGetsItsReplies() async throws {
        _ = try await fixture.start()
        let connection = try RawConnection(path: fixture.socketPath)
        let results = try await offloaded {
            connection.send(#"{"method":"org.example.test.Trigger","parameters":{"position":2}}"#)
            shutdown(connection.fd, Int32(SHUT_WR))
            return [connection.readFrame(), connection.readFrame()]
        }
        XCTAssertEqual(results, [.frame(.object(["parameters": ["position": .int(2)]])), .closed])
    }

    // MARK: Limits

    func testOversizeMessageGetsAnErrorThenTheConnectionCloses() async throws {
        _ = try await fixture.start { $0.maxMessageBytes = 1024 }
        let connection = try RawConnection(path: fixture.socketPath)
        let results = try await offloaded {
            connection.send(String(repeating: " ", count: 4096), terminated: false)
            return [connection.readFrame(), connection.readFrame()]
        }
        XCTAssertEqual(
            results,
            [.frame(.object(["error": "org.example.test.MessageTooLarge", "parameters": ["maxBytes": .int(1024)]])), .closed])
        let info = try await fixture.call("org.varlink.service.GetInfo")
        XCTAssertEqual(info["product"], "testd", "other connections keep working")
    }

    func testConnectionLimitRefusesExtraConnections() async throws {
        let server = try await fixture.start { $0.maxConnections = 2 }
        let path = fixture.socketPath
        let first = try RawConnection(path: path)
        let second = try RawConnection(path: path)
        let bothConnected = await waitUntil { server.connectionCount == 2 }
        XCTAssertTrue(bothConnected)
        // An idle connection would make room for a new one (HostileClientTests): both are busy
        // with a stream being served, so the third has no place.
        let streaming = try await offloaded {
            [first, second].map { connection in
                connection.send(#"{"method":"org.example.test.Connect","more":true}"#)
                return connection.readFrame()
            }
        }
        XCTAssertEqual(streaming.count, 2)
        let refused = try await offloaded { try RawConnection(path: path).readFrame() }
        XCTAssertEqual(
            refused,
            .frame(.object(["error": "org.example.test.TooManyConnections", "parameters": ["maxConnections": .int(2)]])))
        XCTAssertEqual(fixture.probe.terminatedStreams.load(ordering: .relaxed), 0, "the admitted streams go on")
        close(second.fd)
        let secondGone = await waitUntil { server.connectionCount == 1 }
        XCTAssertTrue(secondGone)
        let admitted = try RawConnection(path: path)
        let stillServed = try await offloaded {
            admitted.send(#"{"method":"org.varlink.service.GetInfo"}"#)
            return admitted.readFrame()
        }
        guard case .frame(let info) = stillServed else { return XCTFail("admitted connection lost: \(stillServed)") }
        XCTAssertEqual(info["parameters"]?["product"], "testd")
        close(first.fd)
        let oneLeft = await waitUntil { server.connectionCount == 1 }
        XCTAssertTrue(oneLeft)
        let info2 = try await fixture.call("org.varlink.service.GetInfo")
        XCTAssertEqual(info2["product"], "testd", "a slot frees up when a connection closes")
        withExtendedLifetime(admitted) {}
    }

    func testHalfSentMessageDoesNotBlockOthersAndTimesOut() async throws {
        let server = try await fixture.start { $0.partialMessageTimeout = .milliseconds(300) }
        let slow = try RawConnection(path: fixture.socketPath)
        slow.send(#"{"method":"org.varlink.service.Get"#, terminated: false)
        let info = try await fixture.call("org.varlink.service.GetInfo")
        XCTAssertEqual(info["product"], "testd")
        let result = try await offloaded { slow.readFrame() }
        XCTAssertEqual(result, .closed, "the trickling peer is dropped after the timeout")
        let allClosed = await waitUntil { server.connectionCount == 0 }
        XCTAssertTrue(allClosed)
    }

    func testPeerOfAnotherUserIsRefused() async throws {
        _ = try await fixture.start {
            $0.ownerUID = getuid() &+ 4242
            $0.allowsRoot = false
        }
        let connection = try RawConnection(path: fixture.socketPath)
        let results = try await offloaded {
            connection.send(#"{"method":"org.varlink.service.GetInfo"}"#)
            return [connection.readFrame(), connection.readFrame()]
        }
        XCTAssertEqual(results, [.frame(.object(["error": "org.varlink.service.PermissionDenied", "parameters": [:]])), .closed])
    }

    // MARK: Streaming

    func testStreamingCallDeliversEveryReplyInOrder() async throws {
        _ = try await fixture.start()
        let path = fixture.socketPath
        let generations = try await offloaded {
            let client = try VarlinkClient(unixSocketPath: path)
            var replies = try client.callMore("org.example.test.Watch", parameters: .object(["count": .int(5)]))
            var generations: [Int64] = []
            while let reply = try replies.next() { generations.append(reply["generation"]?.intValue ?? -1) }
            return generations
        }
        XCTAssertEqual(generations, [1, 2, 3, 4, 5])
    }

    func testSlowReaderHoldsTheStreamBack() async throws {
        let server = try await fixture.start()
        let connection = try RawConnection(path: fixture.socketPath)
        connection.send(#"{"method":"org.example.test.Watch","more":true}"#)
        let probe = fixture.probe
        let streaming = await waitUntil { probe.streamedReplies.load(ordering: .relaxed) > 0 }
        XCTAssertTrue(streaming)
        // Nobody reads, so the socket fills: the event that the server's connection holds a reply
        // the socket has no room for. From then on the producer must not be asked for more.
        let watch = probe.watchConnection.load(ordering: .relaxed)
        let socketFull = await waitUntil { (await server.bufferedReplyBytes(connectionID: watch) ?? 0) > 0 }
        XCTAssertTrue(socketFull, "the socket never filled")
        let stalledAt = probe.streamedReplies.load(ordering: .relaxed)
        XCTAssertLessThan(stalledAt, 200, "an unread stream of 64 KiB replies must not keep growing")
        // The handler checked, as each reply was asked for, that the one before had left the buffer.
        XCTAssertEqual(probe.repliesAskedWhileBuffered.load(ordering: .relaxed), 0, "the producer is stalled")
        XCTAssertEqual(probe.streamedReplies.load(ordering: .relaxed), stalledAt, "the producer is stalled")
        let read = try await offloaded {
            var frames = 0
            for _ in 0..<(stalledAt + 20) {
                guard case .frame(let reply) = connection.readFrame(), reply["continues"] == .bool(true) else { break }
                frames += 1
            }
            return frames
        }
        XCTAssertEqual(read, stalledAt + 20)
        XCTAssertGreaterThan(probe.streamedReplies.load(ordering: .relaxed), stalledAt, "reading lets it continue")
        XCTAssertEqual(probe.repliesAskedWhileBuffered.load(ordering: .relaxed), 0, "never ahead of the socket")
    }

    /// A reply larger than the socket's buffer (~208 KiB by default) reaches the peer whole,
    /// written in rounds as the peer reads.
    func testALargeReplyReachesThePeerWhole() async throws {
        _ = try await fixture.start()
        let connection = try RawConnection(path: fixture.socketPath)
        let reply = try await offloaded {
            connection.send(#"{"method":"org.example.test.Big"}"#)
            return connection.readFrame()
        }
        guard case .frame(let reply) = reply else { return XCTFail("no reply") }
        XCTAssertEqual(reply["parameters"]?["padding"]?.stringValue?.count, 300_000)
    }

    /// A reply's frame is its `frameBytes`: parameters encoded beforehand copied in as they are,
    /// a large one, one continuing a stream, and a small one alike.
    func testAReplysFrameIsItsBytes() throws {
        let allocator = ByteBufferAllocator()
        for reply in [
            VarlinkReply(encodedParameters: TestInterface.bigParameters),
            VarlinkReply(encodedParameters: TestInterface.bigParameters, continues: true),
            VarlinkReply(parameters: ["x": 1]),
        ] {
            XCTAssertEqual(Array(try allocator.frame(of: reply).readableBytesView), try reply.frameBytes())
        }
    }

    func testStreamIsCancelledWhenThePeerDisconnects() async throws {
        let server = try await fixture.start()
        let connection = try RawConnection(path: fixture.socketPath)
        let first = try await offloaded {
            connection.send(#"{"method":"org.example.test.Connect","more":true}"#)
            return connection.readFrame()
        }
        XCTAssertEqual(first, .frame(.object(["parameters": ["pendingItem": .null], "continues": .bool(true)])))
        XCTAssertEqual(fixture.probe.terminatedStreams.load(ordering: .relaxed), 0)
        close(connection.fd)
        let probe = fixture.probe
        let streamEnded = await waitUntil { probe.terminatedStreams.load(ordering: .relaxed) == 1 }
        XCTAssertTrue(streamEnded)
        let allClosed = await waitUntil { server.connectionCount == 0 }
        XCTAssertTrue(allClosed)
    }

    func testPlainCallNeverSeesContinues() async throws {
        _ = try await fixture.start()
        let connection = try RawConnection(path: fixture.socketPath)
        let results = try await offloaded {
            connection.send(#"{"method":"org.example.test.Watch"}"#)
            connection.send(#"{"method":"org.example.test.List"}"#)
            return [connection.readFrame(), connection.readFrame()]
        }
        guard case .frame(let watch) = results[0] else { return XCTFail("no reply") }
        XCTAssertEqual(watch["parameters"]?["generation"], .int(1))
        XCTAssertNil(watch["continues"])
        XCTAssertEqual(results[1], .frame(.object(["parameters": ["limit": .int(4)]])))
    }

    /// `call(_:parameters:decoding:)` (qactl's one call) reads the typed reply straight from
    /// the reply's text; the values and every error must be those of the two-step path.
    func testTypedCallGivesTheValuesAndErrorsOfTheTwoStepPath() async throws {
        struct Info: Decodable, Equatable {
            var product: String
            var interfaces: [String]
        }
        struct Mismatch: Decodable {
            var product: Int
        }
        _ = try await fixture.start()
        let path = fixture.socketPath
        let (typed, untyped) = try await offloaded {
            (try VarlinkClient(unixSocketPath: path).call("org.varlink.service.GetInfo", decoding: Info.self),
             try VarlinkClient(unixSocketPath: path).call("org.varlink.service.GetInfo"))
        }
        XCTAssertEqual(typed, try untyped.decode(Info.self))
        XCTAssertEqual(typed.product, "testd")
        XCTAssertTrue(typed.interfaces.contains("org.varlink.service"), "\(typed.interfaces)")

        let mismatch: (any Error)? = try await offloaded {
            do {
                _ = try VarlinkClient(unixSocketPath: path).call("org.varlink.service.GetInfo", decoding: Mismatch.self)
                return nil
            } catch { return error }
        }
        XCTAssertThrowsError(try untyped.decode(Mismatch.self)) { expected in
            XCTAssertEqual(mismatch as? JSONValueDecodingError, expected as? JSONValueDecodingError)
            XCTAssertEqual((expected as? JSONValueDecodingError)?.parameter, "product")
        }

        let remote: (any Error)? = try await offloaded {
            do {
                _ = try VarlinkClient(unixSocketPath: path).call("org.example.test.NoSuchMethod", decoding: Info.self)
                return nil
            } catch { return error }
        }
        guard case .remote(let name, _)? = remote as? VarlinkClientError else { return XCTFail("unexpected \(String(describing: remote))") }
        XCTAssertEqual(name, "org.varlink.service.MethodNotFound")

        // Typed parameters written straight into the call's text reach the service as they are.
        struct Limit: Codable, Equatable {
            var limit: Int?
        }
        let limits = try await offloaded {
            [try VarlinkClient(unixSocketPath: path).call("org.example.test.List", encoding: Limit(limit: 7), decoding: Limit.self),
             try VarlinkClient(unixSocketPath: path).call("org.example.test.List", encoding: Limit(limit: nil), decoding: Limit.self)]
        }
        XCTAssertEqual(limits, [Limit(limit: 7), Limit(limit: 4)], "4 is the service's default when no limit is sent")
        let invalid: (any Error)? = try await offloaded {
            do {
                _ = try VarlinkClient(unixSocketPath: path).call("org.example.test.List", encoding: ["limit": "many"], decoding: Limit.self)
                return nil
            } catch { return error }
        }
        XCTAssertEqual(invalid as? VarlinkClientError, .remote(name: "org.varlink.service.InvalidParameter", parameters: ["parameter": "limit"]))
        let one = try EncodedJSONObject(encoding: Limit(limit: 1))
        let frame = try XCTUnwrap(VarlinkCall.frameBytes(method: "a.B", encodedParameters: one))
        XCTAssertEqual(String(decoding: frame, as: UTF8.self), #"{"method":"a.B","parameters":{"limit":1}}"# + "\0")
        XCTAssertNil(VarlinkCall.frameBytes(method: "a.\"B", encodedParameters: one), "a name that needs escaping")
    }

    // MARK: Reference client

    func testPythonReferenceClient() async throws {
        guard runCommand(["python3", "-c", "import varlink"]).status == 0 else {
            throw unavailable("the Python varlink package is not installed (pip install varlink)")
        }
        _ = try await fixture.start()
        let address = "unix:" + fixture.socketPath
        let info = try await offloaded { runCommand(["python3", "-m", "varlink.cli", "info", address]) }
        XCTAssertEqual(info.status, 0, info.output)
        XCTAssertTrue(info.output.contains("org.example.test"), info.output)
        let help = try await offloaded {
            runCommand(["python3", "-m", "varlink.cli", "help", address + "/org.example.test"])
        }
        XCTAssertEqual(help.status, 0, help.output)
        XCTAssertTrue(help.output.contains("method Trigger("), help.output)
        let call = try await offloaded {
            runCommand(["python3", "-m", "varlink.cli", "call", address + "/org.example.test.List", #"{"limit": 3}"#])
        }
        XCTAssertEqual(call.status, 0, call.output)
        XCTAssertTrue(call.output.contains("\"limit\": 3"), call.output)
        // The Python package parses the served description with its own IDL scanner.
        let parse = runCommand([
            "python3", "-c", "import sys, varlink; i = varlink.Interface(sys.stdin.read()); print(i.name)",
        ], input: TestInterface.description)
        XCTAssertEqual(parse.status, 0, parse.output)
        XCTAssertEqual(parse.output.trimmingCharacters(in: .whitespacesAndNewlines), "org.example.test")
    }

    private func assertRemoteError(
        _ method: String, _ parameters: JSONValue?, _ expected: VarlinkError, file: StaticString = #filePath,
        line: UInt = #line
    ) async {
        do {
            let reply = try await fixture.call(method, parameters)
            XCTFail("expected \(expected.name), got \(reply)", file: file, line: line)
        } catch let error as VarlinkClientError {
            XCTAssertEqual(error, .remote(name: expected.name, parameters: expected.parameters), file: file, line: line)
        } catch {
            XCTFail("unexpected \(error)", file: file, line: line)
        }
    }
}
