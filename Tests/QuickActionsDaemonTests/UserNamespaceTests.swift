import XCTest

@testable import QuickActionsDaemon

/// `/proc/self/uid_map` as the kernel writes it: the initial namespace, and the one the units'
/// `PrivateUsers=yes` gives the daemon (only the user's own uid).
final class UserNamespaceTests: XCTestCase {
    func testTheInitialNamespaceMapsEveryUid() {
        let initial = "         0          0 4294967295\n"
        XCTAssertTrue(UserNamespace.maps(0, uidMap: initial))
        XCTAssertTrue(UserNamespace.maps(1000, uidMap: initial))
        XCTAssertTrue(UserNamespace.maps(4_294_967_294, uidMap: initial))
    }

    func testPrivateUsersMapsOnlyTheUsersOwnUid() {
        let privateUsers = "      1000       1000          1\n"
        XCTAssertTrue(UserNamespace.maps(1000, uidMap: privateUsers))
        XCTAssertFalse(UserNamespace.maps(0, uidMap: privateUsers))
        XCTAssertFalse(UserNamespace.maps(999, uidMap: privateUsers))
        XCTAssertFalse(UserNamespace.maps(1001, uidMap: privateUsers))
    }

    func testSeveralRangesAndNoise() {
        let map = "0 100000 1\n1000 1000 1\nnot a line\n"
        XCTAssertTrue(UserNamespace.maps(0, uidMap: map))
        XCTAssertTrue(UserNamespace.maps(1000, uidMap: map))
        XCTAssertFalse(UserNamespace.maps(1, uidMap: map))
        XCTAssertFalse(UserNamespace.maps(0, uidMap: ""))
    }

    /// This test process runs in the namespace it was started in; /proc tells which.
    func testThisProcessAgreesWithProc() throws {
        let uidMap = try String(contentsOfFile: "/proc/self/uid_map", encoding: .utf8)
        XCTAssertEqual(UserNamespace.mapsRoot, UserNamespace.maps(0, uidMap: uidMap))
    }
}
