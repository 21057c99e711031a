import Foundation
import TestSupport
import Varlink
import XCTest

/// `kill -9` at random instants while favorites change and `ResignActive` writes: a crash at
/// any instant leaves the old or the new state file, complete, never a mix or a truncated
/// one. 200 kills here, 3000 under `make stress`.
final class CrashSafetyEndToEndTests: XCTestCase {
    func testKillNineAtRandomInstantsLeavesTheLastAcknowledgedOrTheInFlightState() throws {
        let kills = isStressRun ? 3000 : 200
        let fixture = try DaemonFixture()
        let daemon = DaemonProcess(fixture)
        defer { daemon.stop() }
        let toggled = "crash/toggle.vcf"
        var favorite = false
        var acknowledged = 0
        var inFlight: Int?
        var leftoversSeen = 0
        let started = ContinuousClock.now

        for round in 1...kills {
            // A change made while the daemon is down: the index must have it once the daemon answers.
            favorite.toggle()
            try fixture.write(contact: toggled, ContactCard.vCard("Toggle \(round)", favorite: favorite, uid: "toggle", category: "favorite", lineEnding: "\n"))
            leftoversSeen += try temporaryFiles(fixture).count
            let status = try daemon.start()

            let stateGeneration = try XCTUnwrap(try stateFile(fixture)?["generation"] as? Int ?? 0)
            XCTAssertTrue(
                stateGeneration == acknowledged || stateGeneration == inFlight,
                "round \(round): the state file holds generation \(stateGeneration); acknowledged \(acknowledged), in flight \(inFlight.map(String.init) ?? "none")")
            XCTAssertEqual(status["generation"]?.intValue, Int64(stateGeneration), "round \(round): the state did not load")
            XCTAssertEqual(try temporaryFiles(fixture), [], "round \(round): temporary files left behind")
            let contact = try daemon.call("GetContact", ["identifier": "toggle"])
            XCTAssertEqual(contact["contact"]?["favorite"]?.boolValue, favorite, "round \(round): the change made while down is not in the index")
            XCTAssertEqual(contact["contact"]?["name"]?.stringValue, "Toggle \(round)")
            if testRun?.failureCount ?? 0 > 0 { break }

            let resigned = try daemon.call("ResignActive")
            XCTAssertEqual(resigned["persisted"]?.boolValue, true)
            acknowledged = Int(try XCTUnwrap(resigned["generation"]?.intValue))

            // Another change, and a ResignActive in flight when the kill comes at a random instant.
            favorite.toggle()
            try fixture.write(contact: toggled, ContactCard.vCard("Toggle \(round)", favorite: favorite, uid: "toggle", category: "favorite", lineEnding: "\n"))
            inFlight = acknowledged + 1
            let reply = ReplyBox()
            let socket = fixture.socketPath
            let caller = Thread { reply.set(try? VarlinkClient(unixSocketPath: socket).call("io.qactd.QuickActions.ResignActive")) }
            caller.start()
            usleep(UInt32.random(in: 0...15_000))
            daemon.kill()
            while !caller.isFinished { usleep(500) }
            if let answered = reply.get(), answered["persisted"]?.boolValue == true,
               let generation = answered["generation"]?.intValue
            {
                acknowledged = Int(generation)
            }
        }
        print("crash safety: \(kills) kills in \(ContinuousClock.now - started); \(leftoversSeen) temporary files of killed writes found before restarts, none after")
    }

    private func stateFile(_ fixture: DaemonFixture) throws -> [String: Any]? {
        guard let data = FileManager.default.contents(atPath: fixture.stateFile.path) else { return nil }
        return try JSONSerialization.jsonObject(with: data) as? [String: Any]
    }

    private func temporaryFiles(_ fixture: DaemonFixture) throws -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: fixture.stateDirectory.path)) ?? []).filter { $0.contains(".tmp-") }
    }
}

/// The reply of a call made on another thread.
private final class ReplyBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: JSONValue?
    func set(_ reply: JSONValue?) { lock.withLock { value = reply } }
    func get() -> JSONValue? { lock.withLock { value } }
}
