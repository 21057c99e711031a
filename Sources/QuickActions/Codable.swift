#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The JSON shapes below are shared by the state file and the Varlink wire (where
// these model types are the messages themselves, not copies of them), so they
// are written by hand rather than synthesised: a renamed Swift case or property
// must never silently change what is on disk or on the socket.

extension ShortcutIcon: Codable {
    private enum CodingKeys: String, CodingKey { case kind, name }

    /// `{"kind":"system","name":"search"}`, `{"kind":"symbol","name":"star.fill"}`,
    /// `{"kind":"file","name":"/p/x.png"}`, `{"kind":"themed","name":"document-open"}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .system(let type):
            try container.encode("system", forKey: .kind)
            try container.encode(type.rawValue, forKey: .name)
        case .symbol(let name):
            try container.encode("symbol", forKey: .kind)
            try container.encode(name, forKey: .name)
        case .templateFile(let path):
            try container.encode("file", forKey: .kind)
            try container.encode(path, forKey: .name)
        case .themed(let name):
            try container.encode("themed", forKey: .kind)
            try container.encode(name, forKey: .name)
        }
    }

    /// Decodes `{kind, name}`; throws `DecodingError` for an unknown kind or a system type with no spelling.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(String.self, forKey: .kind)
        let name = try container.decode(String.self, forKey: .name)
        switch kind {
        case "system":
            guard let type = SystemIconType(spelling: name) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .name, in: container,
                    debugDescription: "Unknown icon type \"\(name)\"; expected one of \(SystemIconType.allSpellings).")
            }
            self = .system(type)
        case "symbol":
            self = .symbol(name)
        case "file":
            self = .templateFile(name)
        case "themed":
            self = .themed(name)
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .kind, in: container,
                debugDescription: "Unknown icon kind \"\(kind)\"; expected \"system\", \"symbol\", \"themed\" or \"file\".")
        }
    }
}

extension ShortcutItem: Codable {
    private enum CodingKeys: String, CodingKey { case type, title, subtitle, icon, userInfo }

    /// `subtitle` and `icon` are omitted when nil and `userInfo` when empty.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
        try container.encode(title, forKey: .title)
        try container.encodeIfPresent(subtitle, forKey: .subtitle)
        try container.encodeIfPresent(icon, forKey: .icon)
        if !userInfo.isEmpty { try container.encode(userInfo, forKey: .userInfo) }
    }

    /// Decodes the IDL's `Item`; omitted `subtitle`, `icon` and `userInfo` are nil, nil and empty.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            type: try container.decode(String.self, forKey: .type),
            title: try container.decode(String.self, forKey: .title),
            subtitle: try container.decodeIfPresent(String.self, forKey: .subtitle),
            icon: try container.decodeIfPresent(ShortcutIcon.self, forKey: .icon),
            userInfo: try container.decodeIfPresent([String: PropertyListValue].self, forKey: .userInfo) ?? [:])
    }
}

extension ListedShortcut: Codable {
    private enum CodingKeys: String, CodingKey { case item, source, displayed, position, usage }

    /// `{"item":{…},"source":"static","displayed":true,"position":1}`: a row of `List` and `Watch`;
    /// an item ever chosen adds `"usage":{"lastUsed":…,"score":…}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(item, forKey: .item)
        try container.encode(source, forKey: .source)
        try container.encode(displayed, forKey: .displayed)
        try container.encode(position, forKey: .position)
        try container.encodeIfPresent(usage, forKey: .usage)
    }

    /// Decodes the IDL's `ListedItem`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            item: try container.decode(ShortcutItem.self, forKey: .item),
            source: try container.decode(ShortcutSource.self, forKey: .source),
            displayed: try container.decode(Bool.self, forKey: .displayed),
            position: try container.decode(Int.self, forKey: .position),
            usage: try container.decodeIfPresent(ShortcutUsage.self, forKey: .usage))
    }
}

extension ShortcutUsage: Codable {
    private enum CodingKeys: String, CodingKey { case score, lastUsed }

    /// `{"lastUsed":1795000000,"score":2.5}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(lastUsed, forKey: .lastUsed)
        try container.encode(score, forKey: .score)
    }

    /// Decodes the IDL's `Usage`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(score: try container.decode(Double.self, forKey: .score), lastUsed: try container.decode(Int64.self, forKey: .lastUsed))
    }
}

extension RecomputeOutcome: Codable {
    private enum CodingKeys: String, CodingKey { case changed, generation, dynamicCount, persisted }

    /// `{"changed":true,"generation":3,"dynamicCount":2,"persisted":true}`: the reply of `ResignActive`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(changed, forKey: .changed)
        try container.encode(generation, forKey: .generation)
        try container.encode(dynamicCount, forKey: .dynamicCount)
        try container.encode(persisted, forKey: .persisted)
    }

    /// Decodes `ResignActive`'s reply; an omitted `persisted` is true.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            changed: try container.decode(Bool.self, forKey: .changed),
            generation: try container.decode(UInt64.self, forKey: .generation),
            dynamicCount: try container.decode(Int.self, forKey: .dynamicCount),
            // A daemon from before `persisted` existed said nothing: its writes were not reported.
            persisted: try container.decodeIfPresent(Bool.self, forKey: .persisted) ?? true)
    }
}

/// Natural JSON: strings, numbers, booleans, arrays and objects. JSON has no date
/// or data type, so a date encodes as an ISO 8601 string and data as a base64
/// string; this is one-way, and both decode back as `.string`. An integral JSON
/// number decodes as `.integer`, any other as `.real` (so a whole-valued `.real`
/// such as 2.0, which JSON writes as `2`, comes back as `.integer(2)`).
extension PropertyListValue: Codable {
    /// Encodes the value as the JSON value it maps to (a date as its ISO 8601 string, data as base64).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let string): try container.encode(string)
        case .integer(let integer): try container.encode(integer)
        case .real(let real): try container.encode(real)
        case .bool(let bool): try container.encode(bool)
        case .date(let date): try container.encode(PropertyListDate.format(date))
        case .data(let data): try container.encode(data.base64EncodedString())
        case .array(let array): try container.encode(array)
        case .dictionary(let dictionary): try container.encode(dictionary)
        }
    }

    /// Decodes a JSON value: a Boolean as `.bool`, a whole number as `.integer`, any other number as `.real`;
    /// throws `DecodingError` for `null`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Bool first: decoders refuse to read a JSON bool as a number, but the
        // order keeps `true` from ever becoming 1 with a more lenient decoder.
        if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let integer = try? container.decode(Int64.self) {
            self = .integer(integer)
        } else if let real = try? container.decode(Double.self) {
            self = .real(real)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([PropertyListValue].self) {
            self = .array(array)
        } else if let dictionary = try? container.decode([String: PropertyListValue].self) {
            self = .dictionary(dictionary)
        } else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "Expected a string, number, boolean, array or object; null has no property-list equivalent.")
        }
    }
}
