/// Which languages the user prefers, most preferred first (to pick the `.lproj` whose strings
/// translate the static items), read much as gettext
/// reads them: `LANGUAGE` (a colon-separated list) first, then the locale of messages, which
/// is the first set of `LC_ALL`, `LC_MESSAGES`, `LANG`. Unlike gettext, `LANGUAGE` counts
/// under the `C` locale too: a service manager often starts the daemon without a locale. Each entry loses its encoding and
/// modifier (`fr_CA.UTF-8@euro` → `fr_CA`) and is followed by its base language (`fr`);
/// `C` and `POSIX` state no preference.
public struct LanguagePreference: Hashable, Sendable {
    /// Normalized (`pt-BR` and `pt_BR` are both `pt_BR`), without duplicates.
    public var languages: [String]

    /// The languages given, normalized, duplicates dropped and each followed by its base language; `C` and
    /// `POSIX` dropped.
    public init(languages: [String]) {
        var seen: Set<String> = []
        var ordered: [String] = []
        for language in languages {
            guard let normalized = Self.normalize(language) else { continue }
            for candidate in [normalized, Self.baseLanguage(of: normalized)] where seen.insert(candidate.lowercased()).inserted {
                ordered.append(candidate)
            }
        }
        self.languages = ordered
    }

    /// The process's preference, from its environment.
    public init(environment: [String: String]) {
        var entries: [String] = []
        if let list = environment["LANGUAGE"] {
            entries += list.split(separator: ":").map(String.init)
        }
        if let locale = ["LC_ALL", "LC_MESSAGES", "LANG"].lazy.compactMap({ environment[$0] }).first(where: { !$0.isEmpty }) {
            entries.append(locale)
        }
        self.init(languages: entries)
    }

    /// An explicit request (`List(language:)`, `qactl list --language`): one language or a
    /// `LANGUAGE`-style colon-separated list.
    public init(requested: String) {
        self.init(languages: requested.split(separator: ":").map(String.init))
    }

    /// `fr_CA.UTF-8@euro` → `fr_CA`; `pt-BR` → `pt_BR`; nil for `C`, `POSIX` and empty entries.
    static func normalize(_ entry: String) -> String? {
        var text = Substring(entry)
        if let at = text.firstIndex(of: "@") { text = text[..<at] }
        if let dot = text.firstIndex(of: ".") { text = text[..<dot] }
        let normalized = String(text.trimming(while: \.isWhitespace)).replacingAll("-", with: "_")
        if normalized.isEmpty || normalized == "C" || normalized == "POSIX" { return nil }
        return normalized
    }

    /// `fr_CA` → `fr`; `fr` → `fr`.
    static func baseLanguage(of language: String) -> String {
        language.split(separator: "_", maxSplits: 1).first.map(String.init) ?? language
    }
}

/// The translations found beside a static-items file: one strings table per `<lang>.lproj`,
/// and the development language (`CFBundleDevelopmentRegion`). Static items keep their keys;
/// a listing is translated when it is composed, so each call may ask for its own language.
public struct Localization: Hashable, Sendable {
    /// Keyed by the `.lproj` folder's language, normalized like `LanguagePreference`'s entries.
    public private(set) var tables: [String: [String: String]]
    /// `CFBundleDevelopmentRegion`: the language a missing translation falls back to first.
    public var developmentRegion: String?

    /// `tables` is keyed by language (`fr`, `pt-BR`, `Base`), as the `.lproj` folder names it.
    public init(tables: [String: [String: String]] = [:], developmentRegion: String? = nil) {
        var normalized: [String: [String: String]] = [:]
        for (language, table) in tables {
            guard let key = LanguagePreference.normalize(language)?.lowercased() else { continue }
            normalized[key, default: [:]].merge(table) { _, new in new }
        }
        self.tables = normalized
        self.developmentRegion = developmentRegion
    }

    /// Whether there are no translations at all.
    public var isEmpty: Bool { tables.isEmpty }

    /// The strings file each `<lang>.lproj` folder beside the static-items file holds.
    public static let stringsFileName = "InfoPlist.strings"

    /// `fr.lproj` → `fr`; nil for a name that is not a `.lproj` folder.
    public static func language(ofFolder name: String) -> String? {
        let suffix = ".lproj"
        guard name.hasSuffix(suffix), name.count > suffix.count else { return nil }
        return String(name.dropLast(suffix.count))
    }

    /// The tables to look in, in order: each preferred language (each followed by its base),
    /// then the development language, `Base` and `en`.
    public func lookupOrder(for preference: LanguagePreference) -> [String] {
        var fallbacks = preference.languages
        if let developmentRegion { fallbacks.append(developmentRegion) }
        fallbacks += ["Base", "en"]
        return LanguagePreference(languages: fallbacks).languages
    }

    /// The translation of `key` in the first table that has it, else the key itself.
    public func string(for key: String, preference: LanguagePreference) -> String {
        for language in lookupOrder(for: preference) {
            if let translated = tables[language.lowercased()]?[key] { return translated }
        }
        return key
    }

    /// Whether some table translates `key` (what `qactl validate` checks).
    public func hasTranslation(for key: String) -> Bool {
        tables.values.contains { $0[key] != nil }
    }

    /// The listing with the titles and subtitles of its static rows translated; dynamic rows
    /// (contact names) are not localization keys and stay as they are.
    public func localizing(_ listing: QuickActionsListing, for preference: LanguagePreference) -> QuickActionsListing {
        guard !tables.isEmpty else { return listing }
        var localized = listing
        for index in localized.items.indices where localized.items[index].source == .static {
            localized.items[index].item = localizing(localized.items[index].item, for: preference)
        }
        return localized
    }

    /// `item` with its title and subtitle, which are localization keys, translated for `preference`; the rest
    /// kept.
    public func localizing(_ item: ShortcutItem, for preference: LanguagePreference) -> ShortcutItem {
        ShortcutItem(
            type: item.type, title: string(for: item.title, preference: preference),
            subtitle: item.subtitle.map { string(for: $0, preference: preference) }, icon: item.icon, userInfo: item.userInfo)
    }
}

