import Foundation
import TestSupport
import XCTest

/// KDE's contacts: KAddressBook has no star, so a KDE person marks a favorite with the category
/// `favorite`. Tests/integration/kcontacts-card.cpp writes the card with KDE's own library
/// (KContacts' VCardConverter, as KAddressBook saves to its vCard folder); the test builds it
/// with g++ against Debian's libkf5contacts-dev.
final class KDEContactsEndToEndTests: XCTestCase {
    static let source = DaemonFixture.repository.appendingPathComponent("Tests/integration/kcontacts-card.cpp").path

    private func buildCardWriter(into folder: URL) throws -> String {
        let flags = DaemonFixture.run("/usr/bin/pkg-config", ["--cflags", "--libs", "Qt5Gui"])
        guard flags.status == 0, FileManager.default.fileExists(atPath: "/usr/include/KF5/KContacts/KContacts/VCardConverter"),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/g++")
        else {
            try QuicklistEndToEndTests.missing("g++, pkg-config's Qt5Gui or KContacts' headers (libkf5contacts-dev)")
            return ""
        }
        let tool = folder.appendingPathComponent("kcontacts-card").path
        let arguments = ["-std=c++17", "-fPIC", "-o", tool, Self.source, "-I/usr/include/KF5/KContacts", "-lKF5Contacts"]
            + flags.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
        let built = DaemonFixture.run("/usr/bin/g++", arguments)
        XCTAssertEqual(built.status, 0, built.stderr)
        return tool
    }

    private func listed(_ fixture: DaemonFixture) throws -> [String] {
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        let rows = try fixture.qactl(["list", "--json"]).json()["items"] as? [[String: Any]] ?? []
        return rows.compactMap { ($0["item"] as? [String: Any])?["title"] as? String }
    }

    func testACardKContactsWritesWithTheCategoryFavoriteIsAFavoriteAndStopsBeingOneWithout() throws {
        let fixture = try DaemonFixture()
        let tool = try buildCardWriter(into: fixture.root)
        let folder = fixture.contacts.appendingPathComponent("kaddressbook")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let card = folder.appendingPathComponent("kde-aaron.vcf").path
        try fixture.start()

        // "Aaron" sorts before the demo's favorites, so it is among the displayed ones.
        let favorite = DaemonFixture.run(tool, [card, "kde-aaron", "Aaron Kontakt", "aaron@kde.example", "friends", "favorite"])
        XCTAssertEqual(favorite.status, 0, favorite.stderr)
        let written = try String(contentsOfFile: card, encoding: .utf8)
        XCTAssertTrue(written.contains("VERSION:3.0") && written.contains("CATEGORIES:friends,favorite"), written)
        XCTAssertTrue(waitUntil(timeout: 10) { (try? self.listed(fixture))?.contains("Aaron Kontakt") == true }, fixture.log())
        let contact = try fixture.qactl(["contact", "kde-aaron", "--json"]).json()["contact"] as? [String: Any]
        XCTAssertEqual(contact?["email"] as? String, "aaron@kde.example", "\(String(describing: contact))")

        // The category taken away in KAddressBook: the same card, no longer a favorite.
        let plain = DaemonFixture.run(tool, [card, "kde-aaron", "Aaron Kontakt", "aaron@kde.example", "friends"])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        XCTAssertTrue(waitUntil(timeout: 10) { (try? self.listed(fixture)).map { !$0.contains("Aaron Kontakt") } == true }, fixture.log())
        XCTAssertNotNil(try fixture.qactl(["contact", "kde-aaron", "--json"]).json()["contact"] as? [String: Any], "still a contact")
    }
}
