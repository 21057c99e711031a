/// How the index stores its files and claims: one pointer per entry of a set, found by the
/// packed text it holds.
extension ContactIndex {
    /// What one file contributed, and the file's name: an element of its folder's set,
    /// hashed and compared by the name's bytes. One pointer (8 bytes in the set's table);
    /// the common one-card file is its `PackedContact` alone, which holds the name.
    struct FileSlot: PackedTextKey, Sendable {
        enum Storage: Sendable {
            case one(PackedContact)
            /// Several cards or none, or a problem; also a lookup by name (`probe`).
            case other(OtherFile)
        }

        let storage: Storage

        static func probe(_ name: String) -> FileSlot {
            FileSlot(storage: .other(OtherFile(name: name, contacts: [], problem: nil)))
        }

        func withKeyBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
            switch storage {
            case .one(let contact): return contact.withFileNameBytes(body)
            case .other(let file): return ContactIndex.withBytes(of: file.name, body)
            }
        }

        var name: String {
            switch storage {
            case .one(let contact): return contact.fileName
            case .other(let file): return file.name
            }
        }

        var contacts: [PackedContact] {
            switch storage {
            case .one(let contact): return [contact]
            case .other(let file): return file.contacts
            }
        }

        var problem: ContactFileProblem? {
            if case .other(let file) = storage { return file.problem }
            return nil
        }
    }

    final class OtherFile: Sendable {
        let name: String
        let contacts: [PackedContact]
        let problem: ContactFileProblem?

        init(name: String, contacts: [PackedContact], problem: ContactFileProblem?) {
            self.name = name
            self.contacts = contacts
            self.problem = problem
        }
    }

    /// The files directly in one folder: the folder's path is stored once, not once per file.
    struct Folder: Sendable {
        /// The path up to and including its last "/" ("" for a path without one), so
        /// `key + name` is exactly the path that was applied.
        var key: String
        var files: Set<FileSlot> = []
    }

    /// Every card that defines one identifier, in code-point order of their paths (a path
    /// appears once per card carrying the identifier); the first is the winner. An element
    /// of `claims`, hashed and compared by the identifier's bytes: one pointer, and nearly
    /// every identifier has one card, which needs no array. Any card of the identifier
    /// (`.one(card)`) or `probe` finds it.
    struct ClaimSlot: PackedTextKey, Sendable {
        enum Storage: Sendable {
            case one(PackedContact)
            case several([PackedContact])
            case probe(IdentifierProbe)
        }

        let storage: Storage

        static func one(_ contact: PackedContact) -> ClaimSlot { ClaimSlot(storage: .one(contact)) }
        static func probe(_ identifier: String) -> ClaimSlot { ClaimSlot(storage: .probe(IdentifierProbe(identifier))) }

        var claimants: [PackedContact] {
            switch storage {
            case .one(let contact): return [contact]
            case .several(let contacts): return contacts
            case .probe: return []
            }
        }

        var winner: PackedContact? {
            switch storage {
            case .one(let contact): return contact
            case .several(let contacts): return contacts.first
            case .probe: return nil
            }
        }

        func withKeyBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
            switch storage {
            case .one(let contact): return contact.withIdentifierBytes(body)
            case .several(let contacts): return contacts[0].withIdentifierBytes(body)
            case .probe(let probe): return ContactIndex.withBytes(of: probe.identifier, body)
            }
        }
    }

    final class IdentifierProbe: Sendable {
        let identifier: String
        init(_ identifier: String) { self.identifier = identifier }
    }

    fileprivate static func textEqual(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        if left.elementsEqual(right) { return true }
        if left.allSatisfy({ $0 < 0x80 }) && right.allSatisfy({ $0 < 0x80 }) { return false }
        return String(decoding: left, as: UTF8.self) == String(decoding: right, as: UTF8.self)
    }

    fileprivate static func hashText(_ text: UnsafeBufferPointer<UInt8>, into hasher: inout Hasher) {
        hasher.combine(String(decoding: text, as: UTF8.self))
    }

    fileprivate static func withBytes<R>(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var text = text
        return text.withUTF8(body)
    }
}

/// A set element found by one packed text (a file name, an identifier), which compares and
/// hashes as `String`s do (canonical equivalence), as when the index's tables were keyed
/// by `String`; equal bytes, or two ASCII texts, are decided without making strings.
protocol PackedTextKey: Hashable {
    func withKeyBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R
}

extension PackedTextKey {
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.withKeyBytes { left in rhs.withKeyBytes { right in ContactIndex.textEqual(left, right) } }
    }

    func hash(into hasher: inout Hasher) {
        withKeyBytes { ContactIndex.hashText($0, into: &hasher) }
    }
}
