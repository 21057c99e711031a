import CSystemd
import Glibc
import SystemCalls

// MARK: - Service manager notifications

/// One assignment of the `sd_notify` protocol (systemd.notify(3)).
enum ServiceNotification: Equatable, Sendable {
    case ready
    /// Sent with `MONOTONIC_USEC=` automatically: `Type=notify-reload` (systemd ≥ 253) requires it.
    case reloading
    case stopping
    case status(String)
    case watchdog
}

protocol ServiceManagerNotifier: Sendable {
    func notify(_ notifications: [ServiceNotification])
}

extension ServiceManagerNotifier {
    func notify(_ notifications: ServiceNotification...) {
        notify(notifications)
    }
}

/// Talks to the real service manager. Outside systemd (`NOTIFY_SOCKET` unset) `sd_notify`
/// is a no-op, so the daemon needs no "am I under systemd" branch.
struct SystemdNotifier: ServiceManagerNotifier {
    func notify(_ notifications: [ServiceNotification]) {
        // A failed notification is not actionable: systemd's own watchdog or start timeout reports it.
        send(notifications)
    }

    /// sd_notify's result: positive when sent, 0 when there is no service manager to tell
    /// (`NOTIFY_SOCKET` unset) or nothing to say, a negative errno when sending failed.
    @discardableResult
    func send(_ notifications: [ServiceNotification]) -> CInt {
        guard !notifications.isEmpty else { return 0 }
        return sd_notify(0, Self.message(notifications, monotonicMicroseconds: monotonicMicroseconds()))
    }

    /// The newline-separated datagram for `sd_notify`. `monotonicMicroseconds` is passed
    /// in so the format is testable without a clock.
    static func message(_ notifications: [ServiceNotification], monotonicMicroseconds: UInt64) -> String {
        var lines: [String] = []
        for notification in notifications {
            switch notification {
            case .ready: lines.append("READY=1")
            case .reloading:
                lines.append("RELOADING=1")
                lines.append("MONOTONIC_USEC=\(monotonicMicroseconds)")
            case .stopping: lines.append("STOPPING=1")
            // A newline would end the assignment early and start a bogus one.
            case .status(let text):
                lines.append("STATUS=" + text.map { $0.isNewline ? " " : String($0) }.joined())
            case .watchdog: lines.append("WATCHDOG=1")
            }
        }
        return lines.joined(separator: "\n")
    }
}

// MARK: - Socket activation

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

// MARK: - Watchdog

struct WatchdogSettings: Equatable, Sendable {
    /// `WatchdogSec=` as systemd passed it.
    let timeout: Duration

    /// Half the timeout, as sd_watchdog_enabled(3) recommends, so one late ping is not fatal.
    var pingInterval: Duration { timeout / 2 }

    /// nil when systemd expects no pings (no `WATCHDOG_USEC`, or it is meant for another PID).
    static func fromEnvironment() -> WatchdogSettings? {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(1, &microseconds) > 0, microseconds > 0 else { return nil }
        return WatchdogSettings(timeout: .microseconds(Int64(clamping: microseconds)))
    }
}
