import Foundation
import XCTest

/// ARCHITECTURE.md stays true to the tree: its section on the daemon's rooms names exactly
/// the folders of `Sources/QuickActionsDaemon`, and nothing but the composition is left at
/// the top of the target.
final class ArchitectureDocumentTests: XCTestCase {
    private let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func testTheRoomsSectionNamesEveryFolderOfTheDaemonAndNoOther() throws {
        let document = try String(contentsOf: repository.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        let start = try XCTUnwrap(document.range(of: "## The daemon's rooms"))
        let section = document[start.upperBound...]
        let end = section.range(of: "\n## ").map { section[..<$0.lowerBound] } ?? section
        // Each room is a bullet that starts with its folder in bold code: - **`Core/`** — …
        let named = end.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("- **`"), let close = line.range(of: "/`**") else { return nil }
            return String(line[line.index(line.startIndex, offsetBy: 5)..<close.lowerBound])
        }
        let daemon = repository.appendingPathComponent("Sources/QuickActionsDaemon")
        let entries = try FileManager.default.contentsOfDirectory(atPath: daemon.path)
        let folders = entries.filter { name in
            (try? daemon.appendingPathComponent(name).resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true
        }
        XCTAssertEqual(Set(named), Set(folders), "ARCHITECTURE.md's rooms vs the folders of Sources/QuickActionsDaemon")
        XCTAssertEqual(named.count, Set(named).count, "each room once")
        XCTAssertEqual(Set(entries).subtracting(folders), ["Daemon.swift"], "only the composition at the top")
    }
}
