#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads `bplist00` files. Every offset and count comes from untrusted bytes,
/// so each is bounds-checked before use; object references are checked for
/// cycles, and decoded objects are memoised so a file that references one
/// object many times cannot make decoding blow up exponentially.
struct BinaryPropertyListReader {
    static let magic: [UInt8] = Array("bplist00".utf8)
    private static let trailerSize = 32
    private static let maximumDepth = 256

    private let bytes: [UInt8]
    private let offsetIntSize: Int
    private let objectRefSize: Int
    private let objectCount: Int
    private let topObject: Int
    private let offsetTableOffset: Int
    private var decoded: [Int: PropertyListValue] = [:]
    private var inProgress: Set<Int> = []

    init(bytes: [UInt8]) throws(PropertyListError) {
        self.bytes = bytes
        guard bytes.count >= Self.magic.count + Self.trailerSize else {
            throw .binary(offset: bytes.count, problem: "expected a 32-byte trailer after the header, but the file has only \(bytes.count) bytes")
        }
        let trailer = bytes.count - Self.trailerSize
        offsetIntSize = Int(bytes[trailer + 6])
        objectRefSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetIntSize) else {
            throw .binary(offset: trailer + 6, problem: "expected an offset size of 1 to 8 bytes but found \(offsetIntSize)")
        }
        guard (1...8).contains(objectRefSize) else {
            throw .binary(offset: trailer + 7, problem: "expected an object reference size of 1 to 8 bytes but found \(objectRefSize)")
        }
        let count = Self.readUnsigned(bytes, at: trailer + 8, size: 8)
        let top = Self.readUnsigned(bytes, at: trailer + 16, size: 8)
        let table = Self.readUnsigned(bytes, at: trailer + 24, size: 8)
        guard count > 0, count <= UInt64(trailer) else {
            throw .binary(offset: trailer + 8, problem: "expected an object count between 1 and the file size but found \(count)")
        }
        guard top < count else {
            throw .binary(offset: trailer + 16, problem: "the top object \(top) is not below the object count \(count)")
        }
        guard table >= UInt64(Self.magic.count), table <= UInt64(trailer),
              UInt64(trailer) - table >= count * UInt64(offsetIntSize)
        else {
            throw .binary(offset: trailer + 24, problem: "the offset table at \(table) with \(count) entries does not fit between the header and the trailer")
        }
        objectCount = Int(count)
        topObject = Int(top)
        offsetTableOffset = Int(table)
    }

    mutating func readTopObject() throws(PropertyListError) -> PropertyListValue {
        try readObject(topObject, depth: 0)
    }

    private mutating func readObject(_ index: Int, depth: Int) throws(PropertyListError) -> PropertyListValue {
        if let known = decoded[index] { return known }
        let entry = offsetTableOffset + index * offsetIntSize
        let rawOffset = Self.readUnsigned(bytes, at: entry, size: offsetIntSize)
        guard rawOffset >= UInt64(Self.magic.count), rawOffset < UInt64(offsetTableOffset) else {
            throw .binary(offset: entry, problem: "object \(index) has offset \(rawOffset), outside the object area")
        }
        let offset = Int(rawOffset)
        guard depth <= Self.maximumDepth else {
            throw .binary(offset: offset, problem: "objects are nested more than \(Self.maximumDepth) levels deep")
        }
        guard inProgress.insert(index).inserted else {
            throw .binary(offset: offset, problem: "object \(index) contains itself (a reference cycle)")
        }
        defer { inProgress.remove(index) }
        let value = try readObject(at: offset, depth: depth)
        decoded[index] = value
        return value
    }

    private mutating func readObject(at offset: Int, depth: Int) throws(PropertyListError) -> PropertyListValue {
        let marker = bytes[offset]
        let kind = marker >> 4
        let info = Int(marker & 0x0F)
        switch kind {
        case 0x0:
            switch marker {
            case 0x08: return .bool(false)
            case 0x09: return .bool(true)
            default:
                throw .binary(offset: offset, problem: "unsupported object marker 0x\(String(marker, radix: 16)); null and fill objects cannot be represented")
            }
        case 0x1:
            return .integer(try readInteger(at: offset + 1, exponent: info, markerOffset: offset))
        case 0x2:
            switch info {
            case 2:
                try requireBytes(4, at: offset + 1, for: "a 4-byte real")
                return .real(Double(Float(bitPattern: UInt32(Self.readUnsigned(bytes, at: offset + 1, size: 4)))))
            case 3:
                try requireBytes(8, at: offset + 1, for: "an 8-byte real")
                return .real(Double(bitPattern: Self.readUnsigned(bytes, at: offset + 1, size: 8)))
            default:
                throw .binary(offset: offset, problem: "expected a real of 4 or 8 bytes but found size code \(info)")
            }
        case 0x3:
            guard marker == 0x33 else {
                throw .binary(offset: offset, problem: "expected the date marker 0x33 but found 0x\(String(marker, radix: 16))")
            }
            try requireBytes(8, at: offset + 1, for: "a date")
            return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: Self.readUnsigned(bytes, at: offset + 1, size: 8))))
        case 0x4:
            let (count, start) = try readCount(info, at: offset)
            try requireBytes(count, at: start, for: "data of \(count) bytes")
            return .data(Data(bytes[start..<(start + count)]))
        case 0x5:
            let (count, start) = try readCount(info, at: offset)
            try requireBytes(count, at: start, for: "an ASCII string of \(count) bytes")
            let slice = bytes[start..<(start + count)]
            guard slice.allSatisfy({ $0 < 0x80 }) else {
                throw .binary(offset: offset, problem: "an ASCII string holds a byte above 0x7F")
            }
            return .string(String(decoding: slice, as: UTF8.self))
        case 0x6:
            let (count, start) = try readCount(info, at: offset)
            let (byteCount, overflow) = count.multipliedReportingOverflow(by: 2)
            guard !overflow else { throw .binary(offset: offset, problem: "a UTF-16 string length \(count) is too large") }
            try requireBytes(byteCount, at: start, for: "a UTF-16 string of \(count) code units")
            var units: [UInt16] = []
            units.reserveCapacity(count)
            for unit in 0..<count {
                units.append(UInt16(Self.readUnsigned(bytes, at: start + unit * 2, size: 2)))
            }
            guard let string = String(validating: units, as: UTF16.self) else {
                throw .binary(offset: offset, problem: "a UTF-16 string holds an unpaired surrogate")
            }
            return .string(string)
        case 0x7:
            // UTF-8 strings come from newer writers; accepting them costs nothing.
            let (count, start) = try readCount(info, at: offset)
            try requireBytes(count, at: start, for: "a UTF-8 string of \(count) bytes")
            guard let string = String(validating: bytes[start..<(start + count)], as: UTF8.self) else {
                throw .binary(offset: offset, problem: "a UTF-8 string is not valid UTF-8")
            }
            return .string(string)
        case 0xA, 0xC:
            let (count, start) = try readCount(info, at: offset)
            let references = try readReferences(count: count, at: start, markerOffset: offset)
            var elements: [PropertyListValue] = []
            elements.reserveCapacity(count)
            for reference in references {
                elements.append(try readObject(reference, depth: depth + 1))
            }
            return .array(elements)
        case 0xD:
            let (count, start) = try readCount(info, at: offset)
            let (doubled, overflow) = count.multipliedReportingOverflow(by: 2)
            guard !overflow else { throw .binary(offset: offset, problem: "a dictionary size \(count) is too large") }
            let references = try readReferences(count: doubled, at: start, markerOffset: offset)
            var entries: [String: PropertyListValue] = [:]
            for pair in 0..<count {
                guard case .string(let key) = try readObject(references[pair], depth: depth + 1) else {
                    throw .binary(offset: offset, problem: "dictionary key \(pair) is not a string")
                }
                entries[key] = try readObject(references[count + pair], depth: depth + 1)
            }
            return .dictionary(entries)
        case 0x8:
            throw .binary(offset: offset, problem: "UID objects (from keyed archives) are not supported")
        default:
            throw .binary(offset: offset, problem: "unknown object marker 0x\(String(marker, radix: 16))")
        }
    }

    /// Integers of 1, 2 and 4 bytes are unsigned, 8 bytes are signed, and 16-byte
    /// integers are accepted only when their value fits in 64 bits.
    private func readInteger(at start: Int, exponent: Int, markerOffset: Int) throws(PropertyListError) -> Int64 {
        guard exponent <= 4 else {
            throw .binary(offset: markerOffset, problem: "expected an integer of 1, 2, 4, 8 or 16 bytes but found size code \(exponent)")
        }
        let size = 1 << exponent
        try requireBytes(size, at: start, for: "an integer of \(size) bytes")
        if size == 16 {
            let high = Self.readUnsigned(bytes, at: start, size: 8)
            let low = Self.readUnsigned(bytes, at: start + 8, size: 8)
            let signed = Int64(bitPattern: low)
            guard (high == 0 && signed >= 0) || (high == UInt64.max && signed < 0) else {
                throw .binary(offset: markerOffset, problem: "a 16-byte integer does not fit in 64 bits")
            }
            return signed
        }
        let raw = Self.readUnsigned(bytes, at: start, size: size)
        return size == 8 ? Int64(bitPattern: raw) : Int64(raw)
    }

    /// A count below 15 is stored in the marker; 15 means an integer object follows.
    private func readCount(_ info: Int, at markerOffset: Int) throws(PropertyListError) -> (count: Int, start: Int) {
        if info < 0xF { return (info, markerOffset + 1) }
        let countMarkerOffset = markerOffset + 1
        try requireBytes(1, at: countMarkerOffset, for: "a length")
        let countMarker = bytes[countMarkerOffset]
        guard countMarker >> 4 == 0x1, countMarker & 0x0F <= 3 else {
            throw .binary(offset: countMarkerOffset, problem: "expected an integer length but found marker 0x\(String(countMarker, radix: 16))")
        }
        let exponent = Int(countMarker & 0x0F)
        let count = try readInteger(at: countMarkerOffset + 1, exponent: exponent, markerOffset: countMarkerOffset)
        guard count >= 0, count <= Int64(bytes.count) else {
            throw .binary(offset: countMarkerOffset, problem: "a length of \(count) is larger than the file")
        }
        return (Int(count), countMarkerOffset + 1 + (1 << exponent))
    }

    private func readReferences(count: Int, at start: Int, markerOffset: Int) throws(PropertyListError) -> [Int] {
        let (byteCount, overflow) = count.multipliedReportingOverflow(by: objectRefSize)
        guard !overflow else { throw .binary(offset: markerOffset, problem: "a collection of \(count) references is too large") }
        try requireBytes(byteCount, at: start, for: "\(count) object references")
        var references: [Int] = []
        references.reserveCapacity(count)
        for position in 0..<count {
            let reference = Self.readUnsigned(bytes, at: start + position * objectRefSize, size: objectRefSize)
            guard reference < UInt64(objectCount) else {
                throw .binary(offset: start + position * objectRefSize, problem: "object reference \(reference) is not below the object count \(objectCount)")
            }
            references.append(Int(reference))
        }
        return references
    }

    private func requireBytes(_ count: Int, at start: Int, for what: String) throws(PropertyListError) {
        guard count >= 0, start <= offsetTableOffset, offsetTableOffset - start >= count else {
            throw .binary(offset: start, problem: "expected \(what) but the object area ends at offset \(offsetTableOffset)")
        }
    }

    /// Big-endian; callers have checked the range.
    private static func readUnsigned(_ bytes: [UInt8], at start: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in start..<(start + size) {
            value = value << 8 | UInt64(bytes[index])
        }
        return value
    }
}
