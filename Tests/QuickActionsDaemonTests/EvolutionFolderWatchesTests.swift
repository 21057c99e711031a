import XCTest

@testable import QuickActionsDaemon

/// Which folders the Evolution watcher watches on the way to the books and the registry, and
/// what each event asks of it, without I/O: a wanted folder that exists is watched whole; else
/// its deepest existing ancestor waits for the one sub-folder that leads there, and an entry of
/// another name narrows that watch for a quiet period; the folders above only report their own
/// moves.
final class EvolutionFolderWatchesTests: XCTestCase {
    private let wanted: [EvolutionFolderWatches.Wanted] = [
        .init(home: "/h/.local/share", folder: "/h/.local/share/evolution/addressbook"),
        .init(home: "/h/.cache", folder: "/h/.cache/evolution/addressbook"),
        .init(home: "/h/.config", folder: "/h/.config/evolution/sources", nameSuffix: ".source"),
    ]

    private func plan(_ existing: Set<String>) -> [String: EvolutionFolderWatches.Watch] {
        EvolutionFolderWatches.plan(wanted, exists: existing.contains)
    }

    func testTheChainRunsFromTheHomeDownToTheFolder() {
        XCTAssertEqual(EvolutionFolderWatches.chain(from: "/h/.cache", to: "/h/.cache/evolution/addressbook"),
                       ["/h/.cache", "/h/.cache/evolution", "/h/.cache/evolution/addressbook"])
        XCTAssertEqual(EvolutionFolderWatches.chain(from: "/", to: "/evolution"), ["/", "/evolution"])
        XCTAssertEqual(EvolutionFolderWatches.chain(from: "/elsewhere", to: "/h/x"), ["/h/x"])
    }

    func testOnlyTheDeepestExistingFolderWatchesForEntriesAndOnlyForTheNameThatLeadsOn() {
        let watches = plan([
            "/h/.local/share", "/h/.local/share/evolution", "/h/.local/share/evolution/addressbook",
            "/h/.cache",
            "/h/.config", "/h/.config/evolution", "/h/.config/evolution/sources",
        ])
        XCTAssertEqual(Set(watches.keys), [
            "/h/.local/share", "/h/.local/share/evolution", "/h/.local/share/evolution/addressbook",
            "/h/.cache",
            "/h/.config", "/h/.config/evolution", "/h/.config/evolution/sources",
        ])
        // The homes, where other programs write, report their own moves only once the way on exists.
        XCTAssertEqual(watches["/h/.local/share"]?.mask, EvolutionFolderWatches.ownMoves)
        XCTAssertEqual(watches["/h/.local/share/evolution"]?.mask, EvolutionFolderWatches.ownMoves)
        XCTAssertEqual(watches["/h/.local/share/evolution/addressbook"]?.mask, EvolutionFolderWatches.wantedFolder)
        XCTAssertEqual(watches["/h/.local/share/evolution/addressbook"]?.isWanted, true)
        XCTAssertEqual(watches["/h/.config/evolution/sources"]?.nameSuffix, ".source")
        // The cache home has no evolution folder yet: it waits for that name alone.
        XCTAssertEqual(watches["/h/.cache"]?.mask, EvolutionFolderWatches.awaiting)
        XCTAssertEqual(watches["/h/.cache"]?.awaited, ["evolution"])
        // No home, nothing watched for it.
        XCTAssertNil(plan(["/h/.cache"])["/h/.local/share"])
        XCTAssertEqual(plan(["/h/.cache"]).keys.sorted(), ["/h/.cache"])
    }

