import Contacts

@testable import QuickActionsDaemon

extension ContactIndex {
    /// The Evolution watcher's changes applied as the core applies them.
    mutating func apply(_ update: EvolutionUpdate?) {
        for change in update?.changes ?? [] {
            switch change {
            case .file(let path, let result): apply(path: path, result: result)
            case .removed(let path): remove(path: path)
            case .removedTree(let directory): removeAll(under: directory)
            }
        }
    }
}
