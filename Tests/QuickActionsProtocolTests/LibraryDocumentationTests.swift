import Foundation
import TestSupport
import XCTest

/// Every public declaration of the `QuickActionsClient` product, and of the modules it
/// re-exports or hands to an app, has a doc comment: `scripts/undocumented-public` finds none
/// without one.
final class LibraryDocumentationTests: XCTestCase {
    private let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    private var script: String { repository.appendingPathComponent("scripts/undocumented-public").path }

    func testEveryPublicDeclarationOfTheLibraryProductsIsDocumented() throws {
        let folders = ["QuickActionsClient", "QuickActionsProtocol", "QuickActions", "Contacts", "Varlink"]
            .map { repository.appendingPathComponent("Sources/\($0)").path }
        let (status, output) = try runScript(folders)
        XCTAssertEqual(status, 0, "public declarations without a doc comment:\n\(output)")
        XCTAssertEqual(output, "")
    }

    /// The script itself: it names an undocumented declaration, and takes `///` above
    /// attributes as documenting it.
    func testTheScriptNamesAnUndocumentedDeclarationOnly() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("qactd-doc-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("Sample.swift")
        try """
            /// Documented.
            public struct Documented {
                /// Documented, above its attribute.
                @discardableResult
                public func run() -> Int { 0 }
                public var bare: Int
            }
            let text = \"\"\"
                public func insideAString()
                \"\"\"
            """.write(to: file, atomically: true, encoding: .utf8)
        let (status, output) = try runScript([folder.path])
        XCTAssertEqual(status, 1, output)
        XCTAssertEqual(output.split(separator: "\n").map(String.init), [
            "\(file.path):6: public var bare: Int",
            "1 public declarations without a doc comment",
        ])
    }

    private func runScript(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let result = runCommand(["python3", script] + arguments)
        if result.status == 127 { throw unavailable("python3 cannot run: \(result.output)") }
        return result
    }
}
