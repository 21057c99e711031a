import Logging
import QuickActions

/// A change an app makes to its own items.
enum AppItemChange: Sendable {
    /// `SetItems`: the whole list.
    case set([ShortcutItem])
    /// `PushItem`: one item first, replacing its type's.
    case push(ShortcutItem)
    /// `RemoveItems`: the items of these types.
    case remove(types: [String])
}

/// What a change of the app's own items did: whether the list differs, the generation now,
/// how many items the app has, the types removed (or that made room for a pushed item), and
/// whether the state file holds it.
struct AppItemsOutcome: Hashable, Sendable {
    var changed: Bool
    var generation: UInt64
    var count: Int
    var removed: [String]
    var persisted = true
}

extension DaemonCore {
    // MARK: The app's own items

    /// `SetItems`, `PushItem` and `RemoveItems`: the list checks and makes the change, the core
    /// persists and publishes it as any new set, and the reply waits for the write outside the
    /// actor, as `ResignActive`'s does. A refused change leaves everything as it was.
    nonisolated func changeAppItems(_ change: AppItemChange) async throws(QuickActionsCallError) -> AppItemsOutcome {
        let (changed, ticket) = try await applyAppItemChange(change)
        var outcome = changed
        outcome.persisted = await writer.waitUntilWritten(ticket)
        return outcome
    }

    /// The change of state, and the ticket of the write that holds it.
    func applyAppItemChange(_ change: AppItemChange) throws(QuickActionsCallError) -> (AppItemsOutcome, StateWriter.Ticket) {
        let rules = settings.appItemRules
        let made: (result: [String], changed: Bool)
        do throws(AppItemError) {
            made = try state.changeAppItems { (list: inout AppItemList) throws(AppItemError) -> [String] in
                switch change {
                case .set(let items):
                    try list.set(items, rules: rules)
                    return []
                case .push(let item):
                    return try list.push(item, rules: rules)
                case .remove(let types):
                    return list.remove(types: types)
                }
            }
        } catch {
            logger.notice("The app's own quick actions were refused: \(error)")
            throw .appItemRefused(error)
        }
        appHasSpoken = true
        if made.changed {
            logger.info("The app's own quick actions changed: \(state.appItems.items.count) items, generation \(state.generation).",
                        metadata: ["QACTD_GENERATION": .string(String(state.generation))])
        }
        let ticket = persist()
        return (AppItemsOutcome(changed: made.changed, generation: state.generation, count: state.appItems.items.count, removed: made.result), ticket)
    }

    /// `ReportItemUsed`: counted, and ranked by, as a trigger of the item is.
    func reportAppItemUsed(type: String) throws(QuickActionsCallError) {
        do throws(AppItemError) {
            try state.reportAppItemUsed(type: type, at: wallClock())
        } catch {
            throw .appItemRefused(error)
        }
        appHasSpoken = true
        persist()
    }

    /// `Items`: the app's own items, as it set them.
    var appItems: [ShortcutItem] { state.appItems.items }
}
