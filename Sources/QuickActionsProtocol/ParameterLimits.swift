/// The longest each string parameter may be, in UTF-8 bytes. A longer one is refused with
/// `org.varlink.service.InvalidParameter` naming it: the daemon keeps `appVersion` and copies
/// it into every dynamic item, so an unbounded one would grow its memory and state file.
public enum ParameterLimits {
    /// The app's version.
    public static let appVersionBytes = 256
    /// An item type, a contact identifier or a token.
    public static let identifierBytes = 1024
    /// A language or a `LANGUAGE`-style list.
    public static let languageBytes = 256
    /// The types one `RemoveItems` names.
    public static let maxListedTypes = 1024
}

/// Call parameters that name their first string over its limit.
public protocol BoundedParameters: Decodable {
    /// The name of the first parameter longer than its limit, or nil.
    var oversizedParameter: String? { get }
}

extension BoundedParameters {
    /// `name` when `value` has more than `maxBytes` UTF-8 bytes.
    static func name(_ name: String, of value: String?, ifOver maxBytes: Int) -> String? {
        guard let value, value.utf8.count > maxBytes else { return nil }
        return name
    }
}

extension NoParameters: BoundedParameters {
    /// Always nil: there is no parameter.
    public var oversizedParameter: String? { nil }
}

extension ListParameters: BoundedParameters {
    /// `language` when it is longer than `ParameterLimits.languageBytes`.
    public var oversizedParameter: String? { Self.name("language", of: language, ifOver: ParameterLimits.languageBytes) }
}

extension AppVersionParameters: BoundedParameters {
    /// `appVersion` when it is longer than `ParameterLimits.appVersionBytes`.
    public var oversizedParameter: String? { Self.name("appVersion", of: appVersion, ifOver: ParameterLimits.appVersionBytes) }
}

extension TriggerParameters: BoundedParameters {
    /// The first of `type`, `contactIdentifier` and `pinned` longer than `ParameterLimits.identifierBytes`.
    public var oversizedParameter: String? {
        Self.name("type", of: type, ifOver: ParameterLimits.identifierBytes)
            ?? Self.name("contactIdentifier", of: contactIdentifier, ifOver: ParameterLimits.identifierBytes)
            ?? Self.name("pinned", of: pinned, ifOver: ParameterLimits.identifierBytes)
    }
}

extension UnpinParameters: BoundedParameters {
    /// `identifier` when it is longer than `ParameterLimits.identifierBytes`.
    public var oversizedParameter: String? { Self.name("identifier", of: identifier, ifOver: ParameterLimits.identifierBytes) }
}

extension CompleteParameters: BoundedParameters {
    /// `token` when it is longer than `ParameterLimits.identifierBytes`.
    public var oversizedParameter: String? { Self.name("token", of: token, ifOver: ParameterLimits.identifierBytes) }
}

extension GetContactParameters: BoundedParameters {
    /// `identifier` when it is longer than `ParameterLimits.identifierBytes`.
    public var oversizedParameter: String? { Self.name("identifier", of: identifier, ifOver: ParameterLimits.identifierBytes) }
}
