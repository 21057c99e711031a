import QuickActions

/// libFuzzer entry: any bytes as an `InfoPlist.strings` file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    _ = try? StringsFile.parse(bytes: Array(UnsafeBufferPointer(start: data, count: size)), fileName: "InfoPlist.strings")
    return 0
}
