import Foundation
import TestSupport
import XCTest

/// A process that runs while the test drives the daemon (an app, a watcher), its output
/// collected in a file so the test can wait for lines to appear.
final class BackgroundProcess {
    let process = Process()
    let outputFile: URL
    /// Where `send` writes, when the process was started `withInput`.
    private let input: Pipe?

    init(_ executable: String, _ arguments: [String], environment: [String: String], outputFile: URL, withInput: Bool = false) throws {
        self.outputFile = outputFile
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        let handle = try FileHandle(forWritingTo: outputFile)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = handle
        process.standardError = handle
        input = withInput ? Pipe() : nil
        process.standardInput = input ?? FileHandle.nullDevice
        try process.run()
    }

    /// Writes one line to the process's standard input.
    func send(_ line: String) {
        input?.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Closes its standard input: the clients that read commands exit then.
    func closeInput() {
        try? input?.fileHandleForWriting.close()
    }

    deinit {
        try? input?.fileHandleForWriting.close()
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    var output: String { (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "" }

    /// The JSON objects printed one per line so far (lines that are not JSON are skipped).
    var jsonLines: [[String: Any]] {
        output.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    func waitForExit(timeout: TimeInterval = 15) -> Int32? {
        guard waitUntil(timeout: timeout, { !self.process.isRunning }) else { return nil }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// VmRSS of a process, in kB.
func residentKilobytes(pid: Int32) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
    return line?.split(separator: " ").dropFirst().first.flatMap { Int($0) }
}
