// Text helpers of the parsers (FoundationEssentials has no trimming).

func trimmed(_ text: Substring) -> String {
    // Most values start and end with a visible ASCII character, which is never whitespace.
    if let first = text.utf8.first, let last = text.utf8.last, isVisibleASCII(first), isVisibleASCII(last) {
        return String(text)
    }
    guard let first = text.firstIndex(where: { !$0.isWhitespace }),
          let last = text.lastIndex(where: { !$0.isWhitespace })
    else { return "" }
    return String(text[first...last])
}

func trimmed(_ text: String) -> String {
    trimmed(text[...])
}

private func isVisibleASCII(_ byte: UInt8) -> Bool {
    (0x21...0x7E).contains(byte)
}

func collapsedWhitespace(_ text: String) -> String {
    // ASCII text with single spaces between words (most names) is already collapsed.
    var previous: UInt8 = 0x20
    let isCollapsed = text.utf8.allSatisfy { byte in
        defer { previous = byte }
        return isVisibleASCII(byte) || (byte == 0x20 && previous != 0x20)
    }
    if isCollapsed && text.utf8.last != 0x20 { return text }
    // ASCII (a structured name with empty components joined by spaces, as EDS writes `N`)
    // collapses byte by byte, without Unicode's whitespace property for each character.
    if let collapsed = text.utf8.withContiguousStorageIfAvailable(asciiCollapsedWhitespace), let collapsed {
        return collapsed
    }
    return text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
}

/// `collapsedWhitespace` for ASCII bytes; nil when they are not all ASCII.
private func asciiCollapsedWhitespace(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
    guard isASCII(bytes) else { return nil }
    return String(unsafeUninitializedCapacity: bytes.count) { output in
        var count = 0
        var pendingSpace = false
        for byte in bytes {
            if byte == 0x20 || (0x09...0x0D).contains(byte) {
                pendingSpace = count > 0
                continue
            }
            if pendingSpace {
                output[count] = 0x20
                count += 1
                pendingSpace = false
            }
            output[count] = byte
            count += 1
        }
        return count
    }
}

func nonEmpty(_ text: String) -> String? {
    text.isEmpty ? nil : text
}

// MARK: - ASCII helpers (a line of ASCII bytes needs no Unicode rules)

func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    // Eight bytes at a time: ASCII bytes have the top bit clear.
    let raw = UnsafeRawBufferPointer(bytes)
    var offset = 0
    while offset + 8 <= raw.count {
        if raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
        offset += 8
    }
    return !bytes[offset...].contains { $0 >= 0x80 }
}

/// `trimmed` for ASCII: the whitespace among ASCII characters is tab, LF, VT, FF, CR and space.
func asciiTrimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
    func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
    guard let first = bytes.firstIndex(where: { !isWhitespace($0) }), let last = bytes.lastIndex(where: { !isWhitespace($0) }) else {
        return UnsafeBufferPointer(rebasing: bytes[0..<0])
    }
    return UnsafeBufferPointer(rebasing: bytes[first...last])
}

func asciiUppercased(_ byte: UInt8) -> UInt8 {
    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) ? byte - 0x20 : byte
}

/// Whether `bytes` uppercased are `uppercase`.
func asciiEqualsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ uppercase: StaticString) -> Bool {
    guard bytes.count == uppercase.utf8CodeUnitCount else { return false }
    let expected = uppercase.utf8Start
    for offset in bytes.indices where asciiUppercased(bytes[offset]) != expected[offset] { return false }
    return true
}
