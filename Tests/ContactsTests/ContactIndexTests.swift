import XCTest
@testable import Contacts

final class ContactIndexTests: XCTestCase {
    private func contact(_ identifier: String, _ name: String, favorite: Bool = false) -> Contact {
        Contact(identifier: identifier, name: name, favorite: favorite)
    }

    func testApplyReplacesWhatTheFileContributed() {
        var index = ContactIndex()
        index.apply(path: "/c/a.vcf", result: .success([contact("a", "Ann", favorite: true), contact("a#2", "Bob")]))
        XCTAssertEqual(index.contactCount, 2)
        XCTAssertEqual(index.favorites.map(\.identifier), ["a"])

        index.apply(path: "/c/a.vcf", result: .success([contact("a", "Ann")]))
        XCTAssertEqual(index.contactCount, 1)
        XCTAssertNil(index.contact(identifier: "a#2"))
        XCTAssertEqual(index.favoriteCount, 0)
        XCTAssertEqual(index.favorites, [])
        XCTAssertEqual(index.paths, ["/c/a.vcf"])
    }

    func testFavoritesAreOrderedByFoldedNameThenIdentifier() {
        var index = ContactIndex()
        index.apply(path: "/c/1.vcf", result: .success([contact("z1", "zoë", favorite: true)]))
        index.apply(path: "/c/2.vcf", result: .success([contact("e2", "Émile", favorite: true)]))
        index.apply(path: "/c/3.vcf", result: .success([contact("e1", "emile", favorite: true)]))
        index.apply(path: "/c/4.vcf", result: .success([contact("a1", "Åsa", favorite: true), contact("n1", "Not", favorite: false)]))
        XCTAssertEqual(index.favorites.map(\.identifier), ["a1", "e1", "e2", "z1"])

        // Renaming a favorite moves it.
        index.apply(path: "/c/1.vcf", result: .success([contact("z1", "Aaron", favorite: true)]))
        XCTAssertEqual(index.favorites.map(\.identifier), ["z1", "a1", "e1", "e2"])
        // Unstarring removes it; deleting a file removes its favorites.
        index.apply(path: "/c/2.vcf", result: .success([contact("e2", "Émile")]))
        index.remove(path: "/c/4.vcf")
        XCTAssertEqual(index.favorites.map(\.identifier), ["z1", "e1"])
        XCTAssertEqual(index.favoriteCount, 2)
    }

    func testFavoritesOrderDoesNotDependOnInsertionOrder() {
        let files: [(String, Contact)] = (0..<30).map { number in
            let name = ["Ängel", "angel", "Zed", "Øyvind", "oyvind", "Ça"][number % 6]
            return ("/c/\(number).vcf", contact("id\(number)", name, favorite: number % 4 != 0))
        }
        var forward = ContactIndex()
        files.forEach { forward.apply(path: $0.0, result: .success([$0.1])) }
        var backward = ContactIndex()
        files.reversed().forEach { backward.apply(path: $0.0, result: .success([$0.1])) }
        XCTAssertEqual(forward.favorites, backward.favorites)
        XCTAssertEqual(forward.favorites, files.map(\.1).filter(\.favorite).sorted(by: NameFolding.areInFavoriteOrder))
    }

