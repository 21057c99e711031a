import Contacts

/// Rows read whole in the read transaction: each row's rowid, and its uid, `Rev` and vCard
/// copied as bytes out of SQLite's pages into one buffer, so the transaction ends before they
/// are looked at, and a row's strings are made only when it is parsed (a book of 100k rows
/// would otherwise cost 200k strings before the first favorite is known).
struct EvolutionUnparsedRows {
    enum Card {
        case null
        /// Larger than the limit: not copied.
        case tooLarge(size: Int)
        case bytes(Range<Int>)
    }

    struct Row {
        var rowID: Int64
        var uid: Range<Int>
        var rev: Range<Int>
        var card: Card
    }

    private(set) var rows: [Row] = []
    private var bytes: [UInt8] = []
    let maxCardBytes: Int

    init(maxCardBytes: Int) {
        self.maxCardBytes = maxCardBytes
    }

    func uid(_ index: Int) -> String {
        bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[rows[index].uid]), as: UTF8.self) }
    }

    var uids: [String] { rows.indices.map(uid) }

    /// The row's rowid, uid and `Rev` bytes, without making strings of them.
    func withRow<R>(_ index: Int, _ body: (Int64, UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> R) -> R {
        let row = rows[index]
        return bytes.withUnsafeBufferPointer {
            body(row.rowID, UnsafeBufferPointer(rebasing: $0[row.uid]), UnsafeBufferPointer(rebasing: $0[row.rev]))
        }
    }

    /// Room for `bytes` of rows: taken once (as address space; pages are touched as rows
    /// come), so a book's first read neither copies its vCards again nor faults in buffers it
    /// then drops as the buffer grows.
    mutating func reserveCapacity(bytes count: Int) {
        bytes.reserveCapacity(count)
    }

    mutating func append(
        rowID: Int64, uid: UnsafeBufferPointer<UInt8>?, rev: UnsafeBufferPointer<UInt8>?, card: UnsafeBufferPointer<UInt8>?
    ) {
        let uid = store(uid)
        let rev = store(rev)
        let stored: Card
        if let card {
            stored = card.count > maxCardBytes ? .tooLarge(size: card.count) : .bytes(store(card))
        } else {
            stored = .null
        }
        rows.append(Row(rowID: rowID, uid: uid, rev: rev, card: stored))
    }

    private mutating func store(_ text: UnsafeBufferPointer<UInt8>?) -> Range<Int> {
        guard let text else { return bytes.count..<bytes.count }
        bytes.append(contentsOf: text)
        return bytes.count - text.count..<bytes.count
    }

    /// Every row parsed, in order.
    func parsed(options: ContactParsingOptions) -> [EvolutionBookPass.ReadRow] {
        parsed(Array(rows.indices), options: options)
    }

    /// The rows at `indices` parsed, in that order: a large batch on every CPU.
    func parsed(_ indices: [Int], options: ContactParsingOptions) -> [EvolutionBookPass.ReadRow] {
        let (rows, bytes, limit) = (self.rows, self.bytes, maxCardBytes)
        let parse = { (position: Int) -> EvolutionBookPass.ReadRow in
            let row = rows[indices[position]]
            return bytes.withUnsafeBufferPointer { bytes in
                let uid = String(decoding: UnsafeBufferPointer(rebasing: bytes[row.uid]), as: UTF8.self)
                let version = EvolutionRowVersion(rowID: row.rowID, rev: String(decoding: UnsafeBufferPointer(rebasing: bytes[row.rev]), as: UTF8.self))
                let result: Result<[Contact], ContactFileProblem>
                switch row.card {
                case .null:
                    result = .failure(.unreadable(reason: "the row holds no vCard"))
                case .tooLarge(let size):
                    result = .failure(.tooLarge(size: size, limit: limit))
                case .bytes(let range):
                    // The row's uid names a card without `UID`.
                    do throws(ContactParseError) {
                        result = .success(try VCardParser.parse(contentsOf: UnsafeBufferPointer(rebasing: bytes[range]), fileStem: uid, options: options))
                    } catch {
                        result = .failure(ContactFileProblem(error))
                    }
                }
                return .init(uid: uid, version: version, result: result)
            }
        }
        guard indices.count >= Self.parallelRows else { return indices.indices.map(parse) }
        return ParallelWork.map(count: indices.count, chunk: 64, parse)
    }

    /// Below this many rows one thread does the work: handing it out costs more than it saves.
    static let parallelRows = 1024
}

/// A book's first read at start-up: its revision, the rows whose vCard may give a favorite (or
/// is not plain in any other way) copied whole, and how many others there are. A plain row's
/// contact is identified as its row's uid, which is the table's key: one wanted before the others
/// is found by it (`readRows(uids:)`), not by keeping the names of all.
struct EvolutionFirstRead {
    var revision: String
    var rows: EvolutionUnparsedRows
    var plain = 0
}
