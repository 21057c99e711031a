#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A property-list value: the Linux twin of the `NSSecureCoding` types a
/// `UIApplicationShortcutItem.userInfo` may hold.
public indirect enum PropertyListValue: Hashable, Sendable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    case date(Date)
    case data(Data)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])
}
