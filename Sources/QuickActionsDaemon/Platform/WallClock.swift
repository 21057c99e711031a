import Glibc

/// The time of day, for what is kept across runs (when an item was chosen): the pure core
/// never reads a clock, the daemon passes this in.
enum WallClock {
    /// Whole seconds since 1970 (UTC).
    static func secondsSince1970() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec)
    }
}

/// `CLOCK_MONOTONIC` in microseconds: the clock of systemd's `MONOTONIC_USEC=` and of sd-bus's deadlines.
func monotonicMicroseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
}
