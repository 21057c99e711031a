import XCTest
@testable import QuickActions

final class StringsFileTests: XCTestCase {
    private func parse(_ text: String) throws -> [String: String] {
        try StringsFile.parse(bytes: Array(text.utf8), fileName: "fr.lproj/InfoPlist.strings")
    }

    private func assertSyntaxError(_ text: String, line: Int, containing fragment: String, file: StaticString = #filePath, lineNumber: UInt = #line) {
        XCTAssertThrowsError(try parse(text), file: file, line: lineNumber) { error in
            guard let error = error as? StringsFileError else { return XCTFail("\(error)", file: file, line: lineNumber) }
            XCTAssertEqual(error.line, line, "\(error)", file: file, line: lineNumber)
            XCTAssertTrue(error.description.hasPrefix("fr.lproj/InfoPlist.strings:\(line): "), error.description, file: file, line: lineNumber)
            XCTAssertTrue(error.description.contains(fragment), "\"\(error)\" should contain \"\(fragment)\"", file: file, line: lineNumber)
        }
    }

    func testQuotedAndUnquotedKeysAndValuesWithBothCommentKinds() throws {
        let table = try parse("""
            /* Localized versions of Info.plist keys */
            // Shortcut titles
            "SEARCH_TITLE" = "Rechercher"; // trailing comment
            SHARE_TITLE = 'Partager';
            /* a comment
               over two lines */ UIApplicationShortcutItemTitle.compose = "Écrire" ;
            "Short form";
            key.with/odd:chars-$+_ = plain.value;
            "" = "empty key";
            """)
        XCTAssertEqual(table, [
            "SEARCH_TITLE": "Rechercher",
            "SHARE_TITLE": "Partager",
            "UIApplicationShortcutItemTitle.compose": "Écrire",
            "Short form": "Short form",
            "key.with/odd:chars-$+_": "plain.value",
            "": "empty key",
        ])
    }

