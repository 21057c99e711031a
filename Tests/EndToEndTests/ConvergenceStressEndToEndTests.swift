import Foundation
import TestSupport
import Varlink
import XCTest

/// Bursts of creates, in-place rewrites, renames and deletes (files and whole folders, new
/// folders included) in the live contacts folder; after each burst the index must equal the
/// disk, contact for contact. Every contact is a favorite, so `ResignActive` then `List(all)`
/// shows the whole index as dynamic items (identifier and name), compared with a walk of the
/// disk. A few bursts of a few hundred operations here; 30 bursts of 4000 under `make stress`.
final class ConvergenceStressEndToEndTests: XCTestCase {
    func testTheIndexEqualsTheDiskAfterEveryBurst() throws {
        let bursts = isStressRun ? 30 : 6
        let operationsPerBurst = isStressRun ? 4000 : 600
        // Every favorite an item, so the set shows the whole index.
        let fixture = try DaemonFixture(extraConfiguration: "[Shortcuts]\nMaxDynamicItems=1000000", copyDemo: false)
        try FileManager.default.copyItem(
            at: DaemonFixture.repository.appendingPathComponent("etc/qactd/shortcuts.plist"), to: fixture.staticItems)
        let daemon = DaemonProcess(fixture)
        defer { daemon.stop() }
        try daemon.start()
        var disk = ContactsOnDisk(root: fixture.contacts)
        var generator = SystemRandomNumberGenerator()
        let started = ContinuousClock.now
        var operations = 0

        for burst in 1...bursts {
            for _ in 0..<operationsPerBurst { try disk.randomOperation(using: &generator) }
            operations += operationsPerBurst
            guard try assertIndexEqualsDisk(daemon, disk, "burst \(burst)") else { break }
        }
        print("convergence: \(bursts) bursts, \(operations) operations, \(disk.fileCount) files at the end, in \(ContinuousClock.now - started)")
    }
}

/// Waits (30 s at most) until the index equals the disk: every favorite on disk is a dynamic
/// item with its name and nothing else is, and `Status` counts every contact on disk.
/// Polled every 50 ms: each poll lists the whole index. Returns whether it converged.
@discardableResult
func assertIndexEqualsDisk(
    _ daemon: DaemonProcess, _ disk: ContactsOnDisk, _ label: String, file: StaticString = #filePath, line: UInt = #line
) throws -> Bool {
    let expected = try disk.walk(favoritesOnly: true)
    var indexed: [String: String] = [:]
    let converged = waitUntil(timeout: 30, every: .milliseconds(50)) {
        indexed = (try? indexedFavorites(daemon)) ?? [:]
        return indexed == expected
    }
    guard converged else {
        let missing = expected.filter { indexed[$0.key] != $0.value }.prefix(10)
        let extra = indexed.filter { expected[$0.key] != $0.value }.prefix(10)
        XCTFail("\(label): the index never equalled the disk (\(expected.count) favorites on disk, \(indexed.count) indexed); "
                + "missing or different: \(Array(missing)); not on disk: \(Array(extra))", file: file, line: line)
        return false
    }
    let contacts = try disk.walk().count
    XCTAssertEqual(try daemon.call("Status")["contacts"]?.intValue, Int64(contacts), label, file: file, line: line)
    return true
}

/// identifier → name of every dynamic item, after a `ResignActive` so the set is current.
private func indexedFavorites(_ daemon: DaemonProcess) throws -> [String: String] {
    _ = try daemon.call("ResignActive")
    let listing = try daemon.call("List", ["all": true])
    var favorites: [String: String] = [:]
    for row in listing["items"]?.arrayValue ?? [] where row["source"]?.stringValue == "dynamic" {
        guard let identifier = row["item"]?["userInfo"]?["contactIdentifier"]?.stringValue else { continue }
        favorites[identifier] = row["item"]?["title"]?.stringValue ?? ""
    }
    return favorites
}

/// The contacts folder as the test changes it: which file holds which contact.
struct ContactsOnDisk {
    let root: URL
    /// Percentage of the contacts written (created or rewritten) as favorites.
    let favoritePercentage: Int
    /// Past this many files, deletes instead of creates, so the tree stays at a size each
    /// check can list.
    let maximumFiles: Int
    /// Relative path → (identifier, name).
    private var files: [String: (identifier: String, name: String)] = [:]
    private var folders: [String] = [""]
    private var nextIdentifier = 0
    private var nextFolder = 0

    init(root: URL, favoritePercentage: Int = 100, maximumFiles: Int = 5000) {
        self.root = root
        self.favoritePercentage = favoritePercentage
        self.maximumFiles = maximumFiles
    }

