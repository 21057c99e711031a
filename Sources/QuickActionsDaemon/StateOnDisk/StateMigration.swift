import Glibc
import CLinux
import Logging
import QuickActionsProtocol
import SystemCalls

/// Moves the state an older qactd kept elsewhere to the one folder `StatePaths` gives, once.
///
/// Older versions kept it in `$STATE_DIRECTORY`, which their unit's `StateDirectory=` set: under
/// systemd 252 that is the configuration folder (`$XDG_CONFIG_HOME/qactd[/NAME]`), under newer
/// versions the state folder. A distribution upgrade then started the daemon on an empty state,
/// and the pins' clean-up deleted every pinned launcher. The decision is pure (`decide`); `run`
/// gathers the facts and carries it out.
struct StateMigration: Equatable, Sendable {
    /// What is known of one place a state file may be.
    struct Candidate: Equatable, Sendable {
        var path: String
        var exists: Bool
        /// Byte for byte the file at the current path (only asked when both exist).
        var sameAsCurrent: Bool = false
    }

    enum Step: Equatable, Sendable {
        /// No current state: the old one becomes it (rename, or copy and rename across file
        /// systems), then the old file goes.
        case move(from: String, to: String)
        /// A move cut short after the copy: the old file is the current one's twin, and goes.
        case removeTwin(String)
        /// Another state is already current: the old one is left alone (and reported), so
        /// nothing is lost and nothing is read twice.
        case leave(String, current: String)
    }

    /// The steps for the current state file `current` and the places older versions used, in
    /// order of preference. At most one file is ever the live state: the current one when it
    /// exists, else the first old one, moved.
    static func decide(current: String, currentExists: Bool, candidates: [Candidate]) -> [Step] {
        var steps: [Step] = []
        var hasCurrent = currentExists
        var seen: Set<String> = [current]
        for candidate in candidates where candidate.exists && seen.insert(candidate.path).inserted {
            if !hasCurrent {
                steps.append(.move(from: candidate.path, to: current))
                hasCurrent = true
            } else if candidate.sameAsCurrent, currentExists {
                steps.append(.removeTwin(candidate.path))
            } else {
                steps.append(.leave(candidate.path, current: current))
            }
        }
        return steps
    }

    /// The state files older versions may have left for `instance`: `$STATE_DIRECTORY`'s (first
    /// entry) when the environment still sets one, then systemd 252's mapping of
    /// `StateDirectory=qactd[/%i]`, `$XDG_CONFIG_HOME/qactd[/NAME]`. Only older units put the
    /// state there, so that folder is looked at only under systemd (`INVOCATION_ID`, which the
    /// manager sets for each service it runs): a daemon run by hand with a state folder of its
    /// own (a demo, a test) never takes the person's state from their configuration folder.
    static func oldStateFiles(environment: [String: String], instance: InstanceName) -> [String] {
        var folders: [String] = []
        if let listed = environment["STATE_DIRECTORY"], let first = listed.split(separator: ":").first, first.hasPrefix("/") {
            folders.append(String(first))
        }
        if environment["INVOCATION_ID"]?.isEmpty == false, let configHome = XDGFolder.configHome.path(in: environment) {
            folders.append(configHome + StatePaths.own(instance))
        }
        return folders.map { $0 + "/" + StatePaths.stateFileName }
    }

    /// Gathers the facts for `paths`, decides, and carries the steps out, logging each. A move
    /// that fails throws: starting clean would hide the person's state and pins.
    static func run(paths: StatePaths, environment: [String: String], instance: InstanceName, logger: Logger) throws(StateStoreError) {
        let current = paths.stateFile
        let currentExists = exists(current)
        let candidates = oldStateFiles(environment: environment, instance: instance).map { path in
            let present = exists(path)
            return Candidate(path: path, exists: present, sameAsCurrent: present && currentExists && sameBytes(path, current))
        }
        for step in decide(current: current, currentExists: currentExists, candidates: candidates) {
            switch step {
            case .move(let from, let to):
                try move(from, to: to, folder: paths.directory)
                logger.notice(
                    "Moved the state (and its pins) from '\(from)', where an older qactd kept it, to '\(to)'.",
                    metadata: ["QACTD_PATH": "\(to)"])
            case .removeTwin(let path):
                if unlink(path) == 0 {
                    logger.notice("Removed '\(path)', the old copy of '\(current)' that an interrupted move left.", metadata: ["QACTD_PATH": "\(path)"])
                }
            case .leave(let path, let current):
                logger.warning(
                    "An older state at '\(path)' differs from the state at '\(current)', which is used; the older one is left alone, ignoring.",
                    metadata: ["QACTD_PATH": "\(path)"])
            }
        }
    }

    private static func exists(_ path: String) -> Bool {
        (try? FileIO.fileExists(path)) ?? false
    }

    private static func sameBytes(_ first: String, _ second: String) -> Bool {
        guard let one = try? FileIO.readFileIfPresent(first), let other = try? FileIO.readFileIfPresent(second) else { return false }
        return one == other
    }

    /// A rename that never replaces a file (so a state another daemon just wrote is never lost);
    /// across file systems a copy written and synced beside the target, renamed into place the
    /// same way, and only then the old file removed. A crash in between leaves two equal files,
    /// of which only the current one is read, and the next start removes the twin.
    private static func move(_ from: String, to: String, folder: String) throws(StateStoreError) {
        func failed(_ reason: String) -> StateStoreError { .moveFromOldFolderFailed(from: from, to: to, reason: reason) }
        do {
            try makeDirectories(folder, mode: 0o700)
        } catch {
            throw failed(error.description)
        }
        let oldFolder = String(from[..<(from.lastIndex(of: "/") ?? from.startIndex)])
        if CLinux_renameNoReplace(from, to) == 0 {
            syncFolders([folder, oldFolder])
            return
        }
        let renameError = errno
        guard renameError == EXDEV else { throw failed("rename: " + errnoText(renameError)) }
        let read: [UInt8]?
        do {
            read = try FileIO.readFileIfPresent(from)
        } catch {
            throw failed(error.description)
        }
        guard let bytes = read else { throw failed("the file went away while it was moved") }
        do throws(AtomicReplaceError) {
            try FileIO.replaceAtomically(to, with: bytes, mode: 0o600, replacing: false, syncFolder: true)
        } catch {
            throw failed(error.description)
        }
        guard unlink(from) == 0 else { throw failed("the copy is in place, but the old file could not be removed: " + errnoText(errno)) }
        syncFolders([oldFolder])
    }

    /// So that the move survives a crash; a folder that cannot be synced is no reason to refuse.
    private static func syncFolders(_ folders: [String]) {
        for folder in folders {
            let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            _ = fsync(descriptor)
            close(descriptor)
        }
    }
}
