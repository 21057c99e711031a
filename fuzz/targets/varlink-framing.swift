import Varlink

/// libFuzzer entry: any bytes as what a peer sends on the socket, fed in two pieces to the
/// frame decoder as the server does, then every call's parameters decoded as a typed struct.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    struct Parameters: Decodable {
        var position: Int?
        var type: String?
        var all: Bool?
        var limit: Int32?
    }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var decoder = VarlinkFrameDecoder(maxMessageBytes: 4096)
    let split = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
    for piece in [bytes[..<split], bytes[split...]] {
        decoder.receive(piece)
        while case .call(let call) = decoder.nextCall() {
            _ = try? call.decodeParameters(Parameters.self)
        }
    }
    return 0
}
