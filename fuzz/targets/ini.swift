/// libFuzzer entry: any bytes as a configuration file (decoded as UTF-8 the way the loader
/// reads it). Compiled into one module with INIParser.swift, which is internal to the daemon.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    _ = try? INIParser.parse(text, file: "fuzz.conf")
    return 0
}
