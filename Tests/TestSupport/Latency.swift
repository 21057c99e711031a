import Foundation

/// "p50 1.234 ms, p99 5.678 ms" of round-trip times, for the figures tests print.
public func latencyPercentiles(_ samples: [Duration]) -> String {
    guard !samples.isEmpty else { return "no samples" }
    let sorted = samples.sorted()
    func at(_ fraction: Double) -> String {
        let value = sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
        return String(format: "%.3f ms", Double(value.components.attoseconds) / 1e15 + Double(value.components.seconds) * 1000)
    }
    return "p50 \(at(0.5)), p99 \(at(0.99))"
}