    func testEscapes() throws {
        let table = try parse(#"""
            "a" = "line\nnext\ttab \"quoted\" back\\slash \'single\'";
            "u" = "\U00e9t\u00E9 \U2603";
            "pair" = "\UD83D\UDE00";
            "octal" = "\101\102";
            "controls" = "\r\a\b\f\v";
            "unknown" = "\q";
            """#)
        XCTAssertEqual(table["a"], "line\nnext\ttab \"quoted\" back\\slash 'single'")
        XCTAssertEqual(table["u"], "été ☃")
        XCTAssertEqual(table["pair"], "😀")
        XCTAssertEqual(table["octal"], "AB")
        XCTAssertEqual(table["controls"], "\r\u{07}\u{08}\u{0C}\u{0B}")
        XCTAssertEqual(table["unknown"], "q")
    }

    func testAKeyGivenTwiceKeepsItsLastValue() throws {
        XCTAssertEqual(try parse(#""k" = "first"; "k" = "second";"#), ["k": "second"])
    }

    func testEmptyFilesAndTheBracedDictionaryForm() throws {
        XCTAssertEqual(try parse(""), [:])
        XCTAssertEqual(try parse("/* only a comment */\n"), [:])
        XCTAssertEqual(try parse(#"{ "a" = "b"; c = d; }"#), ["a": "b", "c": "d"])
    }

    func testEncodings() throws {
        let text = "\"Search\" = \"Rechercher — ☃ 😀\";\n"
        let expected = ["Search": "Rechercher — ☃ 😀"]
        let utf16 = Array(text.utf16)
        let littleEndian: [UInt8] = [0xFF, 0xFE] + utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let bigEndian: [UInt8] = [0xFE, 0xFF] + utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        let utf8BOM: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(text.utf8)
        for (name, bytes) in [("UTF-16LE", littleEndian), ("UTF-16BE", bigEndian), ("UTF-8 BOM", utf8BOM), ("UTF-8", Array(text.utf8))] {
            XCTAssertEqual(try StringsFile.parse(bytes: bytes, fileName: "x.strings"), expected, name)
        }
        // UTF-16 without a byte-order mark is not guessed: it is refused, naming the file and line.
        XCTAssertThrowsError(try StringsFile.parse(bytes: Array("\"a\" = \"b\";\n".utf8) + [0xFF, 0x00], fileName: "x.strings")) { error in
            XCTAssertEqual(error as? StringsFileError, .invalidEncoding(fileName: "x.strings", line: 2, encoding: "UTF-8"))
            XCTAssertTrue("\(error)".contains("byte-order mark"), "\(error)")
        }
        XCTAssertThrowsError(try StringsFile.parse(bytes: littleEndian + [0x41], fileName: "x.strings")) { error in
            XCTAssertEqual(error as? StringsFileError, .invalidEncoding(fileName: "x.strings", line: 2, encoding: "UTF-16LE"))
        }
    }

    func testErrorsNameTheFileAndTheLine() {
        assertSyntaxError("\"a\" = \"b\";\n\"c\" = \"d\"\n\"e\" = \"f\";", line: 2, containing: "expected ';' after the value of \"c\"")
        assertSyntaxError("\"a\" = \"b\";\n\n\"c\" \"d\";", line: 3, containing: "expected '=' or ';' after the key \"c\"")
        assertSyntaxError("\"a\" = \"b\"\n/* the next entry */\n\"c\" = \"d\";", line: 1, containing: "expected ';' after the value of \"a\"")
        assertSyntaxError("\"a\" = \"b\";\n\"c\" = \"never closed;\n\n", line: 2, containing: "never closed")
        assertSyntaxError("\"a\" = \"b\";\n/* open\n\n", line: 2, containing: "comment opened here is never closed")
        assertSyntaxError("\"a\" = (\"b\");", line: 1, containing: "arrays, dictionaries and data are not allowed")
        assertSyntaxError("\"a\" = \"b\";\n\"c\" =", line: 2, containing: "but the file ends")
        assertSyntaxError("\"a\" = \"b\";\n= \"c\";", line: 2, containing: "expected a key but found '='")
        assertSyntaxError("{ \"a\" = \"b\";\n", line: 2, containing: "closing '}'")
        assertSyntaxError(#""a" = "\U";"#, line: 1, containing: "hexadecimal")
    }
}

final class LocalizationTests: XCTestCase {
    func testTheLocaleChainFromLang() {
        XCTAssertEqual(LanguagePreference(environment: ["LANG": "fr_CA.UTF-8"]).languages, ["fr_CA", "fr"])
        XCTAssertEqual(LanguagePreference(environment: ["LANG": "de_DE.UTF-8@euro"]).languages, ["de_DE", "de"])
        XCTAssertEqual(LanguagePreference(requested: "pt-BR").languages, ["pt_BR", "pt"])
    }

    func testVariablesInGettextOrder() {
        // LC_ALL overrides LC_MESSAGES overrides LANG; LANGUAGE comes before all of them.
        XCTAssertEqual(LanguagePreference(environment: ["LANG": "de_DE.UTF-8", "LC_MESSAGES": "it_IT.UTF-8"]).languages, ["it_IT", "it"])
        XCTAssertEqual(LanguagePreference(environment: ["LANG": "de_DE", "LC_MESSAGES": "it_IT", "LC_ALL": "es_ES"]).languages, ["es_ES", "es"])
        XCTAssertEqual(LanguagePreference(environment: ["LANG": "de_DE", "LC_ALL": ""]).languages, ["de_DE", "de"], "an empty variable is unset")
        XCTAssertEqual(
            LanguagePreference(environment: ["LANGUAGE": "fr_CA:pt_BR::en", "LANG": "de_DE.UTF-8"]).languages,
            ["fr_CA", "fr", "pt_BR", "pt", "en", "de_DE", "de"])
    }

    func testCAndPOSIXStateNoPreference() {
        XCTAssertEqual(LanguagePreference(environment: ["LANG": "C.UTF-8"]).languages, [])
        XCTAssertEqual(LanguagePreference(environment: ["LC_ALL": "POSIX"]).languages, [])
        XCTAssertEqual(LanguagePreference(environment: ["LANGUAGE": "C", "LANG": "fr_FR.UTF-8"]).languages, ["fr_FR", "fr"])
        XCTAssertEqual(LanguagePreference(environment: [:]).languages, [])
    }

    func testTheFallbackChainDownToTheKey() {
        let localization = Localization(tables: [
            "fr_CA": ["A": "a (fr_CA)"],
            "fr": ["A": "a (fr)", "B": "b (fr)"],
            "Base": ["C": "c (Base)"],
            "en": ["C": "c (en)", "D": "d (en)"],
        ])
        let canadian = LanguagePreference(environment: ["LANG": "fr_CA.UTF-8"])
        XCTAssertEqual(localization.lookupOrder(for: canadian), ["fr_CA", "fr", "Base", "en"])
        XCTAssertEqual(localization.string(for: "A", preference: canadian), "a (fr_CA)")
        XCTAssertEqual(localization.string(for: "B", preference: canadian), "b (fr)")
        XCTAssertEqual(localization.string(for: "C", preference: canadian), "c (Base)")
        XCTAssertEqual(localization.string(for: "D", preference: canadian), "d (en)")
        XCTAssertEqual(localization.string(for: "E", preference: canadian), "E", "no translation anywhere: the key")
        XCTAssertEqual(localization.string(for: "A", preference: LanguagePreference(requested: "de")), "A")
        XCTAssertEqual(localization.string(for: "A", preference: LanguagePreference(environment: ["LANG": "C"])), "A")
    }

    func testTheDevelopmentRegionComesBeforeBaseAndEnglish() {
        let localization = Localization(
            tables: ["de": ["A": "a (de)"], "en": ["A": "a (en)"], "fr-CA": ["B": "b (fr-CA)"]], developmentRegion: "de")
        let preference = LanguagePreference(requested: "it")
        XCTAssertEqual(localization.lookupOrder(for: preference), ["it", "de", "Base", "en"])
        XCTAssertEqual(localization.string(for: "A", preference: preference), "a (de)")
        XCTAssertEqual(localization.string(for: "B", preference: LanguagePreference(requested: "fr_CA")), "b (fr-CA)", "pt-BR and pt_BR name one folder")
        XCTAssertTrue(localization.hasTranslation(for: "B"))
        XCTAssertFalse(localization.hasTranslation(for: "C"))
    }

    func testOnlyStaticRowsOfAListingAreTranslated() {
        let localization = Localization(tables: ["fr": ["Search": "Rechercher", "Search for an item": "Rechercher un élément", "Ada": "not a key"]])
        let listing = QuickActionsListing(generation: 3, launched: true, items: [
            ListedShortcut(item: ShortcutItem(type: "SearchAction", title: "Search", subtitle: "Search for an item"), source: .static, displayed: true, position: 1),
            ListedShortcut(item: ShortcutItem(type: "FavoriteAction", title: "Ada"), source: .dynamic, displayed: true, position: 2),
        ])
        let french = localization.localizing(listing, for: LanguagePreference(requested: "fr_FR"))
        XCTAssertEqual(french.items.map(\.item.title), ["Rechercher", "Ada"])
        XCTAssertEqual(french.items[0].item.subtitle, "Rechercher un élément")
        XCTAssertEqual(french.items[0].item.type, "SearchAction")
        XCTAssertEqual(localization.localizing(listing, for: LanguagePreference(requested: "en")), listing)
    }

    func testLprojFolderNames() {
        XCTAssertEqual(Localization.language(ofFolder: "fr.lproj"), "fr")
        XCTAssertEqual(Localization.language(ofFolder: "Base.lproj"), "Base")
        XCTAssertNil(Localization.language(ofFolder: ".lproj"))
        XCTAssertNil(Localization.language(ofFolder: "shortcuts.plist"))
    }

    func testBuildSettingsInTypesAreExpandedFromTheBundleIdentifier() {
        let file = StaticItemsFile(items: [
            ShortcutItem(type: "$(PRODUCT_BUNDLE_IDENTIFIER).OpenFavorites", title: "T"),
            ShortcutItem(type: "${PRODUCT_BUNDLE_IDENTIFIER}.New", title: "T"),
            ShortcutItem(type: "$(OTHER_SETTING).X", title: "T"),
            ShortcutItem(type: "Plain$", title: "T"),
        ])
        XCTAssertEqual(file.unexpandedBuildSettings.map(\.index), [0, 1, 2])
        XCTAssertEqual(file.unexpandedBuildSettings.map(\.setting), ["$(PRODUCT_BUNDLE_IDENTIFIER)", "${PRODUCT_BUNDLE_IDENTIFIER}", "$(OTHER_SETTING)"])
        let expanded = file.expandingBuildSettings(bundleIdentifier: "org.example.Contacts")
        XCTAssertEqual(expanded.items.map(\.type), ["org.example.Contacts.OpenFavorites", "org.example.Contacts.New", "$(OTHER_SETTING).X", "Plain$"])
        XCTAssertEqual(expanded.unexpandedBuildSettings.map(\.index), [2])
        XCTAssertEqual(file.expandingBuildSettings(bundleIdentifier: ""), file, "empty: no expansion")
    }

    func testTheDevelopmentRegionIsReadFromTheInfoPlist() throws {
        let text = """
            <plist><dict><key>CFBundleDevelopmentRegion</key><string>de</string>
            <key>UIApplicationShortcutItems</key><array/></dict></plist>
            """
        XCTAssertEqual(try StaticItemsFile.decode(Array(text.utf8), fileName: "x").developmentRegion, "de")
    }
}
