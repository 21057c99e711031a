import XCTest

@testable import QuickActionsDaemon

/// `/proc/self/uid_map` as the kernel writes it: the initial namespace, and the one the units'
/// `PrivateUsers=yes` gives the daemon (only the user's own uid).
final class UserNamespaceTests: XCTestCase {
    func testWhichUidsAMapShows() {
        let initial = "         0          0 4294967295\n"
        let privateUsers = "      1000       1000          1\n"
        let several = "0 100000 1\n1000 1000 1\nnot a line\n"
        let cases: [(map: String, mapped: [UInt32], unmapped: [UInt32])] = [
            (initial, [0, 1000, 4_294_967_294], []),
            (privateUsers, [1000], [0, 999, 1001]),
            (several, [0, 1000], [1, 999]),
            ("", [], [0]),
        ]
        for (map, mapped, unmapped) in cases {
            for uid in mapped { XCTAssertTrue(UserNamespace.maps(uid, uidMap: map), "\(uid) in \(map.debugDescription)") }
            for uid in unmapped { XCTAssertFalse(UserNamespace.maps(uid, uidMap: map), "\(uid) in \(map.debugDescription)") }
        }
    }

    /// This test process runs in the namespace it was started in; /proc tells which.
    func testThisProcessAgreesWithProc() throws {
        let uidMap = try String(contentsOfFile: "/proc/self/uid_map", encoding: .utf8)
        XCTAssertEqual(UserNamespace.mapsRoot, UserNamespace.maps(0, uidMap: uidMap))
    }
}