    var fileCount: Int { files.count }

    private func url(_ relative: String) -> URL { root.appendingPathComponent(relative) }

    private func write(
        _ relative: String, identifier: String, name: String, atomically: Bool, using generator: inout SystemRandomNumberGenerator
    ) throws {
        let favorite = Int.random(in: 0..<100, using: &generator) < favoritePercentage
        let text = ContactCard.vCard(name, favorite: favorite, uid: identifier, category: "favorite", lineEnding: "\n")
        try text.write(to: url(relative), atomically: atomically, encoding: .utf8)
    }

    mutating func randomOperation(using generator: inout SystemRandomNumberGenerator) throws {
        let existing = files.keys.randomElement(using: &generator)
        // Only a new file when there is none to change; past `maximumFiles`, deletes instead of creates.
        var roll = existing == nil ? 0 : Int.random(in: 0..<100, using: &generator)
        if roll < 50, files.count > maximumFiles { roll = 85 }
        switch roll {
        case 0..<50:
            // A new file, sometimes in a new (nested) folder.
            var folder = folders.randomElement(using: &generator) ?? ""
            if Int.random(in: 0..<10, using: &generator) == 0 {
                nextFolder += 1
                folder = (folder.isEmpty ? "" : folder + "/") + "f\(nextFolder)"
                try FileManager.default.createDirectory(at: url(folder), withIntermediateDirectories: true)
                folders.append(folder)
            }
            nextIdentifier += 1
            let relative = (folder.isEmpty ? "" : folder + "/") + "c\(nextIdentifier).vcf"
            try write(relative, identifier: "c\(nextIdentifier)", name: "Contact \(nextIdentifier)", atomically: Bool.random(using: &generator), using: &generator)
            files[relative] = ("c\(nextIdentifier)", "Contact \(nextIdentifier)")
        case 50..<70:
            // Rewritten in place (truncate and write) or replaced by rename, with a new name
            // (and, unless every contact is a favorite, possibly a favorite no more or newly one).
            let relative = existing!
            let identifier = files[relative]!.identifier
            let name = "Renamed \(identifier) \(Int.random(in: 0..<1_000_000, using: &generator))"
            try write(relative, identifier: identifier, name: name, atomically: Bool.random(using: &generator), using: &generator)
            files[relative] = (identifier, name)
        case 70..<85:
            // Moved to another name, possibly in another folder.
            let relative = existing!
            let folder = folders.randomElement(using: &generator) ?? ""
            let target = (folder.isEmpty ? "" : folder + "/") + "m\(Int.random(in: 0..<1_000_000, using: &generator)).vcf"
            guard files[target] == nil else { return }
            try FileManager.default.moveItem(at: url(relative), to: url(target))
            files[target] = files.removeValue(forKey: relative)
        case 85..<98:
            let relative = existing!
            try FileManager.default.removeItem(at: url(relative))
            files[relative] = nil
        default:
            // A whole folder renamed, or removed with everything in it.
            guard let folder = folders.filter({ !$0.isEmpty }).randomElement(using: &generator) else { return }
            let inside = folders.filter { $0 == folder || $0.hasPrefix(folder + "/") }
            if Bool.random(using: &generator) {
                nextFolder += 1
                let renamed = "r\(nextFolder)"
                try FileManager.default.moveItem(at: url(folder), to: url(renamed))
                for old in inside { folders[folders.firstIndex(of: old)!] = renamed + old.dropFirst(folder.count) }
                for (path, contact) in files where path.hasPrefix(folder + "/") {
                    files[path] = nil
                    files[renamed + path.dropFirst(folder.count)] = contact
                }
            } else {
                try FileManager.default.removeItem(at: url(folder))
                folders.removeAll { inside.contains($0) }
                for path in files.keys where path.hasPrefix(folder + "/") { files[path] = nil }
            }
        }
    }

    /// identifier → name, from the files actually on disk (not from the model); of the
    /// favorites only, or of every contact.
    func walk(favoritesOnly: Bool = false) throws -> [String: String] {
        var contacts: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        while let file = enumerator?.nextObject() as? URL {
            guard file.pathExtension == "vcf" else { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            var identifier = "", name = "", favorite = false
            for line in text.split(separator: "\n") {
                if line.hasPrefix("UID:") { identifier = String(line.dropFirst(4)) }
                if line.hasPrefix("FN:") { name = String(line.dropFirst(3)) }
                if line.hasPrefix("CATEGORIES:") { favorite = true }
            }
            if favorite || !favoritesOnly { contacts[identifier] = name }
        }
        return contacts
    }
}
