#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The ISO 8601 spelling property lists use for dates (`2024-01-01T00:00:00Z`), read
/// and written with FoundationEssentials' `Date.ISO8601FormatStyle` (always UTC, so
/// no time zone database is consulted). Like Foundation's Gregorian calendar, the
/// style counts Julian calendar days before 15 October 1582.
enum PropertyListDate {
    private static let style = Date.ISO8601FormatStyle()

    /// Beyond about ±300,000 years the style stops counting years; such dates (and
    /// non-finite ones from a binary plist) are written as the earliest ISO 8601 date.
    private static let formattableSeconds = 1e13
    private static let fallback = "0001-01-01T00:00:00Z"

    /// Accepts `YYYY-MM-DDTHH:MM:SS` with an optional fraction and a `Z` suffix.
    static func parse(_ text: Substring) -> Date? {
        // A leap second reads as the first second of the next minute.
        if text.dropFirst(17).hasPrefix("60"), let date = parse(text.prefix(17) + "59" + text.dropFirst(19)) {
            return date + 1
        }
        guard text.last == "Z", let date = try? style.parse(String(text)) else { return nil }
        // The style reads 2023-02-29 as March 1st and 24:00:00 as the next day's midnight:
        // a date must print back (to the second) the way it was written.
        let wholeSeconds = Date(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate.rounded(.down))
        guard style.format(wholeSeconds).dropLast() == text.prefix(19) else { return nil }
        return date
    }

    /// Whole seconds are written without a fraction (as plists do); anything
    /// finer keeps millisecond precision, rounded.
    static func format(_ date: Date) -> String {
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.isFinite, abs(interval) < formattableSeconds else { return fallback }
        var wholeSeconds = interval.rounded(.down)
        var milliseconds = Int(((interval - wholeSeconds) * 1000).rounded())
        if milliseconds == 1000 {
            wholeSeconds += 1
            milliseconds = 0
        }
        let text = style.format(Date(timeIntervalSinceReferenceDate: wholeSeconds))
        guard milliseconds > 0 else { return text }
        let digits = String(milliseconds)
        return text.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }
}
