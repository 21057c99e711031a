import Foundation
import XCTest

/// The built qactd driven by the reference Varlink client (the Python `varlink` package's
/// `varlink.cli`), so the daemon speaks Varlink as the rest of the world does, not only as qactl does.
final class ReferenceClientEndToEndTests: XCTestCase {
    private func varlinkCLI(_ arguments: [String], fixture: DaemonFixture) -> DaemonFixture.Result {
        DaemonFixture.run("/usr/bin/env", ["python3", "-m", "varlink.cli"] + arguments, environment: fixture.environment)
    }

    override func setUp() {
        super.setUp()
        // `make check` installs the package (scripts/install-deps --test); a missing one is a set-up failure.
        let probe = DaemonFixture.run("/usr/bin/env", ["python3", "-c", "import varlink"])
        XCTAssertEqual(probe.status, 0, "the Python varlink package is missing: scripts/install-deps --test installs it\n\(probe.stderr)")
    }

    /// The version is declared once: `qactd --version`, `qactl --version` and `GetInfo` agree.
    func testOneVersionForTheDaemonTheClientAndGetInfo() throws {
        let fixture = try DaemonFixture()
        try fixture.start()
        let daemon = DaemonFixture.run(DaemonFixture.qactd, ["--version"])
        let client = DaemonFixture.run(DaemonFixture.qactl, ["--version"])
        XCTAssertEqual(daemon.status, 0, daemon.stderr)
        XCTAssertEqual(client.status, 0, client.stderr)
        let version = daemon.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertFalse(version.isEmpty)
        XCTAssertEqual(client.stdout.trimmingCharacters(in: .whitespacesAndNewlines), version)
        let info = varlinkCLI(["call", "unix:" + fixture.socketPath + "/org.varlink.service.GetInfo", "{}"], fixture: fixture)
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertEqual(try info.json()["version"] as? String, version)
    }

    func testInfoHelpAndCallsAgainstTheRunningDaemon() throws {
        let fixture = try DaemonFixture()
        try fixture.start()
        let address = "unix:" + fixture.socketPath

        let info = varlinkCLI(["info", address], fixture: fixture)
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertTrue(info.stdout.contains("org.varlink.service") && info.stdout.contains("io.qactd.QuickActions"), info.stdout)
        XCTAssertTrue(info.stdout.contains("qactd"), "vendor and product are named: \(info.stdout)")

        let help = varlinkCLI(["help", address + "/io.qactd.QuickActions"], fixture: fixture)
        XCTAssertEqual(help.status, 0, help.stderr)
        for member in ["method Status(", "method List(", "method ResignActive(", "method Trigger(", "error NoSuchShortcut",
                       "method Pin(", "method Unpin(", "method Pins(", "type PinnedItem", "error PinDisabled"] {
            XCTAssertTrue(help.stdout.contains(member), "the served description has \(member): \(help.stdout)")
        }

        let resign = varlinkCLI(["call", address + "/io.qactd.QuickActions.ResignActive", "{}"], fixture: fixture)
        XCTAssertEqual(resign.status, 0, resign.stderr)
        let resignReply = try resign.json()
        XCTAssertEqual(resignReply["changed"] as? Bool, true)
        XCTAssertEqual(resignReply["dynamicCount"] as? Int, 4)

        let pins = varlinkCLI(["call", address + "/io.qactd.QuickActions.Pins", "{}"], fixture: fixture)
        XCTAssertEqual(pins.status, 0, pins.stderr)
        XCTAssertEqual((try pins.json()["pins"] as? [Any])?.count, 0, "no pins without DesktopFile=")

        let list = varlinkCLI(["call", address + "/io.qactd.QuickActions.List", #"{"all": true}"#], fixture: fixture)
        XCTAssertEqual(list.status, 0, list.stderr)
        XCTAssertEqual((try list.json()["items"] as? [Any])?.count, 6, "what qactl sees, the reference client sees")

        let trigger = varlinkCLI(
            ["call", address + "/io.qactd.QuickActions.Trigger", #"{"type": "FavoriteAction", "contactIdentifier": "grace-hopper"}"#],
            fixture: fixture)
        XCTAssertEqual(trigger.status, 0, trigger.stderr)
        let triggerReply = try trigger.json()
        XCTAssertEqual(triggerReply["delivery"] as? String, "launch", "no app is connected")
        XCTAssertEqual((triggerReply["contact"] as? [String: Any])?["name"] as? String, "Grace Hopper")
    }

    /// varlink.cli prints an error reply and still exits 0, so the error name in its output is what counts.
    func testErrorsReachTheReferenceClientByName() throws {
        let fixture = try DaemonFixture()
        try fixture.start()
        let address = "unix:" + fixture.socketPath

        let missing = varlinkCLI(["call", address + "/io.qactd.QuickActions.Trigger", #"{"position": 99}"#], fixture: fixture)
        XCTAssertTrue((missing.stdout + missing.stderr).contains("io.qactd.QuickActions.NoSuchShortcut"), missing.stdout + missing.stderr)

        let contact = varlinkCLI(["call", address + "/io.qactd.QuickActions.GetContact", #"{"identifier": "nobody"}"#], fixture: fixture)
        XCTAssertTrue((contact.stdout + contact.stderr).contains("io.qactd.QuickActions.ContactNotFound"), contact.stdout + contact.stderr)

        let unknown = varlinkCLI(["call", address + "/io.qactd.QuickActions.Frobnicate", "{}"], fixture: fixture)
        XCTAssertTrue((unknown.stdout + unknown.stderr).contains("org.varlink.service.MethodNotFound"), unknown.stdout + unknown.stderr)

        let badParameter = varlinkCLI(["call", address + "/io.qactd.QuickActions.List", #"{"limit": "many"}"#], fixture: fixture)
        XCTAssertTrue((badParameter.stdout + badParameter.stderr).contains("org.varlink.service.InvalidParameter"), badParameter.stdout + badParameter.stderr)
        XCTAssertTrue((badParameter.stdout + badParameter.stderr).contains("limit"), "the parameter is named")

        XCTAssertEqual(fixture.qactl(["status"]).status, 0, "the daemon kept serving after every error")
    }

    /// The generic server names its connection-level errors in the interface the daemon configures:
    /// bytes that are no Varlink call get io.qactd.QuickActions.InvalidMessage, then the connection closes.
    func testBytesThatAreNoCallGetInvalidMessageOfTheDaemonsInterface() throws {
        let fixture = try DaemonFixture()
        try fixture.start()
        let script = """
            import socket, sys
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            connection.settimeout(10)
            connection.connect(sys.argv[1])
            connection.sendall(b"{this is not json\\0")
            received = b""
            while True:
                chunk = connection.recv(4096)
                if not chunk:
                    break
                received += chunk
            sys.stdout.write(received.rstrip(b"\\0").decode())
            """
        let raw = DaemonFixture.run("/usr/bin/env", ["python3", "-c", script, fixture.socketPath])
        XCTAssertEqual(raw.status, 0, "the daemon replied, then closed the connection: \(raw.stderr)")
        let reply = try raw.json()
        XCTAssertEqual(reply["error"] as? String, "io.qactd.QuickActions.InvalidMessage", raw.stdout)
        XCTAssertEqual((reply["parameters"] as? [String: Any])?["reason"] as? String, "the message is not valid JSON")
        XCTAssertEqual(fixture.qactl(["status"]).status, 0, "the daemon kept serving")
    }
}
