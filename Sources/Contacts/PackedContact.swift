/// One contact as the index stores it: a single allocation per contact instead of one
/// per string and per email array (issue 12: the index was ~0.7 KiB per contact).
///
/// The name and the emails are packed as UTF-8 bytes, each preceded by its length as a
/// LEB128 varint, behind a small header; the preferred email is an index into the
/// emails, not a second copy. The identifier and the file name stay `String`s because
/// the index's dictionaries are keyed by them: the keys and these fields share one
/// string buffer (or are inline, for up to 15 UTF-8 bytes), so neither is stored twice.
/// (The file name comes from the index, which splits it off the path in a new string.)
/// Immutable once made, hence `@unchecked Sendable` (`ManagedBuffer` itself cannot be).
struct PackedContact: @unchecked Sendable {
    private let storage: ManagedBuffer<Header, UInt8>

    struct Header {
        let identifier: String
        /// The name of the file the contact came from (without its folder).
        let fileName: String
        let emailCount: UInt32
        /// `noPreferredEmail`, an index into the emails, or `emailCount` for a preferred
        /// email that is not among the emails (stored after them).
        let preferredEmail: UInt32
        let favorite: Bool
    }

    static let noPreferredEmail = UInt32.max

    static func make(_ contact: Contact, fileName: String) -> PackedContact {
        var strings = [contact.name] + contact.emails
        var preferred = noPreferredEmail
        if let email = contact.email {
            // Byte equality, not `==` (canonical equivalence): the stored bytes must be
            // exactly the ones given, or the wire would answer differently.
            if let position = contact.emails.firstIndex(where: { $0.utf8.elementsEqual(email.utf8) }) {
                preferred = UInt32(position)
            } else {
                preferred = UInt32(contact.emails.count)
                strings.append(email)
            }
        }
        let byteCount = strings.reduce(0) { $0 + varintSize($1.utf8.count) + $1.utf8.count }
        let header = Header(
            identifier: freshCopy(contact.identifier), fileName: fileName, emailCount: UInt32(contact.emails.count),
            preferredEmail: preferred, favorite: contact.favorite)
        let storage = ManagedBuffer<Header, UInt8>.create(minimumCapacity: byteCount) { _ in header }
        storage.withUnsafeMutablePointerToElements { bytes in
            var offset = 0
            for var string in strings {
                var length = string.utf8.count
                repeat {
                    bytes[offset] = UInt8(length & 0x7F) | (length >= 0x80 ? 0x80 : 0)
                    length >>= 7
                    offset += 1
                } while length > 0
                string.withUTF8 { utf8 in
                    (bytes + offset).update(from: utf8.baseAddress!, count: utf8.count)
                    offset += utf8.count
                }
            }
        }
        return PackedContact(storage: storage)
    }

    /// The same text in a new allocation of its own (or inline, up to 15 bytes). A string
    /// the parser made was allocated among the file's transient buffers; kept for good, it
    /// would pin their heap pages after they are freed (measured: ~40 MiB left unreturnable
    /// at 100k contacts with 36-character UIDs).
    private static func freshCopy(_ text: String) -> String {
        var text = text
        return text.withUTF8 { utf8 in
            String(unsafeUninitializedCapacity: utf8.count) { buffer in
                _ = buffer.initialize(fromContentsOf: utf8)
                return utf8.count
            }
        }
    }

    private static func varintSize(_ value: Int) -> Int {
        var size = 1
        var rest = value >> 7
        while rest > 0 {
            size += 1
            rest >>= 7
        }
        return size
    }

    private var header: Header { storage.header }
    var identifier: String { header.identifier }
    var fileName: String { header.fileName }
    var favorite: Bool { header.favorite }

    /// The same stored card (not merely an equal one).
    static func === (lhs: PackedContact, rhs: PackedContact) -> Bool { lhs.storage === rhs.storage }

    /// The packed strings in order: the name, the emails, then the separate preferred email if any.
    private func strings() -> [String] {
        let count = 1 + Int(header.emailCount) + (header.preferredEmail == header.emailCount ? 1 : 0)
        return storage.withUnsafeMutablePointerToElements { bytes in
            var strings: [String] = []
            strings.reserveCapacity(count)
            var offset = 0
            for _ in 0..<count {
                var length = 0
                var shift = 0
                while true {
                    let byte = bytes[offset]
                    offset += 1
                    length |= Int(byte & 0x7F) << shift
                    shift += 7
                    if byte & 0x80 == 0 { break }
                }
                strings.append(String(decoding: UnsafeBufferPointer(start: bytes + offset, count: length), as: UTF8.self))
                offset += length
            }
            return strings
        }
    }

    /// The contact exactly as it was given to `make`.
    var contact: Contact {
        let strings = strings()
        let emailCount = Int(header.emailCount)
        let emails = Array(strings[1..<(1 + emailCount)])
        let email: String? = header.preferredEmail == Self.noPreferredEmail ? nil : strings[1 + Int(header.preferredEmail)]
        return Contact(identifier: header.identifier, name: strings[0], email: email, emails: emails, favorite: header.favorite)
    }
}
