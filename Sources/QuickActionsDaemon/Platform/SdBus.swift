import CSdBus
import SystemCalls

import Glibc

// The few pieces of sd-bus the quicklist, the notifications and the user manager's commands need, in Swift: checked calls, and writing and reading
// message bodies one value at a time through the non-variadic API (Swift cannot call
// `sd_bus_message_append` or `sd_bus_message_read`). Everything here runs on the bus thread.

/// A failed sd-bus call: sd-bus returns `-errno`.
struct SdBusError: Error, CustomStringConvertible, Equatable {
    let call: String
    let errno: Int32

    var description: String { "\(call) failed: \(errnoText(errno))" }
}

/// Returns a non-negative sd-bus result, or throws the error a negative one stands for.
@discardableResult
func sdBusChecked(_ call: String, _ result: Int32) throws(SdBusError) -> Int32 {
    guard result >= 0 else { throw SdBusError(call: call, errno: -result) }
    return result
}

/// A connection to the bus or peer at `address` (a D-Bus address), started. `busClient` for a
/// bus daemon (the session bus), which is greeted and gives a unique name; not for a peer that is
/// no bus, such as the user manager's private socket.
func sdBusOpen(address: String, busClient: Bool) throws(SdBusError) -> OpaquePointer {
    var created: OpaquePointer?
    try sdBusChecked("sd_bus_new", sd_bus_new(&created))
    guard let bus = created else { throw SdBusError(call: "sd_bus_new", errno: ENOMEM) }
    do {
        try sdBusChecked("sd_bus_set_address", address.withCString { sd_bus_set_address(bus, $0) })
        if busClient { try sdBusChecked("sd_bus_set_bus_client", sd_bus_set_bus_client(bus, 1)) }
        try sdBusChecked("sd_bus_start", sd_bus_start(bus))
    } catch {
        sd_bus_flush_close_unref(bus)
        throw error
    }
    return bus
}

/// How long `poll` may sleep on `bus` before sd-bus has a deadline of its own to handle (a
/// call's timeout, the authentication); nil when it has none.
func sdBusPollTimeoutMilliseconds(_ bus: OpaquePointer) -> Int32? {
    var deadline: UInt64 = 0
    guard sd_bus_get_timeout(bus, &deadline) >= 0, deadline != UInt64.max else { return nil }
    let nowMicroseconds = monotonicMicroseconds()
    return deadline <= nowMicroseconds ? 0 : Int32(clamping: (deadline - nowMicroseconds + 999) / 1000)
}

/// Calls `member` of `interface` on `destination`'s object at `path` with the arguments `fill`
/// appends, waits at most `timeoutMicroseconds` for the reply and hands it to `read`. A D-Bus
/// error reply throws with its name and message as the call.
func sdBusCall<Value>(
    _ bus: OpaquePointer, destination: String, path: String, interface: String, member: String, timeoutMicroseconds: UInt64,
    _ fill: (SdBusMessageWriter) throws(SdBusError) -> Void, read: (SdBusMessageReader) throws(SdBusError) -> Value
) throws(SdBusError) -> Value {
    var created: OpaquePointer?
    try sdBusChecked("sd_bus_message_new_method_call", sd_bus_message_new_method_call(bus, &created, destination, path, interface, member))
    guard let call = created else { throw SdBusError(call: "sd_bus_message_new_method_call", errno: ENOMEM) }
    defer { sd_bus_message_unref(call) }
    try fill(SdBusMessageWriter(message: call))
    var error = sd_bus_error()
    defer { sd_bus_error_free(&error) }
    var reply: OpaquePointer?
    let result = sd_bus_call(bus, call, timeoutMicroseconds, &error, &reply)
    defer { sd_bus_message_unref(reply) }
    guard result >= 0, let reply else {
        let said = [error.name, error.message].compactMap { $0.map { String(cString: $0) } }.joined(separator: ": ")
        throw SdBusError(call: said.isEmpty ? "sd_bus_call" : said, errno: -result)
    }
    return try read(SdBusMessageReader(message: reply))
}

