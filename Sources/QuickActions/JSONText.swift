#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A value written as the JSON text its `Codable` conformance gives (keys sorted, slashes
/// not escaped): the state file and the `List` and `Watch` payloads. One encoder for all
/// three, so what is on disk and on the socket is what the shared conformances define; a set
/// capped at a few items makes `JSONEncoder`'s cost a few microseconds of a change.
public protocol JSONTextRepresentable: Encodable {}

extension JSONTextRepresentable {
    /// Compact text, or `pretty`: two-space indentation and `"key" : value`.
    public func jsonText(pretty: Bool) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(self))
    }
}

extension QuickActionsListing: JSONTextRepresentable {}
extension PersistedState: JSONTextRepresentable {}