    func testDuplicateIdentifierFirstPathWinsAndNextTakesOver() {
        var index = ContactIndex()
        index.apply(path: "/c/b.vcf", result: .success([contact("same", "From B", favorite: true)]))
        index.apply(path: "/c/c.vcf", result: .success([contact("same", "From C")]))
        index.apply(path: "/c/a.vcf", result: .success([contact("same", "From A")]))

        XCTAssertEqual(index.contact(identifier: "same")?.name, "From A")
        XCTAssertEqual(index.contactCount, 1)
        XCTAssertEqual(index.duplicateCount, 2)
        XCTAssertEqual(index.duplicates, [
            .init(identifier: "same", keptPath: "/c/a.vcf", ignoredPath: "/c/b.vcf"),
            .init(identifier: "same", keptPath: "/c/a.vcf", ignoredPath: "/c/c.vcf"),
        ])
        // The winner is not a favorite, so the ignored favorite from b.vcf is not shown.
        XCTAssertEqual(index.favorites, [])
        XCTAssertEqual(index.duplicates.first?.description,
                       "The contact identifier \"same\" in \"/c/b.vcf\" is already used in \"/c/a.vcf\"; ignoring the duplicate.")

        index.remove(path: "/c/a.vcf")
        XCTAssertEqual(index.contact(identifier: "same")?.name, "From B")
        XCTAssertEqual(index.favorites.map(\.name), ["From B"])
        XCTAssertEqual(index.duplicateCount, 1)

        index.apply(path: "/c/b.vcf", result: .success([contact("other", "Other")]))
        XCTAssertEqual(index.contact(identifier: "same")?.name, "From C")
        XCTAssertEqual(index.favorites, [])
        XCTAssertEqual(index.duplicateCount, 0)
        XCTAssertEqual(index.duplicates, [])
        XCTAssertEqual(index.contactCount, 2)
    }

    func testDuplicateWithinOneFileKeepsTheFirstCard() {
        var index = ContactIndex()
        index.apply(path: "/c/x.vcf", result: .success([contact("dup", "First"), contact("dup", "Second", favorite: true)]))
        XCTAssertEqual(index.contact(identifier: "dup")?.name, "First")
        XCTAssertEqual(index.duplicateCount, 1)
        XCTAssertEqual(index.favorites, [])
        index.remove(path: "/c/x.vcf")
        XCTAssertEqual(index.duplicateCount, 0)
        XCTAssertEqual(index.contactCount, 0)
    }

    func testPathOrderIsByCodePoint() {
        var index = ContactIndex()
        index.apply(path: "/c/b.vcf", result: .success([contact("k", "lower b")]))
        index.apply(path: "/c/Z.vcf", result: .success([contact("k", "upper Z")]))
        XCTAssertEqual(index.contact(identifier: "k")?.name, "upper Z")
        XCTAssertEqual(index.paths, ["/c/Z.vcf", "/c/b.vcf"])
    }

    func testInvalidFilesAreListedSortedAndClearedWhenFixed() {
        var index = ContactIndex()
        index.apply(path: "/c/b.vcf", result: .failure(.binary))
        index.apply(path: "/c/a.vcf", result: .failure(.parse(.missingEnd(beginLine: 1))))
        index.apply(path: "/c/ok.vcf", result: .success([contact("ok", "OK")]))
        XCTAssertEqual(index.invalidFiles, [
            .init(path: "/c/a.vcf", reason: .parse(.missingEnd(beginLine: 1))),
            .init(path: "/c/b.vcf", reason: .binary),
        ])
        XCTAssertEqual(index.invalidFiles.last?.description,
                       "Skipped contact file \"/c/b.vcf\": It holds binary data (NUL bytes), not text.")
        XCTAssertEqual(index.contactCount, 1)

        // A file that becomes invalid loses its contacts; fixing it brings them back.
        index.apply(path: "/c/ok.vcf", result: .failure(.tooLarge(size: 10, limit: 5)))
        XCTAssertEqual(index.contactCount, 0)
        XCTAssertNil(index.contact(identifier: "ok"))
        index.apply(path: "/c/b.vcf", result: .success([contact("b", "B")]))
        index.remove(path: "/c/a.vcf")
        XCTAssertEqual(index.invalidFiles.map(\.path), ["/c/ok.vcf"])
        XCTAssertEqual(index.entry(path: "/c/b.vcf"), .success([contact("b", "B")]))
        XCTAssertNil(index.entry(path: "/c/a.vcf"))
    }

