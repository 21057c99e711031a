import QuickActions

/// Where qactd's launchers go and where the app's own entry is looked for.
///
/// qactd publishes its launchers the way Flatpak publishes an app's: in a folder of its own,
/// `$XDG_DATA_HOME/qactd/exports/share/applications`, never in the person's
/// `$XDG_DATA_HOME/applications`. The package's systemd user environment generator (and its
/// `profile.d` script for logins without systemd) puts `…/qactd/exports/share` in front of
/// `XDG_DATA_DIRS`, so launchers find the exported entry before the app's own; once the package
/// is removed no session has the folder any more, and nothing qactd wrote acts.
struct ExportFolders: Equatable, Sendable {
    /// `$XDG_DATA_HOME` (else `~/.local/share`).
    let dataHome: String
    /// `$XDG_DATA_DIRS` as given (else `/usr/local/share:/usr/share`), qactd's exports included.
    let dataDirectories: [String]

    init?(environment: [String: String]) {
        guard let dataHome = XDGFolder.dataHome.path(in: environment) else { return nil }
        self.dataHome = dataHome
        dataDirectories = XDGFolders.list("XDG_DATA_DIRS", ["/usr/local/share", "/usr/share"], environment)
    }

    /// The data folder the environment generator adds to `XDG_DATA_DIRS`.
    var exportsShare: String { dataHome + "/qactd/exports/share" }
    /// Where the exported entry and the pinned launchers are written.
    var exports: String { exportsShare + "/applications" }
    /// Where the launcher of pin `pin` of the app `appDesktopFileID` is written: beside the
    /// app's exported entry; nil when the ID is no valid one.
    func pinnedLauncher(appDesktopFileID: String, pin: String) -> String? {
        PinnedDesktopEntry.fileName(appDesktopFileID: appDesktopFileID, pin: pin).map { exports + "/" + $0 }
    }

    /// The person's own applications folder, which comes before every data folder: an entry of
    /// theirs there shadows the export; older versions of qactd wrote there.
    var personal: String { dataHome + "/applications" }

    /// Whether launchers started with this environment see the exports folder.
    var exportsAreOnDataDirectories: Bool {
        dataDirectories.contains(where: isExportsShare)
    }

    /// The data folders searched for the app's own entry: every one but qactd's exports.
    var appDataDirectories: [String] {
        dataDirectories.filter { !isExportsShare($0) }
    }

    /// Whether `folder` is `exportsShare`, written with or without trailing slashes.
    private func isExportsShare(_ folder: String) -> Bool {
        folder.hasPrefix(exportsShare) && folder.dropFirst(exportsShare.count).allSatisfy { $0 == "/" }
    }

    /// What `Status` and the journal say while launchers cannot see the exports.
    var notOnDataDirectoriesNotice: String {
        "qactd's exports folder '\(exportsShare)' is not on XDG_DATA_DIRS, so launchers do not see the quick actions yet;"
            + " log out and in again (the session's environment generator, 60-qactd, adds it at login)"
    }

    /// The files that may be the app's entry `identifier`, in lookup order: the person's own
    /// folder first, then each data folder but the exports.
    func candidates(for identifier: String) -> (personal: [String], data: [String]) {
        let relative = DesktopFileID.relativePaths(of: identifier)
        return (relative.map { personal + "/" + $0 }, appDataDirectories.flatMap { folder in relative.map { folder + "/applications/" + $0 } })
    }

    /// The folders to watch so that a change of any of `paths` is seen, each with the names in
    /// it that matter: a path's own folder and file name when the folder exists, else its
    /// nearest existing ancestor and the next name down (whose creation brings the path closer).
    static func watchedFolders(for paths: [String], isFolder: (String) -> Bool) -> [String: Set<String>] {
        var watched: [String: Set<String>] = [:]
        for path in paths {
            guard let slash = path.lastIndex(of: "/") else { continue }
            var folder = String(path[..<slash])
            var name = String(path[path.index(after: slash)...])
            while !folder.isEmpty, !isFolder(folder), let up = folder.lastIndex(of: "/") {
                name = String(folder[folder.index(after: up)...])
                folder = String(folder[..<up])
            }
            watched[folder.isEmpty ? "/" : folder, default: []].insert(name)
        }
        return watched
    }
}
