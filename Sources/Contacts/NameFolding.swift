/// Case- and accent-insensitive keys for ordering favorites, so that "émile" sorts beside
/// "Emile" rather than after "Zoë"; ties are broken by identifier, so the order is total.
///
/// The standard library has no public normalization and FoundationEssentials no
/// diacritic folding, so letters with diacritics are folded by a table covering
/// Latin-1 Supplement, Latin Extended-A, the common Latin Extended-B letters and
/// Latin Extended Additional (which holds Vietnamese); decomposed input is handled by
/// dropping combining marks. The result only orders names; it is never shown.
public enum NameFolding {
    /// `text` lowercased with the diacritics of Latin letters removed (`Émile` → `emile`): the key names are
    /// sorted by.
    public static func foldedKey(_ text: String) -> String {
        var key = String.UnicodeScalarView()
        for scalar in text.lowercased().unicodeScalars {
            if combiningDiacriticalMarks.contains(scalar.value) { continue }
            if let replacement = foldTable[scalar.value] {
                key.append(contentsOf: replacement.unicodeScalars)
            } else {
                key.append(scalar)
            }
        }
        return String(key)
    }

    /// The order favorites are listed in: by folded name, ties broken by identifier
    /// (then by the exact name, so that even equal identifiers order deterministically).
    public static func areInFavoriteOrder(_ lhs: Contact, _ rhs: Contact) -> Bool {
        FavoriteSortKey(lhs) < FavoriteSortKey(rhs)
    }

    static let combiningDiacriticalMarks: ClosedRange<UInt32> = 0x0300...0x036F

    /// Runs of consecutive code points that fold to the same text; nil keeps the code point.
    private static let foldRuns: [(start: UInt32, runs: [(String?, Int)])] = [
        (0x00C0, [
            ("a", 6), ("ae", 1), ("c", 1), ("e", 4), ("i", 4), ("d", 1), ("n", 1), ("o", 5), (nil, 1),
            ("o", 1), ("u", 4), ("y", 1), ("th", 1), ("ss", 1),
            ("a", 6), ("ae", 1), ("c", 1), ("e", 4), ("i", 4), ("d", 1), ("n", 1), ("o", 5), (nil, 1),
            ("o", 1), ("u", 4), ("y", 1), ("th", 1), ("y", 1),
        ]),
        (0x0100, [
            ("a", 6), ("c", 8), ("d", 4), ("e", 10), ("g", 8), ("h", 4), ("i", 10), ("ij", 2), ("j", 2),
            ("k", 3), ("l", 10), ("n", 9), ("o", 6), ("oe", 2), ("r", 6), ("s", 8), ("t", 6), ("u", 12),
            ("w", 2), ("y", 3), ("z", 6), ("s", 1),
        ]),
        (0x0180, [("b", 2)]),
        (0x0187, [("c", 2), (nil, 1), ("d", 1)]),
        (0x0191, [("f", 2)]),
        (0x0197, [("i", 1)]),
        (0x0198, [("k", 2), ("l", 1)]),
        (0x019D, [("n", 1)]),
        (0x01A0, [("o", 2)]),
        (0x01AF, [("u", 2)]),
        (0x01B5, [("z", 2)]),
        (0x01C4, [("dz", 3), ("lj", 3), ("nj", 3), ("a", 2), ("i", 2), ("o", 2), ("u", 10)]),
        (0x01DE, [("a", 4), ("ae", 2), ("g", 4), ("k", 2), ("o", 4), (nil, 2), ("j", 1), ("dz", 3), ("g", 2)]),
        (0x01F8, [("n", 2), ("a", 2), ("ae", 2), ("o", 2)]),
        (0x0200, [("a", 4), ("e", 4), ("i", 4), ("o", 4), ("r", 4), ("u", 4), ("s", 2), ("t", 2)]),
        (0x021E, [("h", 2)]),
        (0x0226, [("a", 2), ("e", 2), ("o", 8), ("y", 2)]),
        (0x1E00, [
            ("a", 2), ("b", 6), ("c", 2), ("d", 10), ("e", 10), ("f", 2), ("g", 2), ("h", 10), ("i", 4),
            ("k", 6), ("l", 8), ("m", 6), ("n", 8), ("o", 8), ("p", 4), ("r", 8), ("s", 10), ("t", 8),
            ("u", 10), ("v", 4), ("w", 10), ("x", 4), ("y", 2), ("z", 6),
            ("h", 1), ("t", 1), ("w", 1), ("y", 1), ("a", 1), ("s", 1),
        ]),
        (0x1E9E, [("ss", 1)]),
        (0x1EA0, [("a", 24), ("e", 16), ("i", 4), ("o", 24), ("u", 14), ("y", 8)]),
    ]

    private static let foldTable: [UInt32: String] = {
        var table: [UInt32: String] = [:]
        for block in foldRuns {
            var codePoint = block.start
            for (replacement, length) in block.runs {
                if let replacement {
                    for offset in 0..<UInt32(length) {
                        table[codePoint + offset] = replacement
                    }
                }
                codePoint += UInt32(length)
            }
        }
        return table
    }()
}

/// Sorts favorites; the folded name is computed once per contact, not per comparison.
struct FavoriteSortKey: Comparable, Hashable, Sendable {
    var foldedName: String
    var identifier: String
    var name: String

    init(_ contact: Contact) {
        foldedName = NameFolding.foldedKey(contact.name)
        identifier = contact.identifier
        name = contact.name
    }

    static func < (lhs: FavoriteSortKey, rhs: FavoriteSortKey) -> Bool {
        if lhs.foldedName != rhs.foldedName { return precedesByCodePoint(lhs.foldedName, rhs.foldedName) }
        if lhs.identifier != rhs.identifier { return precedesByCodePoint(lhs.identifier, rhs.identifier) }
        return precedesByCodePoint(lhs.name, rhs.name)
    }
}

/// Plain code-point order: deterministic and the same as `sort` in the C locale. UTF-8's byte
/// order is code-point order, so strings are compared by their bytes, in place when they are
/// stored contiguously (sorting a start-up's 100,000 paths makes millions of comparisons).
func precedesByCodePoint(_ lhs: String, _ rhs: String) -> Bool {
    let inPlace = lhs.utf8.withContiguousStorageIfAvailable { left in
        rhs.utf8.withContiguousStorageIfAvailable { right -> Bool in
            let shorter = min(left.count, right.count)
            var offset = 0
            while offset < shorter {
                if left[offset] != right[offset] { return left[offset] < right[offset] }
                offset += 1
            }
            return left.count < right.count
        }
    }
    if let inPlace, let inPlace { return inPlace }
    return lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
}

/// Whether two strings hold the same bytes (`==` is canonical equivalence, which joins
/// differently normalized names that are different files).
func hasSameUTF8(_ lhs: String, _ rhs: String) -> Bool {
    let inPlace = lhs.utf8.withContiguousStorageIfAvailable { left in
        rhs.utf8.withContiguousStorageIfAvailable { right in left.elementsEqual(right) }
    }
    if let inPlace, let inPlace { return inPlace }
    return lhs.utf8.elementsEqual(rhs.utf8)
}
