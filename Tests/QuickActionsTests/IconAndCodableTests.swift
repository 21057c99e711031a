import Contacts
import Foundation
import XCTest
@testable import QuickActions

final class IconConfigurationTests: XCTestCase {
    func testParsesEveryKind() throws {
        XCTAssertEqual(try ShortcutIcon(configurationValue: "symbol:star.fill"), .symbol("star.fill"))
        XCTAssertEqual(try ShortcutIcon(configurationValue: "type:favorite"), .system(.favorite))
        XCTAssertEqual(try ShortcutIcon(configurationValue: "system:Favorite"), .system(.favorite))
        XCTAssertEqual(try ShortcutIcon(configurationValue: "type:UIApplicationShortcutIconTypeTaskCompleted"), .system(.taskCompleted))
        XCTAssertEqual(try ShortcutIcon(configurationValue: "file:/path/icon.png"), .templateFile("/path/icon.png"))
        XCTAssertEqual(try ShortcutIcon(configurationValue: "file:C:/odd:name.png"), .templateFile("C:/odd:name.png"))
        XCTAssertEqual(try ShortcutIcon(configurationValue: "Symbol:Star"), .symbol("Star"))
        XCTAssertEqual(try ShortcutIcon(configurationValue: "TYPE:favorite"), .system(.favorite))
        XCTAssertEqual(try ShortcutIcon(configurationValue: "File:icon.png"), .templateFile("icon.png"))
    }

    func testRoundTrips() throws {
        let icons: [ShortcutIcon] = SystemIconType.allCases.map(ShortcutIcon.system) + [.symbol("a.b"), .templateFile("/x y.png")]
        for icon in icons {
            XCTAssertEqual(try ShortcutIcon(configurationValue: icon.configurationValue), icon)
        }
        XCTAssertEqual(ShortcutIcon.system(.markLocation).configurationValue, "type:markLocation")
    }

    func testErrorsNameTheValue() {
        let cases: [(String, ShortcutIconConfigurationError, String)] = [
            ("type:sparkles", .unknownSystemType(value: "type:sparkles", type: "sparkles"), "unknown icon type \"sparkles\""),
            ("star.fill", .missingKind(value: "star.fill"), "\"star.fill\" has no kind"),
            ("emoji:x", .unknownKind(value: "emoji:x", kind: "emoji"), "unknown kind \"emoji\""),
            ("symbol:", .emptyName(value: "symbol:"), "\"symbol:\" names nothing"),
        ]
        for (value, expected, fragment) in cases {
            XCTAssertThrowsError(try ShortcutIcon(configurationValue: value)) { error in
                XCTAssertEqual(error as? ShortcutIconConfigurationError, expected)
                XCTAssertTrue("\(error)".contains(fragment), "\(error)")
            }
        }
    }
}

