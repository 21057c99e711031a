import Foundation
import XCTest
@testable import QuickActions

final class StaticItemsFileTests: XCTestCase {
    private func decode(_ text: String, fileName: String = "shortcuts.plist") throws -> StaticItemsFile {
        try StaticItemsFile.decode(Array(text.utf8), fileName: fileName)
    }

    /// Wraps item dictionaries (given as XML) in a plist holding just the array.
    private func items(_ dictionaries: String...) -> String {
        "<plist><array>\(dictionaries.joined())</array></plist>"
    }

    private func assertError(_ text: String, _ expected: StaticItemsError, message fragments: [String], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try decode(text), file: file, line: line) { error in
            XCTAssertEqual(error as? StaticItemsError, expected, file: file, line: line)
            let message = "\(error)"
            for fragment in fragments {
                XCTAssertTrue(message.contains(fragment), "\"\(message)\" should contain \"\(fragment)\"", file: file, line: line)
            }
        }
    }

    func testSeedSnippetParsesVerbatim() throws {
        let file = try decode(seedSnippet)
        XCTAssertNil(file.appVersion)
        XCTAssertEqual(file.items, [
            ShortcutItem(type: "SearchAction", title: "Search", subtitle: "Search for an item", icon: .system(.search)),
            ShortcutItem(type: "ShareAction", title: "Share", subtitle: "Share an item", icon: .system(.share)),
        ])
    }

    func testWholeInfoPlistIgnoresOtherKeysAndReadsVersion() throws {
        let text = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
            <key>CFBundleName</key><string>Contacts</string>
            <key>CFBundleShortVersionString</key><string>1.4</string>
            <key>UIRequiredDeviceCapabilities</key><array><string>armv7</string></array>
            <key>UIApplicationShortcutItems</key>
            <array>
                <dict>
                    <key>UIApplicationShortcutItemType</key><string>ComposeAction</string>
                    <key>UIApplicationShortcutItemTitle</key><string>New &amp; Improved</string>
                    <key>UIApplicationShortcutItemIconType</key><string>Compose</string>
                    <key>SomethingUnknown</key><integer>3</integer>
                    <key>UIApplicationShortcutItemUserInfo</key>
                    <dict><key>draft</key><true/><key>count</key><integer>2</integer></dict>
                </dict>
            </array>
        </dict>
        </plist>
        """
        let file = try decode(text)
        XCTAssertEqual(file.appVersion, "1.4")
        XCTAssertEqual(file.items, [
            ShortcutItem(type: "ComposeAction", title: "New & Improved", icon: .system(.compose),
                         userInfo: ["draft": .bool(true), "count": .integer(2)]),
        ])
    }

    func testBinaryInfoPlist() throws {
        let file = try StaticItemsFile.decode(BinaryPropertyListParserTests.pythonFixture, fileName: "Info.plist")
        XCTAssertEqual(file.appVersion, "2.1")
        XCTAssertEqual(file.items.map(\.type), ["SearchAction", "ShareAction"])
        XCTAssertEqual(file.items[0].icon, .system(.search))
        XCTAssertEqual(file.items[0].userInfo["n"], .integer(42))
        XCTAssertEqual(file.items[1], ShortcutItem(type: "ShareAction", title: "Share", subtitle: "Share an item", icon: .symbol("square.and.arrow.up")))
    }

    func testEmptyArrayIsFine() throws {
        XCTAssertEqual(try decode("<plist><array/></plist>").items, [])
        XCTAssertEqual(try decode("<key>UIApplicationShortcutItems</key><array></array>").items, [])
    }

    func testAllIconTypesInEverySpelling() throws {
        XCTAssertEqual(SystemIconType.allCases.count, 29)
        for type in SystemIconType.allCases {
            let capitalized = type.rawValue.prefix(1).uppercased() + type.rawValue.dropFirst()
            for spelling in ["UIApplicationShortcutIconType" + capitalized, capitalized, type.rawValue] {
                let file = try decode(items("""
                <dict><key>UIApplicationShortcutItemType</key><string>T</string>
                <key>UIApplicationShortcutItemTitle</key><string>Title</string>
                <key>UIApplicationShortcutItemIconType</key><string>\(spelling)</string></dict>
                """))
                XCTAssertEqual(file.items.first?.icon, .system(type), spelling)
            }
        }
        XCTAssertEqual(SystemIconType(spelling: "UIApplicationShortcutIconTypeMarkLocation"), .markLocation)
        XCTAssertNil(SystemIconType(spelling: "marklocation"))
        XCTAssertNil(SystemIconType(spelling: ""))
        XCTAssertNil(SystemIconType(spelling: "UIApplicationShortcutIconType"))
    }

    func testIconPrioritySymbolThenFileThenType() throws {
        let base = "<key>UIApplicationShortcutItemType</key><string>T</string><key>UIApplicationShortcutItemTitle</key><string>X</string>"
        let typeKey = "<key>UIApplicationShortcutItemIconType</key><string>love</string>"
        let fileKey = "<key>UIApplicationShortcutItemIconFile</key><string>heart.png</string>"
        let symbolKey = "<key>UIApplicationShortcutItemIconSymbolName</key><string>heart.fill</string>"
        let file = try decode(items(
            "<dict>\(base)\(typeKey)\(fileKey)\(symbolKey)</dict>",
            "<dict>\(base)\(typeKey)\(fileKey)</dict>",
            "<dict>\(base)\(typeKey)</dict>",
            "<dict>\(base)\(symbolKey)\(typeKey)</dict>",
            "<dict>\(base)</dict>"))
        XCTAssertEqual(file.items.map(\.icon), [.symbol("heart.fill"), .templateFile("heart.png"), .system(.love), .symbol("heart.fill"), nil])
    }

    func testEveryErrorNamesFileIndexAndKey() {
        let good = "<dict><key>UIApplicationShortcutItemType</key><string>A</string><key>UIApplicationShortcutItemTitle</key><string>A</string></dict>"
        let typeKey = StaticItemsFile.ItemKey.type
        let titleKey = StaticItemsFile.ItemKey.title
        assertError(items(good, "<dict><key>UIApplicationShortcutItemTitle</key><string>B</string></dict>"),
                    .invalidItem(fileName: "shortcuts.plist", index: 1, problem: .missingKey(typeKey)),
                    message: ["shortcuts.plist: item 2 (UIApplicationShortcutItems[1]): UIApplicationShortcutItemType: the required key is missing."])
        assertError(items("<dict><key>UIApplicationShortcutItemType</key><string>B</string><key>UIApplicationShortcutItemTitle</key><string></string></dict>"),
                    .invalidItem(fileName: "shortcuts.plist", index: 0, problem: .emptyString(key: titleKey)),
                    message: ["item 1 (UIApplicationShortcutItems[0])", "UIApplicationShortcutItemTitle: must not be empty"])
        assertError(items("<dict><key>UIApplicationShortcutItemType</key><string></string><key>UIApplicationShortcutItemTitle</key><string>B</string></dict>"),
                    .invalidItem(fileName: "shortcuts.plist", index: 0, problem: .emptyString(key: typeKey)),
                    message: ["UIApplicationShortcutItemType: must not be empty"])
        assertError(items(good, good, "<dict><key>UIApplicationShortcutItemType</key><string>B</string><key>UIApplicationShortcutItemTitle</key><string>B</string><key>UIApplicationShortcutItemIconType</key><string>Foo</string></dict>"),
                    .invalidItem(fileName: "shortcuts.plist", index: 2, problem: .unknownIconType("Foo")),
                    message: ["shortcuts.plist: item 3 (UIApplicationShortcutItems[2]): UIApplicationShortcutItemIconType: unknown icon type \"Foo\"; expected one of compose, play, pause,", "update."])
        assertError(items("<dict><key>UIApplicationShortcutItemType</key><integer>7</integer><key>UIApplicationShortcutItemTitle</key><string>B</string></dict>"),
                    .invalidItem(fileName: "shortcuts.plist", index: 0, problem: .wrongType(key: typeKey, expected: "a string", found: "an integer")),
                    message: ["UIApplicationShortcutItemType: expected a string but found an integer"])
        assertError(items("<dict><key>UIApplicationShortcutItemType</key><string>B</string><key>UIApplicationShortcutItemTitle</key><string>B</string><key>UIApplicationShortcutItemSubtitle</key><true/></dict>"),
                    .invalidItem(fileName: "shortcuts.plist", index: 0, problem: .wrongType(key: StaticItemsFile.ItemKey.subtitle, expected: "a string", found: "a boolean")),
                    message: ["UIApplicationShortcutItemSubtitle: expected a string but found a boolean"])
        assertError(items("<dict><key>UIApplicationShortcutItemType</key><string>B</string><key>UIApplicationShortcutItemTitle</key><string>B</string><key>UIApplicationShortcutItemUserInfo</key><array/></dict>"),
                    .invalidItem(fileName: "shortcuts.plist", index: 0, problem: .wrongType(key: StaticItemsFile.ItemKey.userInfo, expected: "a dictionary", found: "an array")),
                    message: ["UIApplicationShortcutItemUserInfo: expected a dictionary but found an array"])
        assertError(items("<dict><key>UIApplicationShortcutItemType</key><string>B</string><key>UIApplicationShortcutItemTitle</key><string>B</string><key>UIApplicationShortcutItemIconSymbolName</key><string/></dict>"),
                    .invalidItem(fileName: "shortcuts.plist", index: 0, problem: .emptyString(key: StaticItemsFile.ItemKey.iconSymbolName)),
                    message: ["UIApplicationShortcutItemIconSymbolName: must not be empty"])
        assertError(items(good, "<string>oops</string>"),
                    .invalidItem(fileName: "shortcuts.plist", index: 1, problem: .notADictionary(found: "a string")),
                    message: ["item 2 (UIApplicationShortcutItems[1]): expected a dictionary but found a string."])
        assertError("<plist><dict><key>CFBundleName</key><string>x</string></dict></plist>",
                    .missingShortcutItems(fileName: "shortcuts.plist"),
                    message: ["shortcuts.plist: the key UIApplicationShortcutItems is missing."])
        assertError("<plist><dict><key>UIApplicationShortcutItems</key><dict/></dict></plist>",
                    .shortcutItemsNotArray(fileName: "shortcuts.plist", found: "a dictionary"),
                    message: ["UIApplicationShortcutItems: expected an array but found a dictionary."])
        assertError("<plist><string>hello</string></plist>",
                    .rootNotDictionaryOrArray(fileName: "shortcuts.plist", found: "a string"),
                    message: ["found a string"])
        assertError("<plist><dict><key>CFBundleShortVersionString</key><real>1.5</real><key>UIApplicationShortcutItems</key><array/></dict></plist>",
                    .appVersionNotString(fileName: "shortcuts.plist", found: "a real"),
                    message: ["CFBundleShortVersionString: expected a string but found a real."])
        assertError("<plist>\n<array>\n<dict>\n</array>",
                    .unreadable(fileName: "shortcuts.plist", .xml(line: 4, problem: "expected </dict> but found </array>")),
                    message: ["shortcuts.plist: line 4: expected </dict> but found </array>"])
    }

    func testErrorExposesFileName() {
        XCTAssertEqual(StaticItemsError.missingShortcutItems(fileName: "/etc/x.plist").fileName, "/etc/x.plist")
        XCTAssertEqual(StaticItemProblem.unknownIconType("x").key, "UIApplicationShortcutItemIconType")
    }
}
