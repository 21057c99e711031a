import Glibc
import QuickActions
import QuickActionsProtocol
import SystemCalls

import FoundationEssentials

/// Where the persisted state lives: a folder of its own, private to the user.
struct StatePaths: Equatable, Sendable {
    static let stateFileName = "state.json"

    let directory: String

    var stateFile: String { directory + "/" + Self.stateFileName }

    /// `$XDG_STATE_HOME/qactd`, else `~/.local/state/qactd`; an app's instance keeps its state in
    /// a folder of its own below that, `qactd/NAME`. Computed here whatever runs the daemon:
    /// systemd's `StateDirectory=` maps to another folder on each systemd version (the
    /// configuration folder on 252), and a state that moved with it would be lost on an upgrade.
    /// Where older versions kept it is `StateMigration`'s.
    static func resolve(environment: [String: String], instance: InstanceName = .plain) throws(StateStoreError) -> StatePaths {
        guard let stateHome = XDGFolder.stateHome.path(in: environment) else { throw .noStateDirectory }
        return StatePaths(directory: stateHome + own(instance))
    }

    /// `/qactd`, or `/qactd/NAME` for an app's instance: below the XDG folder.
    static func own(_ instance: InstanceName) -> String {
        instance.app.map { "/qactd/" + $0.stateFolderName } ?? "/qactd"
    }
}

/// The step of a save, named in errors so a failure says what was being done: encoding,
/// the folder, or a step of the atomic replacement.
enum StateSaveStep: Sendable, Equatable, CustomStringConvertible {
    case encode, createDirectory
    case replace(AtomicReplaceStep)

    var description: String {
        switch self {
        case .encode: "encode"
        case .createDirectory: "create the state folder"
        case .replace(.rename): "rename the temporary file over the state file"
        case .replace(.syncFolder): "fsync the state folder"
        case .replace(let step): step.rawValue
        }
    }
}

enum StateStoreError: Error, Equatable, Sendable, CustomStringConvertible {
    case noStateDirectory
    case saveFailed(step: StateSaveStep, path: String, reason: String)
    case loadFailed(path: String, reason: String)
    case moveAsideFailed(path: String, reason: String)
    case moveFromOldFolderFailed(from: String, to: String, reason: String)

    var description: String {
        switch self {
        case .noStateDirectory:
            return "Neither XDG_STATE_HOME nor HOME is set, so there is no folder to keep state in."
        case .saveFailed(let step, let path, let reason):
            return "Could not save the state: failed to \(step) \"\(path)\": \(reason) The previous state file is unchanged."
        case .loadFailed(let path, let reason):
            return "Could not read the state file \"\(path)\": \(reason)"
        case .moveAsideFailed(let path, let reason):
            return "The state file \"\(path)\" is corrupt and could not be moved aside: \(reason)"
        case .moveFromOldFolderFailed(let from, let to, let reason):
            return "The state an older qactd kept at \"\(from)\" could not be moved to \"\(to)\": \(reason) Nothing was changed; move it by hand, or remove it to start clean."
        }
    }
}

enum StateLoadOutcome<Payload: Sendable>: Sendable {
    /// No state file yet: the first run.
    case fresh
    case loaded(Payload)
    /// The file did not decode; it was renamed to `movedTo` so the daemon can start clean
    /// while the evidence is kept for a bug report.
    case corrupt(movedTo: String, reason: String)
}

extension StateLoadOutcome: Equatable where Payload: Equatable {}

/// Persists one `Codable` payload atomically and durably: a crash at any instant
/// leaves either the old or the new file, complete.
///
/// A value type: the daemon loads it at start-up and then hands it to its `StateWriter`,
/// whose thread alone saves with it. The payload is read with `JSONDecoder` (whatever layout
/// an older version wrote) and written with `jsonText(pretty:)`, the layout the socket shares.
struct StateStore<Payload: Codable & Equatable & Sendable & JSONTextRepresentable>: Sendable {
    let paths: StatePaths
    /// What the state file holds, as far as this process knows (loaded or last saved).
    private(set) var lastPersisted: Payload?
    private let now: @Sendable () -> Date
    /// Lets tests fail a chosen step in place of its system call, to prove the clean-up path.
    var injectedFailure: StateSaveStep?
    /// Lets tests make every save slow (a sleep before the temporary file is created), to
    /// prove that a slow disk holds up nothing but the write itself.
    var delayBeforeWriting: Duration?

    init(paths: StatePaths, now: @escaping @Sendable () -> Date = { Date() }) {
        self.paths = paths
        self.now = now
    }

    // MARK: Loading

