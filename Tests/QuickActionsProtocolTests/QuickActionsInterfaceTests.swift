import Contacts
import Foundation
import QuickActions
import QuickActionsProtocol
import Varlink
import TestSupport
import XCTest

/// The `io.qactd.QuickActions` description is served verbatim, so it must declare exactly what
/// the daemon answers: every method, every error name, and the connection errors the generic
/// server names in it.
final class QuickActionsInterfaceTests: XCTestCase {
    private let dispatcher = VarlinkServiceDispatcher(
        info: VarlinkServiceInfo(
            vendor: "qactd", product: "qactd", version: "1.0", url: "https://example.invalid",
            interfaces: [QuickActionsInterface.varlinkInterface]))

    func testGetInfoAndGetInterfaceDescriptionServeTheInterface() {
        XCTAssertEqual(
            dispatcher.route(VarlinkCall(method: "org.varlink.service.GetInfo")),
            .reply(
                VarlinkReply(parameters: [
                    "vendor": "qactd", "product": "qactd", "version": "1.0", "url": "https://example.invalid",
                    "interfaces": .array(["org.varlink.service", "io.qactd.QuickActions"]),
                ])))
        let route = dispatcher.route(
            VarlinkCall(
                method: "org.varlink.service.GetInterfaceDescription", parameters: ["interface": "io.qactd.QuickActions"]))
        XCTAssertEqual(route, .reply(VarlinkReply(parameters: ["description": .string(QuickActionsInterface.description)])))
        XCTAssertEqual(
            dispatcher.route(VarlinkCall(method: "io.qactd.QuickActions.Explode")),
            .reply(VarlinkReply(error: .methodNotFound("io.qactd.QuickActions.Explode"))))
    }

    func testDeclaredMethodsAreRoutedToTheInterface() {
        for method in [
            "Status", "List", "ResignActive", "BecomeActive", "EnterBackground", "Trigger", "Connect", "Complete",
            "Watch", "Reload", "GetContact",
        ] {
            XCTAssertEqual(
                dispatcher.route(VarlinkCall(method: "io.qactd.QuickActions.\(method)")), .interface("io.qactd.QuickActions"))
        }
        XCTAssertEqual(
            QuickActionsInterface.varlinkInterface.methodNames, Set(QuickActionsInterface.Method.allCases.map(\.rawValue)),
            "every method the daemon answers is declared, and nothing else")
    }

    func testEveryErrorNameIsDeclared() {
        for name in QuickActionsInterface.ErrorName.allCases {
            XCTAssertTrue(QuickActionsInterface.description.contains("error \(name.rawValue) ("), name.rawValue)
            XCTAssertEqual(name.qualifiedName, "io.qactd.QuickActions.\(name.rawValue)")
        }
    }

    /// The daemon's server names InvalidMessage, MessageTooLarge, TooManyConnections and
    /// InternalError in this interface, so the description must declare them as the server sends them.
    func testDeclaresTheConnectionErrors() {
        for declaration in VarlinkConnectionError.declarations {
            XCTAssertTrue(QuickActionsInterface.description.contains("\n" + declaration + "\n"), declaration)
        }
    }

    /// The Python `varlink` package parses the served description with its own IDL scanner.
    func testPythonReferenceParserReadsTheDescription() throws {
        guard runCommand(["python3", "-c", "import varlink"]).status == 0 else {
            throw unavailable("the Python varlink package is not installed (pip install varlink)")
        }
        let parse = runCommand([
            "python3", "-c", "import sys, varlink; i = varlink.Interface(sys.stdin.read()); print(i.name)",
        ], input: QuickActionsInterface.description)
        XCTAssertEqual(parse.status, 0, parse.output)
        XCTAssertEqual(parse.output.trimmingCharacters(in: .whitespacesAndNewlines), "io.qactd.QuickActions")
    }

}

/// The model types that are wire types keep the exact JSON the IDL declares.
final class QuickActionsWireShapeTests: XCTestCase {
    private func json(_ value: some Encodable) throws -> String {
        try JSONValue(encoding: value).description
    }