    func testRemoveAllUnderAFolder() {
        var index = ContactIndex()
        index.apply(path: "/c/work/a.vcf", result: .success([contact("a", "A", favorite: true)]))
        index.apply(path: "/c/work/deep/b.vcf", result: .failure(.binary))
        index.apply(path: "/c/workshop/c.vcf", result: .success([contact("c", "C", favorite: true)]))
        index.apply(path: "/c/home/a.vcf", result: .success([contact("a", "A at home")]))
        index.apply(path: "/c/top.vcf", result: .success([contact("t", "T")]))

        index.removeAll(under: "/c/work/")
        XCTAssertEqual(index.paths, ["/c/home/a.vcf", "/c/top.vcf", "/c/workshop/c.vcf"])
        XCTAssertEqual(index.invalidFiles, [])
        XCTAssertEqual(index.contact(identifier: "a")?.name, "A at home")
        XCTAssertEqual(index.favorites.map(\.identifier), ["c"])
        XCTAssertEqual(index.duplicateCount, 0)

        index.removeAll(under: "/c")
        XCTAssertEqual(index.paths, [])
        XCTAssertEqual(index.contactCount, 0)
        XCTAssertEqual(index.favoriteCount, 0)
    }

    func testRemovingAnUnknownPathChangesNothing() {
        var index = ContactIndex()
        index.apply(path: "/c/a.vcf", result: .success([contact("a", "A", favorite: true)]))
        index.remove(path: "/c/zzz.vcf")
        index.removeAll(under: "/elsewhere")
        XCTAssertEqual(index.contactCount, 1)
        XCTAssertEqual(index.favoriteCount, 1)
    }

    // MARK: Compact storage and the bulk path

    func testStoredContactsAnswerExactlyTheBytesApplied() {
        let longName = String(repeating: "Ñandú Ærøskøbing-", count: 12)  // length needs a 2-byte varint
        let applied = [
            Contact(identifier: "6f1c2a8e-9d34-4b7e-a1f0-2c5d8e9b7a31", name: longName, email: "b@x.org",
                    emails: ["a@x.org", "b@x.org", "c@x.org"], favorite: true),
            // The preferred email is not among the emails; NFC and NFD spellings stay apart.
            Contact(identifier: "nfd", name: "Jose\u{301}", email: "jos\u{e9}@x.org", emails: ["jose\u{301}@x.org"]),
            Contact(identifier: "", name: "", email: nil, emails: ["only@x.org"]),
            Contact(identifier: "plain", name: "Plain"),
        ]
        var index = ContactIndex()
        index.apply(path: "/c/" + String(repeating: "long-file-name-", count: 4) + ".vcf", result: .success(applied))
        index.apply(path: "one.vcf", result: .success([applied[1]]))
        let stored = try? index.entry(path: "/c/" + String(repeating: "long-file-name-", count: 4) + ".vcf")?.get()
        XCTAssertEqual(stored, applied)
        XCTAssertEqual(try? index.entry(path: "one.vcf")?.get(), [applied[1]])
        func bytes(_ contact: Contact) -> [[UInt8]] {
            [Array(contact.identifier.utf8), Array(contact.name.utf8), Array((contact.email ?? "-").utf8)]
                + contact.emails.map { Array($0.utf8) }
        }
        XCTAssertEqual(stored?.map(bytes), applied.map(bytes))
        XCTAssertEqual(index.contact(identifier: "nfd").map(bytes), bytes(applied[1]))
        XCTAssertEqual(index.favorites, [applied[0]])
        XCTAssertEqual(index.paths, ["/c/" + String(repeating: "long-file-name-", count: 4) + ".vcf", "one.vcf"])
    }

    /// Files with duplicates across and within files, invalid files, favorites, a path given
    /// twice, several folders, out of order: the set every bulk test applies.
    private func mixedFiles() -> [(path: String, result: Result<[Contact], ContactFileProblem>)] {
        var files: [(path: String, result: Result<[Contact], ContactFileProblem>)] = []
        for number in 0..<200 {
            let folder = ["/c/home/", "/c/work/", "/c/", "/c/work/deep/"][number % 4]
            let path = folder + "f\((number * 37) % 200).vcf"
            switch number % 11 {
            case 0: files.append((path, .failure(.binary)))
            case 1: files.append((path, .success([contact("shared\(number % 3)", "Shared \(number)", favorite: number % 2 == 0),
                                                  contact("own\(number)", "Ångström \(number)", favorite: true)])))
            case 2: files.append((path, .success([contact("twice", "Twice \(number)"), contact("twice", "Again", favorite: true)])))
            default: files.append((path, .success([contact("id\(number % 150)", "Émile \(number)", favorite: number % 3 == 0)])))
            }
        }
        files.append((files[5].path, .success([contact("replaced", "Replaced", favorite: true)])))
        files.append((files[0].path, .success([contact("fixed", "Fixed")])))
        return files
    }

