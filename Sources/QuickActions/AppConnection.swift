/// Identifies one app `Connect` call. A fresh one per call, never reused, so a late
/// "the stream ended" from a replaced session can never disconnect its successor —
/// not even when the same socket connection calls `Connect` again.
public struct AppSessionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The session's number, counted from 1 in one daemon run.
    public var rawValue: UInt64

    /// The session numbered `rawValue`.
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    /// Orders sessions by their numbers, the later one greater.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    /// "app session N", for logs.
    public var description: String { "app session \(rawValue)" }
}

/// Why an action handed to the app got no `handled` answer.
public enum AppDeliveryFailure: Hashable, Sendable {
    /// The app did not call `Complete` within the response timeout, or could not
    /// take the action at all (it stopped reading its `Connect` stream).
    case notResponding
    /// The app's `Connect` stream ended (the process quit, crashed, or a newer app
    /// process took over) while the action was in flight. The action is not
    /// delivered again: an app that died handling it might die again.
    case appDisconnected
}

/// The app side of triggering and delivering actions, as a value: which app process is connected,
/// which delivered actions wait for `Complete`, and what each event means.
///
/// The Linux twin of `scene(_:willConnectTo:options:)` (an app connects) and
/// `windowScene(_:performActionFor:completionHandler:)` (an action is delivered
/// and the app calls the completion handler). There is one app: the newest
/// `Connect` takes over and the older session is ended; actions in flight to an
/// app that goes away fail with `appDisconnected` at once instead of waiting for
/// the timeout. The daemon carries the returned actions out; this type does no I/O
/// and keeps no clock (the daemon reports `responseTimedOut` when a timer fires).
public struct AppConnectionStateMachine: Hashable, Sendable {
    /// What happens to the app's connection, as the daemon reports it.
    public enum Event: Hashable, Sendable {
        /// An app process called `Connect`.
        case appConnected
        /// The `Connect` stream of this session ended (connection closed, or ended by us).
        case appDisconnected(AppSessionID)
        /// A trigger resolved to an item and wants it delivered.
        case actionTriggered
        /// The app's stream could not take the delivered action (its buffer is full
        /// because the app stopped reading, or the stream already ended).
        case deliveryRefused(token: String)
        /// The app answered `Complete(token, handled)`.
        case completed(token: String, handled: Bool)
        /// The response timeout of this token ran out.
        case responseTimedOut(token: String)
    }

    /// What the daemon must do after an event.
    public enum Action: Hashable, Sendable {
        /// Start serving `session`. If another app was connected, end its stream with
        /// `AppReplaced` and fail `abandonedTokens` with `appDisconnected`.
        case acceptApp(AppSessionID, replacing: AppSessionID?, abandonedTokens: [String])
        /// Send the action to the app's stream with this token, and start its timeout.
        case deliver(token: String, to: AppSessionID)
        /// No app is connected: keep the item as the pending launch item and launch the app.
        case launch
        /// The app answered: the trigger waiting on `token` replies `running` with `handled`.
        case resumeTrigger(token: String, handled: Bool)
        /// The trigger waiting on `token` fails.
        case failTrigger(token: String, AppDeliveryFailure)
        /// The current app went away; fail `abandonedTokens` with `appDisconnected`.
        case releaseApp(AppSessionID, abandonedTokens: [String])
        /// `Complete` named a token nobody waits for (unknown, answered, or timed out).
        case rejectCompletion(token: String)
        /// Nothing to do (a late event about a session or token that is already gone).
        case none
    }

    /// The connected app's session, if any.
    public private(set) var connectedApp: AppSessionID?
    /// Delivered actions waiting for `Complete`, token → the session they went to.
    public private(set) var actionsInFlight: [String: AppSessionID] = [:]
    private var lastSessionNumber: UInt64 = 0
    private var lastTokenNumber: UInt64 = 0
    /// Makes this daemon run's tokens differ from a previous run's, so a `Complete`
    /// that outlived a restart cannot answer an unrelated new action.
    private let tokenPrefix: String

    /// A machine with no app connected; `tokenPrefix` begins every token it makes.
    public init(tokenPrefix: String) {
        self.tokenPrefix = tokenPrefix
    }

    /// Whether an app's `Connect` stream is being served.
    public var isAppConnected: Bool { connectedApp != nil }

    /// Applies `event` and returns what the daemon must carry out.
    public mutating func handle(_ event: Event) -> Action {
        switch event {
        case .appConnected:
            lastSessionNumber += 1
            let session = AppSessionID(lastSessionNumber)
            let replaced = connectedApp
            connectedApp = session
            let abandoned = replaced.map { removeActions(of: $0) } ?? []
            return .acceptApp(session, replacing: replaced, abandonedTokens: abandoned)

        case .appDisconnected(let session):
            guard session == connectedApp else { return .none }
            connectedApp = nil
            return .releaseApp(session, abandonedTokens: removeActions(of: session))

        case .actionTriggered:
            guard let session = connectedApp else { return .launch }
            lastTokenNumber += 1
            let token = "\(tokenPrefix)-\(lastTokenNumber)"
            actionsInFlight[token] = session
            return .deliver(token: token, to: session)

        case .deliveryRefused(let token):
            guard actionsInFlight.removeValue(forKey: token) != nil else { return .none }
            return .failTrigger(token: token, .notResponding)

        case .completed(let token, let handled):
            guard actionsInFlight.removeValue(forKey: token) != nil else { return .rejectCompletion(token: token) }
            return .resumeTrigger(token: token, handled: handled)

        case .responseTimedOut(let token):
            guard actionsInFlight.removeValue(forKey: token) != nil else { return .none }
            return .failTrigger(token: token, .notResponding)
        }
    }

    /// Removes and returns the tokens delivered to `session`, oldest first so the
    /// daemon fails them in the order they were triggered.
    private mutating func removeActions(of session: AppSessionID) -> [String] {
        let tokens = actionsInFlight.filter { $0.value == session }.map(\.key)
        for token in tokens { actionsInFlight[token] = nil }
        return tokens.sorted { tokenNumber($0) < tokenNumber($1) }
    }

    private func tokenNumber(_ token: String) -> UInt64 {
        token.split(separator: "-").last.flatMap { UInt64($0) } ?? 0
    }
}
