import Foundation

/// Runs a command found on `PATH` (through `/usr/bin/env`), feeding it `input`, and returns its
/// exit status with everything it printed (stdout and stderr together). 127 when it cannot start.
public func runCommand(_ arguments: [String], environment: [String: String] = [:], input: String? = nil) -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let output = Pipe()
    let stdin = Pipe()
    process.standardOutput = output
    process.standardError = output
    process.standardInput = stdin
    do { try process.run() } catch { return (127, "\(error)") }
    if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
    try? stdin.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
