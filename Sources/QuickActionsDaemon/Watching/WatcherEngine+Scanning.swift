import Contacts
import Logging

import Glibc
import SystemCalls

/// Walking a tree (watching each folder before listing it) and reading one file for the index.
extension WatcherEngine {
    private func watch(_ folder: String) -> [Action] {
        // The configured root may be a link the user chose; folders below it never are followed.
        let mask: InotifyEventMask = folder == machine.root ? .treeFolder : InotifyEventMask.treeFolder.union(.dontFollow)
        switch addWatch(folder, mask: mask) {
        case .success(let descriptor):
            return machine.watchAdded(folder: folder, descriptor: descriptor)
        case .failure(let error):
            let reason = error.errno == ENOSPC
                ? "the inotify watch limit fs.inotify.max_user_watches is reached"
                : errnoText(error.errno)
            if WatcherStateMachine.isResourceShortage(error.errno) {
                logger.warning("Cannot watch '\(folder)' with inotify: \(reason); rescanning it every \(timing.degradedRescanInterval.wholeSeconds) s instead.",
                               metadata: ["QACTD_PATH": "\(folder)"])
            } else if error.errno == ENOENT || error.errno == ENOTDIR {
                logger.debug("'\(folder)' went away before it could be watched, ignoring.", metadata: ["QACTD_PATH": "\(folder)"])
            } else {
                logger.warning("Cannot watch '\(folder)' with inotify: \(reason), ignoring.", metadata: ["QACTD_PATH": "\(folder)"])
            }
            return machine.watchFailed(folder: folder, errno: error.errno, reason: reason)
        }
    }

    func scan(_ tree: String, _ reason: TreeScanReason) -> [Action] {
        if tree != machine.root {
            // A folder below the root must still be a real folder, never a link to elsewhere.
            var info = stat()
            guard lstat(tree, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return machine.treeMissing(tree) }
        }
        var actions: [Action] = []
        let scanner = self.scanner
        let result = scanner.scan(under: tree) { folder in
            guard machine.shouldWatch(folder) else { return }
            actions += watch(folder)
        }
        if result.problems.contains(where: { $0.path == tree && ($0.kind == .missing || $0.kind == .notADirectory) }) {
            return actions + machine.treeMissing(tree)
        }
        for problem in result.problems {
            logger.warning("\(problem.description.dropLast()), ignoring.", metadata: ["QACTD_PATH": "\(problem.path)"])
        }
        if reason.isRescan {
            work.rescans += 1
            logger.log(level: reason == .periodic ? .debug : .notice,
                       "Rescanned '\(tree)' (\(reason.rawValue)): \(result.files.count) contact files.",
                       metadata: ["QACTD_PATH": "\(tree)"])
        }
        if reason.isRescan || reason == .attach {
            // The walk is the whole truth for this tree: whatever the index held there goes.
            changes.append(.removedTree(directory: tree))
        }
        for file in result.files {
            work.filesParsed += 1
            // A new folder is often filled as it is made (`cp -r`, a sync run): a file still
            // being written was read half-done, and its IN_CLOSE_WRITE will come, as the folder
            // was watched before it was listed. (Not done on every walk: it costs a probe per file.)
            if reason == .appeared, OpenForWritingProbe.isOpenForWriting(file.path, acquire: probeWriter) == true {
                machine.writerFoundDuringWalk(file.path, now: ContinuousClock.now)
                continue
            }
            logIfInvalid(file.path, file.result)
            changes.append(.file(path: file.path, result: file.result))
        }
        return actions + machine.treeScanned(tree, folders: result.directories)
    }

    /// Reads one file as it is now, under a read lease so that no writer is there or can
    /// start meanwhile (a file some process has open for writing waits for it: see
    /// `WatcherStateMachine.probed`). Links and other non-regular entries are not contacts
    /// (as in the scan), so a path that is gone or became one leaves the index.
    func refresh(_ action: Action, _ path: String, onlyIfComplete: Bool) -> [Action] {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            _ = machine.probed(action, .noWriter, now: ContinuousClock.now)
            changes.append(.removed(path: path))
            return []
        }
        // After IN_CREATE an empty file is one whose creator has not opened it for writing
        // yet (or where leases cannot tell): its IN_CLOSE_WRITE will come.
        if onlyIfComplete && info.st_size == 0 {
            return []
        }
        switch scanner.read(ListedFile(path: path), underLease: probeWriter) {
        case .writerOpen:
            return machine.probed(action, .writerOpen, now: ContinuousClock.now).map { [$0] } ?? []
        case .vanished:
            _ = machine.probed(action, .noWriter, now: ContinuousClock.now)
            changes.append(.removed(path: path))
            return []
        case .read(let result):
            _ = machine.probed(action, .noWriter, now: ContinuousClock.now)
            work.filesParsed += 1
            logIfInvalid(path, result)
            changes.append(.file(path: path, result: result))
            return []
        }
    }

    private func logIfInvalid(_ path: String, _ result: Result<[Contact], ContactFileProblem>) {
        if case .failure(let problem) = result {
            logger.warning("Skipping '\(path)': \(problem), ignoring.", metadata: ["QACTD_PATH": "\(path)"])
        }
    }

}
