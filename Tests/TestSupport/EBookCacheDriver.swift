import Foundation

/// Evolution Data Server's own `EBookCache` (gir `EDataBook`), driven through
/// `Tests/integration/eds-cache.py` from Debian's `/usr/bin/python3`: it writes an online
/// account's cached address book (in `EBookCache`'s tables) as EDS's CardDAV, Google and WebDAV
/// backends do, keeping each database open as they do, in the file those backends make
/// (`onlineBookDatabase`).
public final class EBookCacheDriver {
    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("integration/eds-cache.py").path

    /// The name of the database EDS's own address-book factory makes in an online book's cache
    /// folder, asked of EDS once (`Tests/integration/eds-online-book.py`: a CardDAV book opened
    /// on a private bus).
    private static let onlineBookDatabaseName: Result<String, DriverError> = {
        let script = URL(fileURLWithPath: EBookCacheDriver.script).deletingLastPathComponent().appendingPathComponent("eds-online-book.py").path
        let run = runCommand(["/usr/bin/python3", script])
        let answer = run.output.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }.last
        guard let name = answer?["name"] as? String, !name.isEmpty, !name.contains("/") else {
            return .failure(DriverError(message: "EDS did not say where it keeps an online book: \(run.output)"))
        }
        return .success(name)
    }()

    /// Where EDS keeps the online book `uid` under the cache home `cacheHome`: the file its
    /// factory makes in `evolution/addressbook/UID/`.
    public static func onlineBookDatabase(_ uid: String, cacheHome: String) throws -> String {
        cacheHome + "/evolution/addressbook/" + uid + "/" + (try onlineBookDatabaseName.get())
    }

    /// Why the driver cannot run here (gir1.2-edatabook-1.2 or python3-gi missing, or EDS's
    /// factory and a bus to ask where it keeps a book); nil when it can.
    public static func unavailableReason() -> String? {
        for tool in ["/usr/bin/dbus-daemon", "/usr/libexec/evolution-addressbook-factory"] where !FileManager.default.isExecutableFile(atPath: tool) {
            return "\(tool) is missing (evolution-data-server)"
        }
        let probe = runCommand(["/usr/bin/python3", "-c", "import gi; gi.require_version('EDataBook', '1.2'); gi.require_version('EBook', '1.2'); from gi.repository import EDataBook, EBook"])
        return probe.status == 0 ? nil : "EDS's EBookCache and EBook for python3-gi are missing (gir1.2-edatabook-1.2, gir1.2-ebook-1.2): \(probe.output)"
    }

    private let process = Process()
    private let input = Pipe()
    private let outputFile: URL
    private var answers = 0

    public init(outputFile: URL) throws {
        self.outputFile = outputFile
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        let handle = try FileHandle(forWritingTo: outputFile)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [Self.script]
        process.standardInput = input
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        guard waitUntil(timeout: 20, every: .milliseconds(10), { self.lines.contains { $0["ready"] as? Bool == true } }) else {
            throw DriverError(message: "eds-cache.py did not start: \(output)")
        }
    }

    deinit {
        try? input.fileHandleForWriting.close()
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    public struct DriverError: Error, CustomStringConvertible, Sendable {
        public var message: String
        public var description: String { message }
    }

    public var output: String { (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "" }

    private var lines: [[String: Any]] {
        output.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    /// Adds or replaces a contact in the cache at `database` (starred as GNOME Contacts stars one).
    public func put(
        _ database: String, uid: String, name: String, email: String? = nil, star: Bool = false, categories: [String] = [],
        offline: Bool = false
    ) throws {
        var request: [String: Any] = ["op": "put", "database": database, "uid": uid, "name": name, "star": star, "offline": offline]
        if let email { request["email"] = email }
        if !categories.isEmpty { request["categories"] = categories }
        try call(request)
    }

    /// Deletes a contact; `offline` keeps its row marked deleted, as EDS does while offline.
    public func remove(_ database: String, uid: String, offline: Bool = false) throws {
        try call(["op": "remove", "database": database, "uid": uid, "offline": offline])
    }

    @discardableResult
    public func call(_ request: [String: Any]) throws -> [String: Any] {
        let data = try JSONSerialization.data(withJSONObject: request)
        input.fileHandleForWriting.write(data + Data("\n".utf8))
        answers += 1
        let expected = answers
        var answer: [String: Any] = [:]
        let answered = waitUntil(timeout: 30, every: .milliseconds(5)) {
            let found = self.lines.filter { $0["ok"] != nil }
            guard found.count >= expected else { return false }
            answer = found[expected - 1]
            return true
        }
        guard answered, answer["ok"] as? Bool == true else {
            throw DriverError(message: "eds-cache.py: \(request["op"] ?? "?") failed: \(answered ? "\(answer)" : "no answer"): \(output)")
        }
        return answer
    }
}
