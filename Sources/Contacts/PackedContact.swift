/// One contact as the index stores it: a single allocation per contact instead of one
/// per string and per email array. The index is most of the daemon's memory, so each contact
/// costs one header and its bytes, and each string is stored once.
///
/// Behind a small header, the strings are packed as UTF-8 bytes, each preceded by its
/// length as a LEB128 varint: the file name (without its folder), the identifier, the
/// name, the emails, and a preferred email that is not among the emails, if any; the
/// preferred email is otherwise an index into the emails, not a second copy. The
/// index's tables hash and compare the file name and the identifier in place
/// (`withFileNameBytes`, `withIdentifierBytes`), so neither is stored again as a key.
/// Immutable once made, hence `@unchecked Sendable` (`ManagedBuffer` itself cannot be).
struct PackedContact: @unchecked Sendable {
    private let storage: ManagedBuffer<Header, UInt8>

    struct Header {
        /// The index's number for the folder of the file the contact came from.
        let folder: UInt32
        let emailCount: UInt32
        /// `noPreferredEmail`, an index into the emails, or `emailCount` for a preferred
        /// email that is not among the emails (stored after them).
        let preferredEmail: UInt32
        let favorite: Bool
    }

    static let noPreferredEmail = UInt32.max

    private enum Field: Int {
        case fileName, identifier, name, firstEmail
    }

    static func make(_ contact: Contact, fileName: String, folder: UInt32) -> PackedContact {
        var strings = [fileName, contact.identifier, contact.name] + contact.emails
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
            folder: folder, emailCount: UInt32(contact.emails.count), preferredEmail: preferred, favorite: contact.favorite)
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
                    guard let source = utf8.baseAddress else { return }
                    (bytes + offset).update(from: source, count: utf8.count)
                    offset += utf8.count
                }
            }
        }
        return PackedContact(storage: storage)
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
    var folder: UInt32 { header.folder }
    var favorite: Bool { header.favorite }

    /// The same stored card (not merely an equal one).
    static func === (lhs: PackedContact, rhs: PackedContact) -> Bool { lhs.storage === rhs.storage }

    /// Calls `body` with the bytes of each packed string in order, until it returns false.
    private func forEachString(_ body: (UnsafeBufferPointer<UInt8>) -> Bool) {
        storage.withUnsafeMutablePointerToElements { bytes in
            let count = Field.firstEmail.rawValue + Int(header.emailCount) + (header.preferredEmail == header.emailCount ? 1 : 0)
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
                if !body(UnsafeBufferPointer(start: bytes + offset, count: length)) { return }
                offset += length
            }
        }
    }

    private func withBytes<R>(of field: Field, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var result: R?
        var position = 0
        forEachString { bytes in
            if position == field.rawValue {
                result = body(bytes)
                return false
            }
            position += 1
            return true
        }
        return result!
    }

    func withFileNameBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R { withBytes(of: .fileName, body) }
    func withIdentifierBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R { withBytes(of: .identifier, body) }
    var fileName: String { withFileNameBytes { String(decoding: $0, as: UTF8.self) } }
    var identifier: String { withIdentifierBytes { String(decoding: $0, as: UTF8.self) } }

    /// The contact exactly as it was given to `make`.
    var contact: Contact {
        var strings: [String] = []
        forEachString { bytes in
            strings.append(String(decoding: bytes, as: UTF8.self))
            return true
        }
        let emails = Array(strings[Field.firstEmail.rawValue..<(Field.firstEmail.rawValue + Int(header.emailCount))])
        let email: String? = header.preferredEmail == Self.noPreferredEmail
            ? nil : strings[Field.firstEmail.rawValue + Int(header.preferredEmail)]
        return Contact(
            identifier: strings[Field.identifier.rawValue], name: strings[Field.name.rawValue], email: email, emails: emails,
            favorite: header.favorite)
    }
}