/// The D-Bus type codes used here, as sd-bus takes them (`char`).
enum DBusType {
    static let byte = code("y")
    static let string = code("s"), int32 = code("i"), uint32 = code("u"), boolean = code("b")
    static let array = code("a"), structure = code("r"), dictionaryEntry = code("e"), variant = code("v")
    static let double = code("d")

    private static func code(_ letter: Unicode.Scalar) -> CChar { CChar(UInt8(ascii: letter)) }
}

/// A value inside a variant (`v`): the kinds dbusmenu properties and LauncherEntry use.
enum DBusVariantValue: Equatable {
    case string(String)
    case boolean(Bool)
    case byte(UInt8)
    case strings([String])
    case bytes([UInt8])

    var signature: String {
        switch self {
        case .string: "s"
        case .boolean: "b"
        case .byte: "y"
        case .strings: "as"
        case .bytes: "ay"
        }
    }
}

/// Appends values to a message being built (a method return or a signal), in signature order.
struct SdBusMessageWriter {
    let message: OpaquePointer

    func append(_ value: String) throws(SdBusError) {
        try sdBusChecked("sd_bus_message_append_basic", value.withCString { sd_bus_message_append_basic(message, DBusType.string, $0) })
    }

    func append(_ value: Int32) throws(SdBusError) {
        var value = value
        try sdBusChecked("sd_bus_message_append_basic", sd_bus_message_append_basic(message, DBusType.int32, &value))
    }

    func append(_ value: UInt8) throws(SdBusError) {
        var value = value
        try sdBusChecked("sd_bus_message_append_basic", sd_bus_message_append_basic(message, DBusType.byte, &value))
    }

    func append(_ value: UInt32) throws(SdBusError) {
        var value = value
        try sdBusChecked("sd_bus_message_append_basic", sd_bus_message_append_basic(message, DBusType.uint32, &value))
    }

    func append(_ value: Bool) throws(SdBusError) {
        // D-Bus booleans travel as a C int.
        var value: Int32 = value ? 1 : 0
        try sdBusChecked("sd_bus_message_append_basic", sd_bus_message_append_basic(message, DBusType.boolean, &value))
    }

    /// Opens a container (`a`, `r`, `e` or `v`) whose contents have `signature`, fills it, closes it.
    func container(_ type: CChar, _ signature: String, _ fill: () throws(SdBusError) -> Void) throws(SdBusError) {
        try sdBusChecked("sd_bus_message_open_container", signature.withCString { sd_bus_message_open_container(message, type, $0) })
        try fill()
        try sdBusChecked("sd_bus_message_close_container", sd_bus_message_close_container(message))
    }

    func append(variant value: DBusVariantValue) throws(SdBusError) {
        try container(DBusType.variant, value.signature) { () throws(SdBusError) in
            switch value {
            case .string(let text): try append(text)
            case .boolean(let flag): try append(flag)
            case .byte(let number): try append(number)
            case .strings(let texts):
                try container(DBusType.array, "s") { () throws(SdBusError) in
                    for text in texts { try append(text) }
                }
            case .bytes(let bytes): try append(bytes: bytes)
            }
        }
    }

    /// An `ay` array, copied in one call rather than a byte at a time.
    func append(bytes: [UInt8]) throws(SdBusError) {
        let result = bytes.withUnsafeBytes { sd_bus_message_append_array(message, DBusType.byte, $0.baseAddress, $0.count) }
        try sdBusChecked("sd_bus_message_append_array", result)
    }

    /// An `a{sv}` dictionary, in the order given.
    func append(dictionary entries: [(key: String, value: DBusVariantValue)]) throws(SdBusError) {
        try container(DBusType.array, "{sv}") { () throws(SdBusError) in
            for entry in entries {
                try container(DBusType.dictionaryEntry, "sv") { () throws(SdBusError) in
                    try append(entry.key)
                    try append(variant: entry.value)
                }
            }
        }
    }
}

/// Reads a received message's body one value at a time, in signature order.
struct SdBusMessageReader {
    let message: OpaquePointer

