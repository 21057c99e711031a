/// A look at a vCard's bytes, many times cheaper than parsing it, that tells when parsing it
/// cannot give a favorite: the daemon serves an address book's favorites first and indexes its
/// other contacts after, and a card this calls plain is one of the others.
///
/// It reads only each line's name (up to its first `:` or `;`), on lines split as the parser
/// splits them (CR, LF or CRLF): a property can make a favorite only under one of a few names
/// (`favoriteNames`), and a name holding none of the four-letter runs those names share, in
/// any case, with or without a group or spaces around it, is none of them. Favorite
/// categories, whichever they are, live in `CATEGORIES`. A folded line (which could join a
/// name's halves), a quote or a letter outside ASCII in a name (the parser maps a name's case
/// as Unicode does, and `X-ﬆARRED` is `X-STARRED` to it), or a second `BEGIN` (a nested or
/// second card) makes the card not plain. A name such as `X-CATERING` only costs the card a parse.
///
/// A plain card's one contact is also known to be identified as `identifier` (its row's name):
/// it names no `UID`, or exactly one, a plain `UID:` line whose value is those bytes.
public enum VCardTriage {
    /// The names under which a property can make a contact a favorite; each holds one of the
    /// runs the triage looks for (a test checks both against the parser).
    static let favoriteNames: [StaticString] = ["CATEGORIES", "X-FOLKS-FAVOURITE", "X-FAVORITE", "X-STARRED", "X-DAVDROID-STARRED"]

    /// The four-letter runs, lowercase: `CATEGORIES`, `FAVO(U)RITE` and `STARRED`.
    static let favoriteRuns: [StaticString] = ["cate", "favo", "tarr"]

    /// Whether parsing `card` (with any options) gives no favorite, and at most one contact,
    /// identified as `identifier` when it gives one.
    public static func isPlain(_ card: UnsafeBufferPointer<UInt8>, identifier: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = card.baseAddress else { return false }
        // The runs as the window holds them (big-endian), literal so the loop compares constants.
        let (cate, favo, tarr, egin, uid): (UInt32, UInt32, UInt32, UInt32, UInt32) =
            (0x6361_7465, 0x6661_766F, 0x7461_7272, 0x6567_696E, 0x75_6964)
        let (cr, lf, space, tab, colon, semicolon, quote): (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0x0D, 0x0A, 0x20, 0x09, 0x3A, 0x3B, 0x22)
        let count = card.count
        var begins = 0
        var uidSeen = false
        var lineStart = 0
        while lineStart < count {
            var position = lineStart
            if lineStart > 0, base[position] == space || base[position] == tab { return false }
            // The name.
            var window: UInt32 = 0
            var holdsUID = false
            while position < count {
                let byte = base[position]
                if byte == colon || byte == semicolon || byte == cr || byte == lf { break }
                // Not ASCII: Unicode's case mapping can make one (`ﬆ` uppercases to `ST`).
                if byte == quote || byte >= 0x80 { return false }
                window = window << 8 | UInt32(byte | 0x20)
                if window == cate || window == favo || window == tarr { return false }
                if window == egin {
                    begins += 1
                    if begins > 1 { return false }
                }
                if window & 0xFF_FFFF == uid { holdsUID = true }
                position += 1
            }
            let lineEnd = lineBreak(base, from: position, count: count)
            if holdsUID {
                // Only the bare name `UID` with no parameter, once, whose value is the identifier.
                guard !uidSeen, position - lineStart == 3, position < count, base[position] == colon,
                      isIdentifier(UnsafeBufferPointer(start: base + position + 1, count: lineEnd - position - 1), identifier)
                else { return false }
                uidSeen = true
            }
            lineStart = lineEnd < count && base[lineEnd] == cr && lineEnd + 1 < count && base[lineEnd + 1] == lf ? lineEnd + 2 : lineEnd + 1
        }
        return true
    }

    /// The position of the first CR or LF from `position` (or `count`), for the triage and the
    /// parser's lines alike: words of eight bytes without either are skipped whole, with the
    /// usual test for a zero byte (a byte minus one borrows into its top bit only from zero) on
    /// the word XORed with each.
    static func lineBreak(_ base: UnsafePointer<UInt8>, from position: Int, count: Int) -> Int {
        let raw = UnsafeRawPointer(base)
        var position = position
        while position + 8 <= count {
            let word = raw.loadUnaligned(fromByteOffset: position, as: UInt64.self)
            let lf = word ^ 0x0A0A_0A0A_0A0A_0A0A
            let cr = word ^ 0x0D0D_0D0D_0D0D_0D0D
            if ((lf &- 0x0101_0101_0101_0101) & ~lf | (cr &- 0x0101_0101_0101_0101) & ~cr) & 0x8080_8080_8080_8080 != 0 { break }
            position += 8
        }
        while position < count, base[position] != 0x0A, base[position] != 0x0D { position += 1 }
        return position
    }

    /// Whether a `UID` value is exactly the identifier: ASCII (so no decoding changes it), with
    /// no space or tab at either end (which the parser would trim).
    private static func isIdentifier(_ value: UnsafeBufferPointer<UInt8>, _ identifier: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = identifier.first, let last = identifier.last,
              first != 0x20, first != 0x09, last != 0x20, last != 0x09, value.count == identifier.count
        else { return false }
        for offset in 0..<value.count where value[offset] != identifier[offset] || value[offset] >= 0x80 { return false }
        return true
    }
}
