#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The ISO 8601 spelling property lists use for dates (`2024-01-01T00:00:00Z`).
/// Written by hand with civil-calendar arithmetic so it behaves the same with or
/// without full Foundation and never consults a time zone database.
enum PropertyListDate {
    private static let unixSecondsAtReferenceDate: Int64 = 978_307_200

    /// Accepts `YYYY-MM-DDTHH:MM:SS` with an optional fraction and a `Z` suffix.
    static func parse(_ text: Substring) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...daysInMonth(month, year: year)).contains(day),
              hour < 24, minute < 60, second <= 60
        else { return nil }
        var fraction = 0.0
        if bytes.count > 20 {
            guard bytes[19] == UInt8(ascii: "."), bytes.count > 21 else { return nil }
            var scale = 0.1
            for index in 20..<(bytes.count - 1) {
                guard let digit = number(index..<(index + 1)) else { return nil }
                fraction += Double(digit) * scale
                scale /= 10
            }
        } else if bytes[19] != UInt8(ascii: "Z") {
            return nil
        }
        let days = Int64(daysFromCivil(year: year, month: month, day: day))
        let unixSeconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
        return Date(timeIntervalSinceReferenceDate: Double(unixSeconds - unixSecondsAtReferenceDate) + fraction)
    }

    /// Whole seconds are written without a fraction (as plists do); anything
    /// finer keeps millisecond precision.
    static func format(_ date: Date) -> String {
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.isFinite, abs(interval) < 1e15 else { return "0001-01-01T00:00:00Z" }
        let wholeSeconds = interval.rounded(.down)
        let milliseconds = Int(((interval - wholeSeconds) * 1000).rounded())
        var unixSeconds = Int64(wholeSeconds) + unixSecondsAtReferenceDate
        var extraMilliseconds = milliseconds
        if extraMilliseconds >= 1000 {
            unixSeconds += 1
            extraMilliseconds -= 1000
        }
        let days = floorDivide(unixSeconds, 86_400)
        let secondOfDay = Int(unixSeconds - days * 86_400)
        let (year, month, day) = civilFromDays(days)
        var text = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
            + pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        if extraMilliseconds > 0 { text += "." + pad(extraMilliseconds, 3) }
        return text + "Z"
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(abs(value))
        let padded = String(repeating: "0", count: max(0, width - digits.count)) + digits
        return value < 0 ? "-" + padded : padded
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return (value % divisor < 0) ? quotient - 1 : quotient
    }

    private static func isLeapYear(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    private static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Howard Hinnant's days-from-civil algorithms (proleptic Gregorian calendar).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civilFromDays(_ days: Int64) -> (Int, Int, Int) {
        let shifted = Int(days) + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}
