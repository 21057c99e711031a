/// Which users this process can tell apart. In the user namespace the systemd units give the
/// daemon (`PrivateUsers=yes`) only the user's own uid is mapped: every other user, root
/// included, shows as the overflow uid (nobody), so a peer can never be recognised as root.
enum UserNamespace {
    /// Whether `uid` is mapped by `uidMap`, the text of `/proc/self/uid_map` (lines of
    /// "first-uid-inside first-uid-outside count").
    static func maps(_ uid: UInt32, uidMap: String) -> Bool {
        for line in uidMap.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count == 3, let inside = UInt64(fields[0]), let count = UInt64(fields[2]) else { continue }
            if UInt64(uid) >= inside, UInt64(uid) - inside < count { return true }
        }
        return false
    }

    /// Whether root can be seen as root by this process: true in the initial namespace (and
    /// where `/proc` cannot tell), false under the units' `PrivateUsers=yes`.
    static let mapsRoot: Bool = {
        guard let bytes = try? FileIO.readFileIfPresent("/proc/self/uid_map") else { return true }
        return maps(0, uidMap: String(decoding: bytes, as: UTF8.self))
    }()
}
