import QuickActionsProtocol
import XCTest

/// One app name, one set of paths: what both qactd and qactl derive from `--app NAME`.
final class AppInstanceTests: XCTestCase {
    func testValidNames() throws {
        for name in ["thunderbird", "org.mozilla.Thunderbird", "a", "9", "mail_2", "x-y.z", String(repeating: "n", count: 64)] {
            XCTAssertEqual(try AppName(validating: name).name, name)
        }
    }

    func testInvalidNamesAreRefusedNamingTheName() {
        let cases: [(String, AppNameError)] = [
            ("", .empty),
            ("a/b", .invalidCharacter(name: "a/b", character: "/")),
            ("../x", .invalidCharacter(name: "../x", character: "/")),
            (".hidden", .invalidFirstCharacter(name: ".hidden")),
            ("..", .invalidFirstCharacter(name: "..")),
            ("-rf", .invalidFirstCharacter(name: "-rf")),
            ("_x", .invalidFirstCharacter(name: "_x")),
            ("a b", .invalidCharacter(name: "a b", character: " ")),
            ("a\\x2db", .invalidCharacter(name: "a\\x2db", character: "\\")),
            ("app@x", .invalidCharacter(name: "app@x", character: "@")),
            ("café", .invalidCharacter(name: "café", character: "é")),
            ("a\nb", .invalidCharacter(name: "a\nb", character: "\n")),
            (String(repeating: "n", count: 65), .tooLong(name: String(repeating: "n", count: 65), limit: 64)),
            ("qactd", .reserved(name: "qactd")),
        ]
        for (name, expected) in cases {
            XCTAssertThrowsError(try AppName(validating: name), "\"\(name)\"") { error in
                XCTAssertEqual(error as? AppNameError, expected, "\"\(name)\"")
                if !name.isEmpty { XCTAssertTrue("\(error)".contains("\"\(name)\""), "\(error)") }
            }
        }
        // A control character is shown by its code point, not written into the message.
        XCTAssertTrue("\(AppNameError.invalidCharacter(name: "a\nb", character: "\n"))".contains("holds U+A;"))
        XCTAssertTrue("\(AppNameError.invalidFirstCharacter(name: ".x"))".contains("does not begin with a letter or digit"))
    }

    func testPathsFollowFromTheName() throws {
        let app = try AppName(validating: "thunderbird")
        XCTAssertEqual(app.configurationFileName, "thunderbird.conf")
        XCTAssertEqual(app.stateFolderName, "thunderbird")
        XCTAssertEqual(app.socketFileName, "thunderbird.sock")
        XCTAssertEqual(app.serviceUnit, "qactd@thunderbird.service")
        XCTAssertEqual(app.socketUnit, "qactd@thunderbird.socket")

        let runtime = InstancePaths.runtimeFolder(xdgRuntimeDirectory: "/run/user/1000", userID: 1000)
        XCTAssertEqual(runtime, "/run/user/1000/qactd")
        XCTAssertEqual(InstancePaths.socketPath(of: .app(app), runtimeFolder: runtime), "/run/user/1000/qactd/thunderbird.sock")
        XCTAssertEqual(InstancePaths.socketPath(of: .plain, runtimeFolder: runtime), "/run/user/1000/qactd/qactd.sock")
        // Without XDG_RUNTIME_DIR (or with a relative one): the folder systemd-logind makes.
        XCTAssertEqual(InstancePaths.runtimeFolder(xdgRuntimeDirectory: nil, userID: 1001), "/run/user/1001/qactd")
        XCTAssertEqual(InstancePaths.runtimeFolder(xdgRuntimeDirectory: "run", userID: 1001), "/run/user/1001/qactd")
        XCTAssertEqual(InstancePaths.runtimeFolder(xdgRuntimeDirectory: "/tmp/run/", userID: 1), "/tmp/run/qactd")
    }

    func testSocketFileNamesBackToInstances() throws {
        XCTAssertEqual(InstanceName(socketFileName: "qactd.sock"), .plain)
        XCTAssertEqual(InstanceName(socketFileName: "mail.sock"), .app(try AppName(validating: "mail")))
        XCTAssertEqual(InstanceName(socketFileName: "org.x.Mail.sock")?.app?.name, "org.x.Mail")
        for other in ["cards", "mail.cards", ".sock", ".x.sock", "mail.sock.tmp", "a b.sock"] {
            XCTAssertNil(InstanceName(socketFileName: other), other)
        }
        // The plain instance first, then the apps by name.
        let sorted = try [InstanceName.app(AppName(validating: "zed")), .plain, .app(AppName(validating: "alpha"))].sorted()
        XCTAssertEqual(sorted.map(\.fileStem), ["qactd", "alpha", "zed"])
    }
}
