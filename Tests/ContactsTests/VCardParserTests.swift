import XCTest
@_spi(Reference) @testable import Contacts

final class VCardParserTests: XCTestCase {
    private func parse(_ text: String, stem: String = "card", options: ContactParsingOptions = .default) throws -> [Contact] {
        let bytes = Array(text.utf8)
        assertAgreesWithReference(bytes, stem: stem, options: options)
        return try VCardParser.parse(bytes, fileStem: stem, options: options)
    }

    /// `parse` (one pass over bytes) must give exactly what `referenceParse` (line by line on
    /// strings) gives: the same contacts, or the same error with the same line and text.
    private func assertAgreesWithReference(
        _ bytes: [UInt8], stem: String = "card", options: ContactParsingOptions = .default, file: StaticString = #filePath, line: UInt = #line
    ) {
        let fast = Result { () throws(ContactParseError) in try VCardParser.parse(bytes, fileStem: stem, options: options) }
        let reference = Result { () throws(ContactParseError) in try VCardParser.referenceParse(bytes, fileStem: stem, options: options) }
        XCTAssertEqual(fast, reference, "for \(String(decoding: bytes, as: UTF8.self).debugDescription)", file: file, line: line)
    }

    private func parseOne(_ text: String, stem: String = "card", options: ContactParsingOptions = .default) throws -> Contact {
        let contacts = try parse(text, stem: stem, options: options)
        XCTAssertEqual(contacts.count, 1)
        return try XCTUnwrap(contacts.first)
    }

    private func parseError(_ bytes: [UInt8]) -> ContactParseError? {
        assertAgreesWithReference(bytes)
        do {
            _ = try VCardParser.parse(bytes, fileStem: "card")
            return nil
        } catch {
            return error
        }
    }

    private func parseError(_ text: String) -> ContactParseError? {
        parseError(Array(text.utf8))
    }

    // MARK: Evolution Data Server's favorites

    func testFolksFavouriteMarksAFavoriteOnlyWhenAsked() throws {
        let card = "BEGIN:VCARD\nVERSION:3.0\nUID:p1\nFN:Hedy Lamarr\nX-FOLKS-FAVOURITE:true\nEND:VCARD\n"
        XCTAssertFalse(try parseOne(card).favorite, "the contacts directory keeps the vdir tools' rules")
        XCTAssertTrue(try parseOne(card, options: ContactParsingOptions(folksFavourite: true)).favorite)
        let grouped = "BEGIN:VCARD\nVERSION:3.0\nFN:Hedy\nitem1.x-folks-favourite;TYPE=X:TRUE\nEND:VCARD\n"
        XCTAssertTrue(try parseOne(grouped, options: ContactParsingOptions(folksFavourite: true)).favorite)
        let unstarred = "BEGIN:VCARD\nVERSION:3.0\nFN:Hedy\nX-FOLKS-FAVOURITE:false\nEND:VCARD\n"
        XCTAssertFalse(try parseOne(unstarred, options: ContactParsingOptions(folksFavourite: true)).favorite)
    }

    // MARK: Encodings and line structure

    func testUTF8ByteOrderMarkIsStripped() throws {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("BEGIN:VCARD\nVERSION:3.0\nFN:Zoë\nEND:VCARD\n".utf8)
        assertAgreesWithReference(bytes, stem: "bom")
        let contacts = try VCardParser.parse(bytes, fileStem: "bom")
        XCTAssertEqual(contacts.map(\.name), ["Zoë"])
    }

    /// EDS writes `N` with empty components; the name joins the others with single spaces,
    /// whatever whitespace the components hold, in ASCII as in other scripts.
    func testStructuredNameWithEmptyComponentsCollapsesWhitespace() throws {
        XCTAssertEqual(try parseOne("BEGIN:VCARD\nVERSION:3.0\nN:0000007;Person;;;\nEND:VCARD\n").name, "Person 0000007")
        XCTAssertEqual(try parseOne("BEGIN:VCARD\nVERSION:3.0\nN: Lee\t ;  Ann\\n ;;Dr.;\nEND:VCARD\n").name, "Dr. Ann Lee")
        XCTAssertEqual(try parseOne("BEGIN:VCARD\nVERSION:3.0\nN:Åberg;\u{3000}Åsa;;;\nEND:VCARD\n").name, "Åsa Åberg")
    }

    func testCRLFLineEnds() throws {
        let contact = try parseOne("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ann Lee\r\nEMAIL:ann@example.org\r\nEND:VCARD\r\n")
        XCTAssertEqual(contact.name, "Ann Lee")
        XCTAssertEqual(contact.email, "ann@example.org")
    }

