/// How far one scan of the contacts folder is.
struct ContactsScanProgress: Hashable, Sendable, CustomStringConvertible {
    var tree: String
    var filesFound: Int
    var filesRead: Int
    /// Whether `filesFound` is the total.
    var listingDone: Bool

    var description: String {
        listingDone
            ? "Reading contacts in '\(tree)': \(filesRead) of \(filesFound) files read"
            : "Listing contacts in '\(tree)': \(filesFound) files found so far"
    }
}

/// Passes progress on at most once an interval, the first time an interval after the scan began.
final class ProgressReporter {
    let tree: String
    private let interval: Duration
    private let report: @Sendable (ContactsScanProgress) -> Void
    private var nextReport: ContinuousClock.Instant
    private(set) var reported = false

    init(tree: String, interval: Duration, report: @escaping @Sendable (ContactsScanProgress) -> Void) {
        self.tree = tree
        self.interval = interval
        self.report = report
        nextReport = .now + interval
    }

    func tell(_ progress: ContactsScanProgress) {
        let now = ContinuousClock.now
        guard now >= nextReport else { return }
        nextReport = now + interval
        reported = true
        report(progress)
    }
}
