import Contacts

/// libFuzzer entry: any bytes as a vCard file. Errors are expected; a crash, a hang or a
/// sanitizer report is a bug.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    _ = try? VCardParser.parse(Array(UnsafeBufferPointer(start: data, count: size)), fileStem: "fuzz")
    return 0
}
