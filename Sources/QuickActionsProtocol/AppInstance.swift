/// The name of one app's qactd instance (`qactd --app NAME`, the user units `qactd@NAME.service`
/// and `qactd@NAME.socket`). Every path of an instance follows from it — the configuration
/// `$XDG_CONFIG_HOME/qactd/NAME.conf`, the state folder `$XDG_STATE_HOME/qactd/NAME/`, the socket
/// `$XDG_RUNTIME_DIR/qactd/NAME.sock` — and both the daemon and qactl derive them here, so the
/// two cannot disagree about where an app's daemon listens.
///
/// The name becomes a file name in three folders and a systemd instance name, so it is kept to
/// what is safe in all of them: letters, digits, `.`, `_` and `-`, beginning with a letter or a
/// digit (no `/`, no hidden or `..` file, nothing that reads as an option), at most `maxLength`
/// bytes, which keeps the socket's path well inside a Unix socket address.
public struct AppName: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The validated name.
    public let name: String

    /// The longest name, in UTF-8 bytes.
    public static let maxLength = 64

    /// The plain instance's file names (`qactd.conf`, `qactd.sock`) are `qactd`, so an app of that
    /// name would take the plain daemon's configuration and socket.
    public static let reservedName = "qactd"

    /// The name, if it is one; throws `AppNameError` saying why it is not (empty, too long, a character not
    /// allowed, a bad first character, or `qactd`).
    public init(validating name: String) throws(AppNameError) {
        guard let first = name.unicodeScalars.first else { throw .empty }
        guard name.utf8.count <= Self.maxLength else { throw .tooLong(name: name, limit: Self.maxLength) }
        if let bad = name.unicodeScalars.first(where: { !Self.isAllowed($0) }) {
            throw .invalidCharacter(name: name, character: String(bad))
        }
        guard Self.isLetterOrDigit(first) else { throw .invalidFirstCharacter(name: name) }
        guard name != Self.reservedName else { throw .reserved(name: name) }
        self.name = name
    }

    /// The name itself.
    public var description: String { name }

    /// Orders names by their text.
    public static func < (lhs: AppName, rhs: AppName) -> Bool { lhs.name < rhs.name }

    /// The instance's configuration file, in the user's qactd configuration folder.
    public var configurationFileName: String { name + ".conf" }

    /// The instance's state folder, inside `$XDG_STATE_HOME/qactd`.
    public var stateFolderName: String { name }

    /// The instance's socket, in the runtime folder (`InstancePaths.runtimeFolder`).
    public var socketFileName: String { name + InstancePaths.socketSuffix }

    /// The systemd user units that run this instance.
    public var serviceUnit: String { "qactd@\(name).service" }
    /// The socket unit that starts the instance on its first connection.
    public var socketUnit: String { "qactd@\(name).socket" }

    private static func isLetterOrDigit(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        isLetterOrDigit(scalar) || scalar == "." || scalar == "_" || scalar == "-"
    }
}

/// Why a string is not an app name; each description names the string.
public enum AppNameError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    case tooLong(name: String, limit: Int)
    case invalidCharacter(name: String, character: String)
    case invalidFirstCharacter(name: String)
    case reserved(name: String)

    /// One sentence naming the string and what an app name is.
    public var description: String {
        let allowed = "letters, digits, \".\", \"_\" and \"-\", beginning with a letter or digit"
        switch self {
        case .empty:
            return "The app name is empty; an app name is \(allowed)."
        case .tooLong(let name, let limit):
            return "The app name \"\(name)\" is longer than \(limit) bytes."
        case .invalidCharacter(let name, let character):
            let shown = character.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F }
                ? "\"\(character)\"" : "U+" + String(character.unicodeScalars.first!.value, radix: 16, uppercase: true)
            return "The app name \"\(name)\" holds \(shown); an app name is \(allowed)."
        case .invalidFirstCharacter(let name):
            return "The app name \"\(name)\" does not begin with a letter or digit; an app name is \(allowed)."
        case .reserved(let name):
            return "The app name \"\(name)\" is the plain instance's own (qactd.conf, qactd.sock); run qactd without --app for it, or pick another name."
        }
    }
}

/// Which qactd instance: the plain one (`qactd.service`) or one app's.
public enum InstanceName: Hashable, Sendable, Comparable, CustomStringConvertible {
    case plain
    case app(AppName)

    /// The app, or nil for the plain instance.
    public var app: AppName? {
        if case .app(let app) = self { return app }
        return nil
    }

    /// The stem of the instance's socket and configuration file names.
    public var fileStem: String { app?.name ?? AppName.reservedName }

    /// The instance's socket file name, in the runtime folder (`qactd.sock`, `NAME.sock`).
    public var socketFileName: String { fileStem + InstancePaths.socketSuffix }

    /// The instance a socket file in the runtime folder belongs to: the plain one for
    /// `qactd.sock`, an app for `NAME.sock` with a valid name; nil for anything else found there.
    public init?(socketFileName fileName: String) {
        guard fileName.hasSuffix(InstancePaths.socketSuffix) else { return nil }
        let stem = String(fileName.dropLast(InstancePaths.socketSuffix.count))
        if stem == AppName.reservedName {
            self = .plain
        } else if let app = try? AppName(validating: stem) {
            self = .app(app)
        } else {
            return nil
        }
    }

    /// The app's name, or "the plain instance".
    public var description: String { app?.name ?? "the plain instance" }

    /// The plain instance first, then the apps by name.
    public static func < (lhs: InstanceName, rhs: InstanceName) -> Bool {
        switch (lhs.app, rhs.app) {
        case (nil, nil), (_?, nil): return false
        case (nil, _?): return true
        case (let left?, let right?): return left < right
        }
    }
}

/// Where the instances' sockets live, for the daemon's default `[Daemon] Socket=` and for qactl.
public enum InstancePaths {
    /// The ending of every instance's socket file name.
    public static let socketSuffix = ".sock"

    /// `$XDG_RUNTIME_DIR/qactd`; a process started without `XDG_RUNTIME_DIR` (or with a relative
    /// one) still has the folder systemd-logind makes, `/run/user/UID`.
    public static func runtimeFolder(xdgRuntimeDirectory: String?, userID: UInt32) -> String {
        let base = xdgRuntimeDirectory.flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/run/user/\(userID)"
        return (base.hasSuffix("/") && base.count > 1 ? String(base.dropLast()) : base) + "/qactd"
    }

    /// An instance's socket in `runtimeFolder`.
    public static func socketPath(of instance: InstanceName, runtimeFolder: String) -> String {
        runtimeFolder + "/" + instance.socketFileName
    }
}
