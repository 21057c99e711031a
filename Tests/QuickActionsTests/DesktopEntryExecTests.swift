import QuickActions
import XCTest

/// The one reader of `Exec` lines: the Desktop Entry Specification's quoting and field codes,
/// and the command that opens a new mail through an app's own `Exec`.
final class DesktopEntryExecTests: XCTestCase {
    func testQuotingAndEscapes() throws {
        XCTAssertEqual(try DesktopEntryExec.split("thunderbird %u"), ["thunderbird", "%u"])
        XCTAssertEqual(try DesktopEntryExec.split("  a   \"b c\"  \"\" d\t e "), ["a", "b c", "", "d", "e"])
        XCTAssertEqual(try DesktopEntryExec.split(#""\"q\" \` \$ \\ \x" y"#), [#""q" ` $ \ \x"#, "y"])
        XCTAssertEqual(try DesktopEntryExec.split("a\"b c\"d"), ["ab cd"])
        XCTAssertThrowsError(try DesktopEntryExec.split("a \"b")) { XCTAssertEqual($0 as? DesktopEntryExec.Problem, .unterminatedQuote) }
        XCTAssertEqual(try DesktopEntryExec.literalArguments("p %%u \"100%%\" %U"), ["p", "%u", "100%", "%U"])
    }

    func testFieldCodesAsALauncherFillsThem() throws {
        let fields = DesktopEntryExec.Fields(urls: ["mailto:a@b", "mailto:c@d"], icon: "mail", name: "Mail", location: "/x/m.desktop")
        XCTAssertEqual(DesktopEntryExec.expand(["m", "%u"], fields), ["m", "mailto:a@b"])
        XCTAssertEqual(DesktopEntryExec.expand(["m", "%U"], fields), ["m", "mailto:a@b", "mailto:c@d"])
        XCTAssertEqual(DesktopEntryExec.expand(["m", "--url=%u"], fields), ["m", "--url=mailto:a@b"])
        XCTAssertEqual(DesktopEntryExec.expand(["m", "%i", "%c", "%k", "100%%"], fields), ["m", "--icon", "mail", "Mail", "/x/m.desktop", "100%"])
        XCTAssertEqual(DesktopEntryExec.expand(["m", "%f", "%F", "%d", "%D", "%n", "%N", "%v", "%m"], fields), ["m"], "no file; deprecated codes removed")
        XCTAssertEqual(DesktopEntryExec.expand(["m", "%i", "%c"], DesktopEntryExec.Fields()), ["m"], "an argument that was one code and is empty is dropped")
    }

    func testTheMailtoCommandOfAnAppsOwnExec() throws {
        XCTAssertEqual(
            try DesktopEntryExec.mailtoTemplate(exec: "/usr/bin/thunderbird %u", icon: "thunderbird", name: "Thunderbird", location: nil),
            ["/usr/bin/thunderbird", "mailto:{email:uri}"])
        // Flathub's exported entries wrap the URL between @@u and @@.
        XCTAssertEqual(
            try DesktopEntryExec.mailtoTemplate(
                exec: "/usr/bin/flatpak run --branch=stable --command=thunderbird --file-forwarding org.mozilla.Thunderbird @@u %u @@",
                icon: nil, name: nil, location: nil),
            ["/usr/bin/flatpak", "run", "--branch=stable", "--command=thunderbird", "--file-forwarding", "org.mozilla.Thunderbird", "@@u",
             "mailto:{email:uri}", "@@"])
        // The app's own text is text: its braces are doubled, so none becomes a field.
        let arguments = try DesktopEntryExec.mailtoTemplate(
            exec: "mail --title \"{x} %c\" %i %U", icon: "m{a}il", name: "My {Mail}", location: "/a/b.desktop")
        XCTAssertEqual(arguments, ["mail", "--title", "{{x}} My {{Mail}}", "--icon", "m{{a}}il", "mailto:{email:uri}"])
        let template = try CommandTemplate(arguments: arguments)
        XCTAssertEqual(
            try template.expand(CommandTemplateValues(email: "a b@c")).get(),
            ["mail", "--title", "{x} My {Mail}", "--icon", "m{a}il", "mailto:a%20b@c"])
        XCTAssertThrowsError(try DesktopEntryExec.mailtoTemplate(exec: "mail %f", icon: nil, name: nil, location: nil)) {
            XCTAssertEqual($0 as? DesktopEntryExec.Problem, .takesNoURL("mail %f"))
        }
        XCTAssertThrowsError(try DesktopEntryExec.mailtoTemplate(exec: "  ", icon: nil, name: nil, location: nil)) {
            XCTAssertEqual($0 as? DesktopEntryExec.Problem, .empty)
        }
    }
}
