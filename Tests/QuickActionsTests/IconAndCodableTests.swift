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

    /// A favorite's item, however it is made (derived, or read back with its `userInfo` as a
    /// dictionary), is one value: equal, with the same hash, the same `userInfo` and the same
    /// text; a `userInfo` that only looks like a favorite's stays what it is.
    func testAFavoritesItemIsOneValueHoweverItIsMade() throws {
        let derived = dynamicItem(for: Contact(identifier: "ada", name: "Ada", email: "ada@example.org", favorite: true),
                                  appVersion: "1.0", configuration: .init())
        let read = ShortcutItem(type: "FavoriteAction", title: "Ada", subtitle: "ada@example.org", icon: .symbol("star.fill"),
                                userInfo: ["contactIdentifier": .string("ada"), "appVersion": .string("1.0")])
        XCTAssertEqual(derived, read)
        XCTAssertEqual(derived.hashValue, read.hashValue)
        XCTAssertEqual(derived.userInfo, ["contactIdentifier": .string("ada"), "appVersion": .string("1.0")])
        XCTAssertEqual(derived.contactIdentifier, "ada")
        XCTAssertEqual(try json(derived), try json(read))
        for pretty in [false, true] {
            XCTAssertEqual(try JSONEncoder.sorted(pretty: pretty).encode(derived), try JSONEncoder.sorted(pretty: pretty).encode(read), "pretty \(pretty)")
        }
        XCTAssertNotEqual(derived, dynamicItem(for: Contact(identifier: "ada", name: "Ada", email: "ada@example.org", favorite: true),
                                               appVersion: "2.0", configuration: .init()))
        let lookalikes: [[String: PropertyListValue]] = [
            ["contactIdentifier": .string("ada")],
            ["contactIdentifier": .string("ada"), "appVersion": .integer(1)],
            ["contactIdentifier": .string("ada"), "appVersion": .string("1.0"), "x": .string("y")],
        ]
        for userInfo in lookalikes {
            let item = ShortcutItem(type: "FavoriteAction", title: "Ada", userInfo: userInfo)
            XCTAssertEqual(item.userInfo, userInfo)
            XCTAssertNotEqual(item, read)
            XCTAssertEqual(try decode(ShortcutItem.self, try json(item)), item)
        }
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

    /// The listing's text, byte for byte, against text written by hand from JSON's rules (RFC 8259):
    /// keys sorted, `"` and `\` escaped, a control character as `\n`, `\t` or `\u0001`, `/`
    /// and non-ASCII text as they are; a date as ISO 8601, data as base64.
    func testListingTextIsTheFixedText() throws {
        let item = ShortcutItem(type: "T", title: "Zoë \"Z\" \\ /path\n\t\u{01} 🙂", subtitle: "s", icon: .themed("document-open"), userInfo: [
            "blob": .data(Data([0, 1, 2, 255])), "list": .array([.integer(1), .array([]), .dictionary([:])]), "n": .integer(-42),
            "r": .real(1.5), "when": .date(Date(timeIntervalSince1970: 1_700_000_000)), "yes": .bool(true),
        ])
        let listing = QuickActionsListing(generation: 7, launched: true, items: [ListedShortcut(item: item, source: .static, displayed: true, position: 1)])
        let expected = #"{"generation":7,"items":[{"displayed":true,"item":{"icon":{"kind":"themed","name":"document-open"},"subtitle":"s","title":"Zoë \"Z\" \\ /path\n\t\u0001 🙂","type":"T","userInfo":{"blob":"AAEC/w==","list":[1,[],{}],"n":-42,"r":1.5,"when":"2023-11-14T22:13:20Z","yes":true}},"position":1,"source":"static"}],"launched":true}"#
        XCTAssertEqual(String(decoding: try listing.jsonText(pretty: false), as: UTF8.self), expected)
    }

    /// The state file's text, byte for byte, against text written by hand: two-space indentation,
    /// `"key" : value`, keys sorted, no key for what is absent (pins, app items, a launch item).
    func testStateTextIsTheFixedText() throws {
        let ada = ShortcutItem(type: "FavoriteAction", title: "Ada", icon: .symbol("star.fill"), userInfo: ["contactIdentifier": .string("ada")])
        let state = QuickActionsState(dynamicItems: [ada], generation: 3, launched: true, appVersion: "1.0",
                                      usageCounts: ["FavoriteAction/ada": 2], usageHistory: UsageHistory(times: ["FavoriteAction/ada": [5, 9]]))
        let expected = """
            {
              "appVersion" : "1.0",
              "dynamicItems" : [
                {
                  "icon" : {
                    "kind" : "symbol",
                    "name" : "star.fill"
                  },
                  "title" : "Ada",
                  "type" : "FavoriteAction",
                  "userInfo" : {
                    "contactIdentifier" : "ada"
                  }
                }
              ],
              "formatVersion" : 1,
              "generation" : 3,
              "launched" : true,
              "usageCounts" : {
                "FavoriteAction/ada" : 2
              },
              "usageTimes" : {
                "FavoriteAction/ada" : [
                  5,
                  9
                ]
              }
            }
            """
        XCTAssertEqual(String(decoding: try PersistedState(state).jsonText(pretty: true), as: UTF8.self), expected)
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
        let pretty = String(decoding: try empty.jsonText(pretty: true), as: UTF8.self)
        XCTAssertTrue(pretty.hasPrefix("{\n  \"generation\" : 0,\n  \"items\" : ["), pretty)
        XCTAssertEqual(try JSONDecoder().decode(QuickActionsListing.self, from: Data(pretty.utf8)), empty)
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

    /// Every document of a run where favorites are edited, added, removed, reordered, repeated,
    /// emptied and restored (and a large set whose every item changed with the app's version,
    /// with usage and a launch item at another depth) is, in both layouts, what `Codable` writes,
    /// and reads back as it.
    func testEveryDocumentOfARunIsWhatCodableWrites() throws {
        let favorites = (0..<8).map { ShortcutItem(type: "FavoriteAction", title: "Person \($0)", subtitle: "p\($0)@example.org",
                                                    icon: .symbol("star.fill"), userInfo: ["contactIdentifier": .string("p\($0)")]) }
        var edited = favorites
        edited[2] = ShortcutItem(type: "FavoriteAction", title: awkward, subtitle: awkward, icon: .symbol("star.fill"),
                                 userInfo: ["contactIdentifier": .string(awkward)])
        var added = edited
        added.insert(items[1], at: 4)
        var removed = added
        removed.remove(at: 0)
        func large(version: String) -> [ShortcutItem] {
            (0..<300).map { ShortcutItem(type: "FavoriteAction", title: $0 == 7 ? awkward : "Person \($0)", subtitle: "p\($0)@example.org",
                                          icon: .symbol("star.fill"), userInfo: ["contactIdentifier": .string("p\($0)"), "appVersion": .string(version)]) }
        }
        let sets: [[ShortcutItem]] = [favorites, edited, added, removed, Array(removed.reversed()), [edited[1], edited[1]] + items, [], favorites,
                                      Array(favorites.dropLast()), large(version: "1"), large(version: "2")]
        for pretty in [false, true] {
            for (generation, dynamicItems) in sets.enumerated() {
                let label = "generation \(generation), pretty \(pretty)"
                let listing = QuickActionsListing(generation: UInt64(generation), launched: true, items: ShortcutListing.compose(
                    staticItems: [items[0]], dynamicItems: dynamicItems, launched: true, displayLimit: 4))
                let writtenListing = try listing.jsonText(pretty: pretty)
                try assertSameJSON(writtenListing, try encoderText(listing, pretty: pretty))
                XCTAssertEqual(try JSONDecoder().decode(QuickActionsListing.self, from: Data(writtenListing)),
                               try JSONDecoder().decode(QuickActionsListing.self, from: encoderText(listing, pretty: pretty)), label)
                let persisted = PersistedState(QuickActionsState(
                    staticItems: [], dynamicItems: dynamicItems, generation: UInt64(generation), appVersion: "1", pendingLaunchItem: dynamicItems.last,
                    usageCounts: ["FavoriteAction/p3": 2, "Compose": 1], usageHistory: UsageHistory(times: ["FavoriteAction/p3": [5, 9], "Compose": [7]])))
                let writtenState = try persisted.jsonText(pretty: pretty)
                try assertSameJSON(writtenState, try encoderText(persisted, pretty: pretty))
                XCTAssertEqual(try JSONDecoder().decode(PersistedState.self, from: Data(writtenState)),
                               try JSONDecoder().decode(PersistedState.self, from: encoderText(persisted, pretty: pretty)), label)
            }
        }
    }

    /// A character to escape at any place of a title (and beside non-ASCII text) is escaped in
    /// the listing's text, and the title reads back as it was.
    func testEveryCharacterThatNeedsAnEscapeIsEscapedWhereverItIs() throws {
        let specials = ["\"", "\\", "\n", "\u{01}", "\u{1F}", "\t"]
        for special in specials {
            for place in 0...20 {
                for base in ["abcdefghijklmnopqrst", "é€😀abcdefghijklmnopq", " !#$%&'()*+,-./0123456789:;<=>?@[]^_`{|}~\u{7F}"] {
                    var text = base
                    text.insert(contentsOf: special, at: text.index(text.startIndex, offsetBy: min(place, text.count)))
                    let item = ShortcutItem(type: "T", title: text)
                    let listing = QuickActionsListing(generation: 1, launched: true, items: [ListedShortcut(item: item, source: .static, displayed: true, position: 1)])
                    let written = try listing.jsonText(pretty: false)
                    XCTAssertEqual(try JSONDecoder().decode(QuickActionsListing.self, from: Data(written)).items.first?.item.title, text)
                    XCTAssertFalse(String(decoding: written, as: UTF8.self).unicodeScalars.contains { $0.value < 0x20 }, text)
                }
            }
        }
    }

    /// A generation at either end of its range is written as Swift prints it.
    func testIntegersAreWrittenAsSwiftPrintsThem() throws {
        for generation: UInt64 in [0, 7, 10, 1_000_000_007, .max] {
            let listing = QuickActionsListing(generation: generation, launched: false, items: [])
            XCTAssertEqual(String(decoding: try listing.jsonText(pretty: false), as: UTF8.self),
                           #"{"generation":\#(generation),"items":[],"launched":false}"#)
        }
    }

    func testANumberJSONCannotHoldIsRefusedAsByJSONEncoder() {
        let item = ShortcutItem(type: "T", title: "T", userInfo: ["x": .real(.infinity)])
        let listing = QuickActionsListing(generation: 1, launched: true, items: [ListedShortcut(item: item, source: .static, displayed: true, position: 1)])
        XCTAssertThrowsError(try listing.jsonText(pretty: false))
        XCTAssertThrowsError(try encoderText(listing, pretty: false))
    }

    /// Object keys come out sorted whatever the dictionary's size (two, a few, many: each size
    /// has its own way of ordering them) and whatever their order of insertion.
    func testDictionaryKeysAreWrittenSorted() throws {
        let names = ["b", "a", "contactIdentifier", "appVersion", "Z", "é", "aa", "a0", "\u{1F600}", "m", "k", "q"]
        for count in [0, 1, 2, 3, 8, 9, names.count] {
            for rotation in 0..<max(1, count) {
                let keys = Array((names[rotation...] + names[..<rotation]).prefix(count))
                var dictionary: [String: PropertyListValue] = [:]
                for key in keys { dictionary[key] = .string("v" + key) }
                let item = ShortcutItem(type: "T", title: "T", userInfo: dictionary)
                let written = String(decoding: try JSONEncoder.sorted(pretty: false).encode(item), as: UTF8.self)
                let expected = "{" + keys.sorted().map { "\"\($0)\":\"v\($0)\"" }.joined(separator: ",") + "}"
                XCTAssertEqual(written, count == 0 ? #"{"title":"T","type":"T"}"# : #"{"title":"T","type":"T","userInfo":\#(expected)}"#, "\(count) keys")
            }
        }
    }
}

extension JSONEncoder {
    /// The layout of the daemon's own JSON text: sorted keys, slashes as they are.
    fileprivate static func sorted(pretty: Bool) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
