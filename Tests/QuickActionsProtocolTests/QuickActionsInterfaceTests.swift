import Contacts
import Foundation
import QuickActions
import QuickActionsProtocol
import Varlink
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
        guard Self.runPython(["-c", "import varlink"]).status == 0 else {
            throw XCTSkip("the Python varlink package is not installed (pip install varlink)")
        }
        let parse = Self.runPython([
            "-c", "import sys, varlink; i = varlink.Interface(sys.stdin.read()); print(i.name)",
        ], input: QuickActionsInterface.description)
        XCTAssertEqual(parse.status, 0, parse.output)
        XCTAssertEqual(parse.output.trimmingCharacters(in: .whitespacesAndNewlines), "io.qactd.QuickActions")
    }

    private static func runPython(_ arguments: [String], input: String? = nil) -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let output = Pipe()
        let stdin = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = stdin
        do { try process.run() } catch { return (127, "\(error)") }
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try? stdin.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
