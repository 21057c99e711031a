#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A method call as it travels on the wire.
public struct VarlinkCall: Hashable, Sendable {
    /// Fully qualified: `interface.Method`.
    public var method: String
    /// Always an object; omitted and `null` parameters on the wire both become `[:]`.
    public var parameters: [String: JSONValue]
    /// The caller accepts several replies: each but the last has `continues` set.
    public var more: Bool
    /// The caller wants no reply at all.
    public var oneway: Bool
    /// The connection switches to another protocol after the reply.
    public var upgrade: Bool

    /// A call of `method` (`interface.Method`) with its parameters and flags.
    public init(
        method: String, parameters: [String: JSONValue] = [:], more: Bool = false, oneway: Bool = false,
        upgrade: Bool = false
    ) {
        self.method = method
        self.parameters = parameters
        self.more = more
        self.oneway = oneway
        self.upgrade = upgrade
    }

    /// The part before the last dot (`org.varlink.service`), or `nil` if the name has no dot.
    public var interfaceName: String? {
        guard let dot = method.lastIndex(of: ".") else { return nil }
        return String(method[..<dot])
    }

    /// The part after the last dot (`GetInfo`).
    public var memberName: String {
        guard let dot = method.lastIndex(of: ".") else { return method }
        return String(method[method.index(after: dot)...])
    }

    /// Decodes the parameters into a typed struct, or fails with the
    /// `org.varlink.service.InvalidParameter` error naming the parameter.
    public func decodeParameters<Parameters: Decodable>(
        _ type: Parameters.Type = Parameters.self
    ) throws(VarlinkError) -> Parameters {
        do {
            return try JSONValue.object(parameters).decode(Parameters.self)
        } catch {
            throw error.varlinkError
        }
    }
}

extension VarlinkCall: Codable {
    private enum CodingKeys: String, CodingKey {
        case method, parameters, more, oneway, upgrade
    }

    /// Decodes a call; omitted flags are false and omitted or `null` parameters are `[:]`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        method = try container.decode(String.self, forKey: .method)
        parameters = try container.decodeParametersObject(forKey: .parameters)
        more = try container.decodeIfPresent(Bool.self, forKey: .more) ?? false
        oneway = try container.decodeIfPresent(Bool.self, forKey: .oneway) ?? false
        upgrade = try container.decodeIfPresent(Bool.self, forKey: .upgrade) ?? false
    }

    /// Encodes the call, writing parameters only when there are any and flags only when set.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(method, forKey: .method)
        if !parameters.isEmpty { try container.encode(parameters, forKey: .parameters) }
        // Flags are written only when set: that is what every reference implementation sends.
        if more { try container.encode(true, forKey: .more) }
        if oneway { try container.encode(true, forKey: .oneway) }
        if upgrade { try container.encode(true, forKey: .upgrade) }
    }
}

/// The JSON text of an object, encoded once: a reply's parameters that a service hands to the
/// server as bytes, so the server frames them without decoding or encoding them again, and
/// many replies (every caller of an unchanged listing, every watcher of it) share one copy.
public struct EncodedJSONObject: Hashable, Sendable {
    /// The object's compact JSON text, without a terminator.
    public let bytes: [UInt8]

    /// Compact JSON with sorted keys, the form `JSONValue` writes too.
    public init(encoding value: some Encodable) throws {
        let bytes = Array(try JSONValue.encoder.encode(value))
        guard bytes.first == UInt8(ascii: "{") else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: [], debugDescription: "Reply parameters must encode as a JSON object."))
        }
        self.bytes = bytes
    }

    /// Encodes a value tree; throws when it cannot be encoded as JSON.
    public init(_ object: [String: JSONValue]) throws {
        try self.init(encoding: JSONValue.object(object))
    }

    /// The object as a value tree (what a test or a slow path reads).
    public func decoded() throws -> [String: JSONValue] {
        guard case .object(let object) = try JSONValue(jsonData: Data(bytes)) else { return [:] }
        return object
    }
}

/// A reply as it travels on the wire: parameters, or an error name with its parameters.
public struct VarlinkReply: Hashable, Sendable {
    /// The parameters as a value tree, or as JSON text encoded once by the service.
    private enum Body: Sendable {
        case values([String: JSONValue])
        case encoded(EncodedJSONObject)
    }

    private var body: Body
    /// `true` on every reply of a `more` call except the last.
    public var continues: Bool
    /// The fully qualified error name, when the reply is an error.
    public var error: String?

    /// A reply carrying `parameters`, or an error reply when `error` names one.
    public init(parameters: [String: JSONValue] = [:], continues: Bool = false, error: String? = nil) {
        self.body = .values(parameters)
        self.continues = continues
        self.error = error
    }

    /// A reply whose parameters were encoded beforehand (and may be shared among replies).
    public init(encodedParameters: EncodedJSONObject, continues: Bool = false) {
        self.body = .encoded(encodedParameters)
        self.continues = continues
        self.error = nil
    }

    /// The error reply for `error` (never continues).
    public init(error: VarlinkError) {
        self.init(parameters: error.parameters, continues: false, error: error.name)
    }

    /// A reply whose parameters are the encoded form of a wire struct, encoded once.
    public init(encoding value: some Encodable, continues: Bool = false) throws {
        self.init(encodedParameters: try EncodedJSONObject(encoding: value), continues: continues)
    }

    /// The parameters as a value tree; for encoded parameters this decodes them (tests and
    /// clients read it; the server never does).
    public var parameters: [String: JSONValue] {
        get {
            switch body {
            case .values(let values): return values
            case .encoded(let encoded): return (try? encoded.decoded()) ?? [:]
            }
        }
        set { body = .values(newValue) }
    }

