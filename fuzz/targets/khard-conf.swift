/// libFuzzer entry: any bytes as khard's configuration file (decoded as UTF-8 the way the khard
/// engine reads it). Compiled into one module with KhardConfiguration.swift, which is internal to
/// the daemon, and the INI parser's text helpers it uses.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    _ = try? KhardConfiguration.parse(text, environment: ["HOME": "/home/fuzz", "A": "/a", "EMPTY": ""])
    return 0
}