    private func assertSameState(_ bulk: ContactIndex, _ incremental: ContactIndex, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(bulk.paths, incremental.paths, file: file, line: line)
        XCTAssertEqual(bulk.contactCount, incremental.contactCount, file: file, line: line)
        XCTAssertEqual(bulk.favorites, incremental.favorites, file: file, line: line)
        XCTAssertEqual(bulk.favoriteCount, incremental.favoriteCount, file: file, line: line)
        XCTAssertEqual(bulk.duplicates, incremental.duplicates, file: file, line: line)
        XCTAssertEqual(bulk.duplicateCount, incremental.duplicateCount, file: file, line: line)
        XCTAssertEqual(bulk.invalidFiles, incremental.invalidFiles, file: file, line: line)
        for path in incremental.paths {
            XCTAssertEqual(bulk.entry(path: path), incremental.entry(path: path), path, file: file, line: line)
            for contact in (try? incremental.entry(path: path)?.get()) ?? [] {
                XCTAssertEqual(bulk.contact(identifier: contact.identifier), incremental.contact(identifier: contact.identifier),
                               file: file, line: line)
            }
        }
    }

    func testBulkBuildEndsInTheSameStateAsOneApplyPerFile() {
        let files = mixedFiles()
        var incremental = ContactIndex()
        files.forEach { incremental.apply(path: $0.path, result: $0.result) }
        var bulk = ContactIndex()
        bulk.apply(files: files)
        XCTAssertGreaterThan(incremental.duplicateCount, 10)
        XCTAssertGreaterThan(incremental.favoriteCount, 10)
        XCTAssertFalse(incremental.invalidFiles.isEmpty)
        assertSameState(bulk, incremental)
        XCTAssertNotEqual(bulk.favoritesVersion, ContactIndex().favoritesVersion)

        // The bulk-built index takes incremental updates like any other: winners go, the next takes over.
        func update(_ index: inout ContactIndex) {
            for file in files.prefix(60) where file.path.hasSuffix("3.vcf") || file.path.hasSuffix("7.vcf") {
                index.remove(path: file.path)
            }
            index.apply(path: "/c/a.vcf", result: .success([contact("shared0", "Now first", favorite: true)]))
            index.removeAll(under: "/c/work")
        }
        update(&bulk)
        update(&incremental)
        assertSameState(bulk, incremental)
        XCTAssertEqual(bulk.contact(identifier: "shared0")?.name, "Now first")
    }

    func testBulkApplyToANonEmptyIndexIsOneApplyPerFile() {
        let files = mixedFiles()
        var incremental = ContactIndex()
        var bulk = ContactIndex()
        for file in files.prefix(50) {
            incremental.apply(path: file.path, result: file.result)
            bulk.apply(path: file.path, result: file.result)
        }
        files.dropFirst(50).forEach { incremental.apply(path: $0.path, result: $0.result) }
        bulk.apply(files: Array(files.dropFirst(50)))
        assertSameState(bulk, incremental)
    }

