/// FNV-1a, 64 bits, as 16 hexadecimal digits: the same in every run and on every machine
/// (Swift's `Hasher` is seeded), for names made from what they name (action identifiers,
/// faces' and cards' files).
public enum StableHash {
    /// The 64-bit FNV-1a hash of `bytes`, as 16 lowercase hexadecimal digits.
    @inlinable
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            value ^= UInt64(byte)
            value &*= 0x0000_0100_0000_01b3
        }
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
