import Contacts
import Foundation
import Logging
import QuickActions
import SystemCalls
import TestSupport
import QuickActionsProtocol
import XCTest

@testable import QuickActionsDaemon

struct SampleState: Codable, Equatable, Sendable, JSONTextRepresentable {
    var formatVersion = 1
    var generation: Int
    var names: [String]

    static func numbered(_ generation: Int) -> SampleState {
        // Sizes vary from a few bytes to several pages, so a torn read would show as broken JSON.
        let count = (generation * 37) % 120
        return SampleState(
            generation: generation,
            names: (0..<count).map { "contact-\(generation)-\($0)-" + String(repeating: "x", count: $0 % 40) })
    }
}

final class StatePathsTests: XCTestCase {
    /// One path whatever runs the daemon: a `STATE_DIRECTORY` systemd still sets is no longer
    /// where the state lives (it is only a place to move an older state from).
    func testTheStateIsInXDGStateHomeWhateverSystemdSets() throws {
        let paths = try StatePaths.resolve(environment: [
            "STATE_DIRECTORY": "/h/.config/qactd", "XDG_STATE_HOME": "/x", "HOME": "/h",
        ])
        XCTAssertEqual(paths.directory, "/x/qactd")
        XCTAssertEqual(paths.stateFile, "/x/qactd/state.json")
    }

    func testXDGStateHomeThenHome() throws {
        XCTAssertEqual(
            try StatePaths.resolve(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]).directory, "/s/qactd")
        XCTAssertEqual(try StatePaths.resolve(environment: ["HOME": "/home/ada"]).directory, "/home/ada/.local/state/qactd")
        XCTAssertEqual(
            try StatePaths.resolve(environment: ["XDG_STATE_HOME": "relative", "HOME": "/h"]).directory,
            "/h/.local/state/qactd", "XDG requires absolute paths; relative ones are ignored")
        XCTAssertThrowsError(try StatePaths.resolve(environment: ["STATE_DIRECTORY": "/var/lib/qactd"])) { error in
            XCTAssertEqual(error as? StateStoreError, .noStateDirectory)
        }
    }
}

