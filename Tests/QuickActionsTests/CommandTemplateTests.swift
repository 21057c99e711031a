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
}
