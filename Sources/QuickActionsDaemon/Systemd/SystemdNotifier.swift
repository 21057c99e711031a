import CSystemd
import Glibc
import SystemCalls

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
