import CSystemd
import Glibc
import SystemCalls

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
