import Contacts
import QuickActionsProtocol

extension DaemonCore {
    /// Applies what the `DirectoryWatcher` found; returns whether favorites changed
    /// (what `Recompute=change` acts on).
    @discardableResult
    func applyWatcherUpdate(_ update: ContactsDirectoryUpdate) -> Bool {
        watchHealth = update.health
        return apply(update.changes, counting: update.work)
    }
}

/// `Recompute=change` (SPEC §2.8): after favorites change, the dynamic set is derived
/// once the index has been quiet for the settle delay (`RecomputeSettleMSec`), so a
/// burst of saves — a sync run, a folder moved in — makes one new generation, not many.
/// With the default `resign-active` it does nothing: only the app's `ResignActive` recomputes.
actor RecomputeOnIndexChange {
    private let core: DaemonCore
    private var pending: Task<Void, Never>?

    init(core: DaemonCore) {
        self.core = core
    }

    func indexChanged() async {
        let configuration = await core.settings.configuration
        guard configuration.recompute == .change else { return }
        pending?.cancel()
        let core = self.core
        pending = Task {
            do {
                try await Task.sleep(for: configuration.recomputeSettle)
            } catch {
                return  // a later change restarted the delay, or the daemon is stopping
            }
            // A reload during the delay may have switched back to `resign-active`.
            guard await core.settings.configuration.recompute == .change else { return }
            await core.recomputeAfterIndexChange()
        }
    }

    func cancel() {
        pending?.cancel()
        pending = nil
    }
}
