#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Splits a Varlink byte stream into NUL-terminated messages. A value type with no I/O: the
/// server and the client feed it whatever bytes arrived and act on what it returns.
public struct VarlinkFrameDecoder: Sendable {
    /// What `nextFrame()` found in the bytes received so far.
    public enum Frame: Hashable, Sendable {
        /// One complete message, without its NUL terminator.
        case message([UInt8])
        /// No complete message is buffered yet.
        case needMoreData
        /// A message (complete or not) exceeds `maxMessageBytes`. The stream cannot be resynchronised
        /// cheaply and a peer sending that much is misbehaving, so the caller must reply and close.
        case tooLarge
    }

    /// What the server does next with the calls a peer sent.
    public enum CallAction: Hashable, Sendable {
        case call(VarlinkCall)
        case needMoreData
        /// Send this error reply, then close the connection.
        case replyErrorAndClose(VarlinkConnectionError)
    }

    /// The longest message accepted, in bytes, without its NUL terminator.
    public let maxMessageBytes: Int
    private var buffer: [UInt8] = []
    private var messageStart = 0
    // Where the NUL search resumes, so a message trickling in byte by byte is scanned once, not once per byte.
    private var scanPosition = 0
    private var failed = false

    /// A decoder that refuses messages longer than `maxMessageBytes` bytes (at least 1).
    public init(maxMessageBytes: Int) {
        self.maxMessageBytes = max(1, maxMessageBytes)
    }

    /// Bytes of a message whose terminator has not arrived yet.
    public var bufferedPartialBytes: Int { buffer.count - messageStart }

    /// Whether bytes of an unfinished message are buffered (a peer that closes now cut a message short).
    public var hasPartialMessage: Bool { bufferedPartialBytes > 0 }

    /// Buffers bytes as they arrived; ignored once a message was too large.
    public mutating func receive(_ bytes: some Sequence<UInt8>) {
        guard !failed else { return }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete message, `needMoreData`, or `tooLarge` (and from then on always `tooLarge`).
    public mutating func nextFrame() -> Frame {
        guard !failed else { return .tooLarge }
        if let terminator = buffer[scanPosition...].firstIndex(of: 0) {
            let message = Array(buffer[messageStart..<terminator])
            messageStart = terminator + 1
            scanPosition = messageStart
            compactIfWorthwhile()
            if message.count > maxMessageBytes { return fail() }
            return .message(message)
        }
        scanPosition = buffer.count
        if bufferedPartialBytes > maxMessageBytes { return fail() }
        compactIfWorthwhile()
        return .needMoreData
    }

    /// The next call, or what to do about a message that is not one.
    public mutating func nextCall() -> CallAction {
        switch nextFrame() {
        case .needMoreData:
            return .needMoreData
        case .tooLarge:
            return .replyErrorAndClose(.messageTooLarge(maxBytes: maxMessageBytes))
        case .message(let bytes):
            if let call = VarlinkCall.fastParse(bytes) { return .call(call) }
            do {
                return .call(try JSONDecoder().decode(VarlinkCall.self, from: Data(bytes)))
            } catch let error as DecodingError {
                failed = true
                return .replyErrorAndClose(.invalidMessage(reason: Self.reason(for: error)))
            } catch {
                failed = true
                return .replyErrorAndClose(.invalidMessage(reason: "\(error)"))
            }
        }
    }

    private mutating func fail() -> Frame {
        failed = true
        buffer = []
        messageStart = 0
        scanPosition = 0
        return .tooLarge
    }

    private mutating func compactIfWorthwhile() {
        if messageStart == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 65536)
            messageStart = 0
            scanPosition = 0
        } else if messageStart > 4096 && messageStart * 2 > buffer.count {
            buffer.removeFirst(messageStart)
            scanPosition -= messageStart
            messageStart = 0
        }
    }

    private static func reason(for error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, _):
            return "the message has no '\(key.stringValue)' field"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            let field = context.codingPath.map(\.stringValue).joined(separator: ".")
            return field.isEmpty ? "the message is not a JSON object" : "the field '\(field)' has the wrong type"
        case .dataCorrupted:
            return "the message is not valid JSON"
        @unknown default:
            return "the message is not a Varlink call"
        }
    }
}

extension VarlinkCall {
    /// The call as JSON followed by the NUL terminator.
    public func frameBytes() throws -> [UInt8] {
        var bytes = Array(try JSONEncoder().encode(self))
        bytes.append(0)
        return bytes
    }

    /// The frame of a plain call (no flags) whose parameters are already JSON text, written
    /// around them without encoding them again; nil when `method` holds anything but letters,
    /// digits and dots (a Varlink method name never does), which would need escaping.
    public static func frameBytes(method: String, encodedParameters: EncodedJSONObject) -> [UInt8]? {
        let name = Array(method.utf8)
        let plain = name.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."):
                return true
            default:
                return false
            }
        }
        guard plain, !name.isEmpty else { return nil }
        return Array(#"{"method":""#.utf8) + name + Array(#"","parameters":"#.utf8) + encodedParameters.bytes + [UInt8(ascii: "}"), 0]
    }
}

extension VarlinkReply {
    /// The reply as JSON followed by the NUL terminator.
    public func frameBytes() throws -> [UInt8] {
        Array(try framePieces().joined())
    }

    /// The frame in pieces whose concatenation is `frameBytes()`. Encoded parameters are one
    /// piece, passed through as they are (not copied), so a server copies a large reply
    /// once, straight into its output buffer.
    public func framePieces() throws -> [[UInt8]] {
        guard let encoded = encodedParameters else {
            var bytes = Array(try JSONEncoder().encode(self))
            bytes.append(0)
            return [bytes]
        }
        // The same object JSONEncoder writes for this reply: `parameters` first, then the flag.
        return [Self.parametersPrefix, encoded.bytes, continues ? Self.continuesSuffix : Self.finalSuffix]
    }

    private static let parametersPrefix = Array(#"{"parameters":"#.utf8)
    private static let continuesSuffix = Array(#","continues":true}"#.utf8) + [0]
    private static let finalSuffix = Array("}".utf8) + [0]
}
