import Logging

/// Keeps the contacts of Evolution Data Server's address books live: a thread of its own
/// (`qactd-evolution`) sleeps in `poll` on an inotify descriptor (the address-book folders),
/// reads only what changed in a book when its folder says it was written, and hands the index
/// changes, in order, to the core, as `DirectoryWatcher` does for the contacts folder. With
/// `Evolution=none` it holds no descriptor and starts no thread.
typealias EvolutionWatcher = WatcherThread<EvolutionEngine>

extension WatcherThread where Engine == EvolutionEngine {
    convenience init(settings: EvolutionSettings, location: EvolutionLocation, logger: Logger) {
        self.init(
            EvolutionEngine(settings: settings, location: location, logger: logger),
            named: "qactd-evolution", for: "the Evolution address-book watcher")
    }

    /// Watches and reads every chosen book once; the returned update is their favorites and the
    /// contacts in `wanted` (see `EvolutionEngine.start(favoritesFirst:)`). `indexTheRest` hands
    /// over the others.
    func attach(wanted: Set<String>) -> EvolutionUpdate {
        attach { engine in
            engine.start(favoritesFirst: wanted)
            return engine.takeUpdate(force: true) ?? EvolutionUpdate(changes: [], info: nil)
        }
    }
}
