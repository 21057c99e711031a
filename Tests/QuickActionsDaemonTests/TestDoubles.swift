import Contacts
import Synchronization

@testable import QuickActionsDaemon

/// Records notifications instead of sending them, for tests of the code that decides when to notify.
final class RecordingNotifier: ServiceManagerNotifier {
    private let recorded = Mutex<[[ServiceNotification]]>([])

    func notify(_ notifications: [ServiceNotification]) {
        recorded.withLock { $0.append(notifications) }
    }

    /// Every call so far, one array per `notify` call.
    var calls: [[ServiceNotification]] {
        recorded.withLock { $0 }
    }
}

/// Whole-tree conveniences the daemon itself never needs: it scans through the watcher,
/// which adds each folder's watch as the walk enters it.
extension ContactsDirectoryScanner {
    /// Walks the whole tree under `root`.
    func scan() -> ContactsScanResult {
        scan(under: root)
    }

    /// Walks one folder of the tree and everything below it.
    func scan(under directory: String) -> ContactsScanResult {
        scan(under: directory, enteringDirectory: { _ in })
    }

    /// Scans the whole tree into a fresh index.
    func buildIndex() -> ContactIndex {
        var index = ContactIndex()
        for file in scan().files {
            index.apply(path: file.path, result: file.result)
        }
        return index
    }
}
