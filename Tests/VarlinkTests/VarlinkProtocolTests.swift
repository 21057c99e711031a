import XCTest

@testable import Varlink

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

final class JSONValueTests: XCTestCase {
    func testParsesEveryKindAndKeepsIntegersExact() throws {
        let value = try JSONValue(jsonData: Data(#"{"a":null,"b":true,"c":9007199254740993,"d":1.5,"e":"x","f":[1,"y"]}"#.utf8))
        XCTAssertEqual(
            value,
            .object([
                "a": .null, "b": .bool(true), "c": .int(9_007_199_254_740_993), "d": .double(1.5), "e": .string("x"),
                "f": .array([.int(1), .string("y")]),
            ]))
    }

    func testPrintsCompactSortedJSON() {
        let value = JSONValue.object(["b": .int(1), "a": .string("a/b")])
        XCTAssertEqual(value.description, #"{"a":"a/b","b":1}"#)
    }

    private struct Position: Codable, Equatable {
        var position: Int
        var label: String?
    }

    func testEncodableRoundTrip() throws {
        let value = try JSONValue(encoding: Position(position: 3, label: "x"))
        XCTAssertEqual(value, .object(["position": .int(3), "label": .string("x")]))
        XCTAssertEqual(try value.decode(Position.self), Position(position: 3, label: "x"))
    }

    func testDecodingFailureNamesTheParameter() {
        XCTAssertThrowsError(try JSONValue.object(["position": .string("two")]).decode(Position.self)) { error in
            XCTAssertEqual((error as? JSONValueDecodingError)?.parameter, "position")
            XCTAssertEqual((error as? JSONValueDecodingError)?.varlinkError, .invalidParameter("position"))
        }
        XCTAssertThrowsError(try JSONValue.object([:]).decode(Position.self)) { error in
            XCTAssertEqual((error as? JSONValueDecodingError)?.parameter, "position")
            XCTAssertTrue("\(error)".contains("'position'"))
        }
    }

    func testNullDecodesAsEmptyParameters() throws {
        struct Empty: Decodable {}
        struct Optional: Decodable { var all: Bool? }
        XCTAssertNoThrow(try JSONValue.null.decode(Empty.self))
        XCTAssertNil(try JSONValue.null.decode(Optional.self).all)
    }
}

final class VarlinkMessageTests: XCTestCase {
    private func call(_ text: String) throws -> VarlinkCall {
        try JSONDecoder().decode(VarlinkCall.self, from: Data(text.utf8))
    }

    func testEmptyParametersMayBeOmittedNullOrEmpty() throws {
        for text in [
            #"{"method":"a.B"}"#, #"{"method":"a.B","parameters":null}"#, #"{"method":"a.B","parameters":{}}"#,
        ] {
            XCTAssertEqual(try call(text), VarlinkCall(method: "a.B"), text)
        }
    }

    func testFlagsAndNames() throws {
        let parsed = try call(#"{"method":"org.example.test.Watch","more":true,"oneway":false}"#)
        XCTAssertTrue(parsed.more)
        XCTAssertFalse(parsed.oneway)
        XCTAssertEqual(parsed.interfaceName, "org.example.test")
        XCTAssertEqual(parsed.memberName, "Watch")
        XCTAssertNil(VarlinkCall(method: "NoDot").interfaceName)
    }

    func testNonObjectParametersAreRejected() {
        XCTAssertThrowsError(try call(#"{"method":"a.B","parameters":[1]}"#))
    }

    func testCallEncodingWritesOnlySetFlags() throws {
        let bytes = try VarlinkCall(method: "a.B", more: true).frameBytes()
        XCTAssertEqual(bytes.last, 0)
        XCTAssertEqual(try JSONValue(jsonData: Data(bytes.dropLast())), .object(["method": .string("a.B"), "more": .bool(true)]))
    }

    func testReplyEncoding() throws {
        let error = try JSONValue(jsonData: Data(VarlinkReply(error: .methodNotFound("a.B")).frameBytes().dropLast()))
        XCTAssertEqual(
            error,
            .object([
                "error": .string("org.varlink.service.MethodNotFound"), "parameters": .object(["method": .string("a.B")]),
            ]))
        let streamed = try JSONValue(jsonData: Data(VarlinkReply(parameters: ["n": .int(1)], continues: true).frameBytes().dropLast()))
        XCTAssertEqual(streamed, .object(["parameters": .object(["n": .int(1)]), "continues": .bool(true)]))
    }

    func testPreEncodedParametersAreFramedAsTheyAreAndReadBackTheSame() throws {
        struct Row: Encodable { var name: String; var path: String; var position: Int }
        let encoded = try EncodedJSONObject(encoding: Row(name: "Zoë \"Z\"", path: "/a/b", position: 2))
        XCTAssertEqual(String(decoding: encoded.bytes, as: UTF8.self), #"{"name":"Zoë \"Z\"","path":"/a/b","position":2}"#)
        let final = VarlinkReply(encodedParameters: encoded)
        let frame = try final.frameBytes()
        XCTAssertEqual(frame.last, 0)
        XCTAssertEqual(Array(frame.dropLast()), Array(#"{"parameters":"#.utf8) + encoded.bytes + Array("}".utf8),
                       "the encoded bytes are passed through, not re-encoded")
        let expected: [String: JSONValue] = ["name": "Zoë \"Z\"", "path": "/a/b", "position": 2]
        XCTAssertEqual(try JSONValue(jsonData: Data(frame.dropLast())), .object(["parameters": .object(expected)]))
        XCTAssertEqual(final.parameters, expected)
        XCTAssertEqual(final, VarlinkReply(parameters: expected), "equal to the same parameters given as values")

        var streamed = VarlinkReply(encodedParameters: encoded, continues: true)
        XCTAssertEqual(try JSONValue(jsonData: Data(try streamed.frameBytes().dropLast())),
                       .object(["parameters": .object(expected), "continues": true]))
        streamed.continues = false
        XCTAssertEqual(try streamed.frameBytes(), frame)
        XCTAssertThrowsError(try EncodedJSONObject(encoding: [1, 2]), "parameters must be an object")
    }

    func testEverydayCallsParseFastToWhatJSONDecoderReadsAndTheRestIsLeftToIt() throws {
        let everyday = [
            #"{"method":"io.qactd.QuickActions.Status"}"#,
            #"{"method":"a.B","parameters":null,"more":true}"#,
            #" { "method" : "a.B" , "parameters" : { "all" : true, "limit" : -12, "language" : "fr_CA.UTF-8" } } "#,
            #"{"method":"a.B","parameters":{"s":"Zo\u00eb \"q\" \\ \/ \n\t","list":[1,[],{},null,false],"big":9223372036854775807},"oneway":false}"#,
            #"{"method":"a.B","parameters":{"emoji":"🙂","empty":""},"upgrade":true}"#,
        ]
        for text in everyday {
            let fast = try XCTUnwrap(VarlinkCall.fastParse(Array(text.utf8)), text)
            XCTAssertEqual(fast, try JSONDecoder().decode(VarlinkCall.self, from: Data(text.utf8)), text)
        }
        // Left to JSONDecoder: numbers with a fraction or exponent, surrogate pairs, duplicate
        // keys, integers beyond 64 bits, and anything malformed or not a call (it words the error).
        let leftOver = [
            #"{"method":"a.B","parameters":{"x":1.5}}"#, #"{"method":"a.B","parameters":{"x":1e3}}"#,
            #"{"method":"a.B","parameters":{"x":"\ud83d\ude42"}}"#, #"{"method":"a.B","method":"c.D"}"#,
            #"{"method":"a.B","parameters":{"x":92233720368547758070}}"#, #"{"method":"a.B","parameters":[1]}"#,
            #"{"method":"a.B","more":"yes"}"#, #"{"method":null}"#, #"{"parameters":{}}"#, #"{"method":"a.B""#,
            #"{"method":"a.B"} x"#, "[]", "", #"{"method":"a.B","parameters":{"x":01}}"#,
        ]
        for text in leftOver {
            XCTAssertNil(VarlinkCall.fastParse(Array(text.utf8)), text)
        }
        XCTAssertEqual(try call(#"{"method":"a.B","parameters":{"x":1.5}}"#).parameters["x"], .double(1.5), "the long way still reads it")
    }

    func testReplyDecodingToleratesMissingParameters() throws {
        let reply = try JSONDecoder().decode(VarlinkReply.self, from: Data(#"{"error":"org.varlink.service.PermissionDenied"}"#.utf8))
        XCTAssertEqual(reply.varlinkError, .permissionDenied)
        XCTAssertFalse(reply.continues)
    }

    func testDecodeParametersMapsToInvalidParameter() {
        struct Trigger: Decodable { var position: Int? }
        let call = VarlinkCall(method: "org.example.test.Trigger", parameters: ["position": .bool(true)])
        XCTAssertThrowsError(try call.decodeParameters(Trigger.self)) { error in
            XCTAssertEqual(error as? VarlinkError, .invalidParameter("position"))
        }
    }

    /// A number that is not an integer of the declared width names its parameter too (JSONDecoder
    /// reports such numbers with no coding path), as parsed from the wire.
    func testAHugeIntegerOrAFloatNamesItsParameter() throws {
        struct Trigger: Decodable {
            struct Where: Decodable { var position: Int? }
            var position: Int?
            var type: String?
            var at: Where?
            var count: Int32?
        }
        let cases = [
            (#"{"position":1.5}"#, "position"), (#"{"position":99999999999999999999}"#, "position"),
            (#"{"type":"x","position":-1e30}"#, "position"),
            (#"{"at":{"position":0.25}}"#, "at.position"), (#"{"count":4294967296}"#, "count"),
        ]
        for (parameters, name) in cases {
            let call = try JSONDecoder().decode(VarlinkCall.self, from: Data(#"{"method":"org.example.test.Trigger","parameters":\#(parameters)}"#.utf8))
            XCTAssertThrowsError(try call.decodeParameters(Trigger.self), parameters) { error in
                XCTAssertEqual(error as? VarlinkError, .invalidParameter(name), parameters)
            }
        }
        // Whole numbers written as floats are integers still.
        let whole = try JSONDecoder().decode(VarlinkCall.self, from: Data(#"{"method":"org.example.test.Trigger","parameters":{"position":2.0}}"#.utf8))
        XCTAssertEqual(try whole.decodeParameters(Trigger.self).position, 2)
    }
}

final class VarlinkConnectionErrorTests: XCTestCase {
    func testNamedInTheDeclaringInterfaceWithTheirParameters() {
        XCTAssertEqual(
            VarlinkConnectionError.invalidMessage(reason: "r").varlinkError(in: "org.example.test"),
            VarlinkError(name: "org.example.test.InvalidMessage", parameters: ["reason": "r"]))
        XCTAssertEqual(
            VarlinkConnectionError.messageTooLarge(maxBytes: 8).varlinkError(in: "org.example.test"),
            VarlinkError(name: "org.example.test.MessageTooLarge", parameters: ["maxBytes": .int(8)]))
        XCTAssertEqual(
            VarlinkConnectionError.tooManyConnections(maxConnections: 2).varlinkError(in: "org.example.test"),
            VarlinkError(name: "org.example.test.TooManyConnections", parameters: ["maxConnections": .int(2)]))
        XCTAssertEqual(
            VarlinkConnectionError.internalError(message: "m").varlinkError(in: "org.example.test"),
            VarlinkError(name: "org.example.test.InternalError", parameters: ["message": "m"]))
    }

    func testDeclarationsNameEveryError() {
        let errors: [VarlinkConnectionError] = [
            .invalidMessage(reason: ""), .messageTooLarge(maxBytes: 0), .tooManyConnections(maxConnections: 0),
            .internalError(message: ""),
        ]
        let declared = VarlinkConnectionError.declarations.map { $0.split(separator: " ")[1] }
        XCTAssertEqual(declared, errors.map { $0.varlinkError(in: "x").name.dropFirst(2) })
    }
}

final class VarlinkFrameDecoderTests: XCTestCase {
    func testSplitsFramesAcrossAndWithinChunks() {
        var decoder = VarlinkFrameDecoder(maxMessageBytes: 100)
        decoder.receive(Array("{\"a\":1}\0{\"b\"".utf8))
        XCTAssertEqual(decoder.nextFrame(), .message(Array("{\"a\":1}".utf8)))
        XCTAssertEqual(decoder.nextFrame(), .needMoreData)
        XCTAssertTrue(decoder.hasPartialMessage)
        decoder.receive(Array(":2}\0".utf8))
        XCTAssertEqual(decoder.nextFrame(), .message(Array("{\"b\":2}".utf8)))
        XCTAssertEqual(decoder.nextFrame(), .needMoreData)
        XCTAssertFalse(decoder.hasPartialMessage)
    }

    func testByteByByteDelivery() {
        var decoder = VarlinkFrameDecoder(maxMessageBytes: 100)
        var frames: [[UInt8]] = []
        for byte in Array("{}\0[]\0".utf8) {
            decoder.receive([byte])
            while case .message(let frame) = decoder.nextFrame() { frames.append(frame) }
        }
        XCTAssertEqual(frames, [Array("{}".utf8), Array("[]".utf8)])
    }

    func testPartialMessageOverTheLimitFailsForGood() {
        var decoder = VarlinkFrameDecoder(maxMessageBytes: 8)
        decoder.receive(Array("123456789".utf8))
        XCTAssertEqual(decoder.nextCall(), .replyErrorAndClose(.messageTooLarge(maxBytes: 8)))
        decoder.receive(Array("{}\0".utf8))
        XCTAssertEqual(decoder.nextFrame(), .tooLarge)
    }

    func testCompleteMessageOverTheLimitFails() {
        var decoder = VarlinkFrameDecoder(maxMessageBytes: 4)
        decoder.receive(Array("123456\0".utf8))
        XCTAssertEqual(decoder.nextFrame(), .tooLarge)
    }

    func testMessageExactlyAtTheLimitPasses() {
        var decoder = VarlinkFrameDecoder(maxMessageBytes: 4)
        decoder.receive(Array("1234".utf8))
        XCTAssertEqual(decoder.nextFrame(), .needMoreData)
        decoder.receive([0])
        XCTAssertEqual(decoder.nextFrame(), .message(Array("1234".utf8)))
    }

    func testMalformedMessagesAskToReplyAndClose() {
        let cases: [(String, String)] = [
            ("{not json", "the message is not valid JSON"),
            (#"{"parameters":{}}"#, "the message has no 'method' field"),
            (#"{"method":5}"#, "the field 'method' has the wrong type"),
            ("[1,2]", "the message is not a JSON object"),
        ]
        for (text, reason) in cases {
            var decoder = VarlinkFrameDecoder(maxMessageBytes: 100)
            decoder.receive(Array(text.utf8) + [0] + Array(#"{"method":"a.B"}"#.utf8) + [0])
            XCTAssertEqual(decoder.nextCall(), .replyErrorAndClose(.invalidMessage(reason: reason)), text)
        }
    }

    func testPipelinedCallsComeOutInOrder() throws {
        var decoder = VarlinkFrameDecoder(maxMessageBytes: 1000)
        var bytes: [UInt8] = []
        for index in 0..<50 {
            bytes += try VarlinkCall(method: "a.M\(index)").frameBytes()
        }
        decoder.receive(bytes)
        for index in 0..<50 {
            XCTAssertEqual(decoder.nextCall(), .call(VarlinkCall(method: "a.M\(index)")))
        }
        XCTAssertEqual(decoder.nextCall(), .needMoreData)
    }
}

final class VarlinkServiceDispatcherTests: XCTestCase {
    /// An interface of the tests' own: the dispatcher knows none but org.varlink.service.
    /// (QuickActionsProtocolTests route org.example.test through it too.)
    static let testInterface = VarlinkServiceInfo.Interface(
        name: "org.example.test",
        description: """
            interface org.example.test
            method Status() -> (version: string)
            method List(limit: ?int) -> (limit: int)
            method Watch() -> (generation: int)
            error Failed (message: string)
            """)

    private let dispatcher = VarlinkServiceDispatcher(
        info: VarlinkServiceInfo(
            vendor: "testd", product: "testd", version: "1.0", url: "https://example.invalid",
            interfaces: [testInterface]))

    func testGetInfoListsTheServiceInterfaceFirst() {
        XCTAssertEqual(
            dispatcher.route(VarlinkCall(method: "org.varlink.service.GetInfo")),
            .reply(
                VarlinkReply(parameters: [
                    "vendor": "testd", "product": "testd", "version": "1.0", "url": "https://example.invalid",
                    "interfaces": .array(["org.varlink.service", "org.example.test"]),
                ])))
    }

    func testGetInterfaceDescription() {
        let route = dispatcher.route(
            VarlinkCall(
                method: "org.varlink.service.GetInterfaceDescription", parameters: ["interface": "org.example.test"]))
        XCTAssertEqual(route, .reply(VarlinkReply(parameters: ["description": .string(Self.testInterface.description)])))
        XCTAssertEqual(
            dispatcher.route(
                VarlinkCall(method: "org.varlink.service.GetInterfaceDescription", parameters: ["interface": "org.example"])),
            .reply(VarlinkReply(error: .interfaceNotFound("org.example"))))
        XCTAssertEqual(
            dispatcher.route(VarlinkCall(method: "org.varlink.service.GetInterfaceDescription")),
            .reply(VarlinkReply(error: .invalidParameter("interface"))))
    }

    func testUnknownInterfaceAndMethod() {
        XCTAssertEqual(
            dispatcher.route(VarlinkCall(method: "org.example.Ping")),
            .reply(VarlinkReply(error: .interfaceNotFound("org.example"))))
        XCTAssertEqual(
            dispatcher.route(VarlinkCall(method: "Ping")), .reply(VarlinkReply(error: .interfaceNotFound("Ping"))))
        XCTAssertEqual(
            dispatcher.route(VarlinkCall(method: "org.example.test.Explode")),
            .reply(VarlinkReply(error: .methodNotFound("org.example.test.Explode"))))
        XCTAssertEqual(
            dispatcher.route(VarlinkCall(method: "org.varlink.service.Explode")),
            .reply(VarlinkReply(error: .methodNotFound("org.varlink.service.Explode"))))
    }

    func testDeclaredMethodsAreRoutedToTheInterface() {
        XCTAssertEqual(Self.testInterface.methodNames, ["Status", "List", "Watch"])
        for method in ["Status", "List", "Watch"] {
            XCTAssertEqual(dispatcher.route(VarlinkCall(method: "org.example.test.\(method)")), .interface("org.example.test"))
        }
    }

    func testMethodNamesAreReadFromTheDescription() {
        XCTAssertEqual(
            VarlinkServiceInfo.Interface(name: VarlinkServiceInterface.name, description: VarlinkServiceInterface.description)
                .methodNames,
            ["GetInfo", "GetInterfaceDescription"])
    }
}