    /// Into an index that holds contacts already (an address book's favorites, then its other
    /// contacts): a batch claiming an identifier first (by path order) takes it from the index's
    /// card, one claiming it later queues behind, a path already there is replaced, and the
    /// rest is built in one pass, all as one apply per file would.
    func testBulkApplyIntoAnIndexWithClaimsBeforeAndAfterEachPath() {
        let before: [(path: String, result: Result<[Contact], ContactFileProblem>)] = [
            ("/b/m.vcf", .success([contact("shared", "In the index", favorite: true)])),
            ("/b/k.vcf", .success([contact("kept", "Kept", favorite: true)])),
            ("eds:book/s0", .success([contact("s0", "Starred", favorite: true)])),
        ]
        let batch: [(path: String, result: Result<[Contact], ContactFileProblem>)] = [
            ("/b/z.vcf", .success([contact("shared", "After it")])),
            ("/b/a.vcf", .success([contact("shared", "Before it", favorite: true)])),
            ("/b/k.vcf", .success([contact("kept", "Kept, renamed")])),
            ("eds:book/s0", .success([contact("s0", "Starred", favorite: true)])),
        ] + (1..<200).map { ("eds:book/p\($0)", .success([contact("p\($0)", "Plain \($0)", favorite: $0 % 50 == 0)])) }
        var incremental = ContactIndex()
        var bulk = ContactIndex()
        for file in before {
            incremental.apply(path: file.path, result: file.result)
            bulk.apply(path: file.path, result: file.result)
        }
        batch.forEach { incremental.apply(path: $0.path, result: $0.result) }
        bulk.apply(files: batch)
        assertSameState(bulk, incremental)
        XCTAssertEqual(bulk.contact(identifier: "shared")?.name, "Before it")
        XCTAssertEqual(bulk.contact(identifier: "kept")?.favorite, false)
        XCTAssertEqual(bulk.favorites.map(\.identifier).sorted(), ["p100", "p150", "p50", "s0", "shared"])
        // And it follows later changes the same way.
        incremental.remove(path: "/b/a.vcf")
        bulk.remove(path: "/b/a.vcf")
        assertSameState(bulk, incremental)
        XCTAssertEqual(bulk.contact(identifier: "shared")?.name, "In the index")
    }

    func testBulkApplyOfSortedFilesAndOfNothing() {
        var bulk = ContactIndex()
        let before = bulk.favoritesVersion
        bulk.apply(files: [])
        XCTAssertEqual(bulk.favoritesVersion, before)
        let files = (0..<50).map { number in
            (path: "/c/p\(1000 + number).vcf", result: Result<[Contact], ContactFileProblem>.success(
                [contact("p\(number % 40)", "Person \(number)", favorite: number % 5 == 0)]))
        }
        bulk.apply(files: files)
        var incremental = ContactIndex()
        files.forEach { incremental.apply(path: $0.path, result: $0.result) }
        assertSameState(bulk, incremental)
        XCTAssertEqual(bulk.duplicateCount, 10)
    }

    func testCanonicallyEquivalentPathsAndIdentifiersAreOneAsWithStringKeys() {
        // "é" precomposed and decomposed: other bytes, the same `String`.
        let files: [(path: String, result: Result<[Contact], ContactFileProblem>)] = [
            ("/c/\u{e9}.vcf", .success([contact("caf\u{e9}", "First", favorite: true)])),
            ("/c/b.vcf", .success([contact("cafe\u{301}", "Second", favorite: true)])),
            ("/c/e\u{301}.vcf", .success([contact("other", "Replacement", favorite: true)])),
        ]
        var incremental = ContactIndex()
        files.forEach { incremental.apply(path: $0.path, result: $0.result) }
        var bulk = ContactIndex()
        bulk.apply(files: files)
        assertSameState(bulk, incremental)
        XCTAssertEqual(bulk.paths.count, 2)
        XCTAssertEqual(bulk.contact(identifier: "caf\u{e9}")?.name, "Second")
        XCTAssertEqual(bulk.favorites.map(\.name), ["Replacement", "Second"])

        // The other way round, the later file is the one sorted last: it replaces the earlier.
        var incrementalReversed = ContactIndex()
        files.reversed().forEach { incrementalReversed.apply(path: $0.path, result: $0.result) }
        var bulkReversed = ContactIndex()
        bulkReversed.apply(files: files.reversed())
        assertSameState(bulkReversed, incrementalReversed)
        XCTAssertEqual(bulkReversed.contact(identifier: "cafe\u{301}")?.name, "Second")
        XCTAssertEqual(bulkReversed.duplicateCount, 1)
    }
}
