import QuickActions
import XCTest

/// `CommandTemplate`: fields are filled in inside the arguments the configuration split, so a
/// value is always exactly the one argument (or part of it) the template placed it in.
final class CommandTemplateTests: XCTestCase {
    let ada = CommandTemplateValues(
        name: "Ada Lovelace", email: "ada@analytical.example", identifier: "ada-lovelace", title: "Ada Lovelace",
        subtitle: "", type: "FavoriteAction", file: "/home/ada/contacts/ada.vcf")

    func testFieldsAreFilledInsideArguments() throws {
        let template = try CommandTemplate(arguments: ["thunderbird", "-compose", "to='{email}',subject=Hello {name}"])
        XCTAssertEqual(
            try template.expand(ada).get(),
            ["thunderbird", "-compose", "to='ada@analytical.example',subject=Hello Ada Lovelace"])
        XCTAssertEqual(template.fields, [.email, .name])
    }

    func testEveryField() throws {
        let template = try CommandTemplate(arguments: ["p"] + CommandTemplateField.allCases.map { "x{\($0.rawValue)}" })
        XCTAssertEqual(
            try template.expand(ada).get(),
            ["p", "xAda Lovelace", "xada@analytical.example", "xada-lovelace", "xAda Lovelace", "x", "xFavoriteAction",
             "x/home/ada/contacts/ada.vcf", "xada@analytical.example", "xAda%20Lovelace"])
    }

    func testAnArgumentThatIsOneEmptyFieldIsDropped() throws {
        let template = try CommandTemplate(arguments: ["p", "{subtitle}", "s={subtitle}", "", "{name}"])
        XCTAssertEqual(try template.expand(ada).get(), ["p", "s=", "", "Ada Lovelace"])
    }

    func testBracesAreEscapedByDoubling() throws {
        let template = try CommandTemplate(arguments: ["p", "{{name}}", "}}{name}{{"])
        XCTAssertEqual(try template.expand(ada).get(), ["p", "{name}", "}Ada Lovelace{"])
    }

    func testErrors() {
        XCTAssertThrowsError(try CommandTemplate(arguments: [])) { XCTAssertEqual($0 as? CommandTemplateError, .empty) }
        XCTAssertThrowsError(try CommandTemplate(arguments: ["p", "{nmae}"])) {
            XCTAssertEqual($0 as? CommandTemplateError, .unknownField("nmae"))
            XCTAssertTrue("\($0)".contains("{name}, {email}"), "\($0)")
        }
        XCTAssertThrowsError(try CommandTemplate(arguments: ["p", "{}"])) { XCTAssertEqual($0 as? CommandTemplateError, .unknownField("")) }
        for unbalanced in ["{name", "name}", "{", "}", "{na{me}", "a}b"] {
            XCTAssertThrowsError(try CommandTemplate(arguments: ["p", unbalanced]), unbalanced) {
                XCTAssertEqual($0 as? CommandTemplateError, .unbalancedBrace(argument: unbalanced))
            }
        }
        XCTAssertThrowsError(try CommandTemplate(arguments: ["{file}", "x"])) {
            XCTAssertEqual($0 as? CommandTemplateError, .fieldInProgram("{file}"))
        }
    }

    /// Every hostile value lands unchanged in exactly the argument the template placed it in.
    func testHostileValuesStayData() throws {
        let template = try CommandTemplate(arguments: ["p", "{name}", "to={email}", "{identifier}"])
        for hostile in Self.hostileValues {
            var values = ada
            values.name = hostile
            values.email = hostile
            values.identifier = "x" + hostile
            XCTAssertEqual(try template.expand(values).get(), ["p", hostile, "to=" + hostile, "x" + hostile])
        }
    }

    static let hostileValues = [
        "$(touch /tmp/pwned)", "`id`", "a; rm -rf ~", "a | tee x", "\"quoted\" 'single'", "line\nbreak", "%u %f %%",
        "{email}", "{{", String(repeating: "é", count: 60_000), "a -b --output=/tmp/x",
    ]

    func testAFieldBeginningAnArgumentWithADashIsRefused() throws {
        let template = try CommandTemplate(arguments: ["p", "--to", "{email}", "{subtitle}{name}"])
        var values = ada
        values.email = "--output=/tmp/x"
        XCTAssertEqual(template.expand(values), .failure(.leadingDash(field: .email, argument: "--output=/tmp/x")))
        values = ada
        values.name = "-rf"
        XCTAssertEqual(template.expand(values), .failure(.leadingDash(field: .name, argument: "-rf")))
        values.name = "-"
        XCTAssertEqual(template.expand(values), .failure(.leadingDash(field: .name, argument: "-")))
        // The template's own dash is the template's choice; a dash after text is no option.
        let own = try CommandTemplate(arguments: ["p", "-{name}", "to=-{email}"])
        values = ada
        values.name = "-x"
        values.email = "-y"
        XCTAssertEqual(try own.expand(values).get(), ["p", "--x", "to=--y"])
        // Percent-encoding keeps '-', so the URI forms are checked too.
        let uri = try CommandTemplate(arguments: ["p", "{email:uri}"])
        values = ada
        values.email = "-e"
        XCTAssertEqual(uri.expand(values), .failure(.leadingDash(field: .emailURI, argument: "-e")))
    }