extension StatePathsTests {
    /// An app's state is a folder of its own below the plain daemon's.
    func testAnAppKeepsItsStateInAFolderOfItsOwn() throws {
        let mail = InstanceName.app(try AppName(validating: "mail"))
        XCTAssertEqual(
            try StatePaths.resolve(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"], instance: mail).stateFile,
            "/s/qactd/mail/state.json")
        XCTAssertEqual(try StatePaths.resolve(environment: ["HOME": "/home/ada"], instance: mail).directory, "/home/ada/.local/state/qactd/mail")
        XCTAssertEqual(
            try StatePaths.resolve(environment: ["STATE_DIRECTORY": "/home/ada/.config/qactd/mail", "XDG_STATE_HOME": "/s"], instance: mail)
                .directory, "/s/qactd/mail")
        XCTAssertEqual(try StatePaths.resolve(environment: ["XDG_STATE_HOME": "/s"]).directory, "/s/qactd")
    }

    /// Where older versions kept it: `$STATE_DIRECTORY` while a unit still sets it, then what
    /// systemd 252 mapped `StateDirectory=` to, the configuration folder, only under systemd.
    func testTheOldPlacesAreStateDirectoryThenTheConfigurationFolder() throws {
        let mail = InstanceName.app(try AppName(validating: "mail"))
        XCTAssertEqual(
            StateMigration.oldStateFiles(
                environment: ["HOME": "/h", "STATE_DIRECTORY": "/h/.local/state/qactd/mail:/x", "INVOCATION_ID": "0a1b"], instance: mail),
            ["/h/.local/state/qactd/mail/state.json", "/h/.config/qactd/mail/state.json"])
        XCTAssertEqual(
            StateMigration.oldStateFiles(environment: ["HOME": "/h", "XDG_CONFIG_HOME": "/c", "INVOCATION_ID": "0a1b"], instance: .plain),
            ["/c/qactd/state.json"])
        XCTAssertEqual(
            StateMigration.oldStateFiles(environment: ["HOME": "/h", "XDG_CONFIG_HOME": "/c"], instance: .plain), [],
            "run by hand (a demo, a test): the person's configuration folder is never taken from")
        XCTAssertEqual(StateMigration.oldStateFiles(environment: ["INVOCATION_ID": "0a1b"], instance: .plain), [])
    }

    /// The decision alone: at most one live state, the current one first, an old one moved only
    /// when there is none, a twin a cut-short move left removed, anything else left alone.
    func testTheMoveIsDecidedOnceAndNeverMakesTwoLiveStates() {
        typealias Candidate = StateMigration.Candidate
        let current = "/s/qactd/state.json"
        let config = "/c/qactd/state.json"
        let systemd = "/run/x/state.json"
        XCTAssertEqual(StateMigration.decide(current: current, currentExists: false, candidates: []), [])
        XCTAssertEqual(
            StateMigration.decide(current: current, currentExists: false, candidates: [Candidate(path: config, exists: false)]), [])
        XCTAssertEqual(
            StateMigration.decide(current: current, currentExists: false, candidates: [Candidate(path: config, exists: true)]),
            [.move(from: config, to: current)])
        XCTAssertEqual(
            StateMigration.decide(current: current, currentExists: false, candidates: [
                Candidate(path: systemd, exists: true), Candidate(path: config, exists: true),
            ]),
            [.move(from: systemd, to: current), .leave(config, current: current)], "the first old place wins; the other is kept")
        XCTAssertEqual(
            StateMigration.decide(current: current, currentExists: true, candidates: [Candidate(path: config, exists: true)]),
            [.leave(config, current: current)], "an existing state is never replaced")
        XCTAssertEqual(
            StateMigration.decide(current: current, currentExists: true, candidates: [Candidate(path: config, exists: true, sameAsCurrent: true)]),
            [.removeTwin(config)])
        XCTAssertEqual(
            StateMigration.decide(current: current, currentExists: true, candidates: [Candidate(path: current, exists: true, sameAsCurrent: true)]),
            [], "STATE_DIRECTORY naming the current folder (newer systemd) is no old place")
    }
}

/// The move itself, on real files.
final class StateMigrationTests: XCTestCase {
    var root = ""

    override func setUpWithError() throws {
        root = try makeTemporaryFolder("state-move")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: root)
    }