    /// The parameters' JSON text when they were encoded beforehand.
    public var encodedParameters: EncodedJSONObject? {
        if case .encoded(let encoded) = body { return encoded }
        return nil
    }

    /// The error carried by this reply, if it is one.
    public var varlinkError: VarlinkError? {
        error.map { VarlinkError(name: $0, parameters: parameters) }
    }

    /// Equal when the flags, the error name and the parameters as value trees are equal, however they were encoded.
    public static func == (lhs: VarlinkReply, rhs: VarlinkReply) -> Bool {
        lhs.continues == rhs.continues && lhs.error == rhs.error && lhs.parameters == rhs.parameters
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(continues)
        hasher.combine(error)
        hasher.combine(parameters)
    }
}

extension VarlinkReply: Codable {
    private enum CodingKeys: String, CodingKey {
        case parameters, continues, error
    }

    /// Decodes a reply; an omitted `continues` is false and omitted parameters are `[:]`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        body = .values(try container.decodeParametersObject(forKey: .parameters))
        continues = try container.decodeIfPresent(Bool.self, forKey: .continues) ?? false
        error = try container.decodeIfPresent(String.self, forKey: .error)
    }

    /// Encodes the reply, always with a `parameters` object.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        // Always send an object: some clients index `parameters` without checking it exists.
        try container.encode(parameters, forKey: .parameters)
        if continues { try container.encode(true, forKey: .continues) }
        try container.encodeIfPresent(error, forKey: .error)
    }
}

/// A Varlink error: a stable, fully qualified name plus parameters. Services throw these and
/// the server turns them into error replies; the client surfaces them as `.remote`.
public struct VarlinkError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The fully qualified error name (`org.varlink.service.InvalidParameter`).
    public var name: String
    /// The error's parameters, as the interface declares them.
    public var parameters: [String: JSONValue]

    /// An error named `name` with its parameters.
    public init(name: String, parameters: [String: JSONValue] = [:]) {
        self.name = name
        self.parameters = parameters
    }

    /// `org.varlink.service.InterfaceNotFound` naming the interface.
    public static func interfaceNotFound(_ interface: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.InterfaceNotFound", parameters: ["interface": .string(interface)])
    }

    /// `org.varlink.service.MethodNotFound` naming the method.
    public static func methodNotFound(_ method: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.MethodNotFound", parameters: ["method": .string(method)])
    }

    /// `org.varlink.service.MethodNotImplemented` naming the method.
    public static func methodNotImplemented(_ method: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.MethodNotImplemented", parameters: ["method": .string(method)])
    }

    /// `org.varlink.service.InvalidParameter` naming the parameter.
    public static func invalidParameter(_ parameter: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.InvalidParameter", parameters: ["parameter": .string(parameter)])
    }

    /// `org.varlink.service.PermissionDenied`: the service does not serve this peer.
    public static let permissionDenied = VarlinkError(name: "org.varlink.service.PermissionDenied")

    /// `org.varlink.service.ExpectedMore`: the method must be called with `more`.
    public static let expectedMore = VarlinkError(name: "org.varlink.service.ExpectedMore")

    /// One sentence with the error's name and, when there are any, its parameters as JSON.
    public var description: String {
        if parameters.isEmpty { return "The service replied with the error '\(name)'." }
        return "The service replied with the error '\(name)' \(JSONValue.object(parameters))."
    }
}

/// What goes wrong with a connection rather than with one method. `org.varlink.service` has no
/// names for these, so a service declares them as errors of one of its own interfaces (the lines
/// in `declarations`) and its server names them there (`varlinkError(in:)`).
public enum VarlinkConnectionError: Hashable, Sendable {
    /// The peer sent bytes that are not a Varlink call; the connection is closed after this reply
    /// because the server can no longer tell which replies the peer expects.
    case invalidMessage(reason: String)
    /// A message exceeded the size limit; the connection is closed after this reply.
    case messageTooLarge(maxBytes: Int)
    /// The server is at its connection limit; the connection is closed after this reply.
    case tooManyConnections(maxConnections: Int)
    /// A handler failed in a way that has no better name.
    case internalError(message: String)

    /// The IDL lines the declaring interface must contain, so clients can look the errors up.
    public static let declarations = [
        "error InvalidMessage (reason: string)",
        "error MessageTooLarge (maxBytes: int)",
        "error TooManyConnections (maxConnections: int)",
        "error InternalError (message: string)",
    ]

    /// The error, named in `interface` (`<interface>.InvalidMessage`, …), with its parameters.
    public func varlinkError(in interface: String) -> VarlinkError {
        switch self {
        case .invalidMessage(let reason):
            VarlinkError(name: "\(interface).InvalidMessage", parameters: ["reason": .string(reason)])
        case .messageTooLarge(let maxBytes):
            VarlinkError(name: "\(interface).MessageTooLarge", parameters: ["maxBytes": .int(Int64(maxBytes))])
        case .tooManyConnections(let maxConnections):
            VarlinkError(name: "\(interface).TooManyConnections", parameters: ["maxConnections": .int(Int64(maxConnections))])
        case .internalError(let message):
            VarlinkError(name: "\(interface).InternalError", parameters: ["message": .string(message)])
        }
    }
}

extension KeyedDecodingContainer {
    /// Varlink lets empty parameters arrive omitted, `null` or `{}`; anything but an object is malformed.
    func decodeParametersObject(forKey key: Key) throws -> [String: JSONValue] {
        switch try decodeIfPresent(JSONValue.self, forKey: key) ?? .null {
        case .null: return [:]
        case .object(let object): return object
        default:
            throw DecodingError.typeMismatch(
                [String: JSONValue].self,
                .init(codingPath: codingPath + [key], debugDescription: "'\(key.stringValue)' must be an object."))
        }
    }
}
