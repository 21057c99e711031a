@_spi(Reference) import Contacts

/// libFuzzer entry: any bytes as a vCard file. Errors are expected; a crash, a hang or a
/// sanitizer report is a bug, and so is any difference between the one-pass parser and the
/// line-by-line reference it replaces (contacts, or the error with its line and text).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let parsed = Result { () throws(ContactParseError) in try VCardParser.parse(bytes, fileStem: "fuzz") }
    let reference = Result { () throws(ContactParseError) in try VCardParser.referenceParse(bytes, fileStem: "fuzz") }
    if parsed != reference {
        fatalError("VCardParser.parse gave \(parsed), the reference \(reference)")
    }
    // A card the triage calls plain gives no favorite under any rules, at most one contact,
    // and that one identified as the name it was given.
    let plain = bytes.withUnsafeBufferPointer { card in
        Array("fuzz".utf8).withUnsafeBufferPointer { VCardTriage.isPlain(card, identifier: $0) }
    }
    if plain, case .success(let contacts) = Result(catching: { () throws(ContactParseError) in
        try VCardParser.parse(bytes, fileStem: "fuzz", options: ContactParsingOptions(
            favoriteCategories: ["favorite", "starred", "starred in android", "x"], folksFavourite: true))
    }), contacts.count > 1 || contacts.contains(where: { $0.favorite || $0.identifier != "fuzz" }) {
        fatalError("VCardTriage called a card plain that gave \(contacts)")
    }
    // Each contact's photo, read as its face is: never a crash, never more bytes than the bound.
    if case .success(let contacts) = parsed {
        for contact in contacts {
            if case .success(.inline(let photo, _))?? = try? VCardParser.photo(in: bytes, identifier: contact.identifier, fileStem: "fuzz"),
               photo.count > ContactPhoto.maxBytes {
                fatalError("a photo of \(photo.count) bytes was read, more than \(ContactPhoto.maxBytes)")
            }
        }
    }
    return 0
}
