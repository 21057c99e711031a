import FoundationEssentials

/// How the per-user desktop entry is doing, for `Status`.
struct DesktopEntryExportStatus: Equatable, Sendable {
    /// The per-user entry qactd keeps, in its exports folder.
    var path: String
    /// Where the app's own entry was found, once it was.
    var source: String?
    /// When qactd last wrote (or found unchanged) the file.
    var written: Date?
    /// Why the file is not (or no longer) up to date, while that lasts.
    var problem: String?
    /// Why launchers may not see the file although it is up to date (the exports folder is not
    /// on `XDG_DATA_DIRS`), while that lasts.
    var notice: String?
}
