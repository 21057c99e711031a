import QuickActions
import SystemCalls
import VarlinkNIOServer

/// A reason the daemon refuses to start (or a reload keeps the old settings), one case per
/// place it can come from; each carries the underlying error, which names the file, line or
/// item index and key. The person reads `description`, one sentence; tests match the case.
enum DaemonStartupError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The configuration file: missing, unreadable, or a line or value that is wrong.
    case configuration(ConfigurationError)
    /// The static-items file could not be read.
    case staticItemsUnreadable(SystemCallError)
    /// The static-items file was read but is not a valid list of items.
    case staticItems(StaticItemsError)
    /// An `InfoPlist.strings` file beside the static items could not be read.
    case stringsFileUnreadable(SystemCallError)
    /// An `InfoPlist.strings` file beside the static items does not parse.
    case stringsFile(StringsFileError)
    /// No state folder, or the state file could not be read or moved aside.
    case state(StateStoreError)
    /// The descriptors systemd passed are not what socket activation promises.
    case socketActivation(SocketActivationError)
    /// The socket could not be bound or adopted.
    case socket(VarlinkServerError)

    /// sysexits-style status: 78 (EX_CONFIG) for what the person configured, 1 otherwise.
    var exitStatus: Int32 {
        switch self {
        case .configuration, .staticItemsUnreadable, .staticItems, .stringsFileUnreadable, .stringsFile: 78
        case .state, .socketActivation, .socket: 1
        }
    }

    var description: String {
        switch self {
        case .configuration(let error): error.description
        case .staticItemsUnreadable(let error): "Cannot read the static items file: \(error)"
        case .staticItems(let error): error.description
        case .stringsFileUnreadable(let error): "Cannot read the strings file: \(error)"
        case .stringsFile(let error): error.description
        case .state(let error): error.description
        case .socketActivation(let error): error.description
        case .socket(let error): error.description
        }
    }
}