    /// Removes the temporary files of writes that a crash cut short (`.state.json.tmp-PID-N`),
    /// which nothing else would ever remove: left alone they pile up until the state folder
    /// is full and every later write fails. A file whose writer is still alive (another
    /// daemon starting against the same folder) is kept. Returns the paths removed.
    func removeLeftoverTemporaryFiles() -> [String] {
        guard let names = try? directoryEntryNames(paths.directory) else { return [] }
        let prefix = ".\(StatePaths.stateFileName).tmp-"
        var removed: [String] = []
        for name in names {
            guard name.hasPrefix(prefix),
                  let writer = name.dropFirst(prefix.count).split(separator: "-").first.flatMap({ pid_t($0) })
            else { continue }
            let writerIsGone = writer == getpid() || (kill(writer, 0) != 0 && errno == ESRCH)
            let path = paths.directory + "/" + name
            if writerIsGone, unlink(path) == 0 { removed.append(path) }
        }
        return removed
    }

    mutating func load() throws(StateStoreError) -> StateLoadOutcome<Payload> {
        let path = paths.stateFile
        let bytes: [UInt8]
        do {
            guard let read = try FileIO.readFileIfPresent(path) else {
                lastPersisted = nil
                return .fresh
            }
            bytes = read
        } catch {
            throw .loadFailed(path: path, reason: error.description)
        }
        do {
            let payload = try JSONDecoder().decode(Payload.self, from: Data(bytes))
            lastPersisted = payload
            return .loaded(payload)
        } catch {
            let reason = bytes.isEmpty ? "the file is empty" : Self.describe(decodingError: error)
            let destination = try moveAside(path)
            lastPersisted = nil
            return .corrupt(movedTo: destination, reason: reason)
        }
    }

    private func moveAside(_ path: String) throws(StateStoreError) -> String {
        // ISO 8601's basic format in UTC, such as 20231114T221320Z: sorts by time, no colons.
        let stamp = Date.ISO8601FormatStyle(dateSeparator: .omitted, timeSeparator: .omitted).format(now())
        let base = path + ".corrupt-" + stamp
        var candidate = base
        var attempt = 1
        do {
            // Two corrupt files within one second must not overwrite each other's evidence.
            while try FileIO.fileExists(candidate) {
                attempt += 1
                candidate = base + "-\(attempt)"
            }
            try retryingSystemCall("rename", path: path) { rename(path, candidate) }
        } catch {
            throw .moveAsideFailed(path: path, reason: error.description)
        }
        return candidate
    }

    private static func describe(decodingError error: Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context):
            return "it is not valid JSON (\(context.debugDescription))"
        case DecodingError.keyNotFound(let key, _):
            return "the key \"\(key.stringValue)\" is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return "the value at \"\(path)\" has the wrong type (\(context.debugDescription))"
        default:
            return "\(error)"
        }
    }

    // MARK: Saving

    /// Saves only when `payload` differs from what was last saved or loaded; returns whether it wrote.
    @discardableResult
    mutating func saveIfChanged(_ payload: Payload) throws(StateStoreError) -> Bool {
        if let lastPersisted, lastPersisted == payload { return false }
        try save(payload)
        return true
    }

    /// Writes `payload` unconditionally: temp file (0600, `O_EXCL|O_CLOEXEC`) → fsync → rename → fsync folder.
    /// The text is pretty-printed JSON with sorted keys and a final newline.
    mutating func save(_ payload: Payload) throws(StateStoreError) {
        var text: [UInt8]
        do {
            text = try payload.jsonText(pretty: true)
            text.append(UInt8(ascii: "\n"))
        } catch {
            throw .saveFailed(step: .encode, path: paths.stateFile, reason: "\(error)")
        }

        if let delayBeforeWriting {
            let (seconds, attoseconds) = delayBeforeWriting.components
            var pause = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
            var left = timespec()
            while nanosleep(&pause, &left) != 0 && errno == EINTR { pause = left }
        }
        try ensureDirectory()
        var injected: AtomicReplaceStep?
        if case .replace(let step) = injectedFailure { injected = step }
        do throws(AtomicReplaceError) {
            try FileIO.replaceAtomically(paths.stateFile, with: text, mode: 0o600, syncFolder: true, failing: injected)
        } catch {
            // The rename is only durable once the folder entry is on disk; the new file is in
            // place either way, so the payload counts as persisted even if that fsync fails.
            if error.step == .syncFolder {
                lastPersisted = payload
                throw .saveFailed(step: .replace(.syncFolder), path: paths.directory, reason: error.error.description)
            }
            throw .saveFailed(step: .replace(error.step), path: error.error.path ?? paths.stateFile, reason: error.error.description)
        }
        lastPersisted = payload
    }

    /// Creates the state folder (and missing parents) with mode 0700: state may name contacts.
    private func ensureDirectory() throws(StateStoreError) {
        do {
            try makeDirectories(paths.directory, mode: 0o700)
        } catch {
            throw .saveFailed(step: .createDirectory, path: paths.directory, reason: error.description)
        }
    }
}
