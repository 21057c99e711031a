import Contacts
import Logging
import QuickActions
import QuickActionsProtocol

extension DaemonCore {
    // MARK: App lifecycle and recompute

    /// The Linux twin of `sceneWillResignActive(_:)`: derive the dynamic set from
    /// the live index; only a set that differs bumps the generation and is written.
    /// `persisted` tells the app whether the state file holds the result: the wait for the
    /// write happens outside the actor, so other calls and contact changes go on meanwhile.
    nonisolated func resignActive(appVersion: String?) async -> RecomputeOutcome {
        let (recomputed, ticket) = await recomputeOnResignActive(appVersion: appVersion)
        var outcome = recomputed
        outcome.persisted = await writer.waitUntilWritten(ticket)
        return outcome
    }

    /// A `ResignActive` that would change nothing (the same call as the last one, nothing
    /// changed since, its state on disk), answered on the event loop without a hop to the
    /// actor; nil when the actor must decide.
    nonisolated func unchangedResignActive(appVersion: String?) -> RecomputeOutcome? {
        guard let unchanged = replies.unchangedResignActive(appVersion: appVersion),
              writer.outcome.writtenTicket >= unchanged.ticket
        else { return nil }
        return unchanged.outcome
    }

    /// `ResignActive`'s change of state, and the ticket of the write that holds it.
    func recomputeOnResignActive(appVersion: String?) -> (RecomputeOutcome, StateWriter.Ticket) {
        appHasSpoken = true
        let outcome = state.resignActive(
            favorites: index.favorites, favoritesVersion: index.favoritesVersion, appVersion: appVersion,
            configuration: settings.dynamicItemConfiguration)
        if outcome.changed {
            logger.info("Quick actions changed: \(outcome.dynamicCount) dynamic items, generation \(outcome.generation).",
                        metadata: ["QACTD_GENERATION": .string(String(outcome.generation))])
        }
        let ticket = persist()
        // Last in this turn: every change above cleared the previous one.
        replies.publish(unchangedResignActive: .init(
            appVersion: appVersion, outcome: RecomputeOutcome(changed: false, generation: outcome.generation, dynamicCount: outcome.dynamicCount),
            ticket: ticket))
        return (outcome, ticket)
    }

    /// `BecomeActive` and `EnterBackground`: the app counts as launched from its first message.
    func recordLifecycleMessage(appVersion: String?) {
        appHasSpoken = true
        state.recordLifecycleMessage(appVersion: appVersion)
        persist()
    }

    /// Whether the set follows the contacts now: always with `Recompute=change`, with `auto` until
    /// an app speaks the socket, never with `resign-active`.
    var followsContacts: Bool {
        switch settings.configuration.recompute {
        case .change: true
        case .auto: !appHasSpoken
        case .resignActive: false
        }
    }

    /// `Recompute=change`: the dynamic set follows the index without the app's say-so,
    /// so this is not a launch; an unchanged set writes nothing. `Recompute=auto` stands in for
    /// an app that never speaks the socket, which therefore never resigns active: the daemon
    /// resigns active for it, so its favorites are displayed.
    func recomputeAfterIndexChange() {
        let wasLaunched = state.launched
        let outcome =
            settings.configuration.recompute == .auto
            ? state.resignActive(
                favorites: index.favorites, favoritesVersion: index.favoritesVersion, appVersion: nil,
                configuration: settings.dynamicItemConfiguration)
            : state.recompute(
                favorites: index.favorites, favoritesVersion: index.favoritesVersion, configuration: settings.dynamicItemConfiguration)
        // A set that stays the same is displayed once the daemon stood in for the app.
        guard outcome.changed || state.launched != wasLaunched else { return }
        logger.info("Quick actions changed with the contacts: \(outcome.dynamicCount) dynamic items, generation \(outcome.generation).",
                    metadata: ["QACTD_GENERATION": .string(String(outcome.generation))])
        persist()
    }
}