    /// A state and a pin made under systemd 252's `StateDirectory=` (the configuration folder)
    /// are there after the move, read by the store; the old file is gone, and a second start
    /// moves nothing.
    func testAStateAndItsPinsUnderTheOldPathArePresentAfterTheMove() throws {
        let mail = InstanceName.app(try AppName(validating: "mail"))
        let environment = ["HOME": root, "XDG_CONFIG_HOME": root + "/config", "XDG_STATE_HOME": root + "/state", "INVOCATION_ID": "0a1b"]
        let oldFolder = root + "/config/qactd/mail"
        try FileManager.default.createDirectory(atPath: oldFolder, withIntermediateDirectories: true)
        var old = StateStore<PersistedState>(paths: StatePaths(directory: oldFolder))
        var state = PersistedState(QuickActionsState(staticItems: []))
        state.generation = 7
        let ada = ShortcutItem(type: "FavoriteAction", title: "Ada Lovelace", userInfo: [DynamicItemUserInfoKey.contactIdentifier: .string("ada")])
        state.pins = [PinnedItem(identifier: PinnedItem.identifier(for: ada), item: ada)]
        try old.save(state)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: oldFolder + "/state.json"))

        let (logger, log) = Logger.recording(level: .debug)
        let paths = try StatePaths.resolve(environment: environment, instance: mail)
        try StateMigration.run(paths: paths, environment: environment, instance: mail, logger: logger)
        XCTAssertEqual(paths.stateFile, root + "/state/qactd/mail/state.json")
        XCTAssertFalse(FileManager.default.fileExists(atPath: oldFolder + "/state.json"), "moved, not copied")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: paths.stateFile)), bytes)
        var store = StateStore<PersistedState>(paths: paths)
        guard case .loaded(let loaded) = try store.load() else { return XCTFail("the moved state loads") }
        XCTAssertEqual(loaded.generation, 7)
        XCTAssertEqual(loaded.pins.map(\.identifier), ["FavoriteAction-ada"])
        XCTAssertTrue(log.messages.contains { $0.contains("Moved the state") && $0.contains(oldFolder) }, "\(log.messages)")
        var info = stat()
        XCTAssertEqual(stat(paths.directory, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o700, "the new folder is private")

        // Once: nothing left to move.
        let (again, secondLog) = Logger.recording(level: .debug)
        try StateMigration.run(paths: paths, environment: environment, instance: mail, logger: again)
        XCTAssertFalse(secondLog.messages.contains { $0.contains("Moved") })
    }

    /// An older state beside a current one is never moved over it; an equal one (a move cut short
    /// after the copy) is removed; `STATE_DIRECTORY` is moved from too.
    func testACurrentStateIsNeverReplaced() throws {
        let environment = ["HOME": root, "XDG_STATE_HOME": root + "/state", "STATE_DIRECTORY": root + "/systemd", "INVOCATION_ID": "0a1b"]
        let paths = try StatePaths.resolve(environment: environment)
        for folder in [paths.directory, root + "/systemd", root + "/.config/qactd"] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        try "{\"current\":1}\n".write(toFile: paths.stateFile, atomically: true, encoding: .utf8)
        try "{\"older\":1}\n".write(toFile: root + "/systemd/state.json", atomically: true, encoding: .utf8)
        try "{\"current\":1}\n".write(toFile: root + "/.config/qactd/state.json", atomically: true, encoding: .utf8)
        let (logger, log) = Logger.recording(level: .debug)
        try StateMigration.run(paths: paths, environment: environment, instance: .plain, logger: logger)
        XCTAssertEqual(try String(contentsOfFile: paths.stateFile, encoding: .utf8), "{\"current\":1}\n")
        XCTAssertEqual(try String(contentsOfFile: root + "/systemd/state.json", encoding: .utf8), "{\"older\":1}\n", "left alone")
        XCTAssertFalse(FileManager.default.fileExists(atPath: root + "/.config/qactd/state.json"), "the twin goes")
        XCTAssertTrue(log.messages.contains { $0.contains("differs") && $0.contains(root + "/systemd/state.json") }, "\(log.messages)")

        // With no current state, STATE_DIRECTORY's is the one moved.
        try FileManager.default.removeItem(atPath: paths.stateFile)
        try StateMigration.run(paths: paths, environment: environment, instance: .plain, logger: logger)
        XCTAssertEqual(try String(contentsOfFile: paths.stateFile, encoding: .utf8), "{\"older\":1}\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: root + "/systemd/state.json"))
    }

    /// Across file systems (the old folder in `/dev/shm`, a tmpfs, the new one in the temporary
    /// folder): copied, synced, renamed into place, then the old file removed.
    func testAMoveAcrossFileSystemsCopiesThenRemoves() throws {
        let shm = "/dev/shm/qactd-state-move-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: shm + "/qactd", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: shm) }
        var shmInfo = stat(), rootInfo = stat()
        guard stat(shm, &shmInfo) == 0, stat(root, &rootInfo) == 0, shmInfo.st_dev != rootInfo.st_dev else {
            throw unavailable("/dev/shm and \(root) are on the same file system, so no move across file systems can be made")
        }
        try "{\"older\":2}\n".write(toFile: shm + "/qactd/state.json", atomically: true, encoding: .utf8)
        let environment = ["HOME": root, "XDG_CONFIG_HOME": shm, "XDG_STATE_HOME": root + "/state", "INVOCATION_ID": "0a1b"]
        let paths = try StatePaths.resolve(environment: environment)
        let (logger, log) = Logger.recording(level: .debug)
        try StateMigration.run(paths: paths, environment: environment, instance: .plain, logger: logger)
        XCTAssertEqual(try String(contentsOfFile: paths.stateFile, encoding: .utf8), "{\"older\":2}\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: shm + "/qactd/state.json"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: paths.directory), ["state.json"], "no temporary file stays")
        XCTAssertTrue(log.messages.contains { $0.contains("Moved the state") }, "\(log.messages)")
    }
}

final class StateStoreTests: XCTestCase {
    var root = ""

    override func setUpWithError() throws {
        root = try makeTemporaryFolder("state")
    }

    func makeStore(_ directory: String? = nil) -> StateStore<SampleState> {
        StateStore(paths: StatePaths(directory: directory ?? root + "/state/qactd"))
    }

    func fileInfo(_ path: String) throws -> stat {
        var info = stat()
        try retryingSystemCall("stat", path: path) { stat(path, &info) }
        return info
    }

    func directoryEntries(_ path: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }

    func testFreshWhenNoFile() throws {
        var store = makeStore()
        XCTAssertEqual(try store.load(), .fresh)
    }

    func testRoundTripCreatesPrivateFolderAndFile() throws {
        var store = makeStore()
        let state = SampleState.numbered(7)
        try store.save(state)

        var reopened = makeStore()
        XCTAssertEqual(try reopened.load(), .loaded(state))

        XCTAssertEqual(try fileInfo(store.paths.stateFile).st_mode & 0o777, 0o600)
        XCTAssertEqual(try fileInfo(store.paths.directory).st_mode & 0o777, 0o700)
        XCTAssertEqual(try directoryEntries(store.paths.directory), ["state.json"], "no temporary file is left behind")

        let text = try String(contentsOfFile: store.paths.stateFile, encoding: .utf8)
        XCTAssertTrue(text.contains("\"formatVersion\" : 1"), "JSON is written with sorted, readable keys")
    }

    /// A large set whose every item changed (a new app version), saved again and again: the
    /// file is byte for byte the state's one encoding with a final newline, and reads back as it.
    func testEveryItemChangedInALargeSetIsSavedAsItsEncoding() throws {
        var store = StateStore<PersistedState>(paths: StatePaths(directory: root + "/state/large"))
        for (generation, version) in ["1", "2", "1"].enumerated() {
            let items = (0..<1000).map {
                ShortcutItem(type: "FavoriteAction", title: "Person \($0)", subtitle: "p\($0)@example.org", icon: .symbol("star.fill"),
                             userInfo: ["contactIdentifier": .string("p\($0)"), "appVersion": .string(version)])
            }
            let state = PersistedState(QuickActionsState(staticItems: [], dynamicItems: items, generation: UInt64(generation), appVersion: version))
            try store.save(state)
            let written = try XCTUnwrap(FileManager.default.contents(atPath: store.paths.stateFile))
            XCTAssertEqual(Array(written), try state.jsonText(pretty: true) + [UInt8(ascii: "\n")], "generation \(generation)")
            var reopened = StateStore<PersistedState>(paths: store.paths)
            XCTAssertEqual(try reopened.load(), .loaded(state))
        }
    }

    func testCorruptFileIsMovedAsideAndTheDaemonStartsClean() throws {
        let directory = root + "/state/qactd"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "{\"generation\": 3, \"names\": [".write(toFile: directory + "/state.json", atomically: false, encoding: .utf8)

        let fixedNow = Date(timeIntervalSince1970: 1_700_000_000)  // 2023-11-14T22:13:20Z
        var store = StateStore<SampleState>(paths: StatePaths(directory: directory), now: { fixedNow })
        guard case .corrupt(let movedTo, let reason) = try store.load() else {
            return XCTFail("a truncated file must be reported as corrupt")
        }
        XCTAssertEqual(movedTo, directory + "/state.json.corrupt-20231114T221320Z")
        XCTAssertTrue(reason.contains("not valid JSON"), reason)
        XCTAssertEqual(try directoryEntries(directory), ["state.json.corrupt-20231114T221320Z"])
        XCTAssertEqual(try store.load(), .fresh)

        // A second corruption in the same second keeps the first evidence.
        try "[]".write(toFile: directory + "/state.json", atomically: false, encoding: .utf8)
        guard case .corrupt(let secondMove, _) = try store.load() else { return XCTFail("expected corrupt") }
        XCTAssertEqual(secondMove, directory + "/state.json.corrupt-20231114T221320Z-2")

        // A well-formed file of the wrong shape is corrupt too, and says which key is missing.
        try "{\"formatVersion\": 1, \"names\": []}".write(toFile: directory + "/state.json", atomically: false, encoding: .utf8)
        guard case .corrupt(_, let missingReason) = try store.load() else { return XCTFail("expected corrupt") }
        XCTAssertTrue(missingReason.contains("\"generation\""), missingReason)
    }

    func testEmptyFileIsCorrupt() throws {
        let directory = root + "/s"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        XCTAssertTrue(FileManager.default.createFile(atPath: directory + "/state.json", contents: Data()))
        var store = makeStore(directory)
        guard case .corrupt(_, let reason) = try store.load() else { return XCTFail("expected corrupt") }
        XCTAssertEqual(reason, "the file is empty")
    }

    func testSaveIfChangedSkipsEqualPayloads() throws {
        var store = makeStore()
        XCTAssertTrue(try store.saveIfChanged(.numbered(1)))
        let before = try fileInfo(store.paths.stateFile)
        XCTAssertFalse(try store.saveIfChanged(.numbered(1)))
        let after = try fileInfo(store.paths.stateFile)
        XCTAssertEqual(before.st_ino, after.st_ino, "an unchanged payload must not replace the file")
        XCTAssertEqual(before.st_mtim.tv_sec, after.st_mtim.tv_sec)
        XCTAssertEqual(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec)

        XCTAssertTrue(try store.saveIfChanged(.numbered(2)))
        XCTAssertNotEqual(try fileInfo(store.paths.stateFile).st_ino, before.st_ino)

        // What was loaded counts as saved: a restart does not rewrite an unchanged set.
        var reopened = makeStore()
        _ = try reopened.load()
        let loadedInfo = try fileInfo(store.paths.stateFile)
        XCTAssertFalse(try reopened.saveIfChanged(.numbered(2)))
        XCTAssertEqual(try fileInfo(store.paths.stateFile).st_ino, loadedInfo.st_ino)
    }

    func testFailureWhenParentIsARegularFile() throws {
        let blocker = root + "/blocker"
        XCTAssertTrue(FileManager.default.createFile(atPath: blocker, contents: Data("keep me".utf8)))
        var store = makeStore(blocker + "/qactd")
        XCTAssertThrowsError(try store.save(.numbered(1))) { error in
            guard case .saveFailed(let step, let path, _) = error as? StateStoreError else {
                return XCTFail("unexpected \(error)")
            }
            XCTAssertEqual(step, .createDirectory)
            XCTAssertEqual(path, blocker + "/qactd")
            XCTAssertTrue("\(error)".contains("\"\(blocker)/qactd\""), "\(error)")
        }
        XCTAssertEqual(try String(contentsOfFile: blocker, encoding: .utf8), "keep me")
        // A failed save is retried by the next change: it must not count as persisted.
        XCTAssertThrowsError(try store.saveIfChanged(.numbered(1)))
    }

    func testEveryFailedStepRemovesTheTemporaryFileAndKeepsTheOldState() throws {
        let steps: [StateSaveStep] = [.replace(.createTemporaryFile), .replace(.write), .replace(.syncFile), .replace(.rename)]
        for step in steps {
            var store = makeStore()
            try store.save(.numbered(1))
            let oldBytes = try Data(contentsOf: URL(fileURLWithPath: store.paths.stateFile))

            store.injectedFailure = step
            XCTAssertThrowsError(try store.save(.numbered(2)), "\(step)") { error in
                guard case .saveFailed(let failedStep, _, _) = error as? StateStoreError else {
                    return XCTFail("unexpected \(error)")
                }
                XCTAssertEqual(failedStep, step)
            }
            XCTAssertEqual(try directoryEntries(store.paths.directory), ["state.json"], "\(step): temporary file removed")
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store.paths.stateFile)), oldBytes, "\(step)")

            store.injectedFailure = nil
            XCTAssertTrue(try store.saveIfChanged(.numbered(2)), "\(step): the failed payload is retried")
            var reopened = makeStore()
            XCTAssertEqual(try reopened.load(), .loaded(.numbered(2)))
        }
    }

    func testStaleTemporaryFileOfTheSamePidIsNotReusedOrRemoved() throws {
        let directory = root + "/state/qactd"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let stale = directory + "/.state.json.tmp-\(getpid())-1"
        XCTAssertTrue(FileManager.default.createFile(atPath: stale, contents: Data("stale".utf8)))
        var store = makeStore(directory)
        try store.save(.numbered(4))
        XCTAssertEqual(try String(contentsOfFile: stale, encoding: .utf8), "stale", "O_EXCL never opens another file")
        var reopened = makeStore(directory)
        XCTAssertEqual(try reopened.load(), .loaded(.numbered(4)))
    }

    func testTemporaryFilesLeftByACrashAreRemovedAtStartUnlessTheirWriterLives() throws {
        let directory = root + "/state/qactd"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var store = makeStore(directory)
        try store.save(.numbered(2))
        // A pid that is certainly gone: a child we started and reaped.
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        let gone = directory + "/.state.json.tmp-\(child.processIdentifier)-7"
        let ours = directory + "/.state.json.tmp-\(getpid())-1"
        let living = directory + "/.state.json.tmp-1-1"  // pid 1 is always alive
        let unrelated = directory + "/notes.tmp-1-1"
        for path in [gone, ours, living, unrelated] {
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("{\"half".utf8)), path)
        }
        XCTAssertEqual(store.removeLeftoverTemporaryFiles().sorted(), [gone, ours].sorted())
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory).sorted(),
                       [".state.json.tmp-1-1", "notes.tmp-1-1", "state.json"], "the live writer's file and other files stay")
        var reopened = makeStore(directory)
        XCTAssertEqual(try reopened.load(), .loaded(.numbered(2)))
    }

    func testUnencodablePayloadLeavesOldFile() throws {
        struct Weird: Codable, Equatable, Sendable, JSONTextRepresentable {
            var value: Double
        }
        var store = StateStore<Weird>(paths: StatePaths(directory: root + "/w"))
        try store.save(Weird(value: 1))
        XCTAssertThrowsError(try store.save(Weird(value: .nan))) { error in
            guard case .saveFailed(.encode, _, _) = error as? StateStoreError else { return XCTFail("\(error)") }
        }
        var reopened = StateStore<Weird>(paths: StatePaths(directory: root + "/w"))
        XCTAssertEqual(try reopened.load(), .loaded(Weird(value: 1)))
    }

    /// A reader in another process must only ever see a complete file, old or new.
    func testConcurrentReaderNeverSeesATornFile() throws {
        var store = makeStore()
        try store.save(.numbered(0))
        let directory = store.paths.directory
        let stopFile = root + "/stop"

        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/sh")
        reader.arguments = [
            "-c", #"while [ ! -e "$2" ]; do cat "$1/state.json"; printf '\0'; done"#, "sh", directory, stopFile,
        ]
        let output = Pipe()
        reader.standardOutput = output
        let collected = CollectedOutput()
        let finished = DispatchSemaphore(value: 0)
        let handle = output.fileHandleForReading
        DispatchQueue.global().async {
            collected.data = handle.readDataToEndOfFile()
            finished.signal()
        }
        try reader.run()

        let saves = 500
        for generation in 1...saves {
            try store.save(.numbered(generation))
        }
        XCTAssertTrue(FileManager.default.createFile(atPath: stopFile, contents: nil))
        reader.waitUntilExit()
        finished.wait()

        let chunks = collected.data.split(separator: 0, omittingEmptySubsequences: false).dropLast()
        XCTAssertGreaterThan(chunks.count, 10, "the reader must actually have raced the writer")
        var seen: Set<Int> = []
        for (index, chunk) in chunks.enumerated() {
            do {
                let state = try JSONDecoder().decode(SampleState.self, from: Data(chunk))
                XCTAssertEqual(state, .numbered(state.generation), "read \(index) is a mix of two payloads")
                seen.insert(state.generation)
            } catch {
                XCTFail("read \(index) of \(chunks.count) (\(chunk.count) bytes) did not parse: \(error)")
                break
            }
        }
        XCTAssertGreaterThan(seen.count, 1, "the reader should observe several generations")
        XCTAssertEqual(reader.terminationStatus, 0)
    }
}

private final class CollectedOutput: @unchecked Sendable {
    var data = Data()
}
