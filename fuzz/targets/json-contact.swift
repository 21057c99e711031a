import Contacts

/// libFuzzer entry: any bytes as a JSON contact file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    _ = try? JSONContactParser.parse(Array(UnsafeBufferPointer(start: data, count: size)), fileStem: "fuzz")
    return 0
}
