import Foundation
import TestSupport
import Varlink
import XCTest

/// Every string a client can make the daemon keep is bounded, and a bad number names its
/// parameter: `InvalidParameter` naming it, and nothing kept.
final class ParameterBoundsEndToEndTests: XCTestCase {
    private func invalidParameter(_ fixture: DaemonFixture, _ method: String, _ parameters: JSONValue) -> String? {
        do {
            _ = try VarlinkClient(unixSocketPath: fixture.socketPath).call("io.qactd.QuickActions." + method, parameters: parameters)
            return nil
        } catch .remote(let name, let replied) where name == "org.varlink.service.InvalidParameter" {
            return replied["parameter"]?.stringValue
        } catch {
            return "\(error)"
        }
    }

    func testOversizedStringsAndNonIntegerNumbersAreRefusedByName() throws {
        let fixture = try DaemonFixture()
        try fixture.start()
        let huge = String(repeating: "9", count: 500_000)
        XCTAssertEqual(invalidParameter(fixture, "ResignActive", ["appVersion": .string(huge)]), "appVersion")
        XCTAssertEqual(invalidParameter(fixture, "BecomeActive", ["appVersion": .string(String(repeating: "v", count: 257))]), "appVersion")
        XCTAssertEqual(invalidParameter(fixture, "Trigger", ["type": .string(String(repeating: "t", count: 1025))]), "type")
        XCTAssertEqual(invalidParameter(fixture, "Trigger", ["type": "t", "contactIdentifier": .string(huge)]), "contactIdentifier")
        XCTAssertEqual(invalidParameter(fixture, "GetContact", ["identifier": .string(huge)]), "identifier")
        XCTAssertEqual(invalidParameter(fixture, "Complete", ["token": .string(huge), "handled": true]), "token")
        XCTAssertEqual(invalidParameter(fixture, "List", ["language": .string(huge)]), "language")
        XCTAssertEqual(invalidParameter(fixture, "List", ["limit": .double(1.5)]), "limit")
        XCTAssertEqual(invalidParameter(fixture, "Trigger", ["position": .double(1e20)]), "position")
        XCTAssertEqual(invalidParameter(fixture, "List", ["limit": .double(-1e30), "all": true]), "limit")

        // Nothing of the refused calls was kept; a version at the limit is.
        let status = try fixture.qactl(["status", "--json"]).json()
        XCTAssertNotEqual(status["appVersion"] as? String, huge)
        let longest = String(repeating: "v", count: 256)
        XCTAssertNil(invalidParameter(fixture, "ResignActive", ["appVersion": .string(longest)]))
        XCTAssertEqual(try fixture.qactl(["status", "--json"]).json()["appVersion"] as? String, longest)
    }
}
