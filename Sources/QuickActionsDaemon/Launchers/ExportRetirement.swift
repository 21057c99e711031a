/// What becomes of an exported copy of an app's entry that qactd no longer wants, and of a
/// retired copy it finds later.
///
/// GNOME Shell ties an app's windows to the file its desktop ID resolved to
/// (`g_desktop_app_info_get_filename`, one of the things `app_is_stale` compares): when the
/// copy in front of the app's own entry goes, the ID resolves to another file, the shell
/// replaces the app's object, and an open window stays with the old one while the dash shows
/// a second, stopped icon (measured in GNOME 43 and 48). A copy whose content changes under the
/// same name keeps the app. So while a GNOME Shell runs, a copy that must go is retired instead:
/// replaced in place by the app's own entry verbatim, without qactd's actions and marked
/// `X-Qactd-Retired=true`; it offers nothing the app's own entry does not, and acts no more
/// once qactd is gone. Retired copies are deleted where no shell holds them: at the next login
/// before the shell starts (the environment generator, 60-qactd) and by a daemon that finds one
/// where no GNOME Shell runs.
///
/// Which apps run, qactd learns from its GNOME Shell extension (`RunningApps`): a copy whose
/// app does not run is deleted at once, since no window can be detached; without the extension
/// nothing says so, and with a shell running every such copy is retired: a retired copy costs one
/// small file until the next login, a deleted one a detached window. When the extension says an
/// app stopped, the retired copies of apps that do not run go.
///
/// The first export of an app is the same change the other way: the ID comes to resolve to the
/// new copy. It waits while the extension says the app runs, and is written when it says the app
/// stopped; without the extension nothing says so, and the copy is written at once.
enum ExportRetirement {
    /// What the daemon knows of the shell when it decides.
    enum Shell: Equatable, Sendable {
        /// No GNOME Shell owns `org.gnome.Shell` on the session bus (or there is no GNOME session).
        case noGnomeShell
        /// A GNOME Shell runs; `runningApps`: the desktop IDs its apps run under, as qactd's
        /// extension says, nil without the extension.
        case gnomeShell(runningApps: Set<String>?)
    }

    /// Why a copy is no longer wanted.
    enum Reason: Equatable, Sendable {
        /// Another app is exported now (the default mail app changed, `DesktopFile=` changed or
        /// was emptied, the app's configuration removed).
        case noLongerExported
        /// The app's own entry is gone: the ID resolves to no file of the app's either way.
        case appEntryGone
        /// The person's own entry under the ID is in front of every data folder: the ID
        /// resolves to it whatever qactd's copy is.
        case personalEntryInFront
        /// A copy retired earlier, found again (at start, as a leftover, or when apps stopped).
        case alreadyRetired
    }

    enum Disposal: Equatable, Sendable {
        case delete
        /// Replace it with the app's own entry (retired), under the same name.
        case retire
        /// Leave the retired copy as it is.
        case keep
    }

    enum FirstExport: Equatable, Sendable {
        case write
        /// Until the app stops (`RunningApps` changes).
        case wait
    }

    /// Whether a copy that does not exist yet is written now.
    static func firstExport(of desktopFileID: String, shell: Shell) -> FirstExport {
        guard case .gnomeShell(let running?) = shell, running.contains(desktopFileID) else { return .write }
        return .wait
    }

    /// What becomes of the copy of `desktopFileID` that is no longer wanted for `reason`.
    static func disposal(of desktopFileID: String, _ reason: Reason, shell: Shell) -> Disposal {
        let mayHaveWindow: Bool
        switch shell {
        case .noGnomeShell: mayHaveWindow = false
        case .gnomeShell(let running): mayHaveWindow = running?.contains(desktopFileID) ?? true
        }
        switch reason {
        case .appEntryGone, .personalEntryInFront: return .delete
        case .noLongerExported: return mayHaveWindow ? .retire : .delete
        case .alreadyRetired: return mayHaveWindow ? .keep : .delete
        }
    }

    /// Whether deciding for `reason` needs to know the shell (a bus round trip).
    static func asksTheShell(_ reason: Reason) -> Bool {
        reason == .noLongerExported || reason == .alreadyRetired
    }
}
