import QuickActions

/// libFuzzer entry: any bytes as a static-items property list (XML or binary), parsed and
/// then read as static items.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = try? PropertyListParser.parse(bytes)
    _ = try? StaticItemsFile.decode(bytes, fileName: "fuzz.plist")
    return 0
}
