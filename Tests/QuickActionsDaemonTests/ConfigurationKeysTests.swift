import Foundation
import XCTest

@testable import QuickActionsDaemon

/// `ConfigurationKeys.all` is the one list of keys: these tests hold the installed
/// default file and the manual to it.
final class ConfigurationKeysTests: XCTestCase {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let environment = ["HOME": "/home/ada", "XDG_RUNTIME_DIR": "/run/user/1000"]

    func testEveryKeyIsListedOnce() {
        var seen: Set<String> = []
        for key in ConfigurationKeys.all {
            XCTAssertTrue(seen.insert("[\(key.section)] \(key.name)").inserted, "[\(key.section)] \(key.name) is listed twice")
            XCTAssertFalse(key.help.isEmpty, "[\(key.section)] \(key.name) has no help text")
        }
        XCTAssertEqual(ConfigurationKeys.sections, ["Contacts", "Shortcuts", "App", "Feedback", "Commands", "Launcher", "Daemon", "Actions"])
    }

    /// Byte for byte. After changing the table, regenerate the file with
    /// `QACTD_WRITE_DEFAULT_CONFIGURATION=1 swift test --filter ConfigurationKeysTests`.
    func testDefaultFileIsTheTablesRendering() throws {
        let url = Self.repository.appendingPathComponent("etc/qactd/qactd.conf")
        let rendered = ConfigurationKeys.renderDefaultConfigurationFile()
        if ProcessInfo.processInfo.environment["QACTD_WRITE_DEFAULT_CONFIGURATION"] == "1" {
            try rendered.write(to: url, atomically: true, encoding: .utf8)
        }
        let onDisk = try String(contentsOf: url, encoding: .utf8)
        XCTAssertEqual(
            onDisk, rendered,
            "etc/qactd/qactd.conf differs from ConfigurationKeys.all; regenerate it with "
                + "QACTD_WRITE_DEFAULT_CONFIGURATION=1 swift test --filter ConfigurationKeysTests")
        for line in rendered.split(separator: "\n") {
            XCTAssertLessThanOrEqual(line.count, 80, "\(line)")
        }
    }

    /// Read from the user's folder, the default file must mean exactly the built-in defaults.
    func testDefaultFileMeansTheBuiltInDefaults() throws {
        let builtIn = try ConfigurationLoader.parse(text: "", file: nil, environment: environment, userID: 1000)
        let fromFile = try ConfigurationLoader.parse(
            text: ConfigurationKeys.renderDefaultConfigurationFile(), file: "/home/ada/.config/qactd/qactd.conf",
            environment: environment, userID: 1000)
        XCTAssertEqual(fromFile.warnings, [])
        var expected = builtIn.configuration
        expected.source = .file("/home/ada/.config/qactd/qactd.conf")
        XCTAssertEqual(fromFile.configuration, expected)
    }

    /// Every key of the table is a known key: assigning it draws no warning.
    func testEveryKeyIsKnown() throws {
        for key in ConfigurationKeys.all {
            let text: String
            switch key.defaultValue {
            case .text(let value): text = value
            case .derived(_, let value):
                text = value(
                    ConfigurationContext(file: "x", baseDirectory: "/", environment: environment, userID: 1000))
            }
            let loaded = try ConfigurationLoader.parse(
                text: "[\(key.section)]\n\(key.name)=\(text)\n", file: "/etc/qactd/qactd.conf",
                environment: environment, userID: 1000)
            XCTAssertEqual(loaded.warnings, [], "[\(key.section)] \(key.name)")
        }
    }

    func testManualDocumentsEveryKeyWithItsDefault() throws {
        let manual = try manualEntries()
        for key in ConfigurationKeys.all {
            guard let entry = manual[key.section]?[key.name] else {
                XCTFail("qactd.conf(5) has no entry for [\(key.section)] \(key.name)=")
                continue
            }
            let documentation = key.defaultValue.documentation
            let expected = "Default: " + (documentation.isEmpty ? "empty" : documentation)
            XCTAssertTrue(
                Self.contains(entry, word: expected),
                "qactd.conf(5), [\(key.section)] \(key.name)=: expected \"\(expected)\" in \"\(entry)\"")
        }
        for (section, keys) in manual {
            for name in keys.keys where !ConfigurationKeys.all.contains(where: { $0.section == section && $0.name == name }) {
                XCTFail("qactd.conf(5) documents [\(section)] \(name)=, which ConfigurationKeys.all does not have")
            }
        }
        XCTAssertEqual(Set(manual.keys), Set(ConfigurationKeys.sections))
    }

    // MARK: Reading the manual

    /// The `.It Cm Key=` entries under each `.Sh [Section]` of qactd.conf(5), each flattened
    /// to plain words: mdoc macros and their detached punctuation are dropped, so that
    /// "Default:" followed by ".Pa ~/x ." reads "Default: ~/x".
    func manualEntries() throws -> [String: [String: String]] {
        let text = try String(contentsOf: Self.repository.appendingPathComponent("man/qactd.conf.5"), encoding: .utf8)
        var entries: [String: [String: String]] = [:]
        var section: String?
        var key: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(".Sh ") {
                let title = line.dropFirst(4)
                section = title.hasPrefix("[") && title.hasSuffix("]") ? String(title.dropFirst().dropLast()) : nil
                key = nil
                if let section, entries[section] == nil { entries[section] = [:] }
                continue
            }
            guard let section else { continue }
            if line.hasPrefix(".It ") {
                let words = line.split(separator: " ")
                key = nil
                if words.count >= 3, words[1] == "Cm", words[2].hasSuffix("=") {
                    let name = String(words[2].dropLast())
                    XCTAssertNil(entries[section]?[name], "qactd.conf(5) documents [\(section)] \(name)= twice")
                    entries[section, default: [:]][name] = ""
                    key = name
                }
                continue
            }
            if line.hasPrefix(".El") || line.hasPrefix(".Bl") {
                key = nil
                continue
            }
            guard let key else { continue }
            let flat = Self.flatten(line)
            guard !flat.isEmpty else { continue }
            let previous = entries[section]?[key] ?? ""
            entries[section, default: [:]][key] = previous.isEmpty ? flat : previous + " " + flat
        }
        return entries
    }

    static let macros: Set<Substring> = ["Ns", "Pq", "Ql", "Pa", "Cm", "Ar", "Ev", "Xr", "Fl", "Po", "Pc", "Sq", "Dq"]
    static let punctuation: Set<Substring> = [".", ",", ";", ":", "(", ")", "|"]

    static func flatten(_ line: Substring) -> String {
        let text = line.replacingOccurrences(of: "\\&", with: "")
        guard text.hasPrefix(".") else { return text }
        return text.split(separator: " ").dropFirst()
            .filter { !macros.contains($0) && !punctuation.contains($0) }
            .joined(separator: " ")
    }

    /// `Default: 4` must not be satisfied by `Default: 42`, nor `symbol:star` by
    /// `symbol:star.fill`: the match must end the text, a word or a sentence.
    static func contains(_ text: String, word: String) -> Bool {
        var searchRange = text.startIndex..<text.endIndex
        while let range = text.range(of: word, range: searchRange) {
            let rest = text[range.upperBound...]
            if rest.isEmpty || rest.first == " " { return true }
            if let first = rest.first, ".,;".contains(first), rest.dropFirst().first.map({ $0 == " " }) ?? true {
                return true
            }
            searchRange = range.upperBound..<text.endIndex
        }
        return false
    }
}
