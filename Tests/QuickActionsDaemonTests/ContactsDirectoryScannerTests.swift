import Contacts
import Foundation
import TestSupport
import Synchronization
import XCTest
@testable import QuickActionsDaemon

final class ContactsDirectoryScannerTests: XCTestCase {
    private var root = ""

    override func setUpWithError() throws {
        root = try makeTemporaryFolder("scanner")
    }

    private func write(_ relativePath: String, _ text: String) throws {
        try write(relativePath, bytes: Array(text.utf8))
    }

    private func write(_ relativePath: String, bytes: [UInt8]) throws {
        let url = URL(fileURLWithPath: root + "/" + relativePath)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
    }

    private func card(_ name: String, favorite: Bool = false) -> String {
        ContactCard.vCard(name, favorite: favorite)
    }

    func testNestedCollectionsAreWalkedAndIgnoredNamesSkipped() throws {
        try write("top.vcf", card("Top"))
        try write("personal/ann.vcf", card("Ann", favorite: true))
        try write("personal/displayname", "Personal")
        try write("personal/color", "#ff0000")
        try write("work/team/deep/bob.json", #"{"name": "Bob", "favorite": true}"#)
        try write("work/.hidden.vcf", card("Hidden"))
        try write(".git/config.vcf", card("In hidden folder"))
        try write("work/draft.vcf.tmp", card("Temp"))
        try write("work/old.vcf~", card("Backup"))
        try write("work/notes.txt", "BEGIN:VCARD")

        let result = ContactsDirectoryScanner(root: root).scan()
        XCTAssertEqual(result.problems, [])
        XCTAssertEqual(result.files.map(\.path), [
            root + "/personal/ann.vcf", root + "/top.vcf", root + "/work/team/deep/bob.json",
        ])
        XCTAssertEqual(try result.files.map { try $0.result.get().map(\.identifier) }, [["ann"], ["top"], ["bob"]])
        XCTAssertEqual(result.directories, [
            root, root + "/personal", root + "/work", root + "/work/team", root + "/work/team/deep",
        ])

        let index = ContactsDirectoryScanner(root: root).buildIndex()
        XCTAssertEqual(index.contactCount, 3)
        XCTAssertEqual(index.favorites.map(\.name), ["Ann", "Bob"])
    }

    func testFilesReadInParallelComeBackInPathOrderWithTheSameResultsAsOneByOne() throws {
        // Enough files for several chunks of the parallel read; duplicates across folders and
        // broken files among them, so any mix-up of slots would show.
        for number in 0..<300 {
            let folder = ["a", "b", "c/d"][number % 3]
            let uid = "person-\(number % 200)"
            let text = number % 97 == 0 ? "not a vCard" : card("Person \(number)", favorite: number % 7 == 0)
            try write("\(folder)/\(number).vcf", number % 97 == 0 ? text : text.replacingOccurrences(of: "FN:", with: "UID:\(uid)\r\nFN:"))
        }
        let scanner = ContactsDirectoryScanner(root: root)
        let result = scanner.scan()
        XCTAssertEqual(result.files.count, 300)
        let paths = result.files.map(\.path)
        XCTAssertEqual(paths, paths.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        for file in result.files {
            XCTAssertEqual(file.result, scanner.read(path: file.path), file.path)
        }
        let index = scanner.buildIndex()
        XCTAssertEqual(index.contactCount, 199, "200 identifiers, 1 of them only in a broken file")
        XCTAssertEqual(index.invalidFiles.count, 4)
        var oneByOne = ContactIndex()
        for path in paths { oneByOne.apply(path: path, result: scanner.read(path: path)) }
        XCTAssertEqual(index.contactCount, oneByOne.contactCount)
        XCTAssertEqual(index.favorites, oneByOne.favorites)
        XCTAssertEqual(index.duplicates, oneByOne.duplicates)
    }

    func testALongScanTellsFilesFoundThenFilesReadOfTheTotal() throws {
        for number in 0..<150 { try write("c\(number % 2)/\(number).vcf", card("Person \(number)")) }
        let told = Mutex<[ContactsScanProgress]>([])
        var scanner = ContactsDirectoryScanner(root: root)
        scanner.progressInterval = .zero
        scanner.progress = { progress in told.withLock { $0.append(progress) } }
        XCTAssertEqual(scanner.scan().files.count, 150)
        let progress = told.withLock { $0 }
        XCTAssertEqual(progress.filter { !$0.listingDone }.map(\.filesFound), Array(1...150), "while listing, the files found so far")
        XCTAssertEqual(progress.last, ContactsScanProgress(tree: root, filesFound: 150, filesRead: 150, listingDone: true))
        XCTAssertEqual(progress.first?.description, "Listing contacts in '\(root)': 1 files found so far")
        XCTAssertEqual(progress.last?.description, "Reading contacts in '\(root)': 150 of 150 files read")

        // With the default interval a short scan says nothing.
        scanner.progressInterval = .seconds(1)
        told.withLock { $0 = [] }
        _ = scanner.scan()
        XCTAssertEqual(told.withLock { $0.count }, 0)
    }

    func testSymlinksAreNeverFollowed() throws {
        try write("real/ann.vcf", card("Ann"))
        try FileManager.default.createSymbolicLink(atPath: root + "/link.vcf", withDestinationPath: root + "/real/ann.vcf")
        try FileManager.default.createSymbolicLink(atPath: root + "/linked-folder", withDestinationPath: root + "/real")
        try FileManager.default.createSymbolicLink(atPath: root + "/real/loop", withDestinationPath: root)

        let scanner = ContactsDirectoryScanner(root: root)
        let result = scanner.scan()
        XCTAssertEqual(result.files.map(\.path), [root + "/real/ann.vcf"])
        XCTAssertEqual(result.directories, [root, root + "/real"])

        guard case .failure(.unreadable(let reason)) = scanner.read(path: root + "/link.vcf") else {
            return XCTFail("a symbolic link must not be read")
        }
        XCTAssertEqual(reason, "it is a symbolic link, and links are not followed")
    }

    func testRootReachedThroughALinkIsWalked() throws {
        try write("real/ann.vcf", card("Ann"))
        let link = root + "/root-link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: root + "/real")
        let result = ContactsDirectoryScanner(root: link + "/").scan()
        XCTAssertEqual(result.files.map(\.path), [link + "/ann.vcf"])
    }

    func testOversizeFileIsSkippedWithSizeAndLimit() throws {
        let big = card("Big") + String(repeating: "NOTE:padding\r\n", count: 20)
        try write("big.vcf", big)
        try write("small.vcf", card("Small"))
        let scanner = ContactsDirectoryScanner(root: root, maxFileBytes: 100)
        let result = scanner.scan()
        XCTAssertEqual(result.files.count, 2)
        XCTAssertEqual(scanner.read(path: root + "/big.vcf"), .failure(.tooLarge(size: big.utf8.count, limit: 100)))

        let index = scanner.buildIndex()
        XCTAssertEqual(index.contactCount, 1)
        XCTAssertEqual(index.invalidFiles.map(\.path), [root + "/big.vcf"])
    }

    func testFileExactlyAtTheLimitIsRead() throws {
        let text = card("Exact")
        try write("exact.vcf", text)
        let scanner = ContactsDirectoryScanner(root: root, maxFileBytes: text.utf8.count)
        XCTAssertEqual(try scanner.read(path: root + "/exact.vcf").get().map(\.name), ["Exact"])
    }

    func testNULFileIsBinaryAndDoesNotAffectOthers() throws {
        try write("nul.vcf", bytes: Array("BEGIN:VCARD\nFN:X".utf8) + [0] + Array("\nEND:VCARD\n".utf8))
        try write("bad.vcf", "BEGIN:VCARD\nFN:Unfinished\n")
        try write("good.vcf", card("Good"))
        let index = ContactsDirectoryScanner(root: root).buildIndex()
        XCTAssertEqual(index.contactCount, 1)
        XCTAssertEqual(index.invalidFiles, [
            .init(path: root + "/bad.vcf", reason: .parse(.missingEnd(beginLine: 1))),
            .init(path: root + "/nul.vcf", reason: .binary),
        ])
    }

    func testMissingRootIsAnEmptyResultWithANote() {
        let missing = root + "/does-not-exist"
        let result = ContactsDirectoryScanner(root: missing).scan()
        XCTAssertEqual(result.files.count, 0)
        XCTAssertEqual(result.directories, [])
        XCTAssertEqual(result.problems, [ContactsScanProblem(path: missing, kind: .missing)])
        XCTAssertEqual(result.problems.first?.description,
                       "The contacts folder \"\(missing)\" does not exist; no contacts are loaded from it.")
        XCTAssertEqual(ContactsDirectoryScanner(root: missing).buildIndex().contactCount, 0)
    }

    func testRootThatIsAFileIsReported() throws {
        try write("file.vcf", card("F"))
        let result = ContactsDirectoryScanner(root: root + "/file.vcf").scan()
        XCTAssertEqual(result.problems, [ContactsScanProblem(path: root + "/file.vcf", kind: .notADirectory)])
    }

    /// A file deleted between the listing and its read is no contact file any more (its
    /// IN_DELETE follows), not an unreadable one that status would list meanwhile.
    func testFileGoneSinceTheListingIsLeftOutOfTheScan() throws {
        try write("kept.vcf", card("Kept"))
        let listed = ["kept.vcf", "gone.vcf"].map { ListedFile(path: root + "/" + $0) }
        let read = ContactsDirectoryScanner(root: root).read(listed)
        XCTAssertEqual(read.map(\.path), [root + "/kept.vcf"])
        XCTAssertEqual(try read.first?.result.get().map(\.name), ["Kept"])
    }

    func testReadOfMissingFileAndOfIgnoredName() {
        let scanner = ContactsDirectoryScanner(root: root)
        XCTAssertEqual(scanner.read(path: root + "/gone.vcf"), .failure(.unreadable(reason: "No such file or directory")))
        XCTAssertEqual(scanner.read(path: root + "/displayname"), .failure(.notAContactFile(fileName: "displayname")))
    }

    func testFIFONamedLikeAContactDoesNotHang() throws {
        XCTAssertEqual(mkfifo(root + "/pipe.vcf", 0o600), 0)
        let scanner = ContactsDirectoryScanner(root: root)
        XCTAssertEqual(scanner.scan().files.count, 0)
        XCTAssertEqual(scanner.read(path: root + "/pipe.vcf"), .failure(.unreadable(reason: "it is not a regular file")))
    }

    func testScanUnderASubfolderAndRereadAfterChange() throws {
        try write("a/one.vcf", card("One"))
        try write("b/two.vcf", card("Two"))
        let scanner = ContactsDirectoryScanner(root: root)
        XCTAssertEqual(scanner.scan(under: root + "/b").files.map(\.path), [root + "/b/two.vcf"])

        var index = scanner.buildIndex()
        try write("b/two.vcf", card("Two, renamed", favorite: true))
        index.apply(path: root + "/b/two.vcf", result: scanner.read(path: root + "/b/two.vcf"))
        XCTAssertEqual(index.favorites.map(\.name), ["Two, renamed"])
    }

    func testParsingOptionsReachTheParser() throws {
        try write("vip.vcf", "BEGIN:VCARD\nFN:V\nCATEGORIES:VIP\nEND:VCARD\n")
        let scanner = ContactsDirectoryScanner(root: root, options: ContactParsingOptions(favoriteCategories: ["vip"]))
        XCTAssertEqual(scanner.buildIndex().favoriteCount, 1)
    }

    /// Files are opened relative to their folder's descriptor, kept from the listing for the
    /// first folders only; names are sorted on their leading bytes first. Past the kept folders
    /// files are opened by path; names alike in their first eight bytes, non-ASCII names and a
    /// folder whose name sorts before its sibling's but whose paths sort after them still come
    /// back in code-point order of path, each with what reading it alone gives.
    func testManyFoldersAndNamesAlikeInTheirFirstBytesComeBackInPathOrder() throws {
        for folder in 0..<100 {
            try write("f\(folder)/only.vcf", card("Folder \(folder)"))
        }
        for name in ["person-0002", "person-0001", "person-00010", "person", "persón", "Zoë", "z"] {
            try write("names/\(name).vcf", card(name))
        }
        try write("a/x.vcf", card("In a"))
        try write("a.b/y.vcf", card("In a.b"))
        let scanner = ContactsDirectoryScanner(root: root)
        let result = scanner.scan()
        XCTAssertEqual(result.files.count, 100 + 7 + 2)
        let paths = result.files.map(\.path)
        XCTAssertEqual(paths, paths.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        XCTAssertEqual(paths.prefix(2), [root + "/a.b/y.vcf", root + "/a/x.vcf"])
        XCTAssertEqual(paths.filter { $0.hasPrefix(root + "/names/") }.map { String($0.dropFirst(root.count + 7)) },
                       ["Zoë.vcf", "person-0001.vcf", "person-00010.vcf", "person-0002.vcf", "person.vcf", "persón.vcf", "z.vcf"])
        for file in result.files {
            XCTAssertEqual(file.result, scanner.read(path: file.path), file.path)
        }
        XCTAssertEqual(try result.files.last { $0.path.hasSuffix("/f99/only.vcf") }?.result.get().map(\.name), ["Folder 99"])
    }
}
