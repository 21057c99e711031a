/// `mimeapps.list` files as the freedesktop MIME Applications Associations specification
/// reads them, and its choice of the default application for a MIME type. Pure: the shell
/// reads the files and says which desktop entries exist.
public struct MimeAppsList: Hashable, Sendable {
    /// The group naming each MIME type's default applications.
    public static let defaultApplications = "Default Applications"
    /// The group adding applications to a MIME type.
    public static let addedAssociations = "Added Associations"
    /// The group taking applications away from a MIME type.
    public static let removedAssociations = "Removed Associations"

    /// The file the list was read from.
    public let path: String
    /// Group → MIME type → desktop-file IDs, in the file's order.
    public private(set) var groups: [String: [String: [String]]] = [:]

    /// Lines that are neither a group, a key nor a comment are skipped, as GLib skips them: one
    /// bad line must not lose a person's other associations.
    public init(path: String, text: String) {
        self.path = path
        var group: String?
        for rawLine in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            let line = rawLine.trimmingBlanks()
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                group = String(line.dropFirst().dropLast())
                continue
            }
            guard let group, let equals = line.firstIndex(of: "=") else { continue }
            let mimeType = line[..<equals].trimmingBlanks().lowercased()
            let identifiers = DesktopEntryList.split(String(line[line.index(after: equals)...]))
            // A key given twice: the last one wins, as in every key file.
            groups[group, default: [:]][mimeType] = identifiers
        }
    }

    /// The desktop-file IDs `group` names for `mimeType` (compared lowercased), in the file's order.
    public func identifiers(in group: String, for mimeType: String) -> [String] {
        groups[group]?[mimeType.lowercased()] ?? []
    }

    /// Where the lists are, most preferred first: for each of `$XDG_CONFIG_HOME`, each of
    /// `$XDG_CONFIG_DIRS`, `$XDG_DATA_HOME/applications` and each `$XDG_DATA_DIRS/…/applications`,
    /// the current desktops' `<desktop>-mimeapps.list` (from `$XDG_CURRENT_DESKTOP`, lower case)
    /// then `mimeapps.list`. Relative values of the variables are ignored, as the XDG Base
    /// Directory specification asks.
    public static func locations(environment: [String: String]) -> [String] {
        var folders: [String] = []
        if let configHome = XDGFolders.home("XDG_CONFIG_HOME", ".config", environment) { folders.append(configHome) }
        folders += XDGFolders.list("XDG_CONFIG_DIRS", ["/etc/xdg"], environment)
        folders += XDGFolders.applications(environment: environment)
        let desktops = (environment["XDG_CURRENT_DESKTOP"] ?? "").split(separator: ":").map { $0.lowercased() }.filter { !$0.isEmpty && !$0.contains("/") }
        var paths: [String] = []
        for folder in folders {
            for name in desktops.map({ "\($0)-mimeapps.list" }) + ["mimeapps.list"] {
                let path = folder + "/" + name
                if !paths.contains(path) { paths.append(path) }
            }
        }
        return paths
    }
}

/// The XDG Base Directory folders the specifications here read, from an environment.
public enum XDGFolders {
    /// `$XDG_DATA_HOME/applications`, then each `$XDG_DATA_DIRS/…/applications`: where launchers
    /// find desktop entries, most preferred first.
    public static func applications(environment: [String: String]) -> [String] {
        var folders: [String] = []
        if let dataHome = home("XDG_DATA_HOME", ".local/share", environment) { folders.append(dataHome + "/applications") }
        folders += list("XDG_DATA_DIRS", ["/usr/local/share", "/usr/share"], environment).map { $0 + "/applications" }
        return folders
    }

    /// `$name` when absolute (a relative value is ignored, as the specification asks), else
    /// `$HOME/fallback`; nil without either.
    public static func home(_ name: String, _ fallback: String, _ environment: [String: String]) -> String? {
        if let value = environment[name], value.hasPrefix("/") { return value }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return (home == "/" ? "" : home) + "/" + fallback
    }

    /// The absolute folders of the `:`-separated `$name`, else `fallback`.
    public static func list(_ name: String, _ fallback: [String], _ environment: [String: String]) -> [String] {
        let listed = (environment[name] ?? "").split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        return listed.isEmpty ? fallback : listed
    }
}

/// Which application handles a MIME type, and why.
public struct MimeAppsChoice: Hashable, Sendable {
    /// Which rule of the specification chose the application.
    public enum Reason: Hashable, Sendable {
        /// The first installed ID of `[Default Applications]` in the most preferred list that names one.
        case defaultApplication(list: String)
        /// No list names an installed default: the first installed ID of `[Added Associations]`,
        /// lists in order, not removed by a more preferred list's `[Removed Associations]`.
        case addedAssociation(list: String)
        /// Nothing in the lists: the first installed entry whose `MimeType=` lists the type.
        case declaredByEntry
    }

    /// The chosen application's desktop-file ID.
    public let desktopFileID: String
    /// Which rule chose it.
    public let reason: Reason

    /// The choice of `desktopFileID` by `reason`.
    public init(desktopFileID: String, reason: Reason) {
        self.desktopFileID = desktopFileID
        self.reason = reason
    }

    /// The specification's choice. `isInstalled` says whether an ID's entry exists (and is not
    /// hidden); `declaring` are the IDs of the installed entries whose `MimeType=` lists the type,
    /// in the order of the data folders. nil when nothing handles it.
    public static func choose(
        _ mimeType: String, lists: [MimeAppsList], isInstalled: (String) -> Bool, declaring: () -> [String] = { [] }
    ) -> MimeAppsChoice? {
        for list in lists {
            if let id = list.identifiers(in: MimeAppsList.defaultApplications, for: mimeType).first(where: isInstalled) {
                return MimeAppsChoice(desktopFileID: id, reason: .defaultApplication(list: list.path))
            }
        }
        var removed: Set<String> = []
        for list in lists {
            let added = list.identifiers(in: MimeAppsList.addedAssociations, for: mimeType)
            if let id = added.first(where: { !removed.contains($0) && isInstalled($0) }) {
                return MimeAppsChoice(desktopFileID: id, reason: .addedAssociation(list: list.path))
            }
            removed.formUnion(list.identifiers(in: MimeAppsList.removedAssociations, for: mimeType))
        }
        if let id = declaring().first(where: { !removed.contains($0) }) {
            return MimeAppsChoice(desktopFileID: id, reason: .declaredByEntry)
        }
        return nil
    }
}

extension MimeAppsChoice.Reason {
    /// Where the choice was read, for people: "[Default Applications] of /home/u/.config/mimeapps.list".
    public var explanation: String {
        switch self {
        case .defaultApplication(let list): "[\(MimeAppsList.defaultApplications)] of \(list)"
        case .addedAssociation(let list): "[\(MimeAppsList.addedAssociations)] of \(list)"
        case .declaredByEntry: "no mimeapps.list names one; its desktop entry's MimeType= lists it"
        }
    }

    /// The mimeapps.list the choice was read from; nil when it came from the entry itself.
    public var list: String? {
        switch self {
        case .defaultApplication(let list), .addedAssociation(let list): list
        case .declaredByEntry: nil
        }
    }
}