    func testLFLineEnds() throws {
        let contact = try parseOne("BEGIN:VCARD\nVERSION:4.0\nFN:Ann Lee\nEMAIL:ann@example.org\nEND:VCARD\n")
        XCTAssertEqual(contact.name, "Ann Lee")
        XCTAssertEqual(contact.email, "ann@example.org")
    }

    func testCRLineEnds() throws {
        let contact = try parseOne("BEGIN:VCARD\rVERSION:2.1\rFN:Ann Lee\rEMAIL:ann@example.org\rEND:VCARD\r")
        XCTAssertEqual(contact.name, "Ann Lee")
        XCTAssertEqual(contact.email, "ann@example.org")
    }

    func testMixedLineEndsAndMissingFinalNewline() throws {
        let contact = try parseOne("BEGIN:VCARD\r\nFN:Ann\rEMAIL:a@x.org\nEND:VCARD")
        XCTAssertEqual(contact.name, "Ann")
        XCTAssertEqual(contact.email, "a@x.org")
    }

    func testFoldingWithSpace() throws {
        let contact = try parseOne("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Alexandra Ma\r\n rie Example\r\nEND:VCARD\r\n")
        XCTAssertEqual(contact.name, "Alexandra Marie Example")
    }

    func testFoldingWithTab() throws {
        let contact = try parseOne("BEGIN:VCARD\nVERSION:3.0\nEMAIL:very.long.addr\n\tess@example.org\nFN:T\nEND:VCARD\n")
        XCTAssertEqual(contact.email, "very.long.address@example.org")
    }

    func testFoldingInsideTheHeader() throws {
        let contact = try parseOne("BEGIN:VCARD\nVERSION:3.0\nEMAIL;TYPE=INTERNET,\n PREF:b@x.org\nEMAIL:a@x.org\nFN:T\nEND:VCARD\n")
        XCTAssertEqual(contact.email, "b@x.org")
    }

    func testQuotedPrintableSoftLineBreaksWithUTF8Charset() throws {
        let text = """
        BEGIN:VCARD\r
        VERSION:2.1\r
        FN;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:J=C3=BCrgen M=C3=BC=\r
        ller-L=C3=BCdensch=\r
        eid\r
        END:VCARD\r

        """
        XCTAssertEqual(try parseOne(text).name, "Jürgen Müller-Lüdenscheid")
    }

    func testQuotedPrintableWithISO88591Charset() throws {
        let text = "BEGIN:VCARD\nVERSION:2.1\nFN;CHARSET=ISO-8859-1;ENCODING=QUOTED-PRINTABLE:Jos=E9 Mu=F1oz\nEND:VCARD\n"
        XCTAssertEqual(try parseOne(text).name, "José Muñoz")
    }

    func testBareQuotedPrintableParameterOfVCard21() throws {
        let text = "BEGIN:VCARD\nVERSION:2.1\nN;CHARSET=UTF-8;QUOTED-PRINTABLE:=C3=85berg;=C3=85sa;;;\nEND:VCARD\n"
        XCTAssertEqual(try parseOne(text).name, "Åsa Åberg")
    }

    func testQuotedPrintableWithoutCharsetAndInvalidUTF8IsReadAsWindows1252() throws {
        let text = "BEGIN:VCARD\nVERSION:2.1\nFN;ENCODING=QUOTED-PRINTABLE:Fran=E7ois =80 =93Frank=94\nEND:VCARD\n"
        XCTAssertEqual(try parseOne(text).name, "François € “Frank”")
    }

    func testQuotedPrintableWithoutCharsetAndValidUTF8IsReadAsUTF8() throws {
        let text = "BEGIN:VCARD\nVERSION:2.1\nFN;ENCODING=QUOTED-PRINTABLE:Fran=C3=A7ois\nEND:VCARD\n"
        XCTAssertEqual(try parseOne(text).name, "François")
    }

    func testBadQuotedPrintableNamesLineAndProperty() {
        let text = "BEGIN:VCARD\nVERSION:2.1\nFN;ENCODING=QUOTED-PRINTABLE:Bad =ZZ escape\nEND:VCARD\n"
        let error = parseError(text)
        XCTAssertEqual(error, .badQuotedPrintable(line: 3, property: "FN"))
        XCTAssertEqual(error?.description, "Line 3: the quoted-printable value of \"FN\" has an invalid \"=\" escape.")
    }

