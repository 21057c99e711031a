import QuickActions

/// The XDG base folders the daemon keeps its own files in (and reads EDS's from): an absolute `$XDG_…_HOME`, else
/// its default below `$HOME` (a relative value is ignored, as the XDG Base Directory
/// specification asks).
enum XDGFolder: Sendable {
    case stateHome, configHome, dataHome, cacheHome

    var variable: String {
        switch self {
        case .stateHome: "XDG_STATE_HOME"
        case .configHome: "XDG_CONFIG_HOME"
        case .dataHome: "XDG_DATA_HOME"
        case .cacheHome: "XDG_CACHE_HOME"
        }
    }

    var defaultBelowHome: String {
        switch self {
        case .stateHome: ".local/state"
        case .configHome: ".config"
        case .dataHome: ".local/share"
        case .cacheHome: ".cache"
        }
    }

    /// nil when neither the variable nor `HOME` is an absolute path (the rule is
    /// `XDGFolders.home`'s, which the pure core's readers of XDG folders use too).
    func path(in environment: [String: String]) -> String? {
        XDGFolders.home(variable, defaultBelowHome, environment)
    }
}