final class CodableShapeTests: XCTestCase {
    private func json<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    private func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(text.utf8))
    }

    func testIconShapes() throws {
        XCTAssertEqual(try json(ShortcutIcon.system(.search)), #"{"kind":"system","name":"search"}"#)
        XCTAssertEqual(try json(ShortcutIcon.symbol("star.fill")), #"{"kind":"symbol","name":"star.fill"}"#)
        XCTAssertEqual(try json(ShortcutIcon.templateFile("/p/x.png")), #"{"kind":"file","name":"/p/x.png"}"#)
        for icon: ShortcutIcon in [.system(.captureVideo), .symbol("s"), .templateFile("/f")] {
            XCTAssertEqual(try decode(ShortcutIcon.self, try json(icon)), icon)
        }
        XCTAssertThrowsError(try decode(ShortcutIcon.self, #"{"kind":"emoji","name":"x"}"#))
        XCTAssertThrowsError(try decode(ShortcutIcon.self, #"{"kind":"system","name":"sparkles"}"#))
    }

    func testItemShapeOmitsAbsentFields() throws {
        XCTAssertEqual(try json(ShortcutItem(type: "SearchAction", title: "Search")), #"{"title":"Search","type":"SearchAction"}"#)
        let full = ShortcutItem(type: "FavoriteAction", title: "Ada", subtitle: "ada@example.org", icon: .symbol("star.fill"),
                                userInfo: ["contactIdentifier": .string("ada"), "appVersion": .string("1.0")])
        XCTAssertEqual(try json(full),
                       #"{"icon":{"kind":"symbol","name":"star.fill"},"subtitle":"ada@example.org","title":"Ada","type":"FavoriteAction","userInfo":{"appVersion":"1.0","contactIdentifier":"ada"}}"#)
        XCTAssertEqual(try decode(ShortcutItem.self, try json(full)), full)
        XCTAssertEqual(try decode(ShortcutItem.self, #"{"type":"T","title":"X","subtitle":null}"#), ShortcutItem(type: "T", title: "X"))
        XCTAssertThrowsError(try decode(ShortcutItem.self, #"{"title":"X"}"#))
    }

    func testPropertyListValueIsNaturalJSON() throws {
        let value: PropertyListValue = .dictionary([
            "s": .string("x"), "i": .integer(-3), "r": .real(1.5), "b": .bool(true),
            "a": .array([.integer(1), .bool(false)]), "d": .dictionary([:]),
            "date": .date(Date(timeIntervalSinceReferenceDate: 725_760_000)),
            "data": .data(Data([0, 1, 2, 255])),
        ])
        XCTAssertEqual(try json(value),
                       #"{"a":[1,false],"b":true,"d":{},"data":"AAEC/w==","date":"2024-01-01T00:00:00Z","i":-3,"r":1.5,"s":"x"}"#)
    }

    func testPropertyListValueDecoding() throws {
        XCTAssertEqual(try decode(PropertyListValue.self, #"{"n":5,"r":5.25,"t":true,"f":false,"s":"5","a":[1,"x",[]],"big":-9223372036854775808}"#),
                       .dictionary(["n": .integer(5), "r": .real(5.25), "t": .bool(true), "f": .bool(false), "s": .string("5"),
                                    "a": .array([.integer(1), .string("x"), .array([])]), "big": .integer(Int64.min)]))
        // Dates and data are one-way: they come back as their string spellings.
        let encoded = try json(PropertyListValue.array([.date(Date(timeIntervalSince1970: 0)), .data(Data([1]))]))
        XCTAssertEqual(try decode(PropertyListValue.self, encoded), .array([.string("1970-01-01T00:00:00Z"), .string("AQ==")]))
        XCTAssertThrowsError(try decode(PropertyListValue.self, "null"))
        XCTAssertThrowsError(try decode(PropertyListValue.self, #"{"a":null}"#))
    }

    func testListingSourceAndDeliveryRawValues() throws {
        XCTAssertEqual(try json([ShortcutSource.static, .dynamic]), #"["static","dynamic"]"#)
        XCTAssertEqual(try json([TriggerDelivery.running, .launch]), #"["running","launch"]"#)
    }
}

/// The hand-written JSON of the state file and the listings says exactly what `Codable` says.
final class JSONTextTests: XCTestCase {
    private let awkward = "Zoë \"Z\" \\ /path\n\t\r\u{08}\u{0C}\u{01}\u{1F} 🙂"

    private var items: [ShortcutItem] {
        [
            ShortcutItem(type: "SearchAction", title: "Search", icon: .system(.search)),
            ShortcutItem(type: awkward, title: awkward, subtitle: awkward, icon: .templateFile("/icons/x.png"), userInfo: [
                awkward: .string(awkward), "n": .integer(-42), "r": .real(1.5), "whole": .real(2), "tiny": .real(1e-7),
                "yes": .bool(true), "no": .bool(false), "when": .date(Date(timeIntervalSince1970: 1_700_000_000)),
                "blob": .data(Data([0, 1, 2, 255])), "list": .array([.integer(1), .array([]), .dictionary([:])]),
                "nested": .dictionary(["b": .string("2"), "a": .string("1")]),
            ]),
            ShortcutItem(type: "FavoriteAction", title: "Ada", icon: .symbol("star.fill"),
                         userInfo: ["contactIdentifier": .string("ada"), "appVersion": .string("1.0")]),
        ]
    }

    private func encoderText(_ value: some Encodable, pretty: Bool) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    private func assertSameJSON(_ written: [UInt8], _ encoded: Data, file: StaticString = #filePath, line: UInt = #line) throws {
        let left = try JSONSerialization.jsonObject(with: Data(written)) as? NSDictionary
        let right = try JSONSerialization.jsonObject(with: encoded) as? NSDictionary
        XCTAssertNotNil(left, file: file, line: line)
        XCTAssertEqual(left, right, file: file, line: line)
    }

    func testListingTextIsWhatCodableWritesAndReadsBack() throws {
        let listing = QuickActionsListing(generation: 7, launched: true, items: ShortcutListing.compose(
            staticItems: Array(items.prefix(2)), dynamicItems: [items[2]], launched: true, displayLimit: 2))
        for pretty in [false, true] {
            let written = try listing.jsonText(pretty: pretty)
            let encoded = try encoderText(listing, pretty: pretty)
            try assertSameJSON(written, encoded)
            // Dates, data and whole reals read back changed, as the `Codable` shape documents; the same way.
            XCTAssertEqual(try JSONDecoder().decode(QuickActionsListing.self, from: Data(written)),
                           try JSONDecoder().decode(QuickActionsListing.self, from: encoded))
        }
        let empty = QuickActionsListing(generation: 0, launched: false, items: [])
        XCTAssertEqual(String(decoding: try empty.jsonText(pretty: false), as: UTF8.self), #"{"generation":0,"items":[],"launched":false}"#)
        XCTAssertEqual(String(decoding: try empty.jsonText(pretty: true), as: UTF8.self), "{\n  \"generation\" : 0,\n  \"items\" : [],\n  \"launched\" : false\n}")
    }

    func testStateTextIsWhatCodableWritesAndReadsBack() throws {
        var state = QuickActionsState(staticItems: [items[0]])
        _ = state.resignActive(favorites: [Contact(identifier: "ada", name: "Ada", favorite: true)], appVersion: "1.0", configuration: .init())
        _ = state.trigger(.position(2), displayLimit: 4, contactLookup: { _ in nil }, appConnected: false)
        XCTAssertEqual(try JSONDecoder().decode(PersistedState.self, from: Data(PersistedState(state).jsonText(pretty: true))), PersistedState(state))
        for persisted in [PersistedState(state), PersistedState(QuickActionsState(dynamicItems: items, generation: 3, appVersion: awkward))] {
            let written = try persisted.jsonText(pretty: true)
            let encoded = try encoderText(persisted, pretty: true)
            try assertSameJSON(written, encoded)
            XCTAssertEqual(try JSONDecoder().decode(PersistedState.self, from: Data(written)),
                           try JSONDecoder().decode(PersistedState.self, from: encoded))
        }
    }

    func testANumberJSONCannotHoldIsRefusedAsByJSONEncoder() {
        let item = ShortcutItem(type: "T", title: "T", userInfo: ["x": .real(.infinity)])
        let listing = QuickActionsListing(generation: 1, launched: true, items: [ListedShortcut(item: item, source: .static, displayed: true, position: 1)])
        XCTAssertThrowsError(try listing.jsonText(pretty: false))
        XCTAssertThrowsError(try encoderText(listing, pretty: false))
    }
}
