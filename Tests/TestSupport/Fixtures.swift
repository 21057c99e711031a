import Foundation
import XCTest

extension XCTestCase {
    /// A fresh folder under the temporary directory (`/tmp`, short enough for Unix socket
    /// paths), removed with everything in it when the test ends.
    public func makeTemporaryFolder(_ label: String) throws -> String {
        let path = NSTemporaryDirectory() + "qactd-\(label)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }
}

/// The text of one contact file, the way the tests write many of them.
public enum ContactCard {
    /// A vCard 3.0 with `FN` (and `UID` when given); a favorite carries `CATEGORIES:<category>`.
    public static func vCard(
        _ name: String, favorite: Bool = false, uid: String? = nil, category: String = "starred", lineEnding: String = "\r\n"
    ) -> String {
        var lines = ["BEGIN:VCARD", "VERSION:3.0"]
        if let uid { lines.append("UID:\(uid)") }
        lines.append("FN:\(name)")
        if favorite { lines.append("CATEGORIES:\(category)") }
        lines.append("END:VCARD")
        return lines.map { $0 + lineEnding }.joined()
    }
}
