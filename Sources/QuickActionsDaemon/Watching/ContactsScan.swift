import Contacts
import Logging

/// How the configuration turns into a contacts scanner, and the start-up report.
enum ContactsScan {
    /// The scanner; with a notifier, a long scan's progress goes to systemd's `STATUS=` and the
    /// log, and to `Status` replies through `replies` (which the core reads).
    static func scanner(
        for configuration: DaemonConfiguration, notifier: (any ServiceManagerNotifier)? = nil, logger: Logger? = nil,
        replies: PublishedReplies? = nil
    ) -> ContactsDirectoryScanner {
        var scanner = ContactsDirectoryScanner(
            root: configuration.contactsDirectory, maxFileBytes: configuration.maxFileBytes,
            options: ContactParsingOptions(favoriteCategories: Set(configuration.favoriteCategories)))
        if let notifier {
            scanner.progress = { progress in
                notifier.notify(.status(progress.description))
                logger?.notice("\(progress.description).", metadata: ["QACTD_PATH": "\(progress.tree)"])
                replies?.publish(scanProgress: progress)
            }
            scanner.progressEnded = { replies?.publish(scanProgress: nil) }
        }
        return scanner
    }

    static func logDuplicates(in index: ContactIndex, logger: Logger) {
        for duplicate in index.duplicates {
            logger.warning(
                "Contact identifier '\(duplicate.identifier)' in '\(duplicate.ignoredPath)' is already used by '\(duplicate.keptPath)', ignoring.",
                metadata: ["QACTD_CONTACT_ID": "\(duplicate.identifier)", "QACTD_PATH": "\(duplicate.ignoredPath)"])
        }
    }
}
