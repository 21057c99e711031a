import CSystemd
import Glibc
import SystemCalls

enum SocketActivationError: Error, Equatable, Sendable, CustomStringConvertible {
    case listenFailed(errno: CInt)
    case notAListeningUnixStreamSocket(descriptor: CInt)
    case checkFailed(descriptor: CInt, errno: CInt)

    var description: String {
        switch self {
        case .listenFailed(let errno):
            return "Could not read the sockets passed by systemd (LISTEN_FDS): \(errnoText(errno))."
        case .notAListeningUnixStreamSocket(let descriptor):
            return "The descriptor \(descriptor) passed by systemd is not a listening Unix stream socket; "
                + "check ListenStream= in qactd.socket."
        case .checkFailed(let descriptor, let errno):
            return "Could not inspect the descriptor \(descriptor) passed by systemd: \(errnoText(errno))."
        }
    }
}

enum SocketActivation {
    /// The listening sockets systemd passed (empty when not socket-activated). Unsets
    /// `LISTEN_FDS`/`LISTEN_PID` so a launched app does not think they are its own.
    static func listeningDescriptors() throws(SocketActivationError) -> [CInt] {
        let count = sd_listen_fds(1)
        guard count >= 0 else { throw .listenFailed(errno: -count) }
        var descriptors: [CInt] = []
        for descriptor in SD_LISTEN_FDS_START..<(SD_LISTEN_FDS_START + count) {
            let check = sd_is_socket_unix(descriptor, CInt(SOCK_STREAM.rawValue), 1, nil, 0)
            if check < 0 { throw .checkFailed(descriptor: descriptor, errno: -check) }
            if check == 0 { throw .notAListeningUnixStreamSocket(descriptor: descriptor) }
            descriptors.append(descriptor)
        }
        return descriptors
    }
}
