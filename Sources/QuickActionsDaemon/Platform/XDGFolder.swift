import QuickActions

/// The XDG base folders the daemon keeps its own files in (and reads EDS's from): an absolute `$XDG_…_HOME`, else
/// its default below `$HOME` (a relative value is ignored, as the XDG Base Directory
/// specification asks).
enum XDGFolder: String, Sendable {
    case stateHome = "XDG_STATE_HOME", configHome = "XDG_CONFIG_HOME", dataHome = "XDG_DATA_HOME", cacheHome = "XDG_CACHE_HOME"

    /// nil when neither the variable nor `HOME` is an absolute path (the rule is
    /// `XDGFolders.home`'s, which the pure core's readers of XDG folders use too).
    func path(in environment: [String: String]) -> String? {
        let defaultBelowHome = switch self {
        case .stateHome: ".local/state"
        case .configHome: ".config"
        case .dataHome: ".local/share"
        case .cacheHome: ".cache"
        }
        return XDGFolders.home(rawValue, defaultBelowHome, environment)
    }
}
