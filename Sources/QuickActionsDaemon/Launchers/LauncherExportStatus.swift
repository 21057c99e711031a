import QuickActionsProtocol

/// How the exports are doing, for `Status`.
struct LauncherExportStatus: Equatable, Sendable {
    /// nil when `DesktopFile=` is empty.
    var desktopEntry: DesktopEntryExportStatus?
    var quicklist: QuicklistInfo
}