    func testBadQuotedPrintableInAnUnusedPropertyDoesNotCostTheContact() throws {
        let text = "BEGIN:VCARD\nVERSION:2.1\nNOTE;ENCODING=QUOTED-PRINTABLE:=XY\nFN:Kept\nEND:VCARD\n"
        XCTAssertEqual(try parseOne(text).name, "Kept")
    }

    func testWindows1252File() throws {
        // "Ren\xE9 M\xFCller" with a cp1252 right single quote (0x92) in the organisation.
        var bytes = Array("BEGIN:VCARD\nVERSION:3.0\nN:M".utf8)
        bytes += [0xFC] + Array("ller;Ren".utf8) + [0xE9] + Array(";;;\nORG:O".utf8) + [0x92]
        bytes += Array("Brien Ltd\nEND:VCARD\n".utf8)
        assertAgreesWithReference(bytes, stem: "cp1252")
        let contacts = try VCardParser.parse(bytes, fileStem: "cp1252")
        XCTAssertEqual(contacts.map(\.name), ["René Müller"])
    }

    func testNULByteIsBinaryData() {
        var bytes = Array("BEGIN:VCARD\nFN:A".utf8)
        bytes.append(0)
        bytes += Array("\nEND:VCARD\n".utf8)
        let error = parseError(bytes)
        XCTAssertEqual(error, .binaryData(byteOffset: 16))
        XCTAssertEqual(ContactFileProblem(error ?? .noVCard), .binary)
    }

    // MARK: Names, groups, escapes

    func testLowercasePropertyAndParameterNames() throws {
        let contact = try parseOne("begin:vcard\nversion:3.0\nfn:Low Case\nemail;type=internet;type=pref:p@x.org\nend:vcard\n")
        XCTAssertEqual(contact.name, "Low Case")
        XCTAssertEqual(contact.email, "p@x.org")
    }

    func testGroupPrefixes() throws {
        let text = "BEGIN:VCARD\nVERSION:3.0\nFN:Grouped\nitem1.EMAIL;TYPE=INTERNET:g1@x.org\nitem1.X-ABLabel:Work\nitem2.EMAIL:g2@x.org\nitem2.X-STARRED:true\nEND:VCARD\n"
        let contact = try parseOne(text)
        XCTAssertEqual(contact.emails, ["g1@x.org", "g2@x.org"])
        XCTAssertTrue(contact.favorite)
    }