    func readString() throws(SdBusError) -> String {
        var text: UnsafePointer<CChar>?
        try readBasic(DBusType.string, &text)
        return text.map { String(cString: $0) } ?? ""
    }

    func readInt32() throws(SdBusError) -> Int32 {
        var value: Int32 = 0
        try readBasic(DBusType.int32, &value)
        return value
    }

    func readUInt32() throws(SdBusError) -> UInt32 {
        var value: UInt32 = 0
        try readBasic(DBusType.uint32, &value)
        return value
    }

    func readDouble() throws(SdBusError) -> Double {
        var value: Double = 0
        try readBasic(DBusType.double, &value)
        return value
    }

    /// Skips the next complete values of `signature` (a variant whose contents do not matter).
    func skip(_ signature: String) throws(SdBusError) {
        try sdBusChecked("sd_bus_message_skip", signature.withCString { sd_bus_message_skip(message, $0) })
    }

    func readStrings() throws(SdBusError) -> [String] {
        try readArray(of: "s") { () throws(SdBusError) in try readString() }
    }

    func readInt32s() throws(SdBusError) -> [Int32] {
        try readArray(of: "i") { () throws(SdBusError) in try readInt32() }
    }

    /// Reads an array whose elements have `signature`, one `readElement` call each.
    func readArray<Element>(of signature: String, _ readElement: () throws(SdBusError) -> Element) throws(SdBusError) -> [Element] {
        try inside(DBusType.array, signature) { () throws(SdBusError) in
            var elements: [Element] = []
            while try sdBusChecked("sd_bus_message_at_end", sd_bus_message_at_end(message, 0)) == 0 {
                elements.append(try readElement())
            }
            return elements
        }
    }

    /// Enters a struct (`r`) with `signature`, reads it, leaves it.
    func readStruct<Value>(_ signature: String, _ read: () throws(SdBusError) -> Value) throws(SdBusError) -> Value {
        try inside(DBusType.structure, signature, read)
    }

    /// Enters a variant holding `signature`, reads it, leaves it.
    func readVariant<Value>(_ signature: String, _ read: (SdBusMessageReader) throws(SdBusError) -> Value) throws(SdBusError) -> Value {
        try inside(DBusType.variant, signature) { () throws(SdBusError) in try read(self) }
    }

    /// Reads a dictionary (`a{s…}`, `entry` its entries' signature; `asStructs`: an array of
    /// structs, `a(s…)`, as systemd writes properties): for each entry its key, then `readValue`,
    /// which must read or skip the value.
    func readArray(
        ofEntries entry: String, asStructs: Bool = false, _ readValue: (SdBusMessageReader, String) throws(SdBusError) -> Void
    ) throws(SdBusError) {
        _ = try readArray(of: asStructs ? "(\(entry))" : "{\(entry)}") { () throws(SdBusError) in
            try inside(asStructs ? DBusType.structure : DBusType.dictionaryEntry, entry) { () throws(SdBusError) in
                try readValue(self, try readString())
            }
        }
    }

    /// Enters a container (`a`, `r`, `e` or `v`) whose contents have `signature`, reads it, leaves it.
    private func inside<Value>(_ type: CChar, _ signature: String, _ read: () throws(SdBusError) -> Value) throws(SdBusError) -> Value {
        try sdBusChecked("sd_bus_message_enter_container", signature.withCString { sd_bus_message_enter_container(message, type, $0) })
        let value = try read()
        try sdBusChecked("sd_bus_message_exit_container", sd_bus_message_exit_container(message))
        return value
    }

    private func readBasic<Value>(_ type: CChar, _ value: inout Value) throws(SdBusError) {
        let read = withUnsafeMutablePointer(to: &value) { sd_bus_message_read_basic(message, type, $0) }
        // 0 means the body ended early: the caller's signature was wrong, which sd-bus already refuses.
        guard try sdBusChecked("sd_bus_message_read_basic", read) > 0 else { throw SdBusError(call: "sd_bus_message_read_basic", errno: EBADMSG) }
    }
}