    func testListRowsAreTheModelsListedShortcuts() throws {
        let reply = ListReply(generation: 3, launched: true, items: [
            ListedShortcut(item: ShortcutItem(type: "S", title: "Search"), source: .static, displayed: true, position: 1),
            ListedShortcut(item: ShortcutItem(type: "F", title: "Ann"), source: .dynamic, displayed: false, position: 2),
        ])
        XCTAssertEqual(
            try json(reply),
            #"{"generation":3,"items":[{"displayed":true,"item":{"title":"Search","type":"S"},"position":1,"source":"static"},"#
                + #"{"displayed":false,"item":{"title":"Ann","type":"F"},"position":2,"source":"dynamic"}],"launched":true}"#)
        XCTAssertEqual(try JSONValue(encoding: reply).decode(ListReply.self), reply)
    }

    func testResignActiveReplyIsTheRecomputeOutcome() throws {
        let reply: ResignActiveReply = RecomputeOutcome(changed: true, generation: 4, dynamicCount: 2)
        XCTAssertEqual(try json(reply), #"{"changed":true,"dynamicCount":2,"generation":4,"persisted":true}"#)
        XCTAssertEqual(try JSONValue(encoding: reply).decode(ResignActiveReply.self), reply)
        let unsaved: ResignActiveReply = RecomputeOutcome(changed: true, generation: 5, dynamicCount: 2, persisted: false)
        XCTAssertEqual(try json(unsaved), #"{"changed":true,"dynamicCount":2,"generation":5,"persisted":false}"#)
        XCTAssertEqual(try JSONValue(encoding: unsaved).decode(ResignActiveReply.self), unsaved)
    }

    func testTriggerDeliveryIsTheModelsDelivery() throws {
        for (delivery, spelling) in [(TriggerDelivery.running, "running"), (.launch, "launch")] {
            let reply = TriggerReply(
                item: ShortcutItem(type: "S", title: "Search"), contact: nil, delivery: delivery, handled: false,
                stale: false, position: 1)
            XCTAssertEqual(
                try json(reply),
                #"{"delivery":"\#(spelling)","handled":false,"item":{"title":"Search","type":"S"},"position":1,"stale":false}"#)
            XCTAssertEqual(try JSONValue(encoding: reply).decode(TriggerReply.self), reply)
        }
    }

    /// What `qactl status` shows in its "scanning" row.
    func testLargeCountsAreGroupedInThrees() {
        XCTAssertEqual(ScanProgressInfo(tree: "/c", phase: .reading, filesFound: 100_000, filesRead: 41_200).summary,
                       "41,200 of 100,000 files read in '/c'")
        XCTAssertEqual(ScanProgressInfo(tree: "/c", phase: .listing, filesFound: 1_234_567, filesRead: 0).summary,
                       "listing '/c': 1,234,567 files found so far")
        XCTAssertEqual(ScanProgressInfo(tree: "/c", phase: .reading, filesFound: 999, filesRead: 0).summary, "0 of 999 files read in '/c'")
    }

    /// A pin on the wire has exactly the fields of the interface's `PinnedItem`, its state
    /// spelled as declared, and `Trigger`'s `pinned` parameter is bounded like the others.
    func testAPinnedItemIsEncodedAsTheInterfaceDeclaresIt() throws {
        let item = ShortcutItem(type: "FavoriteAction", title: "Ada", userInfo: ["contactIdentifier": .string("ada")])
        let reply = PinsReply(pins: [PinnedItemInfo(
            identifier: "FavoriteAction-ada", item: item, state: .disabled, message: "gone", desktopFile: "/a/b.desktop")])
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: JSONEncoder().encode(reply)) as? [String: Any])
        let pin = try XCTUnwrap((object["pins"] as? [[String: Any]])?.first)
        XCTAssertEqual(Set(pin.keys), ["identifier", "item", "state", "message", "desktopFile"])
        XCTAssertEqual(pin["state"] as? String, "disabled")
        let declared = QuickActionsInterface.description
        XCTAssertTrue(declared.contains("state: (enabled, disabled)"))
        for field in pin.keys { XCTAssertTrue(declared.contains("  \(field): "), "PinnedItem declares \(field)") }
        XCTAssertEqual(TriggerParameters(pinned: String(repeating: "p", count: ParameterLimits.identifierBytes + 1)).oversizedParameter, "pinned")
        XCTAssertEqual(UnpinParameters(identifier: String(repeating: "p", count: ParameterLimits.identifierBytes + 1)).oversizedParameter, "identifier")
    }

    /// An address book as `Status` encodes it, every field set, has exactly the fields the
    /// description declares for `AddressBook`.
    func testAnAddressBookIsEncodedAsTheInterfaceDeclaresIt() throws {
        var book = AddressBookInfo(uid: "dav", database: "/c/dav/db", contacts: 3, favorites: 2, invalidCards: 0, problem: "p", indexing: true)
        (book.kind, book.account, book.skipped, book.name) = ("carddav", "ada@example.org", "s", "Contacts")
        let encoded = try XCTUnwrap(JSONSerialization.jsonObject(with: JSONEncoder().encode(book)) as? [String: Any])
        let declaration = try XCTUnwrap(QuickActionsInterface.description.components(separatedBy: "type AddressBook (").last?
            .components(separatedBy: ")").first)
        let declared = declaration.split(separator: "\n").compactMap { $0.split(separator: ":").first?.trimmingCharacters(in: .whitespaces) }
        XCTAssertEqual(Set(encoded.keys), Set(declared.filter { !$0.isEmpty }))
    }
}