    func testEscapesInValues() throws {
        let text = #"""
        BEGIN:VCARD
        VERSION:3.0
        FN:Smith\, John \; Co\\Ltd\nSecond\NThird
        END:VCARD

        """#
        // Escaped newlines collapse into spaces in a display name.
        XCTAssertEqual(try parseOne(text).name, #"Smith, John ; Co\Ltd Second Third"#)
        XCTAssertEqual(VCardParser.unescapedComponents(of: #"a\,b,c\;d\\,e\nf\x"#, separatedBy: ","), ["a,b", #"c;d\"#, "e\nf\\x"])
    }

    func testEscapedSemicolonInStructuredName() throws {
        XCTAssertEqual(try parseOne("BEGIN:VCARD\nN:Doe\\;Ray;Jane;;;\nEND:VCARD\n").name, "Jane Doe;Ray")
    }

    func testQuotedParameterValuesMayHoldColons() throws {
        let text = "BEGIN:VCARD\nVERSION:4.0\nFN:Q\nEMAIL;X-LABEL=\"a:b\";PREF=1:q@x.org\nEND:VCARD\n"
        XCTAssertEqual(try parseOne(text).email, "q@x.org")
    }

    // MARK: Several cards and identifiers

    func testSeveralCardsGetNumberedIdentifiers() throws {
        let text = """
        BEGIN:VCARD
        FN:One
        END:VCARD
        BEGIN:VCARD
        FN:Two
        END:VCARD

        BEGIN:VCARD
        UID:urn:uuid:1234
        FN:Three
        END:VCARD
        BEGIN:VCARD
        FN:Four
        END:VCARD
        """
        let contacts = try parse(text, stem: "export")
        XCTAssertEqual(contacts.map(\.identifier), ["export", "export#2", "urn:uuid:1234", "export#4"])
        XCTAssertEqual(contacts.map(\.name), ["One", "Two", "Three", "Four"])
    }

    func testUIDIsKeptVerbatimButTrimmed() throws {
        XCTAssertEqual(try parseOne("BEGIN:VCARD\nUID:  urn:uuid:ABC-def \nFN:U\nEND:VCARD\n").identifier, "urn:uuid:ABC-def")
    }

    func testEmptyUIDFallsBackToTheStem() throws {
        XCTAssertEqual(try parseOne("BEGIN:VCARD\nUID:\nFN:U\nEND:VCARD\n", stem: "file").identifier, "file")
    }

    func testNestedAgentCardIsNotAContact() throws {
        let text = "BEGIN:VCARD\nVERSION:2.1\nFN:Boss\nAGENT:\nBEGIN:VCARD\nFN:Assistant\nEND:VCARD\nEMAIL:boss@x.org\nEND:VCARD\n"
        let contact = try parseOne(text)
        XCTAssertEqual(contact.name, "Boss")
        XCTAssertEqual(contact.email, "boss@x.org")
    }

    // MARK: Name fallbacks

    func testNameFromStructuredNameIsGivenThenFamilyWithPrefixAndSuffix() throws {
        XCTAssertEqual(try parseOne("BEGIN:VCARD\nN:Public;John;Quinlan;Dr.;Jr.\nEND:VCARD\n").name, "Dr. John Public Jr.")
        XCTAssertEqual(try parseOne("BEGIN:VCARD\nN:  Doe ;  Jane ;;;\nEND:VCARD\n").name, "Jane Doe")
        XCTAssertEqual(try parseOne("BEGIN:VCARD\nN:Doe;Jane,Ann;;;\nEND:VCARD\n").name, "Jane Ann Doe")
    }

    func testFormattedNameWinsOverStructuredName() throws {
        XCTAssertEqual(try parseOne("BEGIN:VCARD\nN:Doe;Jane;;;\nFN:  Janie   D.  \nEND:VCARD\n").name, "Janie D.")
    }

    func testBlankFormattedNameFallsBackToStructuredName() throws {
        XCTAssertEqual(try parseOne("BEGIN:VCARD\nFN:   \nN:Doe;Jane;;;\nEND:VCARD\n").name, "Jane Doe")
    }

    func testSecondStructuredNameCountsOnlyWhenTheFirstIsBlank() throws {
        XCTAssertEqual(try parseOne("BEGIN:VCARD\nN:;;;;\nN:Doe;Jane;;;\nEND:VCARD\n").name, "Jane Doe")
        XCTAssertEqual(try parseOne("BEGIN:VCARD\nN:Doe;Jane;;;\nN:Roe;Rick;;;\nEND:VCARD\n").name, "Jane Doe")
        // A second N after a usable first one is not even decoded, as before.
        XCTAssertEqual(try parseOne("BEGIN:VCARD\nN:Doe;Jane;;;\nN;ENCODING=QUOTED-PRINTABLE:=ZZ\nEND:VCARD\n").name, "Jane Doe")
        // A malformed N is an error even when FN names the contact, as before.
        XCTAssertEqual(parseError("BEGIN:VCARD\nN;ENCODING=QUOTED-PRINTABLE:=ZZ\nFN:A\nEND:VCARD\n"),
                       .badQuotedPrintable(line: 2, property: "N"))
    }

    func testAddressBookExportParameters() throws {
        let contact = try parseOne("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:u\r\nFN:Liam Smith\r\nN:Smith;Liam;;;\r\n"
            + "EMAIL;TYPE=INTERNET,HOME:home@x.org\r\nEMAIL;TYPE=INTERNET;TYPE=PREF:pref@x.org\r\n"
            + "TEL;TYPE=CELL:+49 151 1\r\nCATEGORIES:starred\r\nEND:VCARD\r\n")
        XCTAssertEqual(contact.name, "Liam Smith")
        XCTAssertEqual(contact.email, "pref@x.org")
        XCTAssertEqual(contact.emails, ["home@x.org", "pref@x.org"])
        XCTAssertTrue(contact.favorite)
    }

    func testNameFallsBackToOrganization() throws {
        XCTAssertEqual(try parseOne("BEGIN:VCARD\nN:;;;;\nORG:Acme\\, Inc.;Sales\nEND:VCARD\n").name, "Acme, Inc.")
    }

    func testNameFallsBackToFirstEmail() throws {
        let contact = try parseOne("BEGIN:VCARD\nEMAIL:first@x.org\nEMAIL;TYPE=PREF:pref@x.org\nEND:VCARD\n")
        XCTAssertEqual(contact.name, "first@x.org")
        XCTAssertEqual(contact.email, "pref@x.org")
    }

    func testNameFallsBackToFileStem() throws {
        let contact = try parseOne("BEGIN:VCARD\nVERSION:3.0\nEND:VCARD\n", stem: "nameless")
        XCTAssertEqual(contact.name, "nameless")
        XCTAssertEqual(contact.identifier, "nameless")
        XCTAssertNil(contact.email)
        XCTAssertEqual(contact.emails, [])
    }

    // MARK: Preferred email

    func testPref1OfVCard40() throws {
        let contact = try parseOne("BEGIN:VCARD\nVERSION:4.0\nEMAIL;PREF=2:two@x.org\nEMAIL:none@x.org\nEMAIL;TYPE=work;PREF=1:one@x.org\nEND:VCARD\n")
        XCTAssertEqual(contact.email, "one@x.org")
        XCTAssertEqual(contact.emails, ["two@x.org", "none@x.org", "one@x.org"])
    }

    func testTypePrefOfVCard30() throws {
        let contact = try parseOne("BEGIN:VCARD\nVERSION:3.0\nEMAIL;TYPE=INTERNET:a@x.org\nEMAIL;TYPE=INTERNET,PREF:b@x.org\nEND:VCARD\n")
        XCTAssertEqual(contact.email, "b@x.org")
    }

    func testSeparateTypePrefParameterOfVCard30() throws {
        let contact = try parseOne("BEGIN:VCARD\nVERSION:3.0\nEMAIL;TYPE=INTERNET:a@x.org\nEMAIL;TYPE=INTERNET;TYPE=pref:b@x.org\nEND:VCARD\n")
        XCTAssertEqual(contact.email, "b@x.org")
    }

    func testBarePrefParameterOfVCard21() throws {
        let contact = try parseOne("BEGIN:VCARD\nVERSION:2.1\nEMAIL;INTERNET:a@x.org\nEMAIL;INTERNET;PREF:b@x.org\nEND:VCARD\n")
        XCTAssertEqual(contact.email, "b@x.org")
    }

    func testWithoutPreferenceTheFirstEmailIsPrimary() throws {
        let contact = try parseOne("BEGIN:VCARD\nEMAIL:a@x.org\nEMAIL:b@x.org\nEND:VCARD\n")
        XCTAssertEqual(contact.email, "a@x.org")
    }

    // MARK: Favorites

    func testGoogleCategoriesWithStarred() throws {
        XCTAssertTrue(try parseOne("BEGIN:VCARD\nFN:G\nCATEGORIES:myContacts,starred\nEND:VCARD\n").favorite)
    }

    func testCategoriesAreCaseInsensitiveAndTrimmed() throws {
        XCTAssertTrue(try parseOne("BEGIN:VCARD\nFN:G\nCATEGORIES:Work, FAVORITES \nEND:VCARD\n").favorite)
        XCTAssertTrue(try parseOne("BEGIN:VCARD\nFN:G\nCATEGORIES:Favorite\nEND:VCARD\n").favorite)
    }

    func testEscapedCommaInCategoriesIsNotASeparator() throws {
        XCTAssertFalse(try parseOne("BEGIN:VCARD\nFN:G\nCATEGORIES:not\\,starred\nEND:VCARD\n").favorite)
        let options = ContactParsingOptions(favoriteCategories: ["not,starred"])
        XCTAssertTrue(try parseOne("BEGIN:VCARD\nFN:G\nCATEGORIES:not\\,starred\nEND:VCARD\n", options: options).favorite)
    }

    func testCategoriesOnSeveralLines() throws {
        XCTAssertTrue(try parseOne("BEGIN:VCARD\nFN:G\nCATEGORIES:work\nCATEGORIES:starred\nEND:VCARD\n").favorite)
    }

    func testOtherCategoriesAreNotFavorites() throws {
        XCTAssertFalse(try parseOne("BEGIN:VCARD\nFN:G\nCATEGORIES:myContacts,starredish\nEND:VCARD\n").favorite)
    }

    func testConfiguredCategoriesReplaceTheDefaults() throws {
        let options = ContactParsingOptions(favoriteCategories: ["VIP"])
        XCTAssertTrue(try parseOne("BEGIN:VCARD\nFN:G\nCATEGORIES:vip\nEND:VCARD\n", options: options).favorite)
        XCTAssertFalse(try parseOne("BEGIN:VCARD\nFN:G\nCATEGORIES:starred\nEND:VCARD\n", options: options).favorite)
    }

    func testXFavoriteFlag() throws {
        XCTAssertTrue(try parseOne("BEGIN:VCARD\nFN:F\nX-FAVORITE:TRUE\nEND:VCARD\n").favorite)
    }

    func testXStarredFlag() throws {
        XCTAssertTrue(try parseOne("BEGIN:VCARD\nFN:F\nX-STARRED:1\nEND:VCARD\n").favorite)
    }

    func testXDavdroidStarredFlag() throws {
        XCTAssertTrue(try parseOne("BEGIN:VCARD\nFN:F\nx-davdroid-starred: Yes \nEND:VCARD\n").favorite)
    }

    func testFalseFlagsAreNotFavorites() throws {
        XCTAssertFalse(try parseOne("BEGIN:VCARD\nFN:F\nX-FAVORITE:0\nX-STARRED:false\nX-DAVDROID-STARRED:no\nEND:VCARD\n").favorite)
    }

    // MARK: Structure errors

    func testEmptyFileHasNoVCard() {
        XCTAssertEqual(parseError(""), .noVCard)
        XCTAssertEqual(parseError("\n\r\n  \n"), .noVCard)
    }

    func testTextBeforeBeginIsAnError() {
        let error = parseError("\nhello\nBEGIN:VCARD\nEND:VCARD\n")
        XCTAssertEqual(error, .expectedBegin(line: 2, text: "hello"))
        XCTAssertEqual(error?.description, "Line 2: expected \"BEGIN:VCARD\" but found \"hello\".")
    }

    func testOtherObjectIsNotAVCard() {
        XCTAssertEqual(parseError("BEGIN:VCALENDAR\nEND:VCALENDAR\n"), .expectedBegin(line: 1, text: "BEGIN:VCALENDAR"))
    }

    func testMissingEnd() {
        let error = parseError("BEGIN:VCARD\nFN:A\nEND:VCARD\nBEGIN:VCARD\nFN:B\n")
        XCTAssertEqual(error, .missingEnd(beginLine: 4))
        XCTAssertEqual(error?.description, "The vCard that begins on line 4 has no \"END:VCARD\".")
    }

    func testEndWithoutBegin() {
        let error = parseError("BEGIN:VCARD\nFN:A\nEND:VCARD\nEND:VCARD\n")
        XCTAssertEqual(error, .endWithoutBegin(line: 4))
        XCTAssertEqual(error?.description, "Line 4: \"END:VCARD\" without a matching \"BEGIN:VCARD\".")
    }

    func testLineWithoutColonIsMalformed() {
        let error = parseError("BEGIN:VCARD\r\nFN:A\r\nthis is not a property\r\nEND:VCARD\r\n")
        XCTAssertEqual(error, .malformedProperty(line: 3, text: "this is not a property"))
        XCTAssertEqual(error?.description, "Line 3: \"this is not a property\" is not a vCard property (it has no \":\").")
    }

    func testLineNumbersCountPhysicalLinesAcrossFolds() {
        let error = parseError("BEGIN:VCARD\nFN:A\n b\n c\nbroken\nEND:VCARD\n")
        XCTAssertEqual(error, .malformedProperty(line: 5, text: "broken"))
    }

    // MARK: The one-pass parser agrees with the reference

    /// Lines that take each way through the one-pass parser: ASCII lines read on their bytes,
    /// other lines (Unicode whitespace, case mappings that turn non-ASCII into ASCII, a
    /// combining mark after a separator) the general way, folds and soft line breaks across
    /// both, errors in each.
    private static let edgeCases: [String] = [
        "BEGIN:VCARD\r\nUID:u1\r\nFN:Ann\r\nEMAIL;PREF=1:a@x.org\r\nEMAIL:b@x.org\r\nCATEGORIES:Favorite,Work\r\nEND:VCARD\r\n",
        "  begin : vcard  \nitem1.email;type=pref:  a@x.org \nfn:\\,Ann\\;\n End:VCard\n",
        "BEGIN:VCARD\nFN:A\nEND:VCARD\nBEGIN:VCARD\nUID:x\nEND:VCARD\n\n\n",
        "BEGIN:VCARD\nFN:A\n\u{00A0}\nEND:VCARD\n",
        "\u{3000}\nBEGIN:VCARD\nFN:A\nEND:VCARD\n",
        "BEGIN:VCARD\nu\u{0131}d:dotless\nfn:A\nEND:VCARD\n",
        "BEGIN:VCARD\nx-\u{017F}tarred:true\nFN:A\nEND:VCARD\n",
        "BEGIN:VCARD\nFN:Zo\u{00EB}\nN:\u{00C5}berg;\u{00C5}sa;;;\nEND:VCARD\n",
        "BEGIN:VCARD\nFN:\u{00A0}Ann\u{2003}Lee\u{00A0}\nEND:VCARD\n",
        "BEGIN:VCARD\nFN;ENCODING=QUOTED-PRINTABLE:J=C3=BC=\nrgen\nEND:VCARD\n",
        "BEGIN:VCARD\nFN;ENCODING=QUOTED-PRINTABLE:Zo\u{00EB}=\n=C3=BC=\n\nEND:VCARD\n",
        "BEGIN:VCARD\nFN;ENCODING=QUOTED-PRINTABLE:\u{0600}=\nx\nEND:VCARD\n",
        "BEGIN:VCARD\nNOTE;ENCODING=quoted-printable:a=\n b\nFN:x\nEND:VCARD\n",
        "BEGIN:VCARD\nFN:plain=\nEMAIL:a@x.org\nEND:VCARD\n",
        "BEGIN:VCARD\nFN:Al\n ex\n\tandra\nEMAIL;TYPE=INTERNET,\n PREF:b@x.org\nEND:VCARD\n",
        "BEGIN:VCARD\nFN:Al\n \u{00E9}x\nEND:VCARD\n",
        "BEGIN:VCARD\nEMAIL;TYPE=\"a:b\";PREF=2:q@x.org\nEMAIL;\"PREF=1\":r@x.org\nEND:VCARD\n",
        "BEGIN:VCARD\nEMAIL\"x:y\":z\nFN:\"A:B\"\nEND:VCARD\n",
        "BEGIN:VCARD\nFN:A\nAGENT:BEGIN:VCARD\nBEGIN:VCARD\nFN:Inner\nEND:VCARD\nEND:VCARD\n",
        "BEGIN:VCARD\nFN:A\nbroken line\nEND:VCARD\n",
        "BEGIN:VCARD\nFN:A\nbrok\u{00E9}n line\nEND:VCARD\n",
        "BEGIN:VCARD\nFN:A\n",
        "END:VCARD\n",
        "BEGIN:VCALENDAR\nEND:VCALENDAR\n",
        "hello\u{00E9}\nBEGIN:VCARD\nEND:VCARD\n",
        "BEGIN:VCARD\nFN;ENCODING=QUOTED-PRINTABLE:bad=Z\nEND:VCARD\n",
        "BEGIN:VCARD\nX-FAVORITE: Yes \nX-DAVDROID-STARRED:1\nx-starred:TRUE\nEND:VCARD\n",
        "BEGIN:VCARD\nORG:Acme\\; Inc;Unit\nN:;;;;\nEND:VCARD\n",
        "BEGIN:VCARD\r\rFN:A\r\n\nEND:VCARD",
        // Parameters read on the bytes of an ASCII line, every way the general path reads them.
        "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Liam Smith\r\nN:Smith;Liam;;;\r\nEMAIL;TYPE=INTERNET,HOME:liam@x.org\r\nCATEGORIES:starred\r\nEND:VCARD\r\n",
        "BEGIN:VCARD\nEMAIL; type = work , pref ;X-A=:a@x.org\nEMAIL;;:b@x.org\nEMAIL;TYPE=a,,b,:c@x.org\nEND:VCARD\n",
        "BEGIN:VCARD\nEMAIL;quoted-printable;CHARSET=utf-8:a=40x.org\nEMAIL;Base64;7bit:d@x.org\nEND:VCARD\n",
        "BEGIN:VCARD\nitem1.EMAIL;PREF=2;pref=1:e@x.org\nfn;language=en:F\nEND:VCARD\n",
        // The structured name, composed only when there is no FN, with its errors where they were.
        "BEGIN:VCARD\nN:;;;;\nN:Doe;Jane;;;\nEND:VCARD\n",
        "BEGIN:VCARD\nN:Doe;Jane;;;\nN;ENCODING=QUOTED-PRINTABLE:=ZZ\nFN:A\nEND:VCARD\n",
        "BEGIN:VCARD\nN:;;;;\nN;ENCODING=QUOTED-PRINTABLE:=ZZ\nFN:A\nEND:VCARD\n",
        "BEGIN:VCARD\nN;ENCODING=QUOTED-PRINTABLE:=ZZ\nFN:A\nEND:VCARD\n",
        "BEGIN:VCARD\nFN:A\nN:Doe;Jane;;;\nN:Roe;Rick;;;\nEND:VCARD\n",
        "\r\n\r\n",
        "",
        "BEGIN:VCARD\nFN\u{0301}:A\nEND:VCARD\n",
        "BEGIN:VCARD\nFN:\u{0301}A\nEND:VCARD\n",
        "BEGIN\u{0301}:VCARD\nFN:A\nEND:VCARD\n",
        "BEGIN:VCARD\n\u{000B}FN:A\u{000C}\nEND:VCARD\n",
        "BEGIN:VCARD\nFN:A\u{0085}\nEND:VCARD\n",
        // Folded lines of a property the contact does not read, passed over unjoined: a photo
        // before the categories, in a group, with a non-ASCII or blank continuation, one whose
        // name is folded or has no colon on its first line, a folded card marker, quoted-printable
        // soft line breaks in an unread property, outside a card, and the last line of the file.
        "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ann\r\nPHOTO;ENCODING=b;TYPE=JPEG:/9j/4AAQ\r\n SkZJRgABAQ\r\n \r\n\tAAAQABAAD\r\nCATEGORIES:starred\r\nEND:VCARD\r\n",
        "BEGIN:VCARD\nitem1.PHOTO:data:image/png;base64,iVBO\n Rw0K\nitem1.FN:A\nEND:VCARD\n",
        "BEGIN:VCARD\nNOTE:caf\n \u{00E9} \u{00A0}\n x\nFN:A\nEND:VCARD\n",
        "BEGIN:VCARD\nPHO\n TO:x\n y\nFN:A\nEND:VCARD\n",
        "BEGIN:VCARD\nPHOTO\n :x\nFN:A\nEND:VCARD\n",
        "BEGIN:VCARD\nNOTE;X=\"a:b\n c\":d\nFN:A\nEND:VCARD\n",
        "BEGIN:VCARD\nFN:A\nEND:VC\n ARD\n",
        "BEGIN:VCARD\nBEGIN:VCA\n RD\nFN:A\nEND:VCARD\nEND:VCARD\n",
        "BEGIN:VCARD\nNOTE;ENCODING=QUOTED-PRINTABLE:a=\nFN:B=\n c\nFN:A\nEND:VCARD\n",
        "BEGIN:VCARD\nNOTE:a=\n b\nFN:A\nEND:VCARD\n",
        "PHOTO:x\n y\nBEGIN:VCARD\nFN:A\nEND:VCARD\n",
        "BEGIN:VCARD\nFN:A\nEND:VCARD\nNOTE:x\n y\n",
        "BEGIN:VCARD\nFN:A\nPHOTO:x\n y",
        "BEGIN:VCARD\nFN:A\nAGENT:BEGIN:VCARD\nBEGIN:VCARD\nPHOTO:x\n y\nEND:VCARD\nEND:VCARD\n",
        "BEGIN:VCARD\rFN:A\rPHOTO:x\r y\r\n z\rEND:VCARD\r",
    ]

    func testOnePassParserAgreesWithTheReferenceOnEdgeCases() {
        for text in Self.edgeCases {
            assertAgreesWithReference(Array(text.utf8))
            assertAgreesWithReference([0xEF, 0xBB, 0xBF] + Array(text.utf8))
        }
        // Latin-1 bytes in an otherwise ASCII file: decoded as Windows-1252 first.
        assertAgreesWithReference(Array("BEGIN:VCARD\nFN:Ren".utf8) + [0xE9, 0x0A] + Array("EMAIL:a@x.org\nEND:VCARD\n".utf8))
        assertAgreesWithReference(Array("BEGIN:VCARD\nFN:A".utf8) + [0x00] + Array("\nEND:VCARD\n".utf8))
        assertAgreesWithReference([0xEF, 0xBB, 0xBF, 0x00])
    }

    /// Random edits (seeded, so a failure repeats) of the edge cases: bytes deleted, repeated,
    /// or replaced by ones that matter to the parser (separators, quotes, line ends, spaces,
    /// a NUL, non-ASCII bytes).
    func testOnePassParserAgreesWithTheReferenceOnMutatedCards() {
        var generator = SplitMix64(seed: 12)
        let interesting = Array(":;.=\"\\ \t\r\n,".utf8) + [0x00, 0xC3, 0xA9, 0xE9, 0x85, 0xA0]
        for _ in 0..<3000 {
            var bytes = Array(Self.edgeCases[Int(generator.next() % UInt64(Self.edgeCases.count))].utf8)
            for _ in 0..<(1 + generator.next() % 4) where !bytes.isEmpty {
                let position = Int(generator.next() % UInt64(bytes.count))
                switch generator.next() % 3 {
                case 0: bytes.remove(at: position)
                case 1: bytes.insert(bytes[position], at: position)
                default: bytes[position] = interesting[Int(generator.next() % UInt64(interesting.count))]
                }
            }
            assertAgreesWithReference(bytes)
        }
    }
}

/// A small deterministic generator (SplitMix64), so the mutation test repeats exactly.
private struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
