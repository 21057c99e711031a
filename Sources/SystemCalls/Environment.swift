#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's environment as `NAME=value` entries, in `environ`'s order.
public func environmentEntries() -> [String] {
    var entries: [String] = []
    var cursor = environ
    while let entry = cursor.pointee {
        entries.append(String(cString: entry))
        cursor += 1
    }
    return entries
}

/// The process's environment by name; a name given twice has its first value, as getenv(3) reads it.
public func environmentVariables() -> [String: String] {
    var variables: [String: String] = [:]
    for entry in environmentEntries() {
        guard let equals = entry.firstIndex(of: "=") else { continue }
        let name = String(entry[..<equals])
        if variables[name] == nil { variables[name] = String(entry[entry.index(after: equals)...]) }
    }
    return variables
}
