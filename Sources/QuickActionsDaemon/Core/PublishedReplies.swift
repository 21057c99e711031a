import QuickActions
import NIOConcurrencyHelpers
import QuickActionsProtocol
import Synchronization
import Varlink

/// The encoded replies of the read-only calls (`List`, `Status`), kept where the socket's
/// event loops read them without entering the core: an unchanged listing is composed and
/// encoded once and then only copied to each caller.
///
/// The core never writes replies here (encoding is the wire edge's job, in
/// `QuickActionsHandler`); it only says what they depend on. It publishes the `ListingKey`
/// of its current state and bumps the status epoch on every change of what `Status`
/// shows. The handler stores a reply it encoded tagged with the key or epoch it was
/// computed at, and one is served only while that key or epoch is still the current one,
/// so a stale reply can never be read, whatever the order of threads.
final class PublishedReplies: Sendable {
    /// Everything a listing is composed from: the dynamic set changes only with a new
    /// generation, `launched` decides what is displayed, and `settingsEpoch` counts setting
    /// swaps (static items, translations, display limit, the daemon's language).
    struct ListingKey: Hashable, Sendable {
        var generation: UInt64
        var launched: Bool
        var settingsEpoch: UInt64
        /// `QuickActionsState.usageVersion`: a choice changes the rows' `usage`.
        var usage: UInt64 = 0
    }

    /// A `List` call's parameters.
    struct ListingRequest: Hashable, Sendable {
        var all: Bool
        var limit: Int?
        var language: String?
    }

    /// Requests in any language may be asked for; past this many the stale and then the
    /// oldest entries go, so memory stays bounded whatever clients send.
    static let maxCachedListings = 16

    private struct Contents {
        var listingKey: ListingKey
        var listings: [ListingRequest: (key: ListingKey, parameters: EncodedJSONObject)] = [:]
        var statusEpoch: UInt64 = 0
        var scanProgress: ContactsScanProgress?
        var status: (epoch: UInt64, parameters: EncodedJSONObject)?
        var unchangedResignActive: UnchangedResignActive?
        var encodedUnchangedResignActive: (outcome: RecomputeOutcome, parameters: EncodedJSONObject)?
    }

    /// What a repeated `ResignActive` answers while nothing changed: the core publishes it at
    /// the end of each `ResignActive` (a repeat with the same `appVersion` finds the same
    /// favorites, version and settings, so it changes nothing and writes nothing), and every
    /// change clears it with the status epoch. `ticket` is the write the state needs on disk
    /// before `persisted` may be answered true.
    struct UnchangedResignActive: Sendable {
        var appVersion: String?
        var outcome: RecomputeOutcome
        var ticket: UInt64
    }

    private let contents: NIOLockedValueBox<Contents>

    init(listingKey: ListingKey) {
        contents = NIOLockedValueBox(Contents(listingKey: listingKey))
    }

    // MARK: The core says what changed

    func publish(listingKey: ListingKey) {
        contents.withLockedValue { $0.listingKey = listingKey }
    }

    /// Something `Status` shows changed: the encoded reply, if any, is stale.
    func statusChanged() {
        contents.withLockedValue { contents in
            contents.statusEpoch &+= 1
            contents.status = nil
            contents.unchangedResignActive = nil
        }
    }

    /// Set by the core last in its turn, after every change the turn made (each of which cleared it).
    func publish(unchangedResignActive: UnchangedResignActive) {
        contents.withLockedValue { $0.unchangedResignActive = unchangedResignActive }
    }

    /// The parameters of an unchanged `ResignActive`'s reply, encoded once for its repeats.
    func encoded(unchangedResignActive outcome: RecomputeOutcome) throws -> EncodedJSONObject {
        if let cached = contents.withLockedValue({ $0.encodedUnchangedResignActive }), cached.outcome == outcome { return cached.parameters }
        let parameters = try EncodedJSONObject(encoding: outcome)
        contents.withLockedValue { $0.encodedUnchangedResignActive = (outcome, parameters) }
        return parameters
    }

    func unchangedResignActive(appVersion: String?) -> UnchangedResignActive? {
        contents.withLockedValue { contents in
            contents.unchangedResignActive.flatMap { $0.appVersion == appVersion ? $0 : nil }
        }
    }

    /// How far a long scan is, told by the scanner on the watcher's thread (at most once a
    /// second; nil once the scan is done). Kept here rather than in the core so the scan
    /// never waits for the core, and set with the epoch's bump under the same lock.
    func publish(scanProgress: ContactsScanProgress?) {
        contents.withLockedValue { contents in
            guard contents.scanProgress != scanProgress else { return }
            contents.scanProgress = scanProgress
            contents.statusEpoch &+= 1
            contents.status = nil
        }
    }

    /// The scan's progress and the status epoch, read together: a `Status` reply encoded from
    /// them is stored at that epoch, so it is never served once the progress moved on.
    var scanProgressAndStatusEpoch: (scanProgress: ContactsScanProgress?, epoch: UInt64) {
        contents.withLockedValue { ($0.scanProgress, $0.statusEpoch) }
    }

    // MARK: The wire edge reads and stores encoded replies

    /// The encoded listing for `request` if it was encoded at the current key (or at `key`).
    func listing(for request: ListingRequest, at key: ListingKey? = nil) -> EncodedJSONObject? {
        contents.withLockedValue { contents in
            guard let cached = contents.listings[request], cached.key == (key ?? contents.listingKey) else { return nil }
            return cached.parameters
        }
    }

    func store(listing parameters: EncodedJSONObject, for request: ListingRequest, at key: ListingKey) {
        contents.withLockedValue { contents in
            if contents.listings[request] == nil && contents.listings.count >= Self.maxCachedListings {
                let current = contents.listingKey
                contents.listings = contents.listings.filter { $0.value.key == current }
                if contents.listings.count >= Self.maxCachedListings { contents.listings.removeAll() }
            }
            contents.listings[request] = (key, parameters)
        }
    }

    /// The encoded `Status` reply if nothing it shows changed since it was encoded.
    func status() -> EncodedJSONObject? {
        contents.withLockedValue { contents in
            guard let status = contents.status, status.epoch == contents.statusEpoch else { return nil }
            return status.parameters
        }
    }

    func store(status parameters: EncodedJSONObject, at epoch: UInt64) {
        contents.withLockedValue { contents in
            if epoch == contents.statusEpoch { contents.status = (epoch, parameters) }
        }
    }
}

extension PublishedReplies.ListingRequest {
    /// Read straight from a call's parameters, for the event loop's fast path; nil for
    /// anything unusual (a wrong type, a negative limit), which the full path decodes
    /// and answers with the right error.
    init?(parameters: [String: JSONValue]) {
        switch parameters["all"] ?? .null {
        case .null: all = false
        case .bool(let value): all = value
        default: return nil
        }
        switch parameters["limit"] ?? .null {
        case .null: limit = nil
        case .int(let value) where value >= 0 && value <= Int64(Int32.max): limit = Int(value)
        default: return nil
        }
        switch parameters["language"] ?? .null {
        case .null: language = nil
        // A language over its bound takes the full path, which names it in `InvalidParameter`.
        case .string(let value) where value.utf8.count <= ParameterLimits.languageBytes: language = value
        default: return nil
        }
    }
}
