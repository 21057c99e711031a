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

    /// The path of one change is near the top, at most 12 numbered steps, and every file a step
    /// names exists (a room's file under the daemon target, a target's under Sources, else from
    /// the repository's top).
    func testThePathOfOneChangeNamesFilesThatExist() throws {
        let document = try String(contentsOf: repository.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        let start = try XCTUnwrap(document.range(of: "## The path of one change"))
        XCTAssertLessThan(document[..<start.lowerBound].split(separator: "\n").count, 20, "near the top")
        let section = document[start.upperBound...]
        let text = section.range(of: "\n## ").map { section[..<$0.lowerBound] } ?? section
        let steps = text.split(separator: "\n").filter { line in
            guard let dot = line.firstIndex(of: ".") else { return false }
            return !line[..<dot].isEmpty && line[..<dot].allSatisfy(\.isNumber)
        }
        XCTAssertTrue((6...12).contains(steps.count), "\(steps.count) steps")
        var named = 0
        for piece in text.split(separator: "`") where [".swift", ".c", ".js", ".in"].contains(where: { piece.hasSuffix($0) }) && !piece.contains(" ") {
            named += 1
            let candidates = ["Sources/QuickActionsDaemon/\(piece)", "Sources/\(piece)", String(piece)]
            XCTAssertTrue(candidates.contains { FileManager.default.fileExists(atPath: repository.appendingPathComponent($0).path) }, "\(piece) does not exist")
        }
        XCTAssertGreaterThanOrEqual(named, steps.count, "each step names its file")
    }

    /// The documents a newcomer reads first stay short enough to read.
    func testTheFirstDocumentsStayShort() throws {
        for (name, limit) in [("README.md", 250), ("ARCHITECTURE.md", 300), ("BENCHMARKS.md", 200)] {
            let text = try String(contentsOf: repository.appendingPathComponent(name), encoding: .utf8)
            XCTAssertLessThanOrEqual(text.split(separator: "\n", omittingEmptySubsequences: false).count, limit, name)
        }
        // The README's two commands within its first 60 lines.
        let readme = try String(contentsOf: repository.appendingPathComponent("README.md"), encoding: .utf8)
        let first = readme.split(separator: "\n", omittingEmptySubsequences: false).prefix(60)
        XCTAssertTrue(first.contains("make demo") && first.contains("make check"), "make demo and make check in README.md's first 60 lines")
    }
}