    func testANulIsRefused() throws {
        let template = try CommandTemplate(arguments: ["p", "x{name}"])
        var values = ada
        values.name = "a\u{0}b"
        XCTAssertEqual(template.expand(values), .failure(.nul(field: .name)))
        // Unused fields do not matter.
        values = ada
        values.email = "a\u{0}b"
        XCTAssertEqual(try template.expand(values).get(), ["p", "xAda Lovelace"])
    }

    /// Linux refuses to start a program with an argument over 128 KiB: refused before, clearly.
    func testAnArgumentLongerThanLinuxAllowsIsRefused() throws {
        let template = try CommandTemplate(arguments: ["p", "to={email}", "{name}"])
        var values = ada
        values.name = String(repeating: "x", count: CommandTemplate.maximumArgumentBytes)
        XCTAssertEqual(try template.expand(values).get().last?.utf8.count, CommandTemplate.maximumArgumentBytes)
        values.name += "x"
        XCTAssertEqual(template.expand(values), .failure(.tooLong(field: .name, bytes: CommandTemplate.maximumArgumentBytes + 1)))
        values = ada
        values.email = String(repeating: "x", count: 1 << 20)
        XCTAssertEqual(template.expand(values), .failure(.tooLong(field: .email, bytes: (1 << 20) + 3)))
    }

    func testPercentEncoding() {
        XCTAssertEqual(CommandTemplate.percentEncoded("Ada Lovelace"), "Ada%20Lovelace")
        XCTAssertEqual(CommandTemplate.percentEncoded("a+b@x.example?&=#/"), "a%2Bb@x.example%3F%26%3D%23%2F")
        XCTAssertEqual(CommandTemplate.percentEncoded("Schönberg"), "Sch%C3%B6nberg")
        XCTAssertEqual(CommandTemplate.percentEncoded("-._~"), "-._~")
    }

    /// Every command the documentation shows, each with values built against it: a field that
    /// must not leave its place in a URI (`'` and `,` against a quoted `to='…'`, `?`, `&`, `#`,
    /// `;` and `,` against a `mailto:` or `xmpp:` query, a line break against headers). Each value
    /// comes out percent-encoded, nothing but unreserved characters, `@` and `%XX`, and decodes
    /// back to itself.
    func testTheDocumentedCommandsKeepHostileFieldsInsideTheirURI() throws {
        let documented: [(template: [String], uriArgument: Int, prefix: String, suffix: String)] = [
            (["xdg-email", "mailto:{email:uri}"], 1, "mailto:", ""),
            (["xdg-open", "xmpp:{email:uri}?message"], 1, "xmpp:", "?message"),
            // DesktopFile=auto's default: the mail app's own Exec, its %u given `mailto:{email:uri}`.
            (try DesktopEntryExec.mailtoTemplate(exec: "thunderbird %u", icon: nil, name: nil, location: nil), 1, "mailto:", ""),
            (try DesktopEntryExec.mailtoTemplate(exec: "evolution --component=mail %U", icon: nil, name: nil, location: nil), 2, "mailto:", ""),
        ]
        let hostile = [
            "x',attachment='file:///home/u/.ssh/id_ed25519",
            "ada@example.org?cc=eve@evil.example&body=hi",
            "ada@example.org,eve@evil.example",
            "ada@example.org#frag",
            "ada@example.org\r\nBcc: eve@evil.example",
            "ada@example.org?message;type=chat",
            "\"a b\"@example.org",
            "%0Aada@example.org",
        ]
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~@%")
        for (arguments, index, prefix, suffix) in documented {
            let template = try CommandTemplate(arguments: arguments)
            for email in hostile {
                var values = ada
                values.email = email
                let argv = try template.expand(values).get()
                XCTAssertEqual(argv.count, arguments.count, "\(arguments): one argument per template argument")
                let uri = argv[index]
                XCTAssertTrue(uri.hasPrefix(prefix) && uri.hasSuffix(suffix), uri)
                let field = String(uri.dropFirst(prefix.count).dropLast(suffix.count))
                XCTAssertTrue(field.allSatisfy(allowed.contains), "\(arguments): \(field)")
                XCTAssertEqual(Self.percentDecoded(field), email, "\(arguments)")
            }
        }
    }

    static func percentDecoded(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%") {
                guard utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) else { return nil }
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
