import Foundation
import XCTest

/// Every configuration the documentation shows works as shown: each `ini` block of README.md and docs/*.md,
/// each literal block of the man pages that holds a `[Section]`, and every file under `etc/`
/// ending in `.conf` goes through `qactd --check-config`, the daemon's own loading code, which a
/// person can run too.
final class ConfigurationExamplesEndToEndTests: XCTestCase {
    private var scratch = ""

    override func setUpWithError() throws {
        scratch = try makeScratch()
    }

    private func makeScratch() throws -> String {
        let path = NSTemporaryDirectory() + "qactd-examples-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path + "/home", withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    /// `qactd --check-config` on `text`, in a scratch home (so `~` and the mail app's lookup stay there).
    private func check(_ text: String, named name: String) throws -> DaemonFixture.Result {
        let file = scratch + "/" + name
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = scratch + "/home"
        for key in ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_DIRS", "XDG_DATA_DIRS", "JOURNAL_STREAM"] {
            environment[key] = nil
        }
        environment["XDG_RUNTIME_DIR"] = scratch
        return DaemonFixture.run(DaemonFixture.qactd, ["--check-config", file], environment: environment)
    }

    func testEveryShownConfigurationPassesTheDaemonsCheck() throws {
        let repository = DaemonFixture.repository
        var examples: [(where: String, text: String)] = []

        let readme = try String(contentsOf: repository.appendingPathComponent("README.md"), encoding: .utf8)
        let readmeBlocks = Self.fencedBlocks(readme, language: "ini")
        XCTAssertGreaterThanOrEqual(readmeBlocks.count, 5, "README.md's ini blocks")
        examples += readmeBlocks.map { ("README.md:\($0.line)", $0.text) }

        let docs = repository.appendingPathComponent("docs")
        var docsBlocks = 0
        for page in try FileManager.default.contentsOfDirectory(atPath: docs.path).sorted() where page.hasSuffix(".md") {
            let text = try String(contentsOf: docs.appendingPathComponent(page), encoding: .utf8)
            let blocks = Self.fencedBlocks(text, language: "ini")
            docsBlocks += blocks.count
            examples += blocks.map { ("docs/\(page):\($0.line)", $0.text) }
        }
        XCTAssertGreaterThanOrEqual(docsBlocks, 5, "docs/*.md's ini blocks")

        let man = repository.appendingPathComponent("man")
        var manBlocks = 0
        for page in try FileManager.default.contentsOfDirectory(atPath: man.path).sorted() {
            let text = try String(contentsOf: man.appendingPathComponent(page), encoding: .utf8)
            let blocks = Self.literalBlocksWithSections(text)
            manBlocks += blocks.count
            examples += blocks.map { ("man/\(page):\($0.line)", $0.text) }
        }
        XCTAssertGreaterThanOrEqual(manBlocks, 4, "the man pages' configuration examples")

        let etc = repository.appendingPathComponent("etc")
        let files = FileManager.default.enumerator(atPath: etc.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".conf") } ?? []
        XCTAssertTrue(files.contains("qactd/qactd.conf"))
        for file in files.sorted() {
            examples.append(("etc/\(file)", try String(contentsOf: etc.appendingPathComponent(file), encoding: .utf8)))
        }

        for (index, example) in examples.enumerated() {
            let result = try check(example.text, named: "example-\(index).conf")
            XCTAssertEqual(result.status, 0, "\(example.where) is refused by qactd --check-config:\n\(result.stderr)\n\(example.text)")
            XCTAssertTrue(result.stdout.hasSuffix(": valid.\n"), "\(example.where): \(result.stdout)")
            XCTAssertFalse(result.stderr.contains("warning"), "\(example.where) has warnings:\n\(result.stderr)")
        }
    }

    /// The block the README once showed: refused, naming the file, the line, the key and the rule.
    func testATrailingCommentIsRefusedWithTheFileLineKeyAndHint() throws {
        let result = try check(
            """
            [Contacts]
            Directory=~/.local/share/contacts   # a vdir
            Evolution=all                       # GNOME Contacts
            """, named: "commented.conf")
        XCTAssertEqual(result.status, 78, "the daemon's refusal: \(result.stdout)\(result.stderr)")
        XCTAssertTrue(result.stderr.contains(scratch + "/commented.conf:2: [Contacts] Directory:"), result.stderr)
        XCTAssertTrue(result.stderr.contains("qactd.conf takes comments only on lines of their own"), result.stderr)

        let bad = try check("[Shortcuts]\nDisplayLimit=four\n", named: "bad.conf")
        XCTAssertEqual(bad.status, 78)
        XCTAssertTrue(bad.stderr.contains("bad.conf:2: [Shortcuts] DisplayLimit: \"four\""), bad.stderr)
        let missing = DaemonFixture.run(DaemonFixture.qactd, ["--check-config", scratch + "/none.conf"])
        XCTAssertEqual(missing.status, 78)
        XCTAssertTrue(missing.stderr.contains(scratch + "/none.conf"), missing.stderr)
    }

    /// ```ini blocks of a Markdown text, with the line of their first row.
    static func fencedBlocks(_ text: String, language: String) -> [(line: Int, text: String)] {
        var blocks: [(line: Int, text: String)] = []
        var current: (line: Int, lines: [String])?
        for (offset, line) in text.components(separatedBy: "\n").enumerated() {
            if current == nil, line == "```" + language {
                current = (offset + 2, [])
            } else if let block = current, line.hasPrefix("```") {
                blocks.append((block.line, block.lines.joined(separator: "\n") + "\n"))
                current = nil
            } else if current != nil {
                current?.lines.append(line)
            }
        }
        return blocks
    }

    /// `.Bd -literal` … `.Ed` blocks of an mdoc page that hold a `[Section]` line, with mandoc's
    /// escapes read (`\&`, `\e`, `\(dq`, `\-`).
    static func literalBlocksWithSections(_ text: String) -> [(line: Int, text: String)] {
        var blocks: [(line: Int, text: String)] = []
        var current: (line: Int, lines: [String])?
        for (offset, line) in text.components(separatedBy: "\n").enumerated() {
            if current == nil, line.hasPrefix(".Bd -literal") {
                current = (offset + 2, [])
            } else if let block = current, line.hasPrefix(".Ed") {
                let isConfiguration = block.lines.contains { $0.hasPrefix("[") && $0.hasSuffix("]") }
                if isConfiguration { blocks.append((block.line, block.lines.joined(separator: "\n") + "\n")) }
                current = nil
            } else if current != nil {
                let read = line.replacingOccurrences(of: "\\&", with: "").replacingOccurrences(of: "\\e", with: "\\")
                    .replacingOccurrences(of: "\\(dq", with: "\"").replacingOccurrences(of: "\\-", with: "-")
                current?.lines.append(read)
            }
        }
        return blocks
    }
}
