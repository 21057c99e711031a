/// The XDG base folders the daemon keeps its own files in: an absolute `$XDG_…_HOME`, else
/// its default below `$HOME` (a relative value is ignored, as the XDG Base Directory
/// specification asks).
enum XDGFolder: Sendable {
    case stateHome, configHome, dataHome

    var variable: String {
        switch self {
        case .stateHome: "XDG_STATE_HOME"
        case .configHome: "XDG_CONFIG_HOME"
        case .dataHome: "XDG_DATA_HOME"
        }
    }

    var defaultBelowHome: String {
        switch self {
        case .stateHome: "/.local/state"
        case .configHome: "/.config"
        case .dataHome: "/.local/share"
        }
    }

    /// nil when neither the variable nor `HOME` is an absolute path.
    func path(in environment: [String: String]) -> String? {
        if let value = environment[variable], value.hasPrefix("/") { return value }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return (home == "/" ? "" : home) + defaultBelowHome
    }
}