    func testWhatEachEventAsks() {
        var watches = EvolutionFolderWatches()
        XCTAssertTrue(watches.replan(plan([
            "/h/.local/share", "/h/.local/share/evolution", "/h/.local/share/evolution/addressbook",
            "/h/.cache", "/h/.config", "/h/.config/evolution", "/h/.config/evolution/sources",
        ])))
        func event(_ mask: InotifyEventMask, _ name: String? = nil) -> InotifyEvent {
            InotifyEvent(watchDescriptor: 1, mask: mask, name: name)
        }
        let books = "/h/.local/share/evolution/addressbook"
        XCTAssertEqual(watches.verdict(event(.create, "new-book"), on: books), .refresh)
        XCTAssertEqual(watches.verdict(event(.delete, "old-book"), on: books), .refresh)
        XCTAssertEqual(watches.verdict(event(.movedTo, "gbook.source"), on: "/h/.config/evolution/sources"), .refresh)
        XCTAssertEqual(watches.verdict(event(.closeWrite, "gbook.source"), on: "/h/.config/evolution/sources"), .refresh)
        XCTAssertEqual(watches.verdict(event(.create, ".goutputstream-XYZ123"), on: "/h/.config/evolution/sources"), .ignore,
                       "the registry's temporary file is not a source")
        XCTAssertEqual(watches.verdict(event(.moveSelf), on: "/h/.local/share/evolution"), .refresh, "a folder on the way moved")
        XCTAssertEqual(watches.verdict(event(.deleteSelf), on: books), .refresh)
        XCTAssertEqual(watches.verdict(event(.create, "evolution"), on: "/h/.cache"), .refresh, "the way on appeared")
        XCTAssertEqual(watches.verdict(event(.movedTo, "recently-used.xbel"), on: "/h/.cache"), .mute("/h/.cache"))
        XCTAssertEqual(watches.verdict(event(.create, "x"), on: "/h/unwatched"), .ignore)
    }

    func testAFolderThatWokeTheWatcherForNothingIsNarrowedForAQuietPeriodThenWidenedAgain() {
        var watches = EvolutionFolderWatches()
        _ = watches.replan(plan(["/h/.local/share", "/h/.cache", "/h/.config"]))
        let data = "/h/.local/share"
        XCTAssertEqual(watches.mask(of: data), EvolutionFolderWatches.awaiting)
        XCTAssertNil(watches.rearmAt)
        let now = ContinuousClock.now
        watches.mute(data, now: now)
        XCTAssertEqual(watches.mask(of: data), EvolutionFolderWatches.ownMoves, "the next writes do not wake the watcher")
        XCTAssertEqual(watches.rearmAt, now + EvolutionFolderWatches.quietPeriod)
        XCTAssertEqual(watches.verdict(InotifyEvent(watchDescriptor: 1, mask: .create, name: "other"), on: data), .ignore,
                       "an event queued before the watch was narrowed")
        XCTAssertEqual(watches.verdict(InotifyEvent(watchDescriptor: 1, mask: .create, name: "evolution"), on: data), .refresh)
        // Another folder muted meanwhile keeps the first deadline.
        watches.mute("/h/.cache", now: now + .seconds(5))
        XCTAssertEqual(watches.rearmAt, now + EvolutionFolderWatches.quietPeriod)
        XCTAssertEqual(watches.rearm(), ["/h/.cache", data])
        XCTAssertEqual(watches.mask(of: data), EvolutionFolderWatches.awaiting)
        XCTAssertNil(watches.rearmAt)
        // The same plan again is no change; a folder that appeared is, and a muted folder no
        // longer planned is forgotten.
        XCTAssertFalse(watches.replan(plan(["/h/.local/share", "/h/.cache", "/h/.config"])))
        watches.mute(data, now: now)
        XCTAssertTrue(watches.replan(plan(["/h/.local/share", "/h/.local/share/evolution", "/h/.cache", "/h/.config"])))
        XCTAssertEqual(watches.mask(of: data), EvolutionFolderWatches.ownMoves, "still within its quiet period")
        XCTAssertEqual(watches.mask(of: "/h/.local/share/evolution"), EvolutionFolderWatches.awaiting)
        XCTAssertTrue(watches.replan(plan(["/h/.cache", "/h/.config"])))
        XCTAssertTrue(watches.muted.isEmpty)
        XCTAssertNil(watches.rearmAt)
    }
}
